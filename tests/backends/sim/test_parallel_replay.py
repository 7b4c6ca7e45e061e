"""Replayed blocks in a forked child (``backends/sim/parallel_replay.py``): the serial run's bytes, report
and warnings, whether the child's results are taken or the parent falls back to replaying them itself."""
from __future__ import annotations

import dataclasses
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.backends.sim import parallel_replay
from pypto_pro.errors import LaunchError
from pypto_pro.language import Vf as vf

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples"))
import add

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks only on Linux")

ROWS = 64
VEC = pl.MemorySpace.Vec


@pl.vector_function
def _row_max_exp(src, dst):
    """Per column block: the running max over 16 rows, then exp(x - max) of every row."""
    full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    mx = vf.full(-3.0e38, full, dtype=pl.DT_FP32)
    for i in pl.range(0, 16):
        x = vf.load_align(src, i * 64)
        mx = vf.max(mx, x, full)
    for i in pl.range(0, 16):
        x = vf.load_align(src, i * 64)
        e = vf.exp_sub(x, mx, full)
        vf.store_align(dst, e, full, i * 64)


def vf_rows(x: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32], y: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32]):
    tt = pl.TileType(shape=[16, 64], dtype=pl.DT_FP32, target_memory=VEC)
    xs = pl.make_tile_group(type=tt, addrs=[0, 0x1000], mutex_ids=[0, 1])
    ys = pl.make_tile_group(type=tt, addrs=[0x2000, 0x3000], mutex_ids=[2, 3])
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), x.shape[0] // 16, pl.get_block_num()):
            tx, ty = xs.next(), ys.next()
            pl.load(tx, x, [i * 16, 0])
            _row_max_exp(tx, ty)
            pl.store(y, ty, [i * 16, 0])


def _launch(kind: str, workers: str, monkeypatch, blocks: int = 9):
    """(output bytes, report without trace files, warning texts) of one launch with ``workers``."""
    monkeypatch.setenv(parallel_replay.ENV, workers)
    monkeypatch.setenv("PYPTO_PRO_SIM_MEMO", "0")
    g = np.random.default_rng(3)
    if kind == "add":
        x = torch.from_numpy(g.standard_normal((blocks * 256, 256)).astype(np.float16))
        y = torch.from_numpy(g.standard_normal((blocks * 256, 256)).astype(np.float16))
        out = torch.zeros_like(x)
        kern, args = pl.jit(add.add_kernel.fn), (x, y, out)
    else:
        x = torch.from_numpy(g.standard_normal((blocks * 32, 64)).astype(np.float32))
        out = torch.zeros_like(x)
        kern, args = pl.jit(vf_rows, arch="a5"), (x, out)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = kern[None, blocks](*args)
    rep = {f: v for f, v in dataclasses.asdict(report).items() if f != "trace_files"}
    return out.numpy().tobytes(), repr(rep), [str(w.message) for w in caught]


@pytest.fixture
def joins(monkeypatch):
    """Every ``Child.join`` result of the test: True where the child's results were taken."""
    got: list = []
    real = parallel_replay.Child.join

    def join(self):
        ok = real(self)
        got.append((ok, self.why))
        return ok
    monkeypatch.setattr(parallel_replay.Child, "join", join)
    return got


@pytest.mark.parametrize("kind", ["add", "vf"])
def test_a_child_gives_the_serial_runs_bytes_report_and_warnings(kind, monkeypatch, joins):
    serial = _launch(kind, "1", monkeypatch)
    assert not joins
    forked = _launch(kind, "2", monkeypatch)
    assert joins == [(True, "")], "no child's results were taken"
    assert forked == serial


def test_a_child_that_fails_leaves_the_parent_to_replay_its_blocks(monkeypatch, joins):
    serial = _launch("vf", "1", monkeypatch)

    real = parallel_replay._child

    def child(fd, logged, lo, hi, knowns, regions, shared, defer, poison):
        knowns = [_Broken(k) for k in knowns]
        real(fd, logged, lo, hi, knowns, regions, shared, defer, poison)
    monkeypatch.setattr(parallel_replay, "_child", child)
    assert _launch("vf", "2", monkeypatch) == serial
    assert joins and joins[0][0] is False and "broken" in joins[0][1]


class _Broken:
    def __init__(self, known):
        self.known = known

    def replay(self, *args):
        raise RuntimeError("broken in the child")


def test_a_child_that_hangs_is_killed_and_its_blocks_replayed_here(monkeypatch, joins):
    serial = _launch("add", "1", monkeypatch)
    real = parallel_replay._child

    def child(*args):
        time.sleep(60)
        real(*args)
    monkeypatch.setattr(parallel_replay, "_child", child)
    monkeypatch.setattr(parallel_replay, "GRACE", 0.0)
    t0 = time.perf_counter()
    assert _launch("add", "2", monkeypatch) == serial
    assert time.perf_counter() - t0 < 30
    assert joins and joins[0] == (False, "the child did not finish in time")


def test_blocks_that_share_an_output_are_not_forked(monkeypatch, joins):
    """Every block stores the same rows (same bytes): not independent, so no child."""
    serial = _launch("add", "1", monkeypatch, blocks=9)
    monkeypatch.setattr(parallel_replay.batch_replay, "independent_blocks", lambda logged, objs: set())
    assert _launch("add", "2", monkeypatch, blocks=9) == serial
    assert not joins


def test_one_worker_never_forks_and_a_bad_value_is_a_launch_error(monkeypatch, joins):
    _launch("add", "1", monkeypatch)
    assert not joins
    with pytest.raises(LaunchError, match=parallel_replay.ENV):
        _launch("add", "many", monkeypatch)
    # raised before any numerics: the output is untouched
    x = torch.ones((9 * 256, 256), dtype=torch.float16)
    out = torch.full_like(x, 7.0)
    with pytest.raises(LaunchError, match=parallel_replay.ENV):
        pl.jit(add.add_kernel.fn)[None, 9](x, x, out)
    assert torch.equal(out, torch.full_like(x, 7.0))
