"""``vf.astype``'s ``saturate`` on the ordinary (8-bit-and-wider integer, FP16 / BF16 / FP32) paths.

astype.md table 6; the default is ``SaturateMode.OFF`` (the real C++ backend passes ``RS_DISABLE``
unless ``saturate=ON``):

* float -> int: ON clamps to the type's range; OFF keeps the low bits of the rounded value
  (half 257 -> uint8 1); both send NaN to 0 and +-inf to the type's extremes. Float -> a wider int
  (FP16 / BF16 -> INT32, FP32 -> INT64) always clamps: the real backend's vcvt there takes no
  saturation operand, so ``saturate=`` (the page lists OFF / ON for BF16 -> INT32 and FP32 -> INT64)
  is accepted and changes nothing.
* int -> int narrowing: ON clamps, OFF keeps the low bits (int32 256 -> uint8 0); widening is exact,
  a signed source into an unsigned wider type clamps (the page: saturating only, negatives -> 0).
* float -> float narrowing (FP32 -> FP16 / BF16) and BF16 -> FP16 (same width, narrower range; the
  page and the real backend's check both take OFF / ON there): OFF is IEEE (NaN, +-inf kept,
  overflow per the rounding mode); ON sends NaN to 0 and +-inf / overflow to +-max.
* int -> float saturates (no OFF mode on the chip; none of the page's paths can overflow).

``saturate=ON`` where it does not apply (widening other than float -> int, same-width int -> float,
FP16 -> BF16, any conversion to FP32) is a located error, as the real backend's check.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from pypto_pro.language import dtypes as D


def applies(src: D.DataType, dst: D.DataType) -> bool:
    """Whether ``saturate`` chooses anything on this ordinary path."""
    if dst is D.DT_FP32 or (src.is_int() and dst.is_float()) or (src, dst) == (D.DT_FP16, D.DT_BF16):
        return False
    if src.is_float() and dst.is_int():
        return True  # a wider int takes saturate= without effect (it always clamps)
    if (src, dst) == (D.DT_BF16, D.DT_FP16):
        return True
    return dst.bits < src.bits  # int -> int, float -> float: narrowing only


def check(p, a, src: D.DataType, dst: D.DataType, given) -> bool:
    if given is None or given.name == "OFF":
        return False
    if not applies(src, dst):
        p.fail(a.node("saturate"), f"vf.astype(): saturate does not apply to {src.name} -> {dst.name} "
                                   "(a widening or exact conversion; leave it out)")
    return True


def wrap_float_to_int(x: np.ndarray, rounded: np.ndarray, dst: np.dtype) -> np.ndarray:
    """The unsaturated float -> int result: the low bits of the rounded value (float64, integral),
    NaN -> 0, +-inf -> the type's extremes."""
    info = np.iinfo(dst)
    bits = dst.itemsize * 8
    r = np.where(np.isfinite(rounded), rounded, 0.0)
    m = np.fmod(r, 2.0 ** bits)  # exact for integral float64 values
    m = np.where(m < 0, m + 2.0 ** bits, m).astype(np.uint64).astype(np.dtype(f"u{dst.itemsize}"))
    out = m.view(dst).copy()
    out[np.isposinf(x)] = info.max
    out[np.isneginf(x)] = info.min
    return out


def saturate_float(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The saturated float -> float result: NaN -> 0, +-inf -> +-max of y's type."""
    big = float(ml_dtypes.finfo(y.dtype).max)
    v = np.where(np.isnan(x), 0.0, y.astype(np.float64))
    return np.where(np.isinf(v), np.copysign(big, v), v).astype(y.dtype)


def _is_float(dt: np.dtype) -> bool:
    return dt.kind == "f" or dt == ml_dtypes.bfloat16  # ml_dtypes' bfloat16 has kind 'V'


def lanes(x: np.ndarray, dst: np.dtype, mode: str, sat: bool, cast) -> np.ndarray:
    """``x`` converted to ``dst`` by ``cast(x, dst, mode)`` (the saturating tile cast) with the
    unsaturated / saturated rules above."""
    if not sat and _is_float(x.dtype) and dst.kind in "iu" and dst.itemsize <= x.itemsize:
        from pypto_pro.backends.sim.numerics import _round_to_int
        x64 = x.astype(np.float64)
        return wrap_float_to_int(x64, _round_to_int(np.where(np.isnan(x64), 0.0, x64), mode), dst)
    if not sat and x.dtype.kind in "iu" and dst.kind in "iu" and dst.itemsize < x.itemsize:
        return x.astype(dst)  # the low bits
    res = cast(x, dst, mode)
    if sat and _is_float(x.dtype) and _is_float(dst):
        res = saturate_float(res, x)
    return res
