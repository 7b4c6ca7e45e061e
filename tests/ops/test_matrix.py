"""The Cube's a5 input types (fp8, HiFloat8), Mat -> Bias widening, and pl.system.set_mm_layout_transform."""
import ml_dtypes
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.backends.sim import hf8
from pypto_pro.errors import CompileError

from cube_kernels import load_and_move, matmul_from_gm, matmul_tiles

T = 64
Mat, Left, Right, Acc, Bias = (pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right, pl.MemorySpace.Acc,
                               pl.MemorySpace.Bias)


def _mm_kernel(dt_a, dt_b, layout_switch=True, arch="a5"):
    def kernel(a: pl.Tensor[[T, T], dt_a], b: pl.Tensor[[T, T], dt_b], out: pl.Tensor[[T, T], pl.DT_FP32]):
        tiles = matmul_tiles(T, dt_a, dt_b)
        with pl.section_cube():
            if layout_switch:
                pl.system.set_mm_layout_transform(enabled=True)
            acc = matmul_from_gm(tiles, a, b)
            pl.store(out, acc, [0, 0])
            if layout_switch:
                pl.system.set_mm_layout_transform(enabled=False)
    return pl.jit(kernel, auto_mutex=True, arch=arch)


def test_hf8_table():
    v = hf8.VALUES
    assert v[0x00] == 0.0 and np.isnan(v[0x80])
    assert v[0x08] == 1.0 and v[0x88] == -1.0           # dot "0001": no exponent bits, 1.0
    assert v[0x09] == 1.125 and v[0x10] == 2.0 and v[0x18] == 0.5   # three mantissa bits; dot "001"
    assert v[0x01] == 2.0 ** -22                         # the smallest denormal
    assert np.nanmax(v[np.isfinite(v)]) == 2.0 ** 15
    assert np.isinf(v).sum() == 2


@pytest.mark.parametrize("fa,fb", [(ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3fn),
                                   (ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2)])
def test_fp8_matmul_is_exact_products_summed_once(fa, fb):
    dta = pl.DT_FP8E4M3FN if fa is ml_dtypes.float8_e4m3fn else pl.DT_FP8E5M2
    dtb = pl.DT_FP8E4M3FN if fb is ml_dtypes.float8_e4m3fn else pl.DT_FP8E5M2
    rng = np.random.default_rng(0)
    a = rng.standard_normal((T, T)).astype(fa)
    b = rng.standard_normal((T, T)).astype(fb)
    out = np.zeros((T, T), np.float32)
    report = _mm_kernel(dta, dtb)(a, b, out)
    assert report.faults == []
    ref = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(out, ref)


def test_hf8_matmul_decodes_its_bytes():
    rng = np.random.default_rng(1)
    a = rng.integers(0x08, 0x38, (T, T), dtype=np.uint8)   # moderate positive values
    b = rng.integers(0x88, 0xB8, (T, T), dtype=np.uint8)   # and negative ones
    out = np.zeros((T, T), np.float32)
    _mm_kernel(pl.DT_HF8, pl.DT_HF8)(a, b, out)
    np.testing.assert_array_equal(out, (hf8.decode(a) @ hf8.decode(b)).astype(np.float32))


def test_fp8_inputs_are_a5_only():
    with pytest.raises(CompileError, match="a2a3 Cube has no DT_FP8E4M3FN inputs"):
        _mm_kernel(pl.DT_FP8E4M3FN, pl.DT_FP8E4M3FN, layout_switch=False, arch="a2a3").compile()


def _layout_switch_kernel(value):
    def kernel(a: pl.Tensor[[T, T], pl.DT_FP16]):
        with pl.section_cube():
            pl.system.set_mm_layout_transform(enabled=value)
    return kernel


def test_set_mm_layout_transform_checks_its_argument():
    with pytest.raises(CompileError, match="'enabled' must be True or False"):
        pl.jit(_layout_switch_kernel(1), arch="a5").compile()
    with pytest.raises(CompileError, match="a5 only"):
        pl.jit(_layout_switch_kernel(True), arch="a2a3").compile()


@pytest.mark.parametrize("src", [pl.DT_FP16, pl.DT_BF16])
def test_mat_to_bias_widens_to_fp32(src):
    def kernel(bias: pl.Tensor[[1, T], src], a: pl.Tensor[[T, T], pl.DT_FP16], b: pl.Tensor[[T, T], pl.DT_FP16],
               out: pl.Tensor[[T, T], pl.DT_FP32]):
        c1 = pl.make_tile_group(type=pl.TileType([1, T], src, Mat), addrs=0x10000, mutex_ids=[0])[0]
        bt = pl.make_tile_group(type=pl.TileType([1, T], pl.DT_FP32, Bias), addrs=0, mutex_ids=[1])[0]
        tiles = a1, b1, xa, xb, acc = matmul_tiles(T, ids=(2, 3, 4, 5, 6))
        with pl.section_cube():
            pl.load(c1, bias, [0, 0])
            pl.move(bt, c1)
            load_and_move(tiles, a, b)
            pl.matmul(acc, xa, xb, bt)
            pl.store(out, acc, [0, 0])
    rng = np.random.default_rng(4)
    npdt = np.float16 if src is pl.DT_FP16 else ml_dtypes.bfloat16
    bias = rng.standard_normal((1, T)).astype(npdt)
    a = rng.standard_normal((T, T)).astype(np.float16)
    b = rng.standard_normal((T, T)).astype(np.float16)
    out = np.zeros((T, T), np.float32)
    pl.jit(kernel, auto_mutex=True, arch="a5")(bias, a, b, out)
    ref = a.astype(np.float64) @ b.astype(np.float64) + bias.astype(np.float64)
    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-5)


def test_mat_to_bias_rejects_a_table_overflow():
    def kernel(bias: pl.Tensor[[1, 40], pl.DT_FP32]):
        c1 = pl.make_tile(pl.TileType([1, 40], pl.DT_FP32, Mat), addr=0)
        bt = pl.make_tile(pl.TileType([1, 40], pl.DT_FP32, Bias), addr=0)
        with pl.section_cube():
            pl.load(c1, bias, [0, 0])
            pl.move(bt, c1)
    with pytest.raises(CompileError, match="bias table takes rows of a multiple of 64 bytes, at most 4096: 40 x DT_FP32 is 160 bytes"):
        pl.jit(kernel, arch="a5").compile()


def test_tmov_copies_the_destination_valid_shape_and_a_tail_store_leaves_the_rest():
    """A Mat holding 40 valid rows moved into a full Left tile (TMOV copies dst's valid shape), a full
    matmul, and a store of the Acc's 40 valid rows: the rows past the tail never reach GM."""
    def kernel(a: pl.Tensor[[40, T], pl.DT_FP16], b: pl.Tensor[[T, T], pl.DT_FP16], out: pl.Tensor[[40, T], pl.DT_FP32]):
        tiles = a1, b1, xa, xb, acc = matmul_tiles(T, tail=True)
        with pl.section_cube():
            pl.set_validshape(a1, [40, T])
            pl.set_validshape(acc, [40, T])
            matmul_from_gm(tiles, a, b)
            pl.store(out, acc, [0, 0])
    rng = np.random.default_rng(5)
    a = rng.standard_normal((40, T)).astype(np.float16)
    b = rng.standard_normal((T, T)).astype(np.float16)
    out = np.zeros((40, T), np.float32)
    report = pl.jit(kernel, auto_mutex=True, arch="a5")(a, b, out)
    assert report.faults == []
    np.testing.assert_allclose(out, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-4)


def test_store_converts_fp32_to_hf8_by_nearest_value():
    def kernel(a: pl.Tensor[[T, T], pl.DT_FP16], b: pl.Tensor[[T, T], pl.DT_FP16], out: pl.Tensor[[T, T], pl.DT_HF8]):
        tiles = matmul_tiles(T)
        with pl.section_cube():
            acc = matmul_from_gm(tiles, a, b)
            pl.store(out, acc, [0, 0])
    rng = np.random.default_rng(6)
    a = rng.standard_normal((T, T)).astype(np.float16)
    b = rng.standard_normal((T, T)).astype(np.float16)
    out = np.zeros((T, T), np.uint8)
    pl.jit(kernel, auto_mutex=True, arch="a5")(a, b, out)
    acc = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(out, hf8.encode(acc))
    err = np.abs(hf8.decode(out) - acc) / np.maximum(np.abs(acc), 1e-3)
    assert err.max() <= 0.25  # tapered: 3 mantissa bits near 1, 1 bit from 2**8 (half a step: 1/16 .. 1/4)


def test_matmul_takes_the_bias_positionally_only():
    """The real parser passes pl.matmul's extra arguments on by position: bias_tile=... is rejected."""
    def kernel(out: pl.Tensor[[T, T], pl.DT_FP32]):
        bt = pl.make_tile(pl.TileType([1, T], pl.DT_FP32, Bias), addr=0)
        xa = pl.make_tile(pl.TileType([T, T], pl.DT_FP16, Left), addr=0)
        xb = pl.make_tile(pl.TileType([T, T], pl.DT_FP16, Right), addr=0)
        acc = pl.make_tile(pl.TileType([T, T], pl.DT_FP32, Acc), addr=0)
        with pl.section_cube():
            pl.matmul(acc, xa, xb, bias_tile=bt)
            pl.store(out, acc, [0, 0])
    with pytest.raises(CompileError, match=r"pl.matmul\(bias_tile=...\): pass the bias positionally"):
        pl.jit(kernel, arch="a5").compile()
