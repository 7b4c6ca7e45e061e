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
