"""``@pl.jit(name=...)`` takes any non-empty string, as the real one does; its C symbol and build
directory are a safe identifier derived from it, distinct for distinct names."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import CompileError
from pypto_pro.runtime.build_dir import kernel_build_dir, safe_symbol
from pypto_pro.runtime.kernel import variant_symbol

V = pl.TileType(shape=[1, 8], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)


def _make(name):
    @pl.jit(name=name)
    def k(x: pl.Tensor[[1, 8], pl.DT_FP32], out: pl.Tensor[[1, 8], pl.DT_FP32]):
        g = pl.make_tile_group(type=V, addrs=[0x0], mutex_ids=[0])
        with pl.section_vector():
            t = g[0]
            pl.load(t, x, [0, 0])
            pl.store(out, t, [0, 0])
    return k


def test_a_name_with_dots_and_signs_compiles_and_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PRO_BUILD_DIR", str(tmp_path))
    k = _make("ct_float_scale_-1.0")
    x = np.arange(8, dtype=np.float32).reshape(1, 8)
    out = np.zeros_like(x)
    k(x, out)
    np.testing.assert_array_equal(out, x)
    assert k.name == "ct_float_scale_-1.0"  # the user's name is kept
    dirs = [p.name for p in tmp_path.iterdir()]
    assert dirs == [safe_symbol("ct_float_scale_-1.0")]


def test_safe_symbols_are_c_identifiers_and_do_not_collide():
    names = ["s_2.0", "s_2_0", "s-2.0", "1e-06", "", "a b", "ü"]
    syms = [safe_symbol(n) for n in names]
    assert len(set(syms)) == len(syms)
    for s in syms:
        assert s.isascii() and s.isidentifier() and not s[0].isdigit()
    assert safe_symbol("plain_name") == "plain_name"  # identifiers are unchanged
    assert kernel_build_dir("s_2.0").name == safe_symbol("s_2.0")
    assert variant_symbol("s_2.0", 3, {}) == safe_symbol("s_2.0") + "_3"


@pytest.mark.parametrize("bad", ["", 3, None.__class__])
def test_empty_or_non_string_names_are_rejected(bad):
    with pytest.raises(CompileError, match="name must be a non-empty string") as err:
        _make(bad)
    assert isinstance(err.value, ValueError)
