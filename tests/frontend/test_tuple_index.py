"""``items[i]`` with a run-time ``i`` on a tuple built in kernel code (pypto_pro/frontend/tuple_index.py):
tiles of one type (ping-pong buffers), scalars, and the located errors for elements of several types."""
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.errors import CompileError

TT = pl.TileType(shape=[16, 16], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)


@pl.jit()
def pingpong_kernel(x: pl.Tensor[[64, 16], pl.DT_FP32], out: pl.Tensor[[64, 16], pl.DT_FP32]):
    with pl.section_vector():
        a = pl.make_tile(TT, addr=0x0000, size=1024)
        b = pl.make_tile(TT, addr=0x1000, size=1024)
        bufs = (a, b)
        for i in pl.range(0, 4):
            t = bufs[i % 2]  # a at even i, b at odd i
            pl.load(t, x, [i * 16, 0])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.add(t, t, t)
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.store(out, t, [i * 16, 0])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE3, wait_pipe=pl.PipeType.MTE2, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE3, wait_pipe=pl.PipeType.MTE2, event_id=0)
        # the last tile written through bufs[3 % 2] is b: reading b directly sees it
        pl.system.sync_src(set_pipe=pl.PipeType.MTE3, wait_pipe=pl.PipeType.V, event_id=1)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE3, wait_pipe=pl.PipeType.V, event_id=1)
        pl.mul(b, b, 2.0)
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.store(out, b, [0, 0])


def test_runtime_index_picks_each_tile():
    x = torch.randn(64, 16)
    out = torch.zeros(64, 16)
    pingpong_kernel(x, out)
    want = x * 2
    want[0:16] = x[48:64] * 4  # b held the last tile, doubled twice
    torch.testing.assert_close(out, want)


@pl.jit()
def scalar_kernel(out: pl.Tensor[[4], pl.DT_INT32], base: pl.DT_INT32):
    with pl.section_vector():
        vals = (base, base * 10, 7)
        for i in pl.range(0, 4):
            pl.setval(out, i, vals[i % 3])


def test_runtime_index_of_scalars():
    out = torch.zeros(4, dtype=torch.int32)
    scalar_kernel(out, 3)
    assert out.tolist() == [3, 30, 7, 3]


def test_runtime_index_of_ints_is_a_table():
    @pl.jit()
    def k(out: pl.Tensor[[3], pl.DT_INT32]):
        with pl.section_vector():
            ids = (5, 9, 2)
            for i in pl.range(0, 3):
                pl.setval(out, i, ids[i])
    out = torch.zeros(3, dtype=torch.int32)
    k(out)
    assert out.tolist() == [5, 9, 2]


def test_tiles_of_different_types_are_a_located_error():
    @pl.jit()
    def k(x: pl.Tensor[[16, 16], pl.DT_FP32]):
        with pl.section_vector():
            a = pl.make_tile(TT, addr=0, size=1024)
            b = pl.make_tile(pl.TileType(shape=[8, 16], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec),
                             addr=0x1000, size=512)
            for i in pl.range(0, 2):
                pl.load((a, b)[i], x, [0, 0])
    with pytest.raises(CompileError, match=r"elements of one type.*another tile type") as e:
        k(torch.zeros(16, 16))
    assert "test_tuple_index.py" in str(e.value)


def test_tile_and_scalar_mix_is_a_located_error():
    @pl.jit()
    def k(x: pl.Tensor[[16, 16], pl.DT_FP32]):
        with pl.section_vector():
            a = pl.make_tile(TT, addr=0, size=1024)
            for i in pl.range(0, 2):
                pl.load((a, 3)[i], x, [0, 0])
    with pytest.raises(CompileError, match="elements of one type, but element 0 is"):
        k(torch.zeros(16, 16))


def test_float_index_is_a_type_error():
    @pl.jit()
    def k(out: pl.Tensor[[2], pl.DT_INT32], f: pl.DT_FP32):
        with pl.section_vector():
            pl.setval(out, 0, (1, 2)[f])
    with pytest.raises(CompileError, match="tuple index must be an integer"):
        k(torch.zeros(2, dtype=torch.int32), 1.0)


# ---- names in reports: the user's tiles, not the join's generated name ------------------------------


def _racy_tuple_pick(x: pl.Tensor[[16, 16], pl.DT_FP32], y: pl.Tensor[[16, 16], pl.DT_FP32]):
    a = pl.make_tile(TT, addr=0x0000)
    grp = pl.make_tile_group(type=TT, addrs=[0x1000, 0x2000])
    bufs = pl.make_tuple(pair=(a, grp[1]))
    with pl.section_vector():
        t = bufs.pair[pl.get_block_idx() + 1]
        pl.load(t, x, [0, 0])
        pl.exp(t, t)  # no sync after the load: a race on grp[1]'s bytes
        pl.store(y, t, [0, 0])


def test_a_race_on_a_tuple_pick_names_the_users_tile():
    from pypto_pro.errors_sim import RaceError
    with pytest.raises(RaceError, match=r"Vec bytes 0x2000-0x2400 \(grp\[1\]\)") as info:
        pl.jit(_racy_tuple_pick, auto_mutex=False)(torch.zeros(16, 16), torch.zeros(16, 16))
    assert "_tuple_item" not in str(info.value)


def _wrong_dtype_tuple_pick(x: pl.Tensor[[16, 16], pl.DT_FP16], i: pl.DT_INT32):
    a = pl.make_tile(TT, addr=0x0000)
    b = pl.make_tile(TT, addr=0x1000)
    tiles = (a, b)
    with pl.section_vector():
        pl.load(tiles[i], x, [0, 0])


def test_a_compile_error_on_a_tuple_pick_names_the_tuple():
    with pytest.raises(CompileError, match=r"tile 'tiles' is DT_FP32") as info:
        pl.jit(_wrong_dtype_tuple_pick).compile()
    assert "_tuple_item" not in str(info.value)
