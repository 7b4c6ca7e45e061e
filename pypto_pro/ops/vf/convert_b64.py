"""``vf.astype`` paths with a 64-bit side (astype.md tables 1, 2, 4, 5): INT32 -> INT64, FP32 -> INT64,
INT64 -> INT32, INT64 -> FP32.

A register holds 32 int64 lanes; each of these is a 2x width change, so ``layout`` ZERO / ONE picks
the even / odd 32-bit lanes (as every 2x path of ``convert``). The numerics, lane by lane:

* INT32 -> INT64: exact (sign-extended).
* FP32 -> INT64: rounded to an integer by ``round_mode`` (exact in float64), NaN -> 0, +-inf and
  anything beyond the int64 range -> the extremes. The real backend emits this vcvt without a
  saturation operand (``backend_cce_vf_ops.cpp``, the cross-width ROUND + PART form), so
  ``saturate=`` is accepted and changes nothing: the result always clamps, as FP16 / BF16 -> INT32.
* INT64 -> INT32: unsaturated the low 32 bits, saturated clamped (astype.md table 6).
* INT64 -> FP32: one rounding of the exact integer by ``round_mode`` (int64 values are not all exact
  in float64, so each lane goes through a round-to-odd float64 and then one rounding to fp32, which is
  a single correct rounding; directed modes step from the nearest fp32 with an exact comparison).
"""
from __future__ import annotations

import numpy as np

from pypto_pro.backends.sim.numerics import _int_to_f64_round_to_odd, _round_to_int

_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1


def is_b64(src: np.dtype, dst: np.dtype) -> bool:
    return src.itemsize == 8 or dst.itemsize == 8


def _f32_to_i64(x: np.ndarray, mode: str) -> np.ndarray:
    x64 = x.astype(np.float64)
    nan = np.isnan(x64)
    r = _round_to_int(np.where(nan, 0.0, x64), mode)
    big = r >= 2.0 ** 63
    small = r < -(2.0 ** 63)
    ok = ~(big | small)
    out = np.zeros(x.shape, np.int64)
    out[ok] = r[ok].astype(np.int64)  # integral and inside the range: exact
    out[big] = _I64_MAX
    out[small] = _I64_MIN
    return out


def _i64_to_f32(x: np.ndarray, mode: str) -> np.ndarray:
    out = np.empty(x.shape, np.float32)
    for i, v in enumerate(x.tolist()):
        y = np.float32(_int_to_f64_round_to_odd(v))  # one correct RNE rounding (53 >= 24 + 2 bits)
        if mode != "rint":
            yi = int(y)
            if yi > v and (mode == "floor" or (mode == "trunc" and v >= 0)):
                y = np.nextafter(y, np.float32(-np.inf))
            elif yi < v and (mode == "ceil" or (mode == "trunc" and v < 0)):
                y = np.nextafter(y, np.float32(np.inf))
            elif mode == "round" and yi != v:
                lo, hi = (np.nextafter(y, np.float32(-np.inf)), y) if yi > v else (y, np.nextafter(y, np.float32(np.inf)))
                dlo, dhi = v - int(lo), int(hi) - v
                y = hi if (dhi < dlo or (dhi == dlo and v > 0)) else lo  # ties away from zero
        out[i] = y
    return out


def lanes(x: np.ndarray, dst: np.dtype, mode: str, sat: bool) -> np.ndarray:
    """``x`` (int32 / fp32 / int64 lanes) converted to ``dst`` (int64 / int32 / fp32) by the rules above."""
    if dst == np.int64:
        return x.astype(np.int64) if x.dtype.kind in "iu" else _f32_to_i64(x, mode)
    if dst == np.float32:
        return _i64_to_f32(x, mode)
    if sat:
        return np.clip(x, np.iinfo(dst).min, np.iinfo(dst).max).astype(dst)
    return x.astype(dst)  # the low bits
