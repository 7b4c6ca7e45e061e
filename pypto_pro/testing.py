"""Helpers for checking kernel results on the host: distances in units in the last place (ULP).

A kernel's output is usually judged against a reference in ULPs of its own dtype (fp16, bf16,
fp32, fp8): ``max_ulp_distance(y, ref) <= 1`` says every element is the correctly rounded value or
its neighbour. The functions take NumPy arrays or CPU torch tensors of the same float dtype;
``compare_to_reference`` also judges a result and describes how far off it is.
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


def compare_to_reference(y: Any, ref: Any, rtol: float = 2 ** -10, atol: float = 2 ** -24) -> tuple[bool, str]:
    """Judge ``y`` against ``ref`` (same float dtype): True when every element is finite and within
    ``atol + rtol * |ref|`` (the defaults: one fp16 ulp, plus the subnormal spacing), and a line
    saying how far off it is: max abs error, max ULP distance, how many elements differ."""
    a, r = _array(y, "y"), _array(ref, "ref")
    a32, r32 = a.astype(np.float32), r.astype(np.float32)
    ok = bool(np.isfinite(a32).all()) and bool(np.allclose(a32, r32, rtol=rtol, atol=atol))
    with np.errstate(invalid="ignore"):  # inf - inf: the error is NaN, and ok is already False
        err = float(np.abs(a32 - r32).max(initial=0.0))
    text = (f"max abs error {err:.3e} ({max_ulp_distance(a, r)} {a.dtype} ulp, "
            f"{int((a32 != r32).sum())} of {a.size} elements differ)")
    return ok, text
