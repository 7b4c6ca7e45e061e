"""The cross-core counter check (backends/sim/xcounter.py): more than 15 signals of one sender pending
for one (receiver, id) is a SyncError naming the set and the receiver's next wait, unless the count
only exists because the simulator's scalar unit dispatched past the sender's own blocked
instructions (the idle AIV1 of the real flash-attention ``single_vec0`` tail tiles): then it is a
note saying how many not-started instructions one queue would have to hold on the chip."""
from __future__ import annotations

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import SyncError
from located import line_of

FIX, MTE2, MTE3, V = pl.PipeType.FIX, pl.PipeType.MTE2, pl.PipeType.MTE3, pl.PipeType.V
Vec = pl.MemorySpace.Vec
TASKS = 40
READY, DONE = 0, 2


def tail_tile_kernel(x: pl.Tensor[[16, 64], pl.DT_FP16], out: pl.Tensor[[16, 64], pl.DT_FP16]):
    """The pattern of the real ``_dn_tile_unalign16_single.py`` tail tiles: the Cube signals READY and
    waits for DONE of both Vector cores each task (on one pipe, so its next READY waits for both);
    only AIV0 works (V, then MTE3 after a V -> MTE3 flag); AIV1 waits for READY on V and signals DONE
    on MTE3 with nothing before it on MTE3."""
    with pl.section_cube():
        for _ in pl.range(0, TASKS):
            pl.system.set_cross_core(pipe=FIX, event_id=READY)
            pl.system.wait_cross_core(pipe=FIX, event_id=DONE)  # <- cube wait
    with pl.section_vector():
        t = pl.make_tile(pl.TileType([16, 64], pl.DT_FP16, Vec), addr=0, size=16 * 64 * 2)
        sub = pl.get_subblock_idx()
        if sub == 0:
            pl.load(t, x, [0, 0])
            pl.system.sync_src(set_pipe=MTE2, wait_pipe=V, event_id=0)
            pl.system.sync_dst(set_pipe=MTE2, wait_pipe=V, event_id=0)
        for _ in pl.range(0, TASKS):
            pl.system.wait_cross_core(pipe=V, event_id=READY)
            if sub == 0:
                pl.mul(t, t, 1.0)
                pl.mul(t, t, 1.0)
                pl.system.sync_src(set_pipe=V, wait_pipe=MTE3, event_id=0)
                pl.system.sync_dst(set_pipe=V, wait_pipe=MTE3, event_id=0)
            pl.system.set_cross_core(pipe=MTE3, event_id=DONE)  # <- vector set
        if sub == 0:
            pl.store(out, t, [0, 0])


def test_an_idle_sub_block_running_ahead_is_a_note_not_a_fault():
    x = np.arange(16 * 64, dtype=np.float16).reshape(16, 64) / 64
    out = np.zeros_like(x)
    report = pl.jit(tail_tile_kernel, arch="a5")[None, 1](x, out)  # check="raise": no fault
    assert report.faults == []
    np.testing.assert_array_equal(out, x)
    notes = [n for n in report.notes if "signals of AIV1 pending" in n]
    assert len(notes) == 1, report.notes
    assert "event 2 to AIC" in notes[0] and "V queue holds" in notes[0]
    assert line_of(tail_tile_kernel, "vector set") in notes[0]
    assert line_of(tail_tile_kernel, "cube wait") in notes[0]
    assert not any("AIV0 pending" in n for n in report.notes)  # AIV0's sets come after its work


def overrun_kernel(x: pl.Tensor[[16, 32], pl.DT_FP16]):
    """16 signals with nothing between them, waited for only after another event: the counter
    overflows on any chip."""
    with pl.section_cube():
        pl.system.wait_cross_core(pipe=MTE2, event_id=2)
        for _ in pl.range(0, 16):
            pl.system.wait_cross_core(pipe=MTE2, event_id=1)  # <- late wait
    with pl.section_vector():
        for _ in pl.range(0, 16):
            pl.system.set_cross_core(pipe=MTE3, event_id=1)  # <- early set
        pl.system.set_cross_core(pipe=MTE3, event_id=2)


def test_a_true_overrun_is_a_fault_naming_the_set_and_the_wait():
    with pytest.raises(SyncError, match="signalled 16 times without being waited for") as e:
        pl.jit(overrun_kernel, arch="a5")[None, 1](np.zeros((16, 32), np.float16))
    text = str(e.value)
    assert line_of(overrun_kernel, "early set") in text and line_of(overrun_kernel, "late wait") in text
    assert "the 16th pending signal of AIV0" in text and "has not started" in text


def overrun_after_waits_kernel(x: pl.Tensor[[16, 32], pl.DT_FP16]):
    """The Vector cores' 16 sets land while two waits for the Cube are still blocked on V (run-ahead);
    then the Cube's load ends and signals them, and the Cube waits for the 16 only after another
    event: once the Vector's waits have passed, the 16 pending signals are sure."""
    with pl.section_cube():
        m = pl.make_tile(pl.TileType([16, 32], pl.DT_FP16, pl.MemorySpace.Mat), addr=0, size=16 * 32 * 2)
        pl.load(m, x, [0, 0])
        pl.system.set_cross_core(pipe=MTE2, event_id=0)
        pl.system.set_cross_core(pipe=MTE2, event_id=0)
        pl.system.wait_cross_core(pipe=FIX, event_id=3)
        for _ in pl.range(0, 16):
            pl.system.wait_cross_core(pipe=FIX, event_id=1)  # <- late wait
    with pl.section_vector():
        pl.system.wait_cross_core(pipe=V, event_id=0)
        pl.system.wait_cross_core(pipe=V, event_id=0)
        for _ in pl.range(0, 16):
            pl.system.set_cross_core(pipe=MTE3, event_id=1)  # <- set
        pl.system.set_cross_core(pipe=V, event_id=3)


def test_run_ahead_that_the_sender_catches_up_with_is_still_a_fault():
    with pytest.raises(SyncError, match="signalled 16 times without being waited for") as e:
        pl.jit(overrun_after_waits_kernel, arch="a5")[None, 1](np.zeros((16, 32), np.float16))
    text = str(e.value)
    assert line_of(overrun_after_waits_kernel, "set") in text
    assert line_of(overrun_after_waits_kernel, "late wait") in text
    report = pl.jit(overrun_after_waits_kernel, arch="a5").options(check="warn")[None, 1](
        np.zeros((16, 32), np.float16))
    assert len(report.faults) == 2  # AIV0's and AIV1's
    assert not any("pending" in n and "event 1" in n for n in report.notes)  # the run-ahead notes withdrawn


def test_warn_reports_each_overflowing_sender_once():
    report = pl.jit(overrun_kernel, arch="a5").options(check="warn")[None, 1](np.zeros((16, 32), np.float16))
    texts = sorted(str(f).split("pending signal of ")[1].split("\n")[0] for f in report.faults)
    assert texts == ["AIV0", "AIV1"]
