"""The prototype of blocks in forked children (benchmarks/sim_parallel_blocks.py) is exact: every
output byte, every report field and the first fault are the serial run's. Each case runs a kernel
with ``PYPTO_PRO_SIM_FORK_BLOCKS=1`` and ``=2`` and compares everything, and checks which path the
parallel run really took (``parallel_blocks.last``), so a split that never happens shows. Not part
of the test suite (the simulator does not ship the design); run it with

    pytest benchmarks/sim_parallel_check.py             # small kernels, a few seconds
    pytest benchmarks/sim_parallel_check.py -m slow     # also every sim_fingerprint.py digest
"""
from __future__ import annotations

import dataclasses
import os
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import LaunchError, RaceError, UninitializedReadError

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "examples")]
import add  # noqa: E402
import sim_parallel_blocks as parallel_blocks  # noqa: E402

parallel_blocks.install()

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork-based: Linux only")

R, C = 16, 64
TT = pl.TileType(shape=[R, C], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
F32 = pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32]
V, MTE2, MTE3 = pl.PipeType.V, pl.PipeType.MTE2, pl.PipeType.MTE3


@pl.jit(auto_mutex=False)
def rows(x: F32, z: F32, skip: pl.DT_INT32, ordered: pl.DT_INT32, peek: pl.DT_INT32):
    """Block b scales row tile b of x into z. Block ``skip`` never loads its tile, so it multiplies
    bytes nothing wrote (an UninitializedReadError in that block only); without ``ordered`` no
    MTE2 -> V sync orders the multiply after the load (a RaceError in every block); with ``peek``
    each block then reads row tile b + 1 of z back (another block's output)."""
    a = pl.make_tile(TT, addr=0x0000)
    c = pl.make_tile(TT, addr=0x4000)
    with pl.section_vector():
        b = pl.get_block_idx()
        if b != skip:
            pl.load_tile(a, x, [b, 0])
        if ordered != 0:
            pl.system.sync_src(MTE2, V, 0)
            pl.system.sync_dst(MTE2, V, 0)
        pl.muls(c, a, 2.0)
        pl.system.sync_src(V, MTE3, 0)
        pl.system.sync_dst(V, MTE3, 0)
        pl.store_tile(z, c, [b, 0])
        if peek != 0:
            pl.system.sync_src(MTE3, MTE2, 0)
            pl.system.sync_dst(MTE3, MTE2, 0)
            pl.load_tile(a, z, [(b + 1) % pl.get_block_num(), 0])


def _launch(kernel, blocks: int, args: list, workers: str, monkeypatch, check: str = "raise") -> tuple:
    """(outputs, report fields or the error, the warnings, what the parallel module did)."""
    monkeypatch.setenv(parallel_blocks.ENV, workers)
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    error = None
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            report = kernel.options(check=check)[None, blocks](*args)
        except Exception as exc:  # noqa: BLE001  (compared with the serial run's)
            error, report = exc, None
    fields = dataclasses.asdict(report) if report is not None else (type(error), str(error))
    assert not parallel_blocks._running  # no child outlives its launch
    return args, fields, [str(w.message) for w in seen], dict(parallel_blocks.last)


def _same(kernel, blocks: int, args: list, monkeypatch, check: str = "raise") -> tuple:
    """Run serially and with two processes; assert identical; return (parallel's record, fields)."""
    out_a, rep_a, warn_a, _ = _launch(kernel, blocks, args, "1", monkeypatch, check)
    out_b, rep_b, warn_b, did = _launch(kernel, blocks, args, "2", monkeypatch, check)
    for a, b in zip(out_a, out_b):
        assert a.tobytes() == b.tobytes() if isinstance(a, np.ndarray) else a == b
    assert rep_a == rep_b
    assert warn_a == warn_b
    return did, rep_b


def _rows(n: int) -> list:
    rng = np.random.default_rng(0)
    return [rng.standard_normal((n * R, C)).astype(np.float32), np.full((n * R, C), 7.0, np.float32)]


def test_add_in_two_processes_is_the_serial_run(monkeypatch):
    """Every block times the same: the child's first block stands in for a replay (not counted)."""
    rng = np.random.default_rng(1)
    x, y = (rng.standard_normal((512, 256)).astype(np.float16) for _ in range(2))
    x[0, :4] = np.array([0x7C01, 0xFE00, 0x7E00, 0xFC01], np.uint16).view(np.float16)  # NaN payloads
    did, rep = _same(pl.jit(add.add_kernel.fn), 4, [x, y, np.zeros_like(x)], monkeypatch)
    assert len(did["ranges"]) == 2 and did["children"] == ["taken"]
    assert rep["blocks_scheduled"] < 4


def test_a_fault_only_in_the_childs_blocks_is_the_serial_fault(monkeypatch):
    did, rep = _same(rows, 4, _rows(4) + [3, 1, 0], monkeypatch)
    assert rep[0] is UninitializedReadError and "muls" in rep[1]
    assert did["ranges"][-1][1] == 4 and did["children"][0] != "taken"  # the child found it; the parent re-ran


def test_warn_mode_faults_are_the_serial_faults(monkeypatch):
    did, rep = _same(rows, 4, _rows(4) + [3, 1, 0], monkeypatch, check="warn")
    assert len(rep["faults"]) == 1 and did["children"] == ["a fault"]


def test_a_fault_in_the_parents_blocks_is_raised_and_the_child_killed(monkeypatch):
    did, rep = _same(rows, 4, _rows(4) + [-1, 0, 0], monkeypatch)
    assert rep[0] is RaceError
    assert len(did["ranges"]) == 2 and did["children"] == []  # the parent's range raised first


def test_blocks_reading_another_ranges_output_run_serially(monkeypatch):
    did, rep = _same(rows, 4, _rows(4) + [-1, 1, 1], monkeypatch, check="warn")
    assert rep["faults"] and did["ranges"] == []


def test_small_launches_stay_in_process(monkeypatch):
    monkeypatch.setenv(parallel_blocks.ENV, "auto")
    rows[None, 4](*_rows(4), -1, 1, 0)
    assert parallel_blocks.last["ranges"] == []


def test_a_bad_worker_count_is_a_launch_error_that_changes_nothing(monkeypatch):
    x, z = _rows(2)
    monkeypatch.setenv(parallel_blocks.ENV, "two")
    with pytest.raises(LaunchError, match="PYPTO_PRO_SIM_FORK_BLOCKS must be 'auto' or a positive integer, got 'two'"):
        rows[None, 2](x, z, -1, 1, 0)
    assert (z == 7.0).all()


def test_a_child_that_dies_leaves_the_serial_run(monkeypatch):
    """A child killed mid-range (here: by itself, as the OOM killer would) changes nothing."""
    real = parallel_blocks._ChildSide.finish
    monkeypatch.setattr(parallel_blocks._ChildSide, "finish", lambda self: os._exit(3))
    did, _ = _same(rows, 4, _rows(4) + [-1, 1, 0], monkeypatch)
    assert did["children"] and did["children"][0].startswith("child ended with status")
    monkeypatch.setattr(parallel_blocks._ChildSide, "finish", real)


@pytest.mark.slow
def test_every_fingerprint_is_the_serial_one(monkeypatch):
    import sim_fingerprint
    monkeypatch.setenv(parallel_blocks.ENV, "1")
    serial = sim_fingerprint.cases()
    monkeypatch.setenv(parallel_blocks.ENV, "2")
    assert sim_fingerprint.cases() == serial
