"""MX element codecs: FP4 tables, the FP8 / FP4 encoders (rounding modes, saturation) and pl.cast into them."""
import ml_dtypes
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.backends.sim import mx


def test_fp4_tables():
    codes = np.arange(16, dtype=np.uint8)
    e2m1 = mx.decode_fp4(codes, "DT_FP4E2M1")
    assert list(e2m1[:8]) == [0, 0.5, 1, 1.5, 2, 3, 4, 6] and list(e2m1[9:]) == [-0.5, -1, -1.5, -2, -3, -4, -6]
    e1m2 = mx.decode_fp4(codes, "DT_FP4E1M2")
    assert list(e1m2[:8]) == [0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75] and np.signbit(e1m2[8])


@pytest.mark.parametrize("name,t", [("DT_FP8E4M3FN", ml_dtypes.float8_e4m3fn), ("DT_FP8E5M2", ml_dtypes.float8_e5m2)])
def test_fp8_rint_matches_ml_dtypes_inside_the_range(name, t):
    x = np.random.default_rng(0).standard_normal(4096) * 8
    np.testing.assert_array_equal(mx.encode(x, name, "rint"), x.astype(np.float32).astype(t).view(np.uint8))


def test_rounding_modes_and_saturation():
    # e2m1 neighbours of 2.5 are 2 (code 4, even) and 3 (code 5)
    assert mx.encode(np.array([2.5]), "DT_FP4E2M1", "rint")[0] == 4
    assert mx.encode(np.array([2.5]), "DT_FP4E2M1", "round")[0] == 5
    assert mx.encode(np.array([-2.2]), "DT_FP4E2M1", "floor")[0] == 0x8 | 5
    assert mx.encode(np.array([-2.2]), "DT_FP4E2M1", "ceil")[0] == 0x8 | 4
    assert mx.encode(np.array([2.9]), "DT_FP4E2M1", "trunc")[0] == 4
    assert mx.encode(np.array([100.0, -np.inf]), "DT_FP4E2M1", "rint").tolist() == [7, 0xF]  # +-6
    sat = mx.encode(np.array([1e6, np.inf]), "DT_FP8E4M3FN", "rint").view(ml_dtypes.float8_e4m3fn)
    assert sat.astype(np.float32).tolist() == [448.0, 448.0]
    assert mx.encode(np.array([np.nan]), "DT_FP8E4M3FN", "rint")[0] == 0x7F


def test_cast_into_fp8_and_fp4_on_the_vector_core():
    def kernel(x: pl.Tensor[[16, 64], pl.DT_FP32], o8: pl.Tensor[[16, 64], pl.DT_FP8E4M3FN],
               o4: pl.Tensor[[16, 32], pl.DT_FP4E2M1]):
        V = pl.MemorySpace.Vec
        t = pl.make_tile_group(type=pl.TileType([16, 64], pl.DT_FP32, V), addrs=0x0, mutex_ids=[0])[0]
        h = pl.make_tile_group(type=pl.TileType([16, 64], pl.DT_BF16, V), addrs=0x1000, mutex_ids=[1])[0]
        f8 = pl.make_tile_group(type=pl.TileType([16, 64], pl.DT_FP8E4M3FN, V), addrs=0x2000, mutex_ids=[2])[0]
        f4 = pl.make_tile_group(type=pl.TileType([16, 64], pl.DT_FP4E2M1, V), addrs=0x3000, mutex_ids=[3])[0]
        with pl.section_vector():
            pl.load(t, x, [0, 0])
            pl.cast(f8, t, mode=pl.RoundMode.CAST_RINT)
            pl.store(o8, f8, [0, 0])
            pl.cast(h, t, mode=pl.RoundMode.CAST_RINT)
            pl.cast(f4, h, mode=pl.RoundMode.CAST_RINT)
            pl.set_stride(o4, [64, 1])  # the declared shape counts bytes; PTO strides count FP4 elements
            pl.store(o4, f4, [0, 0])
    x = (np.random.default_rng(1).standard_normal((16, 64)) * 3).astype(np.float32)
    o8 = np.zeros((16, 64), ml_dtypes.float8_e4m3fn)
    o4 = np.zeros((16, 32), np.uint8)
    pl.jit(kernel, auto_mutex=True, arch="a5")(x, o8, o4)
    np.testing.assert_array_equal(o8.view(np.uint8), x.astype(ml_dtypes.float8_e4m3fn).view(np.uint8))
    codes = mx.encode(x.astype(ml_dtypes.bfloat16).astype(np.float64), "DT_FP4E2M1", "rint")
    np.testing.assert_array_equal(o4, (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8))


def test_fp4_without_set_stride_walks_the_byte_strides_as_elements():
    """As on the chip: a [16, 32]-byte FP4 tensor's default row stride (32) counts FP4 elements, so rows overlap."""
    def kernel(x: pl.Tensor[[16, 32], pl.DT_FP4E2M1], out: pl.Tensor[[16, 32], pl.DT_FP4E2M1]):
        V = pl.MemorySpace.Vec
        t = pl.make_tile_group(type=pl.TileType([16, 64], pl.DT_FP4E2M1, V), addrs=0x0, mutex_ids=[0])[0]
        with pl.section_vector():
            pl.set_validshape(t, [2, 64])
            pl.load(t, x, [0, 0])
            pl.set_stride(out, [64, 1])
            pl.store(out, t, [0, 0])
    x = np.arange(16 * 32, dtype=np.uint8).reshape(16, 32)
    out = np.zeros((16, 32), np.uint8)
    pl.jit(kernel, auto_mutex=True, arch="a5")(x, out)
    np.testing.assert_array_equal(out[0], x[0])
    np.testing.assert_array_equal(out[1], np.concatenate([x[0, 16:], x[1, :16]]))  # row 1 starts 32 nibbles in
