"""An a5 fixpipe store of an fp32 accumulator into fp32 GM multiplies by the scale (QF322F32_PRE)."""
import numpy as np

import pypto_pro.language as pl

T = 32
MS = pl.MemorySpace


def test_fp32_out_is_scaled_on_a5():
    def kernel(a: pl.Tensor[[T, T], pl.DT_FP16], b: pl.Tensor[[T, T], pl.DT_FP16], out: pl.Tensor[[T, T], pl.DT_FP32]):
        a1 = pl.make_tile_group(type=pl.TileType([T, T], pl.DT_FP16, MS.Mat), addrs=0, mutex_ids=[0])[0]
        b1 = pl.make_tile_group(type=pl.TileType([T, T], pl.DT_FP16, MS.Mat), addrs=0x8000, mutex_ids=[1])[0]
        xa = pl.make_tile_group(type=pl.TileType([T, T], pl.DT_FP16, MS.Left), addrs=0, mutex_ids=[2])[0]
        xb = pl.make_tile_group(type=pl.TileType([T, T], pl.DT_FP16, MS.Right), addrs=0, mutex_ids=[3])[0]
        acc = pl.make_tile_group(type=pl.TileType([T, T], pl.DT_FP32, MS.Acc), addrs=0, mutex_ids=[4])[0]
        with pl.section_cube():
            pl.load(a1, a, [0, 0])
            pl.load(b1, b, [0, 0])
            pl.move(xa, a1)
            pl.move(xb, b1)
            pl.matmul(acc, xa, xb)
            pl.store(out, acc, [0, 0], scale=0.0625)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((T, T)).astype(np.float16)
    b = rng.standard_normal((T, T)).astype(np.float16)
    out = np.zeros((T, T), np.float32)
    pl.jit(kernel, auto_mutex=True, arch="a5")(a, b, out)
    ref = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32) * np.float32(0.0625)
    np.testing.assert_array_equal(out, ref)
