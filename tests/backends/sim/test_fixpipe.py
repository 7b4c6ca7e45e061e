"""The fixpipe's per-tensor quantisation (scale=) on the way out of L0C."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.backends.sim import fixpipe
from pypto_pro.errors import CompileError

from cube_kernels import matmul_from_gm, matmul_tiles

T = 64
Mat, Left, Right, Acc, Vec = (pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right, pl.MemorySpace.Acc,
                              pl.MemorySpace.Vec)


def test_int8_rounds_half_to_even_and_clamps_signed():
    deq = fixpipe.encode(0.5, "DT_INT8")
    src = np.array([[1.0, 3.0, 5.0, -3.0, 1000.0, -1000.0]], np.float32)   # * 0.5 -> .5 ties, overflow
    np.testing.assert_array_equal(fixpipe.quantize(src, np.int8, deq, False), [[0, 2, 2, -2, 127, -128]])


def test_without_the_signed_bit_int8_saturates_at_zero():
    deq = fixpipe.encode(1.0, "DT_FP16")   # no bit 46: the unsigned range
    out = fixpipe.quantize(np.array([[-5.0, 300.0]], np.float32), np.uint8, deq, False)
    np.testing.assert_array_equal(out, [[0, 255]])


def test_fp16_saturates_finite_values_and_keeps_inf():
    deq = fixpipe.encode(2.0, "DT_FP16")
    out = fixpipe.quantize(np.array([[40000.0, np.inf, -1.5]], np.float32), np.float16, deq, False)
    assert out[0, 0] == np.float16(65504) and np.isinf(out[0, 1]) and out[0, 2] == -3.0
    # from int32 (DEQF16) inf cannot occur and every value clamps
    out = fixpipe.quantize(np.array([[100000]], np.int32), np.float16, fixpipe.encode(1.0, "DT_FP16"), False)
    assert out[0, 0] == np.float16(65504)


def test_relu_applies_after_the_clamp():
    deq = fixpipe.encode(1.0, "DT_INT8")
    out = fixpipe.quantize(np.array([[-300.0, 7.4, np.nan]], np.float32), np.float16, deq, True)
    np.testing.assert_array_equal(out, np.array([[0, 7.4, 0]], np.float16))


def _store_kernel(out_dtype, scale, runtime=False):
    def kernel(a: pl.Tensor[[T, T], pl.DT_FP16], b: pl.Tensor[[T, T], pl.DT_FP16], out: pl.Tensor[[T, T], out_dtype],
               s: pl.DT_FP32):
        tiles = matmul_tiles(T)
        with pl.section_cube():
            acc = matmul_from_gm(tiles, a, b)
            if runtime:
                pl.store(out, acc, [0, 0], scale=s)
            else:
                pl.store(out, acc, [0, 0], scale=scale)
    return pl.jit(kernel, auto_mutex=True, arch="a5")


@pytest.mark.parametrize("runtime", [False, True])
def test_store_quantises_to_int8(runtime):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((T, T)).astype(np.float16)
    b = rng.standard_normal((T, T)).astype(np.float16)
    out = np.zeros((T, T), np.int8)
    report = _store_kernel(pl.DT_INT8, 0.25, runtime)(a, b, out, 0.25)
    assert report.faults == []
    acc = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(out, np.clip(np.rint(acc * np.float32(0.25)), -128, 127).astype(np.int8))


@pytest.mark.parametrize("dtype,match", [(pl.DT_UINT8, "to UINT8 is not supported"),
                                         (pl.DT_BF16, "from DT_FP32 to BF16 is not supported")])
def test_scale_refuses_what_the_fixpipe_cannot_do(dtype, match):
    with pytest.raises(CompileError, match=match):
        _store_kernel(dtype, 2.0).compile()


def test_scale_on_a_vector_store_is_located():
    def kernel(x: pl.Tensor[[T, T], pl.DT_FP32]):
        t = pl.make_tile(pl.TileType([T, T], pl.DT_FP32, Vec), addr=0)
        with pl.section_vector():
            pl.load(t, x, [0, 0])
            pl.store(x, t, [0, 0], scale=2.0)
    with pytest.raises(CompileError, match=r"scale=\.\.\.\) is a fixpipe option"):
        pl.jit(kernel, arch="a5").compile()
