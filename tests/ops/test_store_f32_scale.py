"""An a5 fixpipe store of an fp32 accumulator into fp32 GM multiplies by the scale (QF322F32_PRE)."""
import numpy as np

import pypto_pro.language as pl
from cube_kernels import matmul_from_gm, matmul_tiles

T = 32
MS = pl.MemorySpace


def test_fp32_out_is_scaled_on_a5():
    def kernel(a: pl.Tensor[[T, T], pl.DT_FP16], b: pl.Tensor[[T, T], pl.DT_FP16], out: pl.Tensor[[T, T], pl.DT_FP32]):
        tiles = matmul_tiles(T)
        with pl.section_cube():
            acc = matmul_from_gm(tiles, a, b)
            pl.store(out, acc, [0, 0], scale=0.0625)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((T, T)).astype(np.float16)
    b = rng.standard_normal((T, T)).astype(np.float16)
    out = np.zeros((T, T), np.float32)
    pl.jit(kernel, auto_mutex=True, arch="a5")(a, b, out)
    ref = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32) * np.float32(0.0625)
    np.testing.assert_array_equal(out, ref)
