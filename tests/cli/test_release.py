"""pypto-pro build: a binary release of every valid TilingKey variant without touching the source."""
import json
from pathlib import Path

import pytest

from pypto_pro.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]


def test_release_of_every_tiling_key(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PYPTO_PRO_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "dist"
    assert cli_main(["build", f"{ROOT / 'examples' / 'add_tiled.py'}::add_tiled", "--arch", "a5",
                     "--out", str(out)]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["dtype_vars"] == {"T": ["DT_FP16", "DT_BF16"]} and manifest["arch"] == "a5"
    variants = {(v["code"], v["dtypes"]["T"]): v["symbol"] for v in manifest["variants"]}
    assert sorted(variants) == sorted((c, t) for c in (0, 1, 2, 4, 5, 6) for t in ("DT_FP16", "DT_BF16"))
    assert [f["name"] for f in manifest["tiling_key"]["fields"]] == ["TILE_M", "DEPTH"]
    for (code, t), symbol in variants.items():
        assert symbol == f"add_tiled_{code}_T_{t[3:].lower()}"
        suffix = symbol[len("add_tiled"):]
        kernel = (out / f"kernel{suffix}.cpp").read_text()
        assert "#include <pto/pto-inst.hpp>" in kernel and symbol in kernel
        assert ("bfloat16" in kernel or "bf16" in kernel) == (t == "DT_BF16")
        assert f"launch_{symbol}(" in (out / f"launcher{suffix}.cpp").read_text()
    header = (out / "add_tiled_tiling.h").read_text()
    assert "#define ADD_TILED_TILE_M_SHIFT 0" in header and "#define ADD_TILED_DEPTH_SHIFT 2" in header
    assert "add_tiled_T_fp16_select(uint64_t code)" in header and "add_tiled_T_bf16_select(uint64_t code)" in header
    assert "case 6: return launch_add_tiled_6_T_bf16;" in header


def test_dtype_variable_binds_from_arguments():
    import ml_dtypes
    import numpy as np
    from example_modules import load_example
    add_tiled = load_example("add_tiled")
    from pypto_pro import LaunchError
    x = np.ones((64, 128), ml_dtypes.bfloat16)
    z = np.zeros_like(x)
    add_tiled.add_tiled[None, 1, {"TILE_M": 32, "DEPTH": 2}](x, x, z)
    assert np.array_equal(z, x + x)
    with pytest.raises(LaunchError, match="'y' dtype mismatch"):
        add_tiled.add_tiled[None, 1, {"TILE_M": 32, "DEPTH": 2}](x, np.ones((64, 128), np.float16), z)
    with pytest.raises(LaunchError, match="T may be DT_FP16, DT_BF16"):
        f = np.ones((64, 128), np.float32)
        add_tiled.add_tiled[None, 1, {"TILE_M": 32, "DEPTH": 2}](f, f, f)


def test_release_of_a_plain_kernel_and_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PRO_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "dist"
    assert cli_main(["build", f"{ROOT / 'examples' / 'add.py'}::add_kernel", "--out", str(out)]) == 0
    assert (out / "kernel.cpp").is_file() and (out / "launcher.cpp").is_file()
    assert cli_main(["build", f"{ROOT / 'examples' / 'add.py'}"]) == 2
    assert cli_main(["build", f"{ROOT / 'examples' / 'add.py'}::nope"]) == 2
