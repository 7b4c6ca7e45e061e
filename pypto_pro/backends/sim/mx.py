"""Numerics of the MX (microscaling) Cube path: FP8 / FP4 mantissas times E8M0 group scales.

Values (PTO-ISA ``include/pto/cpu/MXTypes.hpp``; OCP MX formats):

* FP8 E4M3FN (bias 7, no infinities, ``S.1111.111`` NaN) and E5M2 (bias 15, IEEE-like): their
  ml_dtypes types decode them.
* FP4 E2M1 (bias 1): 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives; FP4 E1M2 (bias 1, no
  implicit one below exponent 1): 0, 0.25 .. 1.75 in steps of 0.25 and their negatives. No
  infinities or NaNs. Two codes a byte, the first in the low nibble.
* E8M0 scale: ``2 ** (code - 127)``; code 0xFF is NaN (it propagates into the product).

``TMATMUL_MX``: ``dst[i, j] (+)= sum_k a[i, k] * b[k, j] * sa[i, k // 32] * sb[k // 32, j]``;
every product is exact in float64 and the sum is rounded once to fp32, as ``pl.matmul`` does.
"""
from __future__ import annotations

import numpy as np

from pypto_pro.backends.sim.fractal import values as region_values
from pypto_pro.backends.sim.gm_strided import unpack_codes

GROUP = 32  # K elements sharing one E8M0 scale

FP4_VALUES = {
    "DT_FP4E2M1": np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0], np.float64),
    "DT_FP4E1M2": np.array([0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75], np.float64),
}


def decode_fp4(codes: np.ndarray, dtype_name: str) -> np.ndarray:
    mag = FP4_VALUES[dtype_name][codes & 0x7]
    return np.where(codes & 0x8, -mag, mag)


def operand(view, rows: int, cols: int, dtype) -> np.ndarray:
    """A tile's ``rows x cols`` values as float64 (``view``: the tile's logical view; bytes for FP4)."""
    if dtype.packed:
        raw = np.asarray(region_values(view[:rows, :(cols + 1) // 2]), np.uint8)
        return decode_fp4(unpack_codes(raw, cols), dtype.name)
    return np.asarray(region_values(view[:rows, :cols])).astype(np.float64)


def matmul_mx(a: np.ndarray, b: np.ndarray, sa: np.ndarray, sb: np.ndarray) -> np.ndarray:
    """``[M, K] x [K, N]`` with ``sa`` [M, K/32] and ``sb`` [K/32, N] scales (float64 values), in float64."""
    k = a.shape[1]
    sa_full = np.repeat(sa, GROUP, axis=1)[:, :k]
    sb_full = np.repeat(sb, GROUP, axis=0)[:k, :]
    with np.errstate(invalid="ignore", over="ignore"):
        return (a * sa_full) @ (b * sb_full)


# ---- encoding into the MX mantissa types (TCVT f32 -> e4m3 / e5m2, bf16 -> e2m1 / e1m2: #rnd #sat) ----

def _grid(dtype_name: str) -> tuple[np.ndarray, np.ndarray, int, int]:
    """(non-negative finite values ascending, their codes, the sign bit, the NaN code or -1)."""
    if dtype_name in FP4_VALUES:
        return FP4_VALUES[dtype_name], np.arange(8, dtype=np.uint8), 0x8, -1
    import ml_dtypes
    t = ml_dtypes.float8_e4m3fn if dtype_name == "DT_FP8E4M3FN" else ml_dtypes.float8_e5m2
    codes = np.arange(0x80, dtype=np.uint8)
    vals = codes.view(t).astype(np.float64)
    keep = np.isfinite(vals)
    return vals[keep], codes[keep], 0x80, 0x7F


def encode(x: np.ndarray, dtype_name: str, mode: str) -> np.ndarray:
    """Codes of ``x`` (float64-exact values) in an MX mantissa type, rounded by ``mode`` (``rint`` ties to
    even, ``round`` ties away, ``floor``, ``ceil``, ``trunc``) and saturated to the largest finite value
    (the ``#sat`` of PTO-ISA's a5 conversions); NaN becomes the type's NaN (FP4 has none: 0)."""
    vals, codes, sign_bit, nan_code = _grid(dtype_name)
    x = np.asarray(x, np.float64)
    neg = np.signbit(x)
    mag = np.minimum(np.abs(x), vals[-1])  # saturate (+-inf too)
    mag = np.where(np.isnan(mag), 0.0, mag)
    i = np.clip(np.searchsorted(vals, mag, side="right") - 1, 0, len(vals) - 1)
    j = np.minimum(i + 1, len(vals) - 1)
    lo, hi = vals[i], vals[j]
    exact = lo == mag
    if mode in ("trunc",):
        up = np.zeros_like(exact)
    elif mode in ("floor", "ceil"):
        up = ~exact & (neg if mode == "floor" else ~neg)  # away from zero on the magnitude
    else:
        d_lo, d_hi = mag - lo, hi - mag
        tie = d_lo == d_hi
        up = d_hi < d_lo
        tie_up = np.ones_like(tie) if mode == "round" else (codes[j] & 1) == 0
        up = np.where(tie & ~exact, tie_up, up) & ~exact
    out = np.where(up, codes[j], codes[i]).astype(np.uint8)
    out = out | np.where(neg, sign_bit, 0).astype(np.uint8)
    if nan_code >= 0:
        out = np.where(np.isnan(x), nan_code, out).astype(np.uint8)
    return out
