"""The MX Cube path in the emitted C++ (a5): FP8 mantissas through ND / transposed (Layout::DN) loads
into NZ / ZN Mat tiles, E8M0 pair-phase scales through MX_A_ND / MX_B_DN GlobalTensors (scale B stored [N, G/2, 2]) into the
fractal-32 ZZ / NN Mat tiles, TEXTRACT into Left / Right / ScaleLeft / ScaleRight, TMATMUL_MX and its
accumulating form. Built and run on PTO-ISA's CPU model (when PTO_ISA_ROOT is set) and compared with
the simulator to fp32 accumulation rounding."""
from __future__ import annotations

import os
import sys

import ml_dtypes
import numpy as np
import pytest

import pypto_pro.language as pl
from test_emitter import _emit, _run_on_pto_cpu, needs_pto

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "ops"))
import test_matrix_mx as tm  # noqa: E402

E8 = ml_dtypes.float8_e8m0fnu


def test_mx_kernel_emits_mx_layouts_and_tiles():
    _, _, out = _emit(tm._kernel(pl.DT_FP8E4M3FN, pl.DT_FP8E5M2, 2))
    src = out["kernel.cpp"]
    assert "#error" not in src
    for piece in ("Layout::MX_A_ND", "Layout::MX_B_DN", "TileLeftScale<float8_e8m0_t, 64, 2, DYNAMIC, DYNAMIC>",
                  "TileRightScale<float8_e8m0_t, 2, 64, DYNAMIC, DYNAMIC>", "SLayout::RowMajor, 32>",
                  "SLayout::ColMajor, 32>", "Layout::DN>", "TMATMUL_MX(", "TileLeft<float8_e4m3_t, 64, 64"):
        assert piece in src, piece


@needs_pto
@pytest.mark.parametrize("fa,fb,k_blocks", [(ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, 1),
                                            (ml_dtypes.float8_e5m2, ml_dtypes.float8_e4m3fn, 2)])
def test_mxfp8_matmul_matches_the_simulator(tmp_path, fa, fb, k_blocks):
    dt = {ml_dtypes.float8_e4m3fn: pl.DT_FP8E4M3FN, ml_dtypes.float8_e5m2: pl.DT_FP8E5M2}
    k = tm.T * k_blocks
    a, b, ea, eb, ref = tm._operands(fa, fb, k, np.random.default_rng(11 + k_blocks))
    arrays = {"a": a, "b": b, "scale_a": tm._pair_phase(ea).view(E8), "scale_b": tm._pair_phase(eb).view(E8),
              "out": np.zeros((tm.T, tm.T), np.float32)}
    got, sim = _run_on_pto_cpu(tmp_path, tm._kernel(dt[fa], dt[fb], k_blocks), arrays, block_dim=1)
    np.testing.assert_allclose(sim["out"], ref, rtol=1e-6, atol=1e-6)
    # the CPU model sums the K products in fp32, k by k; the simulator sums exactly and rounds once:
    # within a few fp32 ulps (a wrong scale or layout path would be off by powers of two)
    np.testing.assert_allclose(got["out"], sim["out"], rtol=2e-6, atol=1e-6)


@needs_pto
def test_mxfp4_packed_operands_and_logical_strides_match_the_simulator(tmp_path):
    """FP4 E2M1 x E1M2: packed bytes in GM (two codes a byte), pl.set_stride steps in logical 4-bit
    elements, float4_e2m1x2_t / float4_e1m2x2_t tiles."""
    rng = np.random.default_rng(9)
    ca = rng.integers(0, 16, size=(tm.T, tm.T)).astype(np.uint8)
    cb = rng.integers(0, 16, size=(tm.T, tm.T)).astype(np.uint8)
    pack = lambda c: ((c[:, 0::2] & 0xF) | (c[:, 1::2] << 4)).astype(np.uint8)  # noqa: E731
    ea = rng.integers(125, 130, size=(tm.T, tm.G)).astype(np.uint8)
    eb = rng.integers(125, 130, size=(tm.T, tm.G)).astype(np.uint8)
    arrays = {"a": pack(ca), "b": pack(cb), "scale_a": tm._pair_phase(ea), "scale_b": tm._pair_phase(eb),
              "out": np.zeros((tm.T, tm.T), np.float32)}
    got, sim = _run_on_pto_cpu(tmp_path, tm._kernel(pl.DT_FP4E2M1, pl.DT_FP4E1M2, fp4=True), arrays, block_dim=1)
    assert np.abs(sim["out"]).max() > 1
    np.testing.assert_allclose(got["out"], sim["out"], rtol=2e-6, atol=1e-6)
