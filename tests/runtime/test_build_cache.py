"""The on-disk build cache: 8 processes building one cold kernel agree on one artifact; corrupt
entries are rebuilt; keys change with the source, arch and tiling key."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pypto_pro.runtime.build_cache import BuildCache, cache_key

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import sys, json
sys.path.insert(0, {examples!r})
from pypto_pro.runtime.build_cache import BuildCache
import add
path = add.add_kernel.emit(cache=BuildCache({cache!r}))
print(json.dumps({{"path": str(path), "manifest": (path / "manifest.json").read_text()}}))
"""


def test_concurrent_processes_build_one_consistent_artifact(tmp_path):
    cache = tmp_path / "cache"
    script = SCRIPT.format(examples=str(ROOT / "examples"), cache=str(cache))
    env = {**os.environ, "PYPTO_PRO_BUILD_DIR": str(tmp_path / "build")}
    procs = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env) for _ in range(4)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert len({r["path"] for r in results}) == 1
    assert len({r["manifest"] for r in results}) == 1
    entries = [p for p in cache.iterdir() if p.is_dir()]
    assert len(entries) == 1 and not any(".tmp-" in p.name for p in cache.iterdir())
    files = json.loads((entries[0] / "manifest.json").read_text())["files"]
    assert "kernel.cpp" in files and BuildCache(cache).valid(entries[0])


def test_corrupt_entry_is_detected_and_rebuilt(tmp_path):
    cache = BuildCache(tmp_path)
    builds = []

    def build(d: Path) -> None:
        builds.append(1)
        (d / "kernel.cpp").write_text("// artifact\n")

    entry = cache.get_or_build("k1", build)
    assert cache.get_or_build("k1", build) == entry and len(builds) == 1
    (entry / "kernel.cpp").write_text("// trunc")          # a partial write
    assert not cache.valid(entry)
    cache.get_or_build("k1", build)
    assert len(builds) == 2 and cache.valid(entry)
    (entry / "manifest.json").unlink()                     # a crash before the manifest
    cache.get_or_build("k1", build)
    assert len(builds) == 3


def test_failed_build_leaves_no_entry(tmp_path):
    cache = BuildCache(tmp_path)

    def boom(d: Path) -> None:
        (d / "half.cpp").write_text("x")
        raise RuntimeError("compiler crashed")

    with pytest.raises(RuntimeError):
        cache.get_or_build("k2", boom)
    assert not (tmp_path / "k2").exists() and not any(".tmp-" in p.name for p in tmp_path.iterdir())


def test_key_depends_on_what_determines_the_artifact():
    from example_modules import load_example
    add = load_example("add")
    fn = add.add_kernel.fn
    base = cache_key(fn, signature="s", tiling_key=None, arch="a5")
    assert base == cache_key(fn, signature="s", tiling_key=None, arch="a5")
    assert base != cache_key(fn, signature="s", tiling_key=None, arch="a2a3")
    assert base != cache_key(fn, signature="s", tiling_key={"A": 1}, arch="a5")
    assert base != cache_key(fn, signature="t", tiling_key=None, arch="a5")


def _unary_factory(op_name):
    import pypto_pro.language as pl
    op = getattr(pl, op_name)
    tt = pl.TileType(shape=[16, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tensor = pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32]

    def kernel(a: tensor, c: tensor):
        t = pl.make_tile(tt, addr=0)
        with pl.section_vector():
            pl.load(t, a, [0, 0])
            op(t, t)
            pl.store(c, t, [0, 0])
    return pl.jit(kernel, arch="a5")


def test_kernels_of_one_factory_with_other_captured_ops_get_their_own_entries(tmp_path, monkeypatch):
    """Same source text and signature, another captured value: the key follows the lowered program."""
    monkeypatch.setenv("PYPTO_PRO_BUILD_DIR", str(tmp_path / "build"))
    cache = BuildCache(tmp_path / "cache")
    exp_cpp = (_unary_factory("exp").emit(cache=cache) / "kernel.cpp").read_text()
    sqrt_cpp = (_unary_factory("sqrt").emit(cache=cache) / "kernel.cpp").read_text()
    assert "TEXP" in exp_cpp and "TSQRT" not in exp_cpp
    assert "TSQRT" in sqrt_cpp and "TEXP" not in sqrt_cpp
    again = _unary_factory("exp").emit(cache=cache)  # a third, equal kernel hits the first entry
    assert (again / "kernel.cpp").read_text() == exp_cpp
    assert len([p for p in cache.root.iterdir() if p.is_dir()]) == 2
