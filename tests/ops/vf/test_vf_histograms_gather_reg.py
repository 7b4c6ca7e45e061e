"""vf.histograms (chistv2 / dhistv2: both bins, masked bytes, accumulation into the destination, 16-bit
wrap) and the reg -> reg form of vf.gather (vselr: index modulo the lane count, every element width),
against NumPy, and their located errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.errors import CompileError
from pypto_pro.language import Vf as vf

from vf_kernels import ALL, two_in_kernel

# histograms: both BinType and HistType values, an all-lanes and a VL64 mask, accumulation into the
# destination with the 16-bit wrap, its one dtype (DT_UINT8; others a located error, as the real
# backend's check) — the standard of issue 13. (gather's reg -> reg form is data_movement's.)
COVERED = frozenset({"histograms"})


def _hist_body(bin_type, hist_type, pattern, init):
    @pl.vector_function
    def body(ta, tb, to):
        m8 = vf.create_mask(pattern=pattern, dtype=pl.DT_UINT8)
        m16 = vf.create_mask(pattern=ALL, dtype=pl.DT_UINT16)
        x = vf.load_align(ta, 0, dtype=pl.DT_UINT8)
        h = vf.full(init, m16, dtype=pl.DT_UINT16)
        h = vf.histograms(x, m8, bin_type=bin_type, hist_type=hist_type)
        h = vf.histograms(x, m8, bin_type=bin_type, hist_type=hist_type)  # accumulates into h
        vf.store_align(to, h, m16)
    return body


@pytest.mark.parametrize("bin_type", [pl.BinType.BIN0, pl.BinType.BIN1])
@pytest.mark.parametrize("hist_type", [pl.HistType.ACCUMULATE, pl.HistType.FREQUENCY])
@pytest.mark.parametrize("pattern,n", [(ALL, 256), (pl.MaskPattern.VL64, 64)])
def test_histograms_count_active_bytes_into_the_destination(bin_type, hist_type, pattern, n):
    raw = np.random.default_rng(5).integers(0, 256, 256, dtype=np.uint8)
    raw[:8] = 127, 128, 0, 255, 127, 128, 0, 255
    a = torch.from_numpy(raw.reshape(1, 256))
    init = 65000  # the second call wraps for the cumulative bins near the top
    out = torch.full((1, 128), 7, dtype=torch.int16)
    two_in_kernel(_hist_body(bin_type, hist_type, pattern, init), pl.DT_UINT8, pl.DT_UINT16)[None, 1](a, a, out)
    counts = np.bincount(raw[:n], minlength=256)
    if hist_type is pl.HistType.ACCUMULATE:
        counts = np.cumsum(counts)  # BIN1 counts from 0 too (PTO-ISA THistogram)
    base = 128 if bin_type is pl.BinType.BIN1 else 0
    ref = (init + 2 * counts[base:base + 128]) % 65536
    np.testing.assert_array_equal(out.numpy()[0].view(np.uint16), ref)


def test_histograms_takes_uint8_only():
    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=pl.DT_UINT16)
        x = vf.load_align(ta, 0, dtype=pl.DT_UINT16)
        h = vf.full(0, m, dtype=pl.DT_UINT16)
        h = vf.histograms(x, m)
        vf.store_align(to, h, m)
    k = two_in_kernel(body, pl.DT_UINT16, pl.DT_UINT16)
    with pytest.raises(CompileError, match="counts DT_UINT8 values") as e:
        k.compile()
    assert "test_vf_histograms_gather_reg.py" in str(e.value)


GATHER_DTYPES = [(pl.DT_INT8, pl.DT_UINT8, torch.int8), (pl.DT_FP16, pl.DT_UINT16, torch.float16),
                 (pl.DT_FP32, pl.DT_UINT32, torch.float32), (pl.DT_INT32, pl.DT_UINT32, torch.int32)]


@pytest.mark.parametrize("dt,it,tt", GATHER_DTYPES)
def test_gather_reg_to_reg_wraps_indices_at_the_lane_count(dt, it, tt):
    lanes = 256 // (dt.bits // 8)
    g = np.random.default_rng(dt.bits)
    src = torch.from_numpy(g.integers(-100, 100, (1, lanes)).astype(np.float64)).to(tt)
    idx = g.integers(0, 4 * lanes if it is not pl.DT_UINT8 else 256, lanes)
    idx_raw = idx.astype({8: np.uint8, 16: np.uint16, 32: np.uint32}[it.bits]).view(
        {8: np.int8, 16: np.float16, 32: np.float32 if dt is pl.DT_FP32 else np.int32}[dt.bits])
    ib = torch.from_numpy(idx_raw.reshape(1, lanes).copy())

    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        ix = vf.load_align(tb, 0, dtype=it)
        y = vf.gather(x, ix)
        vf.store_align(to, y, m)
    out = torch.zeros((1, lanes), dtype=tt)
    two_in_kernel(body, dt)[None, 1](src, ib, out)
    np.testing.assert_array_equal(out.numpy()[0], src.numpy()[0][idx % lanes])


@pytest.mark.parametrize("extra,msg", [("mask", "takes no 'mask'"), ("wide", "as wide as the elements")])
def test_gather_reg_to_reg_errors(extra, msg):
    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=pl.DT_FP32)
        x = vf.load_align(ta, 0)
        if extra == "mask":
            ix = vf.load_align(tb, 0, dtype=pl.DT_UINT32)
            y = vf.gather(x, ix, m)
        else:
            ix = vf.load_align(tb, 0, dtype=pl.DT_UINT16)
            y = vf.gather(x, ix)
        vf.store_align(to, y, m)
    with pytest.raises(CompileError, match=msg):
        two_in_kernel(body, pl.DT_FP32).compile()
