"""HiFloat8 (``DT_HF8``) decoding: the value of each of the 256 byte patterns.

HiFloat8 is a tapered format: after the sign bit a prefix "dot" field says how many exponent bits
follow (4, 3, 2, 1 or 0: prefixes ``11``, ``10``, ``01``, ``001``, ``0001``), the exponent is
sign-magnitude with an implicit leading one, and the mantissa has 1, 2, 3, 3 and 3 bits; ``0000``
prefixes are denormals ``2**(m - 23)``. 0x00 is zero, 0x80 NaN, exponent 15 with mantissa 1 is
infinity. This is the HF8 reference decoder the real PyPTO Pro tests check the chip against
(``test_matmul_hf8_fp32.py``). PTO-ISA's CPU model (``include/pto/cpu/Hifloat8.hpp``) agrees except
for the 1- and 0-bit exponent forms, where it reads 4 and 5 mantissa bits (e.g. 0x09 is 1.125 on the
chip, 1.03125 there); we follow the chip.
"""
from __future__ import annotations

import math

import numpy as np


def _decode(byte: int) -> float:
    sign = -1.0 if byte & 0x80 else 1.0
    payload = byte & 0x7F
    if payload >> 3 == 0:
        m = payload & 0x07
        if m == 0:
            return math.nan if byte & 0x80 else 0.0
        return sign * 2.0 ** (m - 23)
    if payload >> 5 >= 1:
        ebits, rest = {3: 4, 2: 3, 1: 2}[payload >> 5], payload & 0x1F
    elif payload >> 4 == 1:
        ebits, rest = 1, payload & 0x0F
    else:
        ebits, rest = 0, payload & 0x07
    mbits = {4: 1, 3: 2}.get(ebits, 3)  # three mantissa bits below a 2-, 1- or 0-bit exponent
    raw_e, raw_m = rest >> mbits, rest & ((1 << mbits) - 1)
    exp = 0.0
    if ebits:
        neg = raw_e & (1 << (ebits - 1))
        mag = float((1 << (ebits - 1)) | (raw_e - neg))
        exp = -mag if neg else mag
    if ebits == 4 and exp == 15.0 and raw_m == 1:
        return sign * math.inf
    return sign * 2.0 ** exp * (1.0 + raw_m / (1 << mbits))


VALUES = np.array([_decode(b) for b in range(256)], dtype=np.float64)
VALUES.setflags(write=False)


def decode(raw: np.ndarray) -> np.ndarray:
    """float64 values of an array of HF8 bytes."""
    return VALUES[np.asarray(raw, dtype=np.uint8)]


_FINITE = np.flatnonzero(np.isfinite(VALUES))
_ORDER = _FINITE[np.argsort(VALUES[_FINITE], kind="stable")]
_SORTED = VALUES[_ORDER]


def encode(x: np.ndarray) -> np.ndarray:
    """HF8 bytes of float values: the nearest representable value (a tie goes to the larger magnitude),
    finite values beyond +-2**15 saturate, infinities stay infinite, NaN is 0x80."""
    x = np.asarray(x, dtype=np.float64)
    clipped = np.clip(x, _SORTED[0], _SORTED[-1])
    hi = np.clip(np.searchsorted(_SORTED, clipped), 1, len(_SORTED) - 1)
    lo = hi - 1
    dlo, dhi = clipped - _SORTED[lo], _SORTED[hi] - clipped
    pick_hi = (dhi < dlo) | ((dhi == dlo) & (clipped > 0))
    out = np.where(pick_hi, _ORDER[hi], _ORDER[lo]).astype(np.uint8)
    out = np.where(x == 0, np.uint8(0), out)
    out = np.where(np.isposinf(x), np.uint8(0x6F), out)
    out = np.where(np.isneginf(x), np.uint8(0xEF), out)
    return np.where(np.isnan(x), np.uint8(0x80), out).astype(np.uint8)
