"""Tile reductions, broadcasts and fills of the simulator's numerics (``numerics.reduce`` /
``expand`` / ``fill``; split from numerics.py, which re-exports them): the deterministic binary-tree
row / column reductions with per-level rounding, the TROWEXPAND* / TCOLEXPAND* broadcasts, TEXPANDS."""
from __future__ import annotations

import math

import numpy as np

from pypto_pro.backends.sim.numerics import (BF16, EXPAND_OPS, FP16, FP32, REDUCE_OPS, Scalar, _check_array,
                                             _check_dtype, _check_op, _check_same, _check_shape, _elementwise2,
                                             _EXPAND_UFUNC, _ignore, _int_range, _INTS, _REDUCE_UFUNC, _scalar)


# --------------------------------------------------------------------------- reduce


def _reduce_identity(op: str, dt: np.dtype) -> float | int:
    if dt in _INTS:
        lo, hi = _int_range(dt)
        return {"sum": 0, "max": lo, "min": hi}[op]
    # -0.0 is the exact additive identity (x + -0 == x for every x, including -0).
    return {"sum": -0.0, "max": -math.inf, "min": math.inf}[op]


def reduce(op: str, dst: np.ndarray, src: np.ndarray, dim: int) -> None:
    """Row (dim=1, TROWSUM/MAX/MIN, dst (R,1)) or column (dim=0, TCOL*, dst (1,C)) reduction.

    Deterministic binary tree: the reduced axis is padded with the identity to the next
    power of two ``P``, then ``x[:w/2] = x[:w/2] (op) x[w/2:w]`` for ``w = P, P/2, ..., 2``,
    rounding to the tile dtype after every level (ints wrap).
    """
    _check_op("reduce", op, REDUCE_OPS)
    _check_array("dst", dst)
    _check_array("src", src)
    dt = src.dtype
    _check_dtype(op, dt)
    _check_same(op, dst, src)
    if dim not in (0, 1):
        raise ValueError(f"reduce dim must be 0 (columns) or 1 (rows), got {dim!r}")
    rows, cols = src.shape[-2:]  # (a leading block axis: batch_replay)
    want = (*src.shape[:-2], rows, 1) if dim == 1 else (*src.shape[:-2], 1, cols)
    if dst.shape != want:
        raise ValueError(f"reduce {op!r} dim={dim}: dst shape must be {want}, got {dst.shape}")
    n = cols if dim == 1 else rows
    if n == 0:
        raise ValueError(f"reduce {op!r}: cannot reduce an empty axis (src shape {src.shape})")
    if dim == 1 and rows == 0:
        return
    # Work buffer of shape (R, P) for rows or (P, C) for columns, padded with the identity.
    # Max/min are exact, so fp16/bf16 run them in fp32; a bf16 sum runs in fp32 and is
    # re-rounded to bf16 after every level; fp16 sums use NumPy's (correctly rounded)
    # half arithmetic level by level.
    via_f32 = dt == BF16 or (dt == FP16 and op != "sum")
    cdt = FP32 if via_f32 else dt
    p = 1 << (n - 1).bit_length()
    ufunc = _REDUCE_UFUNC[op]
    round_each_level = dt == BF16 and op == "sum"
    if src.ndim != 2:  # a leading block axis (batch_replay)
        _reduce_blocks(op, dst, src, dim, n, p, cdt, ufunc, round_each_level)
        return
    if op != "sum" and DIRECT_EXTREMES:
        _extremes(op, dst, src, dim, n, p, cdt, ufunc)
        return
    if dim == 1 and TRANSPOSED_ROWS and (dt in _INTS or op == "sum"):
        _rows_transposed(op, dst, src, n, p, cdt, ufunc, round_each_level)
        return
    _tree(op, dst, src, dim, n, p, cdt, ufunc, round_each_level)


def _tree(op: str, dst: np.ndarray, src: np.ndarray, dim: int, n: int, p: int, cdt, ufunc,
          round_each_level: bool) -> None:
    """The reference: the binary tree of :func:`reduce` on a padded work buffer, level by level."""
    dt = src.dtype
    rows, cols = src.shape
    work = np.empty((rows, p) if dim == 1 else (p, cols), dtype=cdt)
    with _ignore():
        if dim == 1:
            work[:, :n] = src
            if p > n:
                work[:, n:] = _reduce_identity(op, dt)
        else:
            work[:n] = src
            if p > n:
                work[n:] = _reduce_identity(op, dt)
        w = p
        while w > 1:
            h = w // 2
            if dim == 1:
                lo, hi = work[:, :h], work[:, h:w]
            else:
                lo, hi = work[:h], work[h:w]
            ufunc(lo, hi, out=lo)
            if round_each_level:
                lo[...] = lo.astype(BF16)
            w = h
        dst[...] = work[:, :1] if dim == 1 else work[:1]


# A max / min has one possible value wherever it is neither a NaN nor a zero: comparisons are exact, so
# every pairing of the tree keeps the same extreme element, and a non-zero value has one bit pattern. So
# NumPy's own (SIMD) reduction along the axis gives the tree's bytes there. A tile where some line's
# extreme is a NaN (which payload survives depends on the pairing and on NumPy's loop) or a zero (which of
# +0 / -0) runs the tree itself, on the whole tile: the loop NumPy picks depends on the work buffer's shape.
# Integers have neither. tests/backends/sim/test_fast_paths_reduce.py compares both on random bit patterns.
DIRECT_EXTREMES = True


def _extremes(op: str, dst: np.ndarray, src: np.ndarray, dim: int, n: int, p: int, cdt, ufunc) -> None:
    with _ignore():
        got = ufunc.reduce(src.astype(cdt, copy=False), axis=dim, keepdims=True)
    if src.dtype not in _INTS and (np.isnan(got).any() or not got.all()):
        _tree(op, dst, src, dim, n, p, cdt, ufunc, False)  # the whole tile: NumPy's loop, so which NaN payload
        return                                             # or zero sign survives, depends on its shape
    dst[...] = got


# Row reductions whose result cannot depend on the layout of the tree's loops run the same tree on a
# transposed work buffer (each level then adds two contiguous halves: about 2x faster). The tree pairs
# the same elements in the same operand order either way, so every element is the same IEEE operation;
# only which payload NumPy returns when two NaNs of different payloads meet depends on the loop it picks
# (contiguous SIMD or strided). That cannot happen for integers (no NaN) nor for a sum of NaN-free
# values: a NaN it makes (inf + -inf) is the machine's one default NaN in every loop, so NaNs that meet
# have the same bits. A row with a NaN in its source sums to a NaN, so a tile with a NaN sum is summed
# again by the original tree (the whole tile, whose loop decides which payload survives). Max / min
# are excluded (which of +0 and -0 they keep also depends on the loop; see DIRECT_EXTREMES).
# tests/backends/sim/test_fast_paths_reduce.py compares both trees on random bit patterns.
TRANSPOSED_ROWS = True


def _rows_transposed(op: str, dst: np.ndarray, src: np.ndarray, n: int, p: int, cdt, ufunc,
                     round_each_level: bool) -> None:
    rows = src.shape[0]
    work = np.empty((p, rows), dtype=cdt)
    with _ignore():
        work[:n] = src.T
        if p > n:
            work[n:] = _reduce_identity(op, src.dtype)
        w = p
        while w > 1:
            h = w // 2
            lo = work[:h]
            ufunc(lo, work[h:w], out=lo)
            if round_each_level:
                lo[...] = lo.astype(BF16)
            w = h
        got = work[0]
        if src.dtype not in _INTS and np.isnan(got).any():
            _tree(op, dst, src, 1, n, p, cdt, ufunc, round_each_level)  # the whole tile, as DIRECT_EXTREMES does
            return
        dst[...] = got[:, None]


def _reduce_blocks(op: str, dst: np.ndarray, src: np.ndarray, dim: int, n: int, p: int, cdt, ufunc,
                   round_each_level: bool) -> None:
    """:func:`reduce` over a leading block axis, each block's work buffer laid out as the single block's
    (padded apart, batch_replay.padded_empty); each step of the tree runs as :func:`_per_block` says."""
    from pypto_pro.backends.sim.batch_replay import padded_empty
    rows, cols = src.shape[-2:]
    work = padded_empty((*src.shape[:-2], *((rows, p) if dim == 1 else (p, cols))), cdt)
    each = _per_block
    with _ignore():
        if dim == 1:
            each(np.copyto, n, work[..., :n], src, casting="unsafe")
            if p > n:
                work[..., n:] = _reduce_identity(op, src.dtype)
        else:
            each(np.copyto, cols, work[..., :n, :], src, casting="unsafe")
            if p > n:
                work[..., n:, :] = _reduce_identity(op, src.dtype)
        w = p
        while w > 1:
            h = w // 2
            if dim == 1:
                lo, hi = work[..., :h], work[..., h:w]
            else:
                lo, hi = work[..., :h, :], work[..., h:w, :]
            width = h if dim == 1 else cols
            each(ufunc, width, lo, hi, out=lo)
            if round_each_level:
                each(_round_bf16, width, lo)
            w = h
        last = work[..., :1] if dim == 1 else work[..., :1, :]
        each(np.copyto, 1 if dim == 1 else cols, dst, last, casting="unsafe")


def _round_bf16(lo: np.ndarray) -> None:
    lo[...] = lo.astype(BF16)


def _per_block(fn, width: int, *arrays, **kw) -> None:
    """``fn`` over a leading block axis: one call when the rows are whole 64-byte vectors (the inner
    loops NumPy picks are then the single block's, batch_replay.exact_width), else one call per block
    on exactly the single block's arrays (which loop NumPy picks for narrow rows, and so which of two
    NaNs a level returns, depends on the whole shape it is given)."""
    if width % 16 == 0:
        fn(*arrays, **kw)
        return
    out = kw.get("out")
    for b in range(arrays[0].shape[0]):
        if out is not None:
            fn(*(a[b] for a in arrays), out=out[b])
        else:
            fn(*(a[b] for a in arrays), **kw)


# --------------------------------------------------------------------------- expand / fill


def expand(op: str, dst: np.ndarray, src: np.ndarray, vec: np.ndarray, dim: int) -> None:
    """Broadcast op (TROWEXPAND*/TCOLEXPAND*): ``dst = src (op) broadcast(vec)``.

    dim=1: ``vec`` is (R, 1), one value per row; dim=0: ``vec`` is (1, C), one per column.
    """
    _check_op("expand", op, EXPAND_OPS)
    _check_array("dst", dst)
    _check_array("src", src)
    _check_array("vec", vec)
    _check_dtype(op, dst.dtype)
    _check_same(op, dst, src, vec)
    _check_shape(op, dst, src)
    if dim not in (0, 1):
        raise ValueError(f"expand dim must be 0 (columns) or 1 (rows), got {dim!r}")
    rows, cols = src.shape[-2:]  # (a leading block axis: batch_replay)
    want = (*src.shape[:-2], rows, 1) if dim == 1 else (*src.shape[:-2], 1, cols)
    if vec.shape != want:
        raise ValueError(f"expand {op!r} dim={dim}: vec shape must be {want}, got {vec.shape}")
    with _ignore():
        _elementwise2(_EXPAND_UFUNC[op], dst, src, vec)


def fill(dst: np.ndarray, scalar: Scalar) -> None:
    """TEXPANDS: every element of ``dst`` = ``scalar`` converted to the dst dtype."""
    _check_array("dst", dst)
    _check_dtype("fill", dst.dtype)
    dst[...] = _scalar(dst.dtype, scalar)

