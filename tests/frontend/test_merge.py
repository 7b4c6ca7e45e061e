"""Joins of values from several run-time paths (pypto_pro/frontend/merge.py): a helper's returns of
structs, make_tuple values and tiles of different buffers, each taken on the path that ran."""
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.errors import CompileError


def _ret_struct(flag, base):
    if flag:
        return pl.struct("JoinCtx", v=base + 0, w=base + 1)
    return pl.struct("JoinCtx", v=base + 10, w=base + 11)


def _ret_tuple(flag, base):
    if flag:
        return pl.make_tuple(lo=base, hi=base + 1)
    return pl.make_tuple(lo=base + 10, hi=base + 11)


@pl.jit()
def struct_kernel(out: pl.Tensor[[4], pl.DT_INT32], flag: pl.DT_BOOL, base: pl.DT_INT32):
    with pl.section_vector():
        ctx = _ret_struct(flag, base)
        t = _ret_tuple(flag, base)
        ctx.w = ctx.w + 100  # the join is its own object: writing it is fine
        pl.setval(out, 0, ctx.v)
        pl.setval(out, 1, ctx.w)
        pl.setval(out, 2, t.lo)
        pl.setval(out, 3, t.hi)


@pytest.mark.parametrize("flag, expected", [(True, [5, 106, 5, 6]), (False, [15, 116, 15, 16])])
def test_struct_and_tuple_returns_join(flag, expected):
    out = torch.zeros(4, dtype=torch.int32)
    struct_kernel(out, flag, 5)
    assert out.tolist() == expected


def _pick(flag, a, b):
    if flag:
        return a
    return b


@pl.jit(auto_mutex=True)
def tile_kernel(x: pl.Tensor[[16, 16], pl.DT_FP32], y: pl.Tensor[[16, 16], pl.DT_FP32],
                z: pl.Tensor[[16, 16], pl.DT_FP32], flag: pl.DT_BOOL):
    tt = pl.TileType(shape=[16, 16], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    a_db = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0, 1])
    b_db = pl.make_tile_group(type=tt, addrs=0x2000, mutex_ids=[2, 3])
    with pl.section_vector():
        ta, tb = a_db.next(), b_db.next()
        pl.set_validshape(ta, [8, 16])
        pl.load(ta, x, [0, 0])
        pl.load(tb, y, [0, 0])
        picked = _pick(flag, ta, tb)
        pl.add(picked, picked, picked)  # writes the chosen tile, whose valid shape came with it
        pl.store(z, picked, [0, 0])


@pytest.mark.parametrize("flag", [True, False])
def test_tiles_of_different_groups_join(flag):
    x, y = torch.randn(16, 16), torch.randn(16, 16)
    z = torch.zeros(16, 16)
    tile_kernel(x, y, z, flag)
    exp = torch.zeros(16, 16)
    if flag:
        exp[:8] = x[:8] * 2
    else:
        exp = y * 2
    assert torch.equal(z, exp)


def test_tiles_of_other_types_do_not_join():
    @pl.jit()
    def k(x: pl.Tensor[[16, 16], pl.DT_FP32], flag: pl.DT_BOOL):
        a = pl.make_tile(pl.TileType(shape=[16, 16], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec), addr=0)
        b = pl.make_tile(pl.TileType(shape=[8, 16], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec),
                         addr=0x2000)
        with pl.section_vector():
            t = _pick(flag, a, b)
            pl.load(t, x, [0, 0])

    with pytest.raises(CompileError, match="another tile type"):
        k.compile()


@pl.jit()
def if_join_kernel(x: pl.Tensor[[16, 16], pl.DT_FP32], z: pl.Tensor[[16, 16], pl.DT_FP32], n: pl.DT_INT32):
    tt = pl.TileType(shape=[16, 16], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    ga = pl.make_tile_group(type=tt, addrs=0x0, mutex_ids=[0])
    gb = pl.make_tile_group(type=tt, addrs=0x2000, mutex_ids=[1])
    with pl.section_vector():
        a, b = ga.current(), gb.current()
        pl.load(a, x, [0, 0])
        pl.load(b, x, [0, 0])
        if n > 0:
            t = a
        else:
            t = b
        pl.adds(t, t, 1.0)
        pl.adds(b, b, 10.0)
        pl.store(z, t, [0, 0])


@pytest.mark.parametrize("n", [1, 0])
def test_if_join_of_two_tiles(n):
    x = torch.randn(16, 16)
    z = torch.zeros(16, 16)
    if_join_kernel(x, z, n)
    assert torch.equal(z, x + 1.0 if n > 0 else (x + 1.0) + 10.0)  # t is b when n <= 0
