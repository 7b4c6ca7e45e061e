"""NumPy numerics of the composite tile instructions: TPARTADD/MAX/MIN/MUL, TADDC, TAXPY and the
index reductions TROWARGMAX/MIN, TCOLARGMAX/MIN. Rounding points follow PTO-ISA's CPU model: every
arithmetic step rounds to the tile dtype (``CpuSimRoundElement`` / ``volatile`` temporaries).
See ``docs/numerics.md``.
"""
from __future__ import annotations

import numpy as np

from pypto_pro.backends.sim.numerics import FP32, Scalar, _elementwise2, _scalar

PART_UFUNC = {"partadd": np.add, "partmax": np.maximum, "partmin": np.minimum, "partmul": np.multiply}


def part(op: str, dst: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
    """TPART*: ``dst`` (its valid region, R x C) gets ``a op b`` where both sources are valid, the
    valid source where only one is, 0 where neither is (PTO-ISA CPU model; a5 asserts that one source
    covers ``dst``, so the zero case does not arise there). ``a`` / ``b`` are the sources' valid regions."""
    ufunc = PART_UFUNC[op]
    r, c = dst.shape
    res = np.zeros((r, c), dtype=dst.dtype)
    ar, ac = min(a.shape[0], r), min(a.shape[1], c)
    br, bc = min(b.shape[0], r), min(b.shape[1], c)
    res[:ar, :ac] = a[:ar, :ac]
    res[:br, :bc] = b[:br, :bc]
    orow, ocol = min(ar, br), min(ac, bc)
    if orow and ocol:
        with np.errstate(all="ignore"):
            _elementwise2(ufunc, res[:orow, :ocol], a[:orow, :ocol], b[:orow, :ocol])
    dst[...] = res


def addc(dst: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
    """TADDC: ``(a + b) + c``, rounded to the tile dtype after each add (ints wrap)."""
    t = np.empty_like(dst)
    with np.errstate(all="ignore"):
        _elementwise2(np.add, t, a, b)
        _elementwise2(np.add, dst, t, c)


def axpy(dst: np.ndarray, src: np.ndarray, alpha: Scalar, acc: np.ndarray | None = None) -> None:
    """TAXPY: ``dst = acc + src * alpha`` (``acc`` the accumulator's values, by default ``dst``'s). ``alpha`` is held in the source dtype (the instruction's
    scalar parameter); the product and the sum each round to the destination dtype. An fp16 source
    with an fp32 destination is widened first (exact), as the a5 code converts it before ``vaxpy``."""
    s = _scalar(src.dtype, alpha)
    x = src if src.dtype == dst.dtype else src.astype(dst.dtype)
    if src.dtype != dst.dtype:
        s = np.float32(s) if dst.dtype == FP32 else dst.dtype.type(s)
    prod = np.empty_like(dst)
    with np.errstate(all="ignore"):
        _elementwise2(np.multiply, prod, x, s)
        _elementwise2(np.add, dst, (dst if acc is None else acc).copy(), prod)


def argreduce(op: str, dst: np.ndarray, src: np.ndarray, along_rows: bool) -> None:
    """TROWARGMAX/MIN (``along_rows``: one index per row, into ``dst`` (R, 1)) and TCOLARGMAX/MIN (one
    per column, ``dst`` (1, C)): the index of the first extreme value. The a5 code keeps the running
    best and replaces it only on a strictly greater (smaller) value, so ties keep the earliest index
    and a NaN never replaces a number (a NaN at index 0 stays the best)."""
    x = src if along_rows else src.T
    if x.dtype.kind in "iu":
        idx = (np.argmax if op == "argmax" else np.argmin)(x, axis=1)
    else:
        x = x.astype(FP32)  # exact for fp16 / bf16 / fp32
        nan = np.isnan(x)
        filled = np.where(nan, -np.inf if op == "argmax" else np.inf, x)
        idx = (np.argmax if op == "argmax" else np.argmin)(filled, axis=1)  # first occurrence of the extreme
        idx = np.where(nan[:, 0], 0, idx)
    out = idx.reshape(-1, 1) if along_rows else idx.reshape(1, -1)
    dst[...] = out.astype(dst.dtype)
