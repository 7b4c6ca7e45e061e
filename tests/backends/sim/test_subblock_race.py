"""Both Vector cores of a block run ``pl.section_vector()``: two of them reading and writing the
same global bytes with nothing ordering them race (on the chip the result depends on which core's
store lands first); the RaceError says so and names the fix."""
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.errors_sim import RaceError

M = 32
Mat, Left, Right, Acc, Vec = (pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right, pl.MemorySpace.Acc,
                              pl.MemorySpace.Vec)


def _kernel(split: bool):
    @pl.jit(arch="a5", auto_mutex=True)
    def kernel(a: pl.Tensor[[M, M], pl.DT_FP16], b: pl.Tensor[[M, M], pl.DT_FP16], x: pl.Tensor[[M, M], pl.DT_FP32],
               out: pl.Tensor[[M, M], pl.DT_FP32]):
        a1 = pl.make_tile_group(type=pl.TileType([M, M], pl.DT_FP16, Mat), addrs=0, mutex_ids=[0])
        b1 = pl.make_tile_group(type=pl.TileType([M, M], pl.DT_FP16, Mat), addrs=0x4000, mutex_ids=[1])
        a0 = pl.make_tile_group(type=pl.TileType([M, M], pl.DT_FP16, Left), addrs=0, mutex_ids=[2])
        b0 = pl.make_tile_group(type=pl.TileType([M, M], pl.DT_FP16, Right), addrs=0, mutex_ids=[3])
        c0 = pl.make_tile_group(type=pl.TileType([M, M], pl.DT_FP32, Acc), addrs=0, mutex_ids=[4])
        rows = M // 2 if split else M
        mm = pl.make_tile_group(type=pl.TileType([rows, M], pl.DT_FP32, Vec), addrs=0, mutex_ids=[5])
        xv = pl.make_tile_group(type=pl.TileType([rows, M], pl.DT_FP32, Vec), addrs=0x2000, mutex_ids=[6])
        with pl.section_cube():
            pl.load(a1[0], a, [0, 0])
            pl.load(b1[0], b, [0, 0])
            pl.move(a0[0], a1[0])
            pl.move(b0[0], b1[0])
            pl.matmul(c0[0], a0[0], b0[0])
            pl.store(out, c0[0], [0, 0])
            pl.system.set_cross_core(pipe=pl.PipeType.FIX, event_id=0)
        with pl.section_vector():
            row = pl.get_subblock_idx() * rows if split else 0
            pl.system.wait_cross_core(pipe=pl.PipeType.MTE2, event_id=0)
            pl.load(mm[0], out, [row, 0])
            pl.load(xv[0], x, [row, 0])
            pl.add(mm[0], mm[0], xv[0])
            pl.store(out, mm[0], [row, 0])
    return kernel


def _data():
    torch.manual_seed(0)
    return torch.randn(M, M).half(), torch.randn(M, M).half(), torch.randn(M, M), torch.zeros(M, M)


def test_both_vector_cores_updating_the_same_rows_race():
    with pytest.raises(RaceError, match="both Vector cores of the block run pl.section_vector"):
        _kernel(split=False)(*_data())


@pytest.mark.slow
def test_split_by_subblock_runs():
    a, b, x, out = _data()
    _kernel(split=True)(a, b, x, out)
    torch.testing.assert_close(out, a.float() @ b.float() + x, atol=1e-2, rtol=1e-2)
