"""The one-step plain loads and stores (``backends/sim/gm_copy.py``, ``plain_window``) and the bound torch calls of fp16
tile ``+`` (``torch_engine.bind_binary``) must be invisible.

Each case runs a kernel with the fast path on and off (``gm_copy.FAST``, ``torch_engine.BOUND``) and
compares outputs (NaN payloads, signed zeros, subnormals and infinities in the inputs), every report
field and the trace files byte for byte, with every check mode and with batched-replay lanes; the bug
catalogue's broken kernels must fault with the same located messages. Counters show the fast paths
really ran (else the comparison would prove nothing).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch  # noqa: F401  (torch_engine computes with torch only once it is imported)

import pypto_pro.language as pl
from pypto_pro.backends.sim import batch_replay, gm_copy, kit, torch_engine
from example_modules import load_example
from kernels import add_fn
from launch_compare import assert_same, capture, specials


@pytest.fixture(autouse=True)
def _no_launch_memo(monkeypatch):
    monkeypatch.setenv("PYPTO_PRO_SIM_MEMO", "0")  # every launch simulates


@pytest.fixture
def served(monkeypatch):
    """How many loads / stores the fast path dispatched, and bound torch calls ran."""
    counts = {"load": 0, "store": 0, "bound": 0}
    real_window, real_bind = gm_copy.plain_window, torch_engine.bind_binary

    def window(*args):
        fast, kind = real_window(*args), "store" if args[-1] else "load"

        def dispatch(*call):
            prep = fast(*call)
            counts[kind] += prep is not None
            return prep
        return dispatch

    def bind(*args):
        run = real_bind(*args)
        if run is None:
            return None

        def counted():
            counts["bound"] += torch_engine.BOUND  # (records memoized while it was on run unbound when off)
            run()
        return counted
    monkeypatch.setattr(gm_copy, "plain_window", window)
    monkeypatch.setattr(torch_engine, "bind_binary", bind)
    return counts


def _launch(kernel, args, blocks, on: bool, trace: Path | None, monkeypatch, check="raise"):
    monkeypatch.setattr(gm_copy, "FAST", on)
    monkeypatch.setattr(torch_engine, "BOUND", on)
    return capture(kernel, args, blocks, trace, check, catch=True)


def _same(kernel, args, blocks, tmp_path, monkeypatch, check="raise", trace=True):
    on = _launch(kernel, args, blocks, True, tmp_path / "on" if trace else None, monkeypatch, check)
    off = _launch(kernel, args, blocks, False, tmp_path / "off" if trace else None, monkeypatch, check)
    return assert_same(on, off, "on", "off")


@pytest.mark.parametrize("lanes", [1, 4])
@pytest.mark.parametrize("check", ["raise", "warn", "off"])
def test_add_tail_tiles_on_vs_off(check, lanes, tmp_path, monkeypatch, served):
    """Full tiles take the fast paths, tail tiles (smaller valid shapes: 300 x 260) too; deferred
    commits (check warn / off) and lanes (their batch specs) as well."""
    monkeypatch.setattr(batch_replay, "LANES", lanes)
    rng = np.random.default_rng(21)
    x, y = specials((300, 260), rng), specials((300, 260), rng)
    kern = pl.jit(add_fn, arch="a5")
    for trace in (True, False):  # (a trace builds every block's records: replay runs without one)
        _same(kern, [x, y, np.zeros_like(x)], 3, tmp_path / str(trace), monkeypatch, check, trace)
        _same(kern, [x, y, np.zeros_like(x)], 3, tmp_path / f"{trace}b", monkeypatch, check, trace)  # warm
    assert served["load"] and served["store"] and (served["bound"] or check != "raise")


def test_seed_add_on_vs_off(tmp_path, monkeypatch, served):
    add = load_example("add")
    rng = np.random.default_rng(22)
    x, y = specials((512, 384), rng), specials((512, 384), rng)
    _same(pl.jit(add.add_kernel.fn), [x, y, np.zeros_like(x)], 4, tmp_path, monkeypatch)
    assert served["load"] == 2 * 12 and served["store"] == 12 and served["bound"] == 12


@pytest.mark.parametrize("arch", ["a5", "a2a3"])
def test_flash_attention_and_matmul_on_vs_off(arch, tmp_path, monkeypatch):
    """Rank-4 tensors, Mat (boxed) tiles and Acc stores: the general rule's cases, unchanged."""
    fa = load_example("flash_attention")
    rng = np.random.default_rng(23)
    q, k, v = (specials((1, 2, 256, 64), rng) for _ in range(3))
    args = [q, k, v, np.zeros_like(q), fa.causal_mask(), *fa.workspaces(3, 64, 1)]
    _same(fa.make_flash_attention(arch, 64, True, 1), args, 3, tmp_path / "fa", monkeypatch)
    mm = load_example("matmul")
    a, b = specials((256, 256), rng), specials((256, 256), rng)
    _same(mm.make_matmul("a2a3"), [a, b, np.zeros((256, 256), np.float32)], 4, tmp_path / "mm", monkeypatch)


@pl.jit
def _reinterpret(x: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_INT16], z: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_INT16],
                 w: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16]):
    """int16 GM into fp16 tiles (the bytes move as they are) and back out, to an int16 tensor (the
    general rule: its dtype is not the tile's) and an fp16 one."""
    tt = pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    g = pl.make_tile_group(type=tt, addrs=0, mutex_ids=[0, 1])
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), x.shape[0] // 64, pl.get_block_num()):
            t = g.next()
            pl.load_tile(t, x, [i, 0])
            pl.store_tile(z, t, [i, 0])
            pl.store_tile(w, t, [i, 0])


def test_same_width_dtypes_on_vs_off(tmp_path, monkeypatch, served):
    rng = np.random.default_rng(24)
    x = rng.integers(-(1 << 15), 1 << 15, (256, 128), dtype=np.int16)
    _same(_reinterpret, [x, np.zeros_like(x), np.zeros(x.shape, np.float16)], 2, tmp_path, monkeypatch)
    assert served["load"] == 4 and served["store"] == 4  # (the 4 stores to z: the general rule)


def _catalogue_cases() -> list:
    import test_bug_catalogue as cat  # the broken kernels of the bug catalogue (same directory)
    return [pytest.param(cat, bug, fn, arch, id=f"{bug.kind}-{'bug' if fn is bug.fn else 'fixed'}-{arch}")
            for bug in cat.CATALOGUE for arch in bug.archs for fn in (bug.fn, bug.fixed)]


@pytest.mark.parametrize("cat,bug,fn,arch", _catalogue_cases())
def test_bug_catalogue_on_vs_off(cat, bug, fn, arch, monkeypatch):
    """Faults (races, out-of-bounds windows, valid-shape faults, deadlocks) come at the same source lines."""
    kern = cat.kernel(fn, arch)
    assert _launch(kern, bug.args(), bug.blocks, True, None, monkeypatch, "warn") == \
        _launch(kern, bug.args(), bug.blocks, False, None, monkeypatch, "warn")


def test_window_past_the_tensor_faults_alike(monkeypatch, served):
    """A tail block's store past z's end: the fast path declines it, the general rule faults at its line."""
    kern = pl.jit(add_fn)
    x = np.ones((640, 128), np.float16)
    msgs = []
    for on in (True, False):
        monkeypatch.setattr(gm_copy, "FAST", on)
        with pytest.raises(Exception) as err:
            kern[None, 2](x, x, np.zeros((512, 128), np.float16))
        msgs.append(str(err.value))
    assert msgs[0] == msgs[1] and "kernels.py:" in msgs[0] and served["load"]


def test_copy_run_is_deferred():
    """copy_run as kit.deferred: undeferred it writes at once; deferred it reads now, writes at commit."""
    src, dst = np.arange(6, dtype=np.float16).reshape(2, 3), np.zeros((2, 3), np.float16)
    assert gm_copy.copy_run(dst, src)(False) is None and (dst == src).all()
    dst[...] = 0
    commit = gm_copy.copy_run(dst, src)(True)
    src += 1
    assert not dst.any()
    commit()
    assert (dst == src - 1).all()
    ref = np.zeros_like(dst)
    kit.deferred(lambda out: np.copyto(out, src), ref)(True)()
    assert (ref == src).all()


def test_bind_binary_declines_what_binary_does_not_give_torch(monkeypatch):
    a = specials((128, 128), np.random.default_rng(25))
    b = np.flip(a, 0).copy()
    out = np.empty_like(a)
    assert torch_engine.bind_binary("add", out, a, b) is not None
    assert torch_engine.bind_binary("sub", out, a, b) is None          # not proven exact
    assert torch_engine.bind_binary("add", out, a, a[::-1]) is None    # a negative stride
    assert torch_engine.bind_binary("add", out[:, 1:], a[:, 1:], out[:, :-1]) is None  # a partial overlap
    assert torch_engine.bind_binary("add", out[:8, :8], a[:8, :8], b[:8, :8]) is None  # too small for torch
    assert torch_engine.bind_binary("add", out.astype(np.float32), a.astype(np.float32), b.astype(np.float32)) is None
    run = torch_engine.bind_binary("add", out, a, b)
    for use in (True, False):  # switched off after binding: NumPy's loop, the same bytes
        monkeypatch.setattr(torch_engine, "enabled", use)
        out[...] = 0
        run()
        with np.errstate(all="ignore"):
            assert out.tobytes() == np.add(a, b).tobytes()
    b.flags.writeable = False  # (torch would warn on a read-only array: NumPy computes it)
    out[...] = 0
    run()
    with np.errstate(all="ignore"):
        assert out.tobytes() == np.add(a, b).tobytes()
