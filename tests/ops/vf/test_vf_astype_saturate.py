"""vf.astype's saturate on the ordinary paths (astype.md table 6; default OFF): float -> int keeps the low
bits unsaturated and clamps saturated, NaN -> 0 and +-inf -> the extremes either way; int -> int narrowing
likewise; float -> float narrowing is IEEE unsaturated, NaN -> 0 / +-max saturated; CAST_ODD (FP32 ->
FP16 only); the located errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.errors import CompileError
from pypto_pro.language import Vf as vf

from vf_kernels import ALL, NP, two_in_kernel


def _run(src_dt, dst_dt, values, sat=None, round_mode=None):
    n_src = 256 // (src_dt.bits // 8)
    ratio = max(1, src_dt.bits // dst_dt.bits)
    spread = max(1, dst_dt.bits // src_dt.bits)  # widening reads the even (layout ZERO) source lanes

    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=src_dt)
        full = vf.create_mask(pattern=ALL, dtype=dst_dt)
        x = vf.load_align(ta, 0)
        y = vf.astype(x, m, dtype=dst_dt, saturate=sat, round_mode=round_mode)
        vf.store_align(to, y, full)
    a = np.zeros(n_src, NP[src_dt])
    a[:spread * len(values):spread] = values
    t = torch.from_numpy(a.reshape(1, -1)) if src_dt is not pl.DT_BF16 else \
        torch.from_numpy(a.view(np.int16).reshape(1, -1).copy()).view(torch.bfloat16)
    out = torch.from_numpy(np.full((1, 256 // (dst_dt.bits // 8)), 7, NP[dst_dt]))
    two_in_kernel(body, src_dt, dst_dt)[None, 1](t, t, out)
    got = out.numpy()[0]
    return got[0::ratio][:len(values)], got


def test_fp16_to_uint8_keeps_the_low_bits_unless_saturated():
    vals = [257.0, -3.0, np.inf, -np.inf, np.nan, 255.4, 1000.0]
    off, raw = _run(pl.DT_FP16, pl.DT_UINT8, vals)
    np.testing.assert_array_equal(off, [1, 253, 255, 0, 0, 255, 1000 % 256])
    assert (raw[1::2] == 0).all()  # the odd bytes of a 2x narrowing (layout ZERO)
    on, _ = _run(pl.DT_FP16, pl.DT_UINT8, vals, pl.SaturateMode.ON)
    np.testing.assert_array_equal(on, [255, 0, 255, 0, 0, 255, 255])


def test_fp32_to_int16_wraps_unsaturated():
    vals = [40000.0, -40000.5, 3e9, np.nan, -np.inf]
    off, _ = _run(pl.DT_FP32, pl.DT_INT16, vals)
    ref = [40000 - 65536, -40000 + 65536, (3000000000 % 65536) - 65536 * ((3000000000 % 65536) >= 32768), 0, -32768]
    np.testing.assert_array_equal(off, ref)
    on, _ = _run(pl.DT_FP32, pl.DT_INT16, vals, pl.SaturateMode.ON)
    np.testing.assert_array_equal(on, [32767, -32768, 32767, 0, -32768])


def test_int32_to_uint8_narrowing():
    vals = [256, -1, 300, 77]
    off, raw = _run(pl.DT_INT32, pl.DT_UINT8, vals)
    np.testing.assert_array_equal(off, [0, 255, 44, 77])
    assert (np.delete(raw, np.arange(0, 256, 4)) == 0).all()
    on, _ = _run(pl.DT_INT32, pl.DT_UINT8, vals, pl.SaturateMode.ON)
    np.testing.assert_array_equal(on, [255, 0, 255, 77])


def test_fp32_to_fp16_overflow_and_nan():
    vals = [1e6, -1e6, np.nan, np.inf, 1.5]
    off, _ = _run(pl.DT_FP32, pl.DT_FP16, vals)
    assert off[0] == np.inf and off[1] == -np.inf and np.isnan(off[2]) and off[3] == np.inf and off[4] == 1.5
    on, _ = _run(pl.DT_FP32, pl.DT_FP16, vals, pl.SaturateMode.ON)
    np.testing.assert_array_equal(on, np.array([65504, -65504, 0, 65504, 1.5], np.float16))


def test_bf16_to_fp16_saturates_on_request():
    vals = [1e6, -1e6, np.nan, np.inf, 1.5, 6e4]
    off, _ = _run(pl.DT_BF16, pl.DT_FP16, vals)
    assert off[0] == np.inf and off[1] == -np.inf and np.isnan(off[2]) and off[3] == np.inf and off[4] == 1.5
    on, _ = _run(pl.DT_BF16, pl.DT_FP16, vals, pl.SaturateMode.ON)
    np.testing.assert_array_equal(on, np.array([65504, -65504, 0, 65504, 1.5, 59904], np.float16))  # 6e4 in bf16 is 59904


@pytest.mark.parametrize("sat", [None, pl.SaturateMode.OFF, pl.SaturateMode.ON])
def test_bf16_to_int32_always_clamps(sat):
    # the real backend's vcvt here has no saturation operand: saturate= is accepted and changes nothing
    vals = [3e9, -3e9, np.nan, -np.inf, 2.5]
    got, _ = _run(pl.DT_BF16, pl.DT_INT32, vals, sat)
    np.testing.assert_array_equal(got, [2 ** 31 - 1, -2 ** 31, 0, -2 ** 31, 2])


def test_cast_odd_rounds_fp32_to_fp16_to_odd():
    x = np.float32(1.0 + 2.0 ** -11)  # a tie between 1.0 and 1 + 2**-10: round to odd takes the odd one
    vals = [x, np.float32(1.0), np.float32(1.0 + 3 * 2.0 ** -12)]
    got, _ = _run(pl.DT_FP32, pl.DT_FP16, vals, round_mode=pl.VFRoundMode.CAST_ODD)
    bits = got.view(np.uint16)
    assert bits[0] & 1 == 1 and got[1] == 1.0 and bits[2] & 1 == 1


@pytest.mark.parametrize("src,dst,kw,msg", [
    (pl.DT_FP16, pl.DT_FP32, dict(sat=pl.SaturateMode.ON), "saturate does not apply to DT_FP16 -> DT_FP32"),
    (pl.DT_INT32, pl.DT_FP32, dict(sat=pl.SaturateMode.ON), "saturate does not apply"),
    (pl.DT_FP32, pl.DT_INT32, dict(round_mode=pl.VFRoundMode.CAST_ODD), "CAST_ODD rounds FP32 -> FP16 only"),
])
def test_saturate_and_odd_errors(src, dst, kw, msg):
    with pytest.raises(CompileError, match=msg) as e:
        _run(src, dst, [1.0], **kw)
    assert "test_vf_astype_saturate.py" in str(e.value)
