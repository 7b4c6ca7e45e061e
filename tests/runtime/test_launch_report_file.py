"""Each launch leaves its report (``launch_report.json``) in the kernel's build directory."""
import json

import numpy as np

import pypto_pro.language as pl
from pypto_pro.runtime.build_dir import write_launch_report

V = pl.TileType(shape=[4, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)


@pl.jit(name="report_file_probe")
def scale(x: pl.Tensor[[4, 64], pl.DT_FP32], out: pl.Tensor[[4, 64], pl.DT_FP32], k: pl.DT_FP32):
    g = pl.make_tile_group(type=V, addrs=[0x0], mutex_ids=[0])
    with pl.section_vector():
        t = g[0]
        pl.load(t, x, [0, 0])
        pl.mul(t, t, k)
        pl.store(out, t, [0, 0])


def test_the_last_launch_report_is_written_next_to_the_dumps(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PRO_BUILD_DIR", str(tmp_path))
    x = np.arange(256, dtype=np.float32).reshape(4, 64)
    out = np.zeros_like(x)
    first = scale(x, out, 2.0)
    second = scale(x, out, 3.0)
    np.testing.assert_array_equal(out, x * 3)
    data = json.loads((tmp_path / "report_file_probe" / "launch_report.json").read_text())
    assert data["kernel"] == "report_file_probe" and data["timed"] is True
    assert data["cycles"] == second.cycles and data["summary"] == second.summary()
    assert data["path_bytes"] == second.path_bytes and data["path_bytes"]["GM->Vec"] == x.nbytes
    assert first.cycles == second.cycles  # the file holds the last launch; both equal here


def test_an_unwritable_report_path_is_skipped_silently(tmp_path):
    blocked = tmp_path / "file_not_dir"
    blocked.write_text("")
    x = np.ones((4, 64), dtype=np.float32)
    report = scale(x, np.zeros_like(x), 2.0)
    write_launch_report(blocked / "k", report)  # mkdir under a file fails: no exception reaches the launch
    assert blocked.read_text() == ""
