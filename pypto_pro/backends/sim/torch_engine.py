"""torch as the numeric engine for the fp16 elementwise work where it gives NumPy's bytes.

NumPy computes half precision without SIMD (about 10 ns an element here); torch's CPU kernels
convert to fp32, compute and round back with vector instructions (about 1 ns). For a binary
``+`` or ``/`` of two fp16 tiles both compute ``round_fp16(op_fp32(a, b))``: the fp32 result of an
fp16 ``+ - * /`` rounds to the correctly rounded fp16 (24 >= 2 x 11 + 2 significand bits, so the
double rounding is innocuous), and which NaN comes out is the same too. That is not assumed but
checked, for every one of the 2^32 operand pairs (``benchmarks/fp16_torch_exact.py``); the ops
it found to differ anywhere are not routed here: ``-`` and ``*`` pick the other operand's NaN
payload when both are NaN, ``maximum``/``minimum`` return a canonical NaN.

Used only when torch is already imported in the process (importing it costs more than most
launches; the bytes are the same either way) and the tile is large enough for torch's per-call
cost to pay (``MIN_ELEMENTS``). ``enabled = False`` turns it off (the tests compare both).
"""
from __future__ import annotations

import sys
from typing import Callable

import numpy as np

enabled = True
MIN_ELEMENTS = 2048  # below this NumPy's half loop is as fast as torch's call overhead

_FP16 = np.dtype(np.float16)
_OPS: dict[object, str] = {np.add: "add", np.divide: "div"}  # exhaustively byte-identical to NumPy's
_cache: dict[str, Callable | None] = {}


def _op(ufunc: object) -> Callable | None:
    name = _OPS.get(ufunc)
    if name is None:
        return None
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    fn = _cache.get(name)
    if fn is None:
        fn = _cache[name] = getattr(torch, name)
    return fn


def binary_fp16(ufunc: object, dst: np.ndarray, a: np.ndarray, b: object) -> bool:
    """``dst = ufunc(a, b)`` with torch when that is exact and worth it; False: not done (use NumPy)."""
    if not enabled or dst.dtype != _FP16 or dst.size < MIN_ELEMENTS or not isinstance(b, np.ndarray):
        return False
    if a.dtype != _FP16 or b.dtype != _FP16 or a.shape != dst.shape or b.shape != dst.shape:
        return False
    if not (a.flags.writeable and b.flags.writeable and dst.flags.writeable):  # torch warns on read-only arrays
        return False
    fn = _op(ufunc)
    if fn is None:
        return False
    for src in (a, b):  # torch refuses an output that partly overlaps an input; NumPy buffers it
        if np.may_share_memory(dst, src) and not _same(dst, src):
            return False
    if min(a.strides + b.strides + dst.strides) < 0:  # torch.from_numpy refuses negative strides
        return False
    from_numpy = sys.modules["torch"].from_numpy
    try:
        ta, tb, tdst = from_numpy(a), from_numpy(b), from_numpy(dst)
    except (TypeError, ValueError, RuntimeError):  # an array torch cannot wrap: nothing written yet
        return False
    fn(ta, tb, out=tdst)
    return True


def _same(x: np.ndarray, y: np.ndarray) -> bool:
    return (x.__array_interface__["data"][0] == y.__array_interface__["data"][0] and x.strides == y.strides)
