"""pypto-pro build: a binary release of every valid TilingKey variant without touching the source."""
import json
from pathlib import Path

from pypto_pro.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]


def test_release_of_every_tiling_key(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PYPTO_PRO_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "dist"
    assert cli_main(["build", f"{ROOT / 'examples' / 'add_tiled.py'}::add_tiled", "--arch", "a5",
                     "--out", str(out)]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    codes = sorted(v["code"] for v in manifest["variants"])
    assert codes == [0, 1, 2, 4, 5, 6] and manifest["arch"] == "a5"
    assert [f["name"] for f in manifest["tiling_key"]["fields"]] == ["TILE_M", "DEPTH"]
    for c in codes:
        kernel = (out / f"kernel_{c}.cpp").read_text()
        assert "#include <pto/pto-inst.hpp>" in kernel and f"add_tiled_{c}" in kernel
        assert f"launch_add_tiled_{c}(" in (out / f"launcher_{c}.cpp").read_text()
    header = (out / "add_tiled_tiling.h").read_text()
    assert "#define ADD_TILED_TILE_M_SHIFT 0" in header and "#define ADD_TILED_DEPTH_SHIFT 2" in header
    assert "add_tiled_select(uint64_t code)" in header and "case 6: return launch_add_tiled_6;" in header
    # TILE_M=128 (index 2) and DEPTH=2 (index 1): code 2 | 1 << 2 = 6, with 128-row tiles in its kernel
    assert "128" in (out / "kernel_6.cpp").read_text()


def test_release_of_a_plain_kernel_and_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PRO_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "dist"
    assert cli_main(["build", f"{ROOT / 'examples' / 'add.py'}::add_kernel", "--out", str(out)]) == 0
    assert (out / "kernel.cpp").is_file() and (out / "launcher.cpp").is_file()
    assert cli_main(["build", f"{ROOT / 'examples' / 'add.py'}"]) == 2
    assert cli_main(["build", f"{ROOT / 'examples' / 'add.py'}::nope"]) == 2
