"""torch for the plain float casts fp32 <-> fp16 / bf16, where it gives NumPy's bytes.

Used by batched VF plans (``cast``) and the tile ``pl.cast`` fp32 -> fp16 numerics (``cast_into``).

NumPy converts fp32 to fp16 one element at a time in software (about 3-7 ns an element here; ml_dtypes'
bf16 about 2 ns); torch's CPU copy kernel converts with vector instructions (about 0.1-0.2 ns). For every
value that is not a NaN both compute the one correctly rounded (round-to-nearest-even) result of the
IEEE formats, and widening is exact; which NaN comes out is where implementations differ (hardware
quiets signalling NaNs, torch's software bf16 rounding makes a canonical one), so every NaN lane is
converted again by NumPy itself: ``cast`` returns exactly ``x.astype(dt)``.

That the non-NaN results agree is not assumed but checked: ``benchmarks/fp32_cast_torch_exact.py``
compares all 2^32 fp32 inputs (and all 2^16 fp16 / bf16 inputs widened), and once per process, before
torch converts anything here, ``_probe`` compares the cases where a build or CPU could differ (ties at
every exponent, the subnormal and overflow boundaries, fp32 subnormals, infinities, signed zeros: an
instruction that flushes denormals would show there). Used only when torch is already imported and
the array is large enough to pay for the call and small enough to stay on one of torch's threads
(``torch_engine.MIN_ELEMENTS`` / ``MAX_ELEMENTS``). ``enabled = False`` turns it off.
"""
from __future__ import annotations

import sys

import ml_dtypes
import numpy as np

from pypto_pro.backends.sim import torch_engine

enabled = True

_F32, _F16 = np.dtype(np.float32), np.dtype(np.float16)
_BF16 = np.dtype(ml_dtypes.bfloat16)
_NARROW = (_F16, _BF16)
_INF_BITS = {_F16: 0x7C00, _BF16: 0x7F80}  # a 16-bit value is a NaN when its bits without the sign exceed these
_trusted: dict[tuple, bool] = {}  # (source dtype, result dtype) -> this process's torch passed the probe


def _torch_view(torch, a: np.ndarray):
    """A torch tensor over ``a``'s memory (bf16 through its uint16 bits: torch cannot wrap ml_dtypes)."""
    if a.dtype != _BF16:
        return torch.from_numpy(a)
    return torch.from_numpy(a.view(np.uint16)).view(torch.bfloat16)


def _probe_values(src: np.dtype, dst: np.dtype) -> np.ndarray:
    """Inputs where conversions could part: every value of the narrow type (widening), or for narrowing
    every narrow value's fp32 bits with its neighbours, its rounding midpoints and their neighbours (ties
    at every exponent, subnormal and overflow boundaries), fp32 subnormals and a random sweep."""
    if src != _F32:
        return np.arange(1 << 16, dtype=np.uint16).view(src)
    if dst == _F16:
        pos = np.arange(0, 0x7C01, dtype=np.uint16).view(np.float16).astype(np.float64)  # +0 .. +inf
        ends = np.append(pos[:-1], 65536.0)  # past the largest finite value: the overflow threshold
        mids = ((ends[:-1] + ends[1:]) / 2).astype(np.float32).view(np.uint32)  # exact: 12 bits at most
        vals = pos.astype(np.float32).view(np.uint32)
        cands = [v + np.uint32(s & 0xFFFFFFFF) for v in (vals[1:-1], mids) for s in (0, 1, -1)]
        cands.append(vals)
    else:
        base = np.arange(1 << 16, dtype=np.uint32) << 16
        cands = [base + np.uint32(o) for o in (0, 0x7FFF, 0x8000, 0x8001)]
    sub = np.concatenate([np.arange(0, 1 << 10, dtype=np.uint32), np.arange((1 << 23) - (1 << 10), 1 << 23,
                                                                          dtype=np.uint32)])
    rng = np.random.default_rng(0).integers(0, 1 << 32, 1 << 16, dtype=np.uint64).astype(np.uint32)
    bits = np.concatenate(cands + [sub, sub | np.uint32(0x80000000), rng])
    bits = np.concatenate([bits, bits ^ np.uint32(0x80000000)])
    return bits.view(np.float32)


def _probe(torch, src: np.dtype, dst: np.dtype) -> bool:
    x = _probe_values(src, dst)
    x = x[~np.isnan(x)]  # NaN lanes are NumPy's in cast()
    with np.errstate(all="ignore"):
        want = x.astype(dst)
    got = np.empty(x.shape, dst)
    _torch_view(torch, got).copy_(_torch_view(torch, np.ascontiguousarray(x)))
    return want.tobytes() == got.tobytes()


def _torch(src: np.dtype, dst: np.dtype):
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    key = (src, dst)
    ok = _trusted.get(key)
    if ok is None:
        ok = _trusted[key] = _probe(torch, src, dst)
    return torch if ok else None


def cast(x: np.ndarray, dt: np.dtype) -> np.ndarray | None:
    """``x.astype(dt)`` (a new C-contiguous array) for fp32 -> fp16 / bf16 and back, through torch when
    that is trusted and worth it (one torch call: at most ``MAX_ELEMENTS``); None: not done (use NumPy)."""
    if not enabled or type(x) is not np.ndarray or x.size > torch_engine.MAX_ELEMENTS:
        return None
    out = np.empty(x.shape, dt)
    return out if cast_into(out, x) else None


def _pair(src: np.dtype, dst: np.dtype) -> bool:
    return (src == _F32 and dst in _NARROW) or (dst == _F32 and src in _NARROW)


def _nan_lanes(x: np.ndarray) -> np.ndarray:
    """Where ``x`` (fp32, fp16 or bf16) is a NaN; by its bits for the 16-bit types (NumPy's fp16 ``isnan``
    runs in software, ~8x slower)."""
    if x.dtype == _F32:
        return np.isnan(x)
    return np.bitwise_and(x.view(np.uint16), 0x7FFF) > _INF_BITS[x.dtype]


def cast_into(dst: np.ndarray, src: np.ndarray) -> bool:
    """``dst[...] = src`` for arrays of one shape and a pair of :func:`cast`, through
    torch when that is trusted and worth it; NaN lanes by NumPy, so ``dst`` gets exactly the assignment's
    bytes. Larger arrays go in chunks of at most ``torch_engine.MAX_ELEMENTS`` along the first axis (each
    on one of torch's threads). False: nothing was written (or ``dst`` is to be assigned again whole)."""
    if not enabled or not torch_engine.enabled or type(src) is not np.ndarray or type(dst) is not np.ndarray:
        return False
    if src.shape != dst.shape or not _pair(src.dtype, dst.dtype) or src.ndim == 0:
        return False
    if src.size < torch_engine.MIN_ELEMENTS or min(src.strides + dst.strides) < 0:
        return False
    per = src.size // src.shape[0]
    if per > torch_engine.MAX_ELEMENTS or not src.flags.writeable or np.may_share_memory(src, dst):
        return False  # (torch warns on a read-only array)
    torch = _torch(src.dtype, dst.dtype)
    if torch is None:
        return False
    try:
        ts, td = _torch_view(torch, src), _torch_view(torch, dst)
        if src.size <= torch_engine.MAX_ELEMENTS:
            td.copy_(ts)
        else:
            step = torch_engine.MAX_ELEMENTS // per
            for i in range(0, src.shape[0], step):
                td[i:i + step].copy_(ts[i:i + step])
    except (TypeError, ValueError, RuntimeError):
        return False
    nan = _nan_lanes(src)
    if nan.any():
        dst[nan] = src[nan].astype(dst.dtype)
    return True
