"""A same-core flag set again before its first set was waited for (the setting pipe ran ahead of
the waiting one) is not lost: the second set stalls its pipe until the wait clears the flag, as
the real flash-attention kernels (MTE2 -> MTE1 event 0 set once per load, waited once per move)
need. Sets and waits that pair up in program order run clean; a set no wait ever clears is a
deadlock that names both sets."""
from __future__ import annotations

import json

import numpy as np
import pytest

import pypto_pro.language as pl
from located import line_of
from pypto_pro import DeadlockError

P = pl.PipeType
R, C = 16, 64
TT = pl.TileType(shape=[R, C], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
F32 = pl.Tensor[[pl.DYNAMIC, C], pl.DT_FP32]
HEAVY = 24  # V's work before its first wait: long enough for MTE2 to finish both loads


def run_ahead(x: F32, y: F32, w: F32, z: F32, zw: F32):
    """MTE2 loads a, sets event 0, loads b, sets event 0 again, then loads e; V is busy (HEAVY
    muls on d) before its first wait, so MTE2's second set comes while the first is still set."""
    a = pl.make_tile(TT, addr=0x0000)
    b = pl.make_tile(TT, addr=0x1000)
    c = pl.make_tile(TT, addr=0x2000)
    d = pl.make_tile(TT, addr=0x3000)
    e = pl.make_tile(TT, addr=0x4000)
    with pl.section_vector():
        pl.load_tile(d, w, [0, 0])
        pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.V, event_id=1)
        pl.load_tile(a, x, [0, 0])
        pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.V, event_id=0)   # <- first
        pl.load_tile(b, y, [0, 0])
        pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.V, event_id=0)   # <- second
        pl.load_tile(e, y, [0, 0])                                       # <- after
        pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.V, event_id=2)
        pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.V, event_id=1)
        for _ in pl.range(0, HEAVY, 1):
            pl.muls(d, d, 1.0)
            pl.system.barrier(P.V)
        pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.V, event_id=0)   # <- wait
        pl.add(c, a, a)
        pl.system.barrier(P.V)
        pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.V, event_id=0)
        pl.add(c, c, b)
        pl.system.barrier(P.V)
        pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.V, event_id=2)
        pl.add(c, c, e)
        pl.system.sync_src(set_pipe=P.V, wait_pipe=P.MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=P.V, wait_pipe=P.MTE3, event_id=0)
        pl.store_tile(z, c, [0, 0])
        pl.store_tile(zw, d, [0, 0])


def never_cleared(x: F32, z: F32):
    """Two sets of event 0 and one wait: the second set stalls MTE2 for ever (the core hangs)."""
    a = pl.make_tile(TT, addr=0x0000)
    with pl.section_vector():
        pl.load_tile(a, x, [0, 0])
        pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.V, event_id=0)   # <- one
        pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.V, event_id=0)   # <- two
        pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.V, event_id=1)
        pl.muls(a, a, 2.0)
        pl.system.sync_src(set_pipe=P.V, wait_pipe=P.MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=P.V, wait_pipe=P.MTE3, event_id=0)
        pl.store_tile(z, a, [0, 0])


def _args():
    rng = np.random.default_rng(3)
    x, y, w = (rng.standard_normal((R, C)).astype(np.float32) for _ in range(3))
    return x, y, w, np.zeros((R, C), np.float32), np.zeros((R, C), np.float32)


@pytest.mark.parametrize("arch", ["a5", "a2a3"])
def test_a_set_that_runs_ahead_of_its_wait_is_not_lost(arch):
    x, y, w, z, zw = _args()
    report = pl.jit(run_ahead, arch=arch, auto_mutex=False).options(check="raise")(x, y, w, z, zw)
    assert report.faults == []
    np.testing.assert_array_equal(z, x + x + y + y)
    np.testing.assert_array_equal(zw, w)


def test_cached_start_times_stay_exact_across_a_stall(monkeypatch):
    """A stall and its release change which heads can start: every cached start time is checked
    against a fresh computation at every step."""
    from pypto_pro.backends.sim import scheduler
    monkeypatch.setattr(scheduler.CoreScheduler, "verify_cache", True)
    x, y, w, z, zw = _args()
    pl.jit(run_ahead, auto_mutex=False).options(check="raise")(x, y, w, z, zw)
    np.testing.assert_array_equal(z, x + x + y + y)


def _line(e: dict) -> int:
    return int(e["args"]["line"].rsplit(":", 1)[1])


def test_the_setting_pipe_stalls_until_the_wait_clears_the_flag(tmp_path):
    """The timeline: MTE2's load after the second set starts only once V's first wait of event 0
    has started (V's add after it), not right after the second load."""
    report = pl.jit(run_ahead, auto_mutex=False, trace=str(tmp_path)).options(check="raise")(*_args())
    path = next(f for f in report.trace_files if f.endswith(".trace.json"))
    with open(path) as f:
        slices = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    line = lambda marker: int(line_of(run_ahead, marker).rsplit(":", 1)[1])  # noqa: E731
    loads = [e for e in slices if e["cat"] == "MTE2"]
    after = next(e for e in loads if _line(e) == line("after"))
    second = next(e for e in loads if _line(e) == line("second") - 1)
    first_add = min((e for e in slices if e["cat"] == "V" and e["name"] == "add"), key=lambda e: e["ts"])
    assert after["ts"] >= first_add["ts"] - 1e-6, "MTE2 went on past a set of a flag still set"
    assert after["ts"] > second["ts"] + second["dur"] + 1e-6, "no stall: V's wait was not late"


def test_a_set_no_wait_clears_is_a_deadlock_naming_both_sets():
    a = np.ones((R, C), np.float32)
    with pytest.raises(DeadlockError) as err:
        pl.jit(never_cleared, auto_mutex=False).options(check="raise")(a, np.zeros_like(a))
    text = str(err.value)
    assert "MTE2 stalled at set_flag(MTE2, V, event=0)" in " ".join(text.split())
    assert line_of(never_cleared, "one") in text and line_of(never_cleared, "two") in text
