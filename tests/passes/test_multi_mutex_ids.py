"""Tile groups with several mutex ids per slot, ids shared by slots and groups (a5), ``mutex_ids=[]``,
and tiles of several groups joined by a run-time if or conditional expression."""
import re

import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.errors import CompileError

R, C = 16, 64
VT = pl.TileType(shape=[R, C], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
T8 = pl.Tensor[[R * 8, C], pl.DT_FP16]


def _locks(kernel, **kw) -> list[str]:
    text = kernel.compile(**kw).dumps["04_auto_sync.vector.ir"]
    return [ln.strip() for ln in text.splitlines() if "lock(buf_id=" in ln]


@pl.jit(arch="a5", auto_mutex=True)
def overlapping_multi_id(a: T8, b: T8, out: T8):
    ga = pl.make_tile_group(type=VT, addrs=0x0000, mutex_ids=[[0, 1], [1, 2]])
    gb = pl.make_tile_group(type=VT, addrs=0x4000, mutex_ids=[[3, 4, 5], [0, 1, 2]])
    with pl.section_vector():
        for i in pl.range(0, 8):
            ta = ga[i % 2]
            tb = gb[(i + 1) % 2]
            pl.load(ta, a, [i * R, 0])
            pl.load(tb, b, [i * R, 0])
            pl.add(ta, ta, tb)
            pl.store(out, ta, [i * R, 0])


def test_every_id_of_a_slot_is_locked_and_the_result_is_right():
    a, b = torch.rand(R * 8, C).half(), torch.rand(R * 8, C).half()
    out = torch.zeros_like(a)
    overlapping_multi_id(a, b, out)
    torch.testing.assert_close(out.float(), a.float() + b.float(), rtol=3e-3, atol=3e-3)
    locks = [ln for ln in _locks(overlapping_multi_id) if ln.startswith("[V") and "] lock" in ln]
    assert len(locks) == 2 + 3  # the add locks ga's 2 ids and gb's 3 ids
    text = overlapping_multi_id.compile().dumps["04_auto_sync.vector.ir"]
    # gb's run-time ids may equal ga's: each is guarded by != against ga's (its lock and its unlock)
    assert len(re.findall(r"if \(\(\[3, 0\]", text)) == 2


@pl.jit(arch="a5", auto_mutex=True)
def static_multi_id(a: T8, out: T8):
    g = pl.make_tile_group(type=VT, addrs=0x0000, mutex_ids=((6, 7), (8, 9)))
    with pl.section_vector():
        t0 = g[0]
        t1 = g[1]
        pl.load(t0, a, [0, 0])
        pl.load(t1, a, [R, 0])
        pl.add(t0, t0, t1)
        pl.store(out, t0, [0, 0])


def test_constant_slots_lock_their_ids_once_each_in_order():
    locks = [ln for ln in _locks(static_multi_id) if ln.startswith("[V") and "] lock" in ln]
    assert [re.search(r"buf_id=(\d+)", ln).group(1) for ln in locks] == ["6", "7", "8", "9"]
    a = torch.rand(R * 8, C).half()
    out = torch.zeros_like(a)
    static_multi_id(a, out)
    torch.testing.assert_close(out[:R].float(), a[:R].float() + a[R:2 * R].float(), rtol=3e-3, atol=3e-3)


@pl.jit(arch="a5", auto_mutex=True)
def repeated_ids_ring(a: T8, out: T8):
    g = pl.make_tile_group(type=VT, addrs=0x0000, mutex_ids=[0, 1, 2, 3, 0, 1, 2, 3])
    with pl.section_vector():
        for k in pl.range(0, 8):
            t = g[k % 8]
            pl.load(t, a, [k * R, 0])
            pl.exp(t, t)
            pl.store(out, t, [k * R, 0])


def test_slots_may_share_an_id_on_a5():
    a = torch.rand(R * 8, C).half()
    out = torch.zeros_like(a)
    repeated_ids_ring(a, out)
    torch.testing.assert_close(out.float(), torch.exp(a.float()), rtol=3e-3, atol=3e-3)


def test_empty_mutex_ids_is_a_group_without_auto_mutex():
    @pl.jit(arch="a5", auto_mutex=True)
    def kernel(a: T8, out: T8):
        g = pl.make_tile_group(type=VT, addrs=0x0000, mutex_ids=[], depth=2)
        with pl.section_vector():
            t = g.next()
            pl.load(t, a, [0, 0])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.store(out, t, [0, 0])
    assert _locks(kernel) == []
    line = next(ln for ln in kernel.compile().dumps["00_parse.ir"].splitlines() if ln.strip().startswith("g:"))
    assert "x2 @ [0x00000, 0x00800]" in line and "mutex_ids=" not in line
    a = torch.rand(R * 8, C).half()
    out = torch.zeros_like(a)
    kernel(a, out)
    assert torch.equal(out[:R], a[:R])


def test_a_join_of_groups_with_different_id_counts_is_an_error():
    @pl.jit(arch="a5", auto_mutex=True)
    def kernel(a: T8, out: T8):
        g1 = pl.make_tile_group(type=VT, addrs=0x0000, mutex_ids=[[0, 1]])
        g2 = pl.make_tile_group(type=VT, addrs=0x4000, mutex_ids=[2])
        with pl.section_vector():
            for k in pl.range(0, 2):
                t = g1[0]
                if k == 1:
                    t = g2[0]
                pl.load(t, a, [0, 0])
    with pytest.raises(CompileError, match="different ID counts"):
        kernel.compile()


# ---- tiles of several groups chosen at run time ------------------------------------------------------

ROW = pl.TileType(shape=[1, C], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
F = pl.Tensor[[8, C], pl.DT_FP32]


@pl.jit(auto_mutex=True)
def ternary_two_groups(src: F, dst: F):
    g0 = pl.make_tile_group(type=ROW, addrs=0x0000, mutex_ids=[4])
    g1 = pl.make_tile_group(type=ROW, addrs=[0x1000, 0x1400], mutex_ids=[5, 6])
    og = pl.make_tile_group(type=ROW, addrs=0x2000, mutex_ids=[7])
    with pl.section_vector():
        out = og.next()
        for r in pl.range(0, 8):
            a0 = g0.next()
            a1 = g1.next()
            ld = a0 if r % 3 == 0 else (a1 if r % 3 == 1 else a0)
            pl.load(ld, src, [r, 0])
            pl.muls(out, ld, 2.0)
            pl.store(dst, out, [r, 0])


@pl.jit(auto_mutex=True)
def elif_three_groups(src: F, dst: F):
    g0 = pl.make_tile_group(type=ROW, addrs=0x0000, mutex_ids=[4])
    g1 = pl.make_tile_group(type=ROW, addrs=[0x1000, 0x1400], mutex_ids=[5, 6])
    g2 = pl.make_tile_group(type=ROW, addrs=[0x2000, 0x2400, 0x2800], mutex_ids=[7, 8, 9])
    og = pl.make_tile_group(type=ROW, addrs=0x3000, mutex_ids=[10])
    with pl.section_vector():
        out = og.next()
        for r in pl.range(0, 8):
            a0 = g0.next()
            a1 = g1.next()
            a2 = g2.next()
            ld = a0
            if r % 3 == 0:
                ld = a0
            elif r % 3 == 1:
                ld = a1
            else:
                ld = a2
            pl.load(ld, src, [r, 0])
            pl.muls(out, ld, 2.0)
            pl.store(dst, out, [r, 0])


@pytest.mark.parametrize("kernel", [ternary_two_groups, elif_three_groups], ids=["ternary", "elif"])
def test_tiles_of_several_groups_chosen_at_run_time(kernel):
    src = torch.rand(8, C)
    dst = torch.zeros_like(src)
    kernel(src, dst)
    torch.testing.assert_close(dst, src * 2)


@pl.jit(arch="a5", auto_mutex=True)
def loop_carried_slots(a: T8, out: T8):
    g = pl.make_tile_group(type=VT, addrs=0x0000, mutex_ids=[20, 21, 22, 23])
    with pl.section_vector():
        first = g[1]
        last = g[1]
        for index in pl.range(0, 4):
            if index == 0:
                first = g[index]
            if index == 3:
                last = g[index]
        pl.load(first, a, [0, 0])
        pl.load(last, a, [R, 0])
        pl.add(first, first, last)
        pl.store(out, first, [0, 0])


def test_a_tile_reassigned_under_an_if_in_a_loop_is_carried_out_of_it():
    a = torch.rand(R * 8, C).half()
    out = torch.zeros_like(a)
    loop_carried_slots(a, out)  # if the slots were not carried, first == last and the sum would be 2 * a[R:]
    torch.testing.assert_close(out[:R].float(), a[:R].float() + a[R:2 * R].float(), rtol=3e-3, atol=3e-3)
