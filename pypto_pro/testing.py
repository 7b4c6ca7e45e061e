"""Helpers for checking kernel results on the host: distances in units in the last place (ULP).

A kernel's output is usually judged against a reference in ULPs of its own dtype (fp16, bf16,
fp32, fp8): ``max_ulp_distance(y, ref) <= 1`` says every element is the correctly rounded value or
its neighbour. Both functions take NumPy arrays or CPU torch tensors of the same float dtype.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto_pro.runtime.binding import to_numpy

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32}


def _array(x: Any, name: str) -> np.ndarray:
    arr = to_numpy(x, name)
    if arr is None:
        raise TypeError(f"{name}: expected a NumPy array or a CPU torch tensor, got {type(x).__name__}")
    return arr


def ulp_diff(a: Any, b: Any) -> np.ndarray:
    """Element-wise distance in representable steps between two same-dtype float arrays.

    +0 and -0 are 0 apart; a pair of NaNs is 0 apart (so NaN == NaN counts as a match)."""
    a, b = _array(a, "a"), _array(b, "b")
    if a.dtype != b.dtype:
        raise TypeError(f"ulp_diff needs one dtype, got {a.dtype} and {b.dtype}")
    if a.dtype.itemsize not in _UINT or a.dtype.kind not in "fV":
        raise TypeError(f"ulp_diff supports 8-, 16- and 32-bit floats, not {a.dtype}")
    bits = a.dtype.itemsize * 8

    def ordered(x: np.ndarray) -> np.ndarray:  # monotonic in the float's value
        v = np.ascontiguousarray(x).view(_UINT[x.dtype.itemsize]).astype(np.int64)
        mag = v & ((1 << (bits - 1)) - 1)
        return np.where(v >> (bits - 1) == 1, -mag, mag)

    both_nan = np.isnan(a.astype(np.float32)) & np.isnan(b.astype(np.float32))
    return np.where(both_nan, 0, np.abs(ordered(a) - ordered(b)))


def max_ulp_distance(a: Any, b: Any) -> int:
    """The largest :func:`ulp_diff` over all elements (0 for empty arrays or identical values)."""
    return int(ulp_diff(a, b).max(initial=0))
