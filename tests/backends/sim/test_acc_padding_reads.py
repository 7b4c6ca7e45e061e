"""An Acc -> Vec move in DualModeSplitM / DualModeSplitN rounds the Acc's valid M up to even (N up to
32) and moves those padding rows / columns as they are: they are no data, so the never-written /
stale check looks only at the rows the matmul wrote; a valid shape widened past what the matmul
wrote is still a fault."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import UninitializedReadError

R, K, N = 16, 32, 32
Mat, Left, Right, Acc, Vec = (pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right,
                              pl.MemorySpace.Acc, pl.MemorySpace.Vec)


def _kernel(widen: bool):
    def odd_rows(x: pl.Tensor[[pl.DYNAMIC, K], pl.DT_FP16], w: pl.Tensor[[K, N], pl.DT_FP16],
                 out: pl.Tensor[[pl.DYNAMIC, N], pl.DT_FP32], m: pl.DT_INT32):
        a1 = pl.make_tile_group(type=pl.TileType([R, K], pl.DT_FP16, Mat), addrs=[0], mutex_ids=[0])[0]
        b1 = pl.make_tile_group(type=pl.TileType([K, N], pl.DT_FP16, Mat), addrs=[0x4000], mutex_ids=[1])[0]
        a0 = pl.make_tile_group(type=pl.TileType([R, K], pl.DT_FP16, Left), addrs=[0], mutex_ids=[2])[0]
        b0 = pl.make_tile_group(type=pl.TileType([K, N], pl.DT_FP16, Right), addrs=[0], mutex_ids=[3])[0]
        acc = pl.make_tile_group(type=pl.TileType([R, N], pl.DT_FP32, Acc), addrs=[0], mutex_ids=[4])[0]
        ub = pl.make_tile_group(type=pl.TileType([R // 2, N], pl.DT_FP32, Vec), addrs=[0], mutex_ids=[5])[0]
        with pl.section_cube():
            pl.set_validshape(a1, [m, K])
            pl.set_validshape(a0, [m, K])
            pl.set_validshape(acc, [m, N])
            pl.load(a1, x, [0, 0])
            pl.load(b1, w, [0, 0])
            pl.move(a0, a1)
            pl.move(b0, b1)
            pl.matmul(acc, a0, b0)
            if widen:
                pl.set_validshape(acc, [m + 2, N])  # two rows more than the matmul wrote
            pl.move(ub, acc, acc_to_vec_mode=pl.AccToVecMode.DualModeSplitM)
            pl.system.set_cross_core(pipe=pl.PipeType.FIX, event_id=1)
        with pl.section_vector():
            half = (m + 1) // 2
            sub = pl.get_subblock_idx()
            pl.system.wait_cross_core(pipe=pl.PipeType.MTE3, event_id=1)
            if sub == 0:
                pl.set_validshape(ub, [half, N])
                pl.store(out, ub, [0, 0])
            else:
                pl.set_validshape(ub, [m - half, N])
                pl.store(out, ub, [half, 0])
    return pl.jit(odd_rows, arch="a5", auto_mutex=True)


def _args(m: int):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((m, K)).astype(np.float16)
    w = rng.standard_normal((K, N)).astype(np.float16)
    return x, w, np.zeros((m, N), np.float32)


def test_an_odd_valid_m_moves_a_padding_row_that_is_no_fault():
    x, w, out = _args(7)
    _kernel(False)[None, 1](x, w, out, 7)
    np.testing.assert_allclose(out, x.astype(np.float32) @ w.astype(np.float32), rtol=1e-3, atol=1e-3)


def test_a_valid_shape_wider_than_the_matmul_wrote_is_still_a_fault():
    x, w, out = _args(7)
    with pytest.raises(UninitializedReadError, match="reads Acc bytes"):
        _kernel(True)[None, 1](x, w, np.zeros((9, N), np.float32), 7)
