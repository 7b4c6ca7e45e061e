"""Never-written Acc columns through the fixpipe and the Vector core (sim/undefined.py): the matmul
writes N = 16 columns, the Acc's valid N is widened to 32 for the Acc -> Vec move (as the real
flash-attention kernels pad N to the fixpipe's alignment), the Vector core computes on all 32
columns, elementwise and by a column sum, and stores the live 16: a note, and the right result. Storing the
padding columns computed on is an UninitializedReadError naming the fixpipe move where the
never-written bytes entered; a row reduction over them (every row mixes in padding) also is."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import UninitializedReadError

R, K, N, NP = 16, 32, 16, 32
Mat, Left, Right, Acc, Vec = (pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right,
                              pl.MemorySpace.Acc, pl.MemorySpace.Vec)
V = [-1, -1]


def _kernel(stored: int, row_sum: bool = False):
    def padded(x: pl.Tensor[[R, K], pl.DT_FP16], w: pl.Tensor[[K, NP], pl.DT_FP16],
               out: pl.Tensor[[R, NP], pl.DT_FP32], col: pl.Tensor[[R, 1], pl.DT_FP32],
               csum: pl.Tensor[[1, NP], pl.DT_FP32]):
        a1 = pl.make_tile_group(type=pl.TileType([R, K], pl.DT_FP16, Mat), addrs=[0], mutex_ids=[0])[0]
        b1 = pl.make_tile_group(type=pl.TileType([K, NP], pl.DT_FP16, Mat, valid_shape=V), addrs=[0x4000],
                                mutex_ids=[1])[0]
        a0 = pl.make_tile_group(type=pl.TileType([R, K], pl.DT_FP16, Left), addrs=[0], mutex_ids=[2])[0]
        b0 = pl.make_tile_group(type=pl.TileType([K, NP], pl.DT_FP16, Right, valid_shape=V), addrs=[0],
                                mutex_ids=[3])[0]
        acc = pl.make_tile_group(type=pl.TileType([R, NP], pl.DT_FP32, Acc, valid_shape=V), addrs=[0],
                                 mutex_ids=[4])[0]
        ub = pl.make_tile_group(type=pl.TileType([R, NP], pl.DT_FP32, Vec, valid_shape=V), addrs=[0],
                                mutex_ids=[5])[0]
        sm = pl.make_tile_group(type=pl.TileType([R, 1], pl.DT_FP32, Vec, valid_shape=V), addrs=[0x4000],
                                mutex_ids=[6])[0]
        tmp = pl.make_tile_group(type=pl.TileType([R, NP], pl.DT_FP32, Vec), addrs=[0x8000], mutex_ids=[7])[0]
        cs = pl.make_tile_group(type=pl.TileType([1, NP], pl.DT_FP32, Vec, valid_shape=V), addrs=[0xC000],
                                mutex_ids=[8])[0]
        with pl.section_cube():
            pl.set_validshape(b1, [K, N])
            pl.set_validshape(b0, [K, N])
            pl.set_validshape(acc, [R, N])
            pl.load(a1, x, [0, 0])
            pl.load(b1, w, [0, 0])
            pl.move(a0, a1)
            pl.move(b0, b1)
            pl.matmul(acc, a0, b0)
            pl.set_validshape(acc, [R, NP])  # the fixpipe moves all 32 columns
            pl.set_validshape(ub, [R, NP])
            pl.move(ub, acc, acc_to_vec_mode=pl.AccToVecMode.SingleModeVec0)
            pl.system.set_cross_core(pipe=pl.PipeType.FIX, event_id=1)
        with pl.section_vector():
            if pl.get_subblock_idx() == 0:
                pl.system.wait_cross_core(pipe=pl.PipeType.V, event_id=1)
                pl.set_validshape(ub, [R, NP])
                pl.exp(ub, ub)
                pl.set_validshape(cs, [1, NP])
                pl.sum(cs, ub, tmp, dim=1)  # one value per column: the padding stays in its columns
                pl.set_validshape(cs, [1, stored])
                pl.store(csum, cs, [0, 0])
                if row_sum:
                    pl.sum(sm, ub, tmp, dim=0)
                    pl.store(col, sm, [0, 0])
                pl.set_validshape(ub, [R, stored])
                pl.store(out, ub, [0, 0])
    return pl.jit(padded, arch="a5", auto_mutex=True)


def _args():
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((R, K)) / 8).astype(np.float16)
    w = (rng.standard_normal((K, NP)) / 8).astype(np.float16)
    return x, w, np.zeros((R, NP), np.float32), np.zeros((R, 1), np.float32), np.zeros((1, NP), np.float32)


def test_padding_columns_computed_on_and_left_out_of_the_store_are_a_note():
    x, w, out, col, csum = _args()
    k = _kernel(N)
    k[None, 1](x, w, out, col, csum)
    want = np.exp(x.astype(np.float32) @ w[:, :N].astype(np.float32))
    np.testing.assert_allclose(out[:, :N], want, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(csum[0, :N], want.sum(axis=0), rtol=1e-3, atol=1e-3)
    assert (out[:, N:] == 0).all()
    notes = [n for n in k.last_report.notes if "nothing in this block wrote" in n]
    assert len(notes) == 1 and "reads Acc bytes" in notes[0], k.last_report.notes


def test_storing_the_padding_columns_is_a_fault():
    with pytest.raises(UninitializedReadError, match=r"store on AIV0.MTE3 .* computed from padding.*"
                                                      r"entered where .* reads Acc bytes"):
        _kernel(NP)[None, 1](*_args())


def test_a_row_reduction_over_the_padding_is_a_fault():
    with pytest.raises(UninitializedReadError, match=r"computed from padding"):
        _kernel(N, row_sum=True)[None, 1](*_args())
