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
cost to pay and small enough to stay on one thread (``MIN_ELEMENTS``, ``MAX_ELEMENTS``); and only
once this process's torch has passed a probe of the cases where builds could differ (``_probe``).
``enabled = False`` turns it off (the tests compare both).
"""
from __future__ import annotations

import sys
from typing import Callable

import numpy as np

enabled = True
BOUND = True  # False: tile instructions call binary_fp16 on every run instead of a bound call (bind_binary)
MIN_ELEMENTS = 2048  # below this NumPy's half loop is as fast as torch's call overhead
# above this torch splits the work across its thread pool (its grain size), which on a loaded
# machine costs far more than it saves (a 41k-element add: 30 ms instead of 0.05 ms)
MAX_ELEMENTS = 32768

_FP16 = np.dtype(np.float16)
_OPS: dict[object, str] = {np.add: "add", np.divide: "div"}  # exhaustively byte-identical to NumPy's
_cache: dict[str, Callable | None] = {}
_trusted: bool | None = None  # this process's torch passed the probe (None: not probed yet)


def _probe(torch) -> bool:
    """Once per process, before torch computes anything here: its ``add`` / ``div`` give NumPy's bytes
    on the cases where another torch build or CPU could differ (every NaN payload of either sign
    against NaNs, zeros, subnormals, infinities and ordinary values, both operand orders); else
    torch is not used. A few milliseconds; the full proof is benchmarks/fp16_torch_exact.py."""
    specials = [0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x83FF, 0x3C00, 0xBC00, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00]
    bits = np.concatenate([np.arange(0x7C01, 0x8000), np.arange(0xFC01, 0x10000), specials]).astype(np.uint16)
    a = bits.view(np.float16)
    others = np.concatenate([a[::1024], np.array(specials, np.uint16).view(np.float16)])
    x, y = np.repeat(a, len(others)), np.tile(others, len(a))
    with np.errstate(all="ignore"):
        for ufunc, name in _OPS.items():
            for lhs, rhs in ((x, y), (y, x)):
                want = ufunc(lhs, rhs)
                got = getattr(torch, name)(torch.from_numpy(lhs), torch.from_numpy(rhs)).numpy()
                if not np.array_equal(want.view(np.uint16), got.view(np.uint16)):
                    return False
    return True


def _op(ufunc: object) -> Callable | None:
    name = _OPS.get(ufunc)
    if name is None:
        return None
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    global _trusted
    if _trusted is None:
        _trusted = _probe(torch)
    if not _trusted:
        return None
    fn = _cache.get(name)
    if fn is None:
        fn = _cache[name] = getattr(torch, name)
    return fn


def binary_fp16(ufunc: object, dst: np.ndarray, a: np.ndarray, b: object) -> bool:
    """``dst = ufunc(a, b)`` with torch when that is exact and worth it; False: not done (use NumPy)."""
    if not enabled or dst.dtype != _FP16 or not isinstance(b, np.ndarray):
        return False
    # a leading block axis (batch_replay): each block's tile is one torch call (above MAX_ELEMENTS torch
    # splits a call across its threads, which costs more than it saves)
    per = dst.size // dst.shape[0] if dst.ndim == 3 and dst.shape[0] else dst.size
    if not MIN_ELEMENTS <= per <= MAX_ELEMENTS:
        return False
    if a.dtype != _FP16 or b.dtype != _FP16 or a.shape != dst.shape or b.shape != dst.shape:
        return False
    if not (a.flags.writeable and b.flags.writeable and dst.flags.writeable):  # torch warns on read-only arrays
        return False
    fn = _op(ufunc)
    if fn is None:
        return False
    # (with a block axis, each block's tiles relate as the first block's do: other blocks' are in other lanes)
    d0, a0, b0 = (dst[0], a[0], b[0]) if dst.ndim == 3 else (dst, a, b)
    for src in (a0, b0):  # torch refuses an output that partly overlaps an input; NumPy buffers it
        if np.may_share_memory(d0, src) and not _same(d0, src):
            return False
    if min(a.strides + b.strides + dst.strides) < 0:  # torch.from_numpy refuses negative strides
        return False
    from_numpy = sys.modules["torch"].from_numpy
    try:
        ta, tb, tdst = from_numpy(a), from_numpy(b), from_numpy(dst)
    except (TypeError, ValueError, RuntimeError):  # an array torch cannot wrap: nothing written yet
        return False
    if dst.size <= MAX_ELEMENTS:
        fn(ta, tb, out=tdst)
    else:
        for i in range(dst.shape[0]):
            fn(ta[i], tb[i], out=tdst[i])
    return True


def _same(x: np.ndarray, y: np.ndarray) -> bool:
    return (x.__array_interface__["data"][0] == y.__array_interface__["data"][0] and x.strides == y.strides)


def bind_binary(op: str, dst: np.ndarray, a: np.ndarray, b: np.ndarray) -> Callable[[], None] | None:
    """``numerics.binary(op, dst, a, b)`` for these very arrays (a tile instruction's fixed slot views) as
    one call without arguments, with the checks that depend only on the arrays done once, here, and
    torch's tensors over them made once; None where ``binary`` would not give these arrays to torch or
    would raise (the caller then runs ``binary`` itself). What may change between calls is checked on
    every call (``BOUND``, ``enabled``, the probe's verdict, the arrays' write flags): otherwise ``binary``
    runs. (Memoized records keep their runs across launches: ``BOUND = False`` also turns bound ones off.)"""
    from pypto_pro.backends.sim import numerics  # (numerics imports this module)
    ufunc = numerics._UFUNC.get(op)
    name = _OPS.get(ufunc) if ufunc is not None else None
    if not BOUND or name is None or op not in numerics.BINARY_OPS:
        return None
    for x in (dst, a, b):
        if type(x) is not np.ndarray or x.ndim != 2 or x.dtype != _FP16 or x.shape != dst.shape:
            return None
    try:
        numerics._check_dtype(op, dst.dtype)
    except ValueError:
        return None
    if not MIN_ELEMENTS <= dst.size <= MAX_ELEMENTS or min(a.strides + b.strides + dst.strides) < 0:
        return None
    for src in (a, b):
        if np.may_share_memory(dst, src) and not _same(dst, src):
            return None
    if not (a.flags.writeable and b.flags.writeable and dst.flags.writeable) or _op(ufunc) is None:
        return None
    from_numpy = sys.modules["torch"].from_numpy
    try:
        ta, tb, tdst = from_numpy(a), from_numpy(b), from_numpy(dst)
    except (TypeError, ValueError, RuntimeError):
        return None

    def run() -> None:
        if BOUND and enabled and _trusted and a.flags.writeable and b.flags.writeable and dst.flags.writeable:
            _cache[name](ta, tb, out=tdst)
        else:
            numerics.binary(op, dst, a, b)
    return run
