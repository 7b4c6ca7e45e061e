"""Trace files (Perfetto JSON, HTML timeline, buffer map), the CLI, and the HTML in a real browser."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.cli import main as cli_main
from kernels import add_fn

ROOT = Path(__file__).resolve().parents[3]


def _run(tmp_path, arch="a2a3", m=512, n=256, blocks=3):
    k = pl.jit(add_fn, arch=arch).options(trace=str(tmp_path / "tr"))
    x = np.random.default_rng(0).random((m, n)).astype(np.float16)
    y = np.random.default_rng(1).random((m, n)).astype(np.float16)
    z = np.zeros_like(x)
    report = k[None, blocks](x, y, z)
    assert np.array_equal(z, x + y)
    return report


def test_trace_json_has_tracks_slices_and_flows(tmp_path):
    report = _run(tmp_path)
    data = json.loads((tmp_path / "tr" / "add_fn.trace.json").read_text())
    events = data["traceEvents"]
    slices = [e for e in events if e["ph"] == "X"]
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {"MTE2", "MTE3", "V"} <= names
    assert {e["name"] for e in slices} >= {"load", "add", "store"}
    load = next(e for e in slices if e["name"] == "load")
    assert load["args"]["bytes"] == 128 * 128 * 2 and load["args"]["line"].startswith("kernels.py:")
    starts = {e["id"] for e in events if e["ph"] == "s"}
    ends = {e["id"] for e in events if e["ph"] == "f"}
    assert starts and starts == ends, "every flow arrow has both ends"
    assert 0 < len(slices) <= report.instructions  # syncs fused into their op share its slice


def test_double_buffering_overlaps_in_the_trace(tmp_path):
    _run(tmp_path, arch="a5", m=128, n=128 * 6, blocks=1)
    data = json.loads((tmp_path / "tr" / "add_fn.trace.json").read_text())
    sl = [e for e in data["traceEvents"] if e["ph"] == "X"]
    loads = sorted((e for e in sl if e["name"] == "load"), key=lambda e: e["ts"])
    adds = sorted((e for e in sl if e["name"] == "add"), key=lambda e: e["ts"])
    first_add = adds[0]
    overlapping = [e for e in loads if e["ts"] < first_add["ts"] + first_add["dur"] and e["ts"] + e["dur"] > first_add["ts"]]
    assert overlapping, "a load of a later tile runs while the first add computes"


def test_buffer_map_text_and_html(tmp_path):
    _run(tmp_path)
    text = (tmp_path / "tr" / "add_fn.buffers.txt").read_text()
    assert "Vec:" in text and "a_db slot 1" in text and "0x008000-0x010000" in text
    page = (tmp_path / "tr" / "add_fn.timeline.html").read_text()
    assert "<canvas" in page and "c_db" in page and "http" not in page.split("<script>")[1]


def test_cli_trace_and_passes(tmp_path, capsys):
    out = tmp_path / "cli"
    argv, path = list(sys.argv), list(sys.path)
    assert cli_main(["trace", str(ROOT / "examples" / "add.py"), "--out", str(out)]) == 0
    assert "PYPTO_PRO_TRACE" not in os.environ and sys.argv == argv and sys.path == path  # caller's state kept
    printed = capsys.readouterr().out
    assert "matches torch: True" in printed and "add_kernel.timeline.html" in printed
    assert (out / "add_kernel.trace.json").is_file()
    assert cli_main(["passes"]) == 0
    assert "auto_sync" in capsys.readouterr().out


def test_cli_trace_missing_script(tmp_path, capsys):
    assert cli_main(["trace", str(tmp_path / "nope.py")]) == 2


@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is not installed "
                    "(apt-get install chromium); see scripts/screenshot_timeline.sh")
def test_timeline_renders_in_headless_chromium(tmp_path):
    report = _run(tmp_path)
    html = tmp_path / "tr" / "add_fn.timeline.html"
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run(["chromium", *flags, "--dump-dom", f"file://{html}"], capture_output=True, text=True,
                         timeout=90).stdout
    assert 'data-rendered="' in dom, "the page's script ran and drew the timeline"
    rendered = int(dom.split('data-rendered="')[1].split('"')[0])
    assert rendered > 0
    png = tmp_path / "shot.png"
    subprocess.run(["chromium", *flags, "--window-size=1200,800", f"--screenshot={png}", f"file://{html}"],
                   capture_output=True, timeout=90)
    assert png.is_file() and png.stat().st_size > 10_000
    assert report.summary().split(":")[0] in dom
