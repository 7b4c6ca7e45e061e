"""The same_pipe pass and the simulator's same-pipe hazard check: dependent instructions of a queue
that is not in order on the arch (arch/pipes.py) need ``barrier(pipe)`` between them."""
from __future__ import annotations

import numpy as np
import pytest

import pypto_pro.language as pl
from located import line_of
from pypto_pro import RaceError
from pypto_pro.arch.pipes import in_order
from pypto_pro.ir.nodes import SyncOp, TileOp, walk_stmts
from pypto_pro.language.enums import PipeType, SectionKind

P = pl.PipeType
VEC = pl.TileType(shape=[16, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
F32 = pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32]



def chain(x: F32, out: F32):
    """add then muls of its result, then a second add into another tile: V -> V dependences."""
    g = pl.make_tile_group(type=VEC, addrs=[0, 0x1000], mutex_ids=[0, 1])
    h = pl.make_tile_group(type=VEC, addrs=[0x2000], mutex_ids=[2])
    with pl.section_vector():
        for i in pl.range(0, x.shape[0] // 16):
            t = g.next()
            u = h[0]
            pl.load(t, x, [i * 16, 0])
            pl.add(u, t, t)
            pl.muls(u, u, 3.0)
            pl.store(out, u, [i * 16, 0])


def _program(fn, arch, **kw):
    return pl.jit(fn, arch=arch, **kw).compile().programs[SectionKind.VECTOR]


def test_a2a3_gets_a_v_barrier_between_dependent_vector_ops():
    body = list(walk_stmts(_program(chain, "a2a3").body))
    muls = next(i for i, s in enumerate(body) if isinstance(s, TileOp) and s.op == "muls")
    before = [s for s in body[:muls] if isinstance(s, SyncOp) and s.kind == "barrier" and s.src is PipeType.V]
    assert before and before[-1].origin == "auto"
    last_v = max(i for i, s in enumerate(body[:muls]) if isinstance(s, TileOp) and s.pipe is PipeType.V)
    assert any(body[j] is before[-1] for j in range(last_v + 1, muls))  # between the add and the muls


def test_a5_vector_queue_is_in_order_no_barrier():
    assert in_order("a5", PipeType.V) and not in_order("a2a3", PipeType.V)
    body = list(walk_stmts(_program(chain, "a5").body))
    assert not any(isinstance(s, SyncOp) and s.kind == "barrier" and s.src is PipeType.V for s in body)


@pytest.mark.parametrize("arch", ["a5", "a2a3"])
def test_auto_sync_kernel_runs_without_faults(arch):
    x = np.arange(48 * 64, dtype=np.float32).reshape(48, 64) / 100
    out = np.zeros_like(x)
    report = pl.jit(chain, arch=arch).options(check="raise")(x, out)
    np.testing.assert_allclose(out, 6 * x, rtol=1e-6)
    assert report.faults == []


def manual(barrier: bool):
    def kernel(x: F32, out: F32):
        t = pl.make_tile(VEC, addr=0, size=4096)
        u = pl.make_tile(VEC, addr=0x1000, size=4096)
        with pl.section_vector():
            pl.load(t, x, [0, 0])
            pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.V, event_id=0)
            pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.V, event_id=0)
            pl.add(u, t, t)                                  # <- add
            if barrier:
                pl.system.barrier(P.V)
            pl.muls(u, u, 3.0)                               # <- muls
            pl.system.sync_src(set_pipe=P.V, wait_pipe=P.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=P.V, wait_pipe=P.MTE3, event_id=0)
            pl.store(out, u, [0, 0])
    return kernel


def test_removing_the_v_barrier_is_caught_with_both_lines_on_a2a3():
    x = np.ones((16, 64), np.float32)
    pl.jit(manual(True), arch="a2a3", auto_mutex=False).options(check="raise")(x, np.zeros_like(x))
    fn = manual(False)
    with pytest.raises(RaceError) as info:
        pl.jit(fn, arch="a2a3", auto_mutex=False).options(check="raise")(x, np.zeros_like(x))
    text = str(info.value)
    assert "same-pipe hazard" in text and "inside the V queue" in text
    assert line_of(fn, "add") in text and line_of(fn, "muls") in text
    pl.jit(fn, arch="a5", auto_mutex=False).options(check="raise")(x, np.zeros_like(x))  # in order on a5


def two_stores(barrier: bool):
    def kernel(x: F32, out: F32):
        t = pl.make_tile(VEC, addr=0, size=4096)
        u = pl.make_tile(VEC, addr=0x1000, size=4096)
        with pl.section_vector():
            pl.load(t, x, [0, 0])
            pl.load(u, x, [16, 0])
            pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=0)
            pl.store(out, t, [0, 0])                         # <- first
            if barrier:
                pl.system.bar_mte3()
            pl.store(out, u, [0, 0])                         # <- second
    return kernel


def test_two_mte3_copies_to_one_gm_window_need_bar_mte3_on_a5():
    x = np.arange(32 * 64, dtype=np.float32).reshape(32, 64)
    out = np.zeros((16, 64), np.float32)
    pl.jit(two_stores(True), arch="a5", auto_mutex=False).options(check="raise")(x, out)
    np.testing.assert_array_equal(out, x[16:])
    fn = two_stores(False)
    with pytest.raises(RaceError) as info:
        pl.jit(fn, arch="a5", auto_mutex=False).options(check="raise")(x, out)
    text = str(info.value)
    assert "inside the MTE3 queue" in text and line_of(fn, "first") in text and line_of(fn, "second") in text
