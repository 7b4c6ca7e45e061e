"""Tiles over their real bytes: the simulator's view of a tile stored in its layout.

A tile's bytes are arranged as on the chip (``pypto_pro.arch.layouts.element_offsets``: ND
row-major, DN column-major, NZ/ZN/ZZ/NN fractal boxes), so two tiles over the same bytes with
different shapes or layouts see what the chip's would (Mat ``[N, K]`` NZ and Mat ``[K, N]`` ZN are
one arrangement; an ND buffer read as NZ is scrambled). ND and DN tiles are zero-copy NumPy views
(DN as a transposed view). A boxed tile is a :class:`Region`: logical ``[row, col]`` access that
gathers from / scatters to the bytes through the offset map, so reads see memory as it is when
they run and writes land in their fractal places.

``flat(view)`` gives an instruction the slot's elements in storage order, for the copies the
hardware does byte for byte (TINSERT, UB -> L1 TMOV), which follow storage, not logical, order.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from pypto_pro.arch.layouts import BOXES, element_offsets, inner_box
from pypto_pro.language.enums import TensorLayout
from pypto_pro.language.tile_type import TileType


class Region:
    """A logical 2-D window of a boxed tile: ``idx`` holds the storage offset of each element.

    ``boxes``, when known, is the same map as a strided view of ``flat``: ``boxes[I, a, J, b]`` is
    element ``[I * ir + a, J * ic + b]`` of the tile from this window's first box on (``ir x ic``
    boxes; a window starts on a box corner), and ``extent`` the ``rows x cols`` of this window.
    Reads and whole-window writes then copy through that view (a strided copy) instead of
    gathering / scattering through ``idx``; the bytes are the same (tile_view builds ``boxes`` only
    after checking it against ``idx``)."""

    __slots__ = ("flat", "idx", "boxes", "extent")

    def __init__(self, flat: np.ndarray, idx: np.ndarray, boxes: np.ndarray | None = None,
                 extent: tuple[int, int] | None = None):
        self.flat = flat
        self.idx = idx
        self.boxes = boxes
        self.extent = extent

    shape = property(lambda self: self.idx.shape)
    ndim = property(lambda self: self.idx.ndim)
    size = property(lambda self: self.idx.size)
    dtype = property(lambda self: self.flat.dtype)

    def _blocks(self) -> tuple[np.ndarray, bool] | None:
        """The boxes covering this window (a view) and whether they cover exactly it."""
        boxes = self.boxes
        if boxes is None:
            return None
        r, c = self.extent
        ir, ic = boxes.shape[1], boxes.shape[3]
        ni, nj = -(-r // ir), -(-c // ic)
        return boxes[:ni, :, :nj, :], ni * ir == r and nj * ic == c

    def read(self) -> np.ndarray:
        """The window's values now (a copy)."""
        got = self._blocks()
        if got is None:
            return self.flat[self.idx]
        blk, exact = got
        n0, ir, n2, ic = blk.shape
        out = np.empty((n0 * ir, n2 * ic), blk.dtype)
        out.reshape(blk.shape)[...] = blk  # always a fresh copy (a reshape of the view may be a view)
        if not exact:
            r, c = self.extent
            out = np.ascontiguousarray(out[:r, :c])
        return out

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self.read()
        return out if dtype is None else out.astype(dtype)

    def __getitem__(self, key: Any) -> "Region":
        boxes = self.boxes
        if boxes is not None and type(key) is tuple and len(key) == 2:  # a [a:r, b:c] window keeps the boxes
            k0, k1 = key
            if type(k0) is slice and type(k1) is slice and k0.step is None and k1.step is None:
                a0, a1 = k0.start or 0, k1.start or 0
                s0, s1 = k0.stop, k1.stop
                ir, ic = boxes.shape[1], boxes.shape[3]
                # from a box corner (an L1 window at a K offset): the boxes from that box on
                if (s0 is None or s0 >= 0) and (s1 is None or s1 >= 0) and type(a0) is int and type(a1) is int \
                        and a0 >= 0 and a1 >= 0 and a0 % ir == 0 and a1 % ic == 0:
                    r, c = self.extent
                    e0, e1 = (r if s0 is None else min(r, s0)), (c if s1 is None else min(c, s1))
                    if a0 or a1:
                        boxes = boxes[a0 // ir:, :, a1 // ic:, :]
                    return Region(self.flat, self.idx[key], boxes, (max(0, e0 - a0), max(0, e1 - a1)))
        return Region(self.flat, self.idx[key])

    def __setitem__(self, key: Any, value: Any) -> None:
        if key is Ellipsis and isinstance(value, np.ndarray) and value.shape == self.idx.shape:
            got = self._blocks()
            if got is not None and got[1]:
                blk = got[0]
                blk[...] = value.reshape(blk.shape)
                return
        self.flat[self.idx[key]] = value

    @property
    def T(self) -> "Region":  # noqa: N802 - NumPy's name
        return Region(self.flat, self.idx.T)

    def astype(self, dtype: Any) -> np.ndarray:
        got = self._blocks()
        if got is None or not got[1]:
            return self.read().astype(dtype)
        blk = got[0]  # converted as it is copied out of the boxes: NumPy's same cast, one pass fewer
        n0, ir, n2, ic = blk.shape
        out = np.empty((n0 * ir, n2 * ic), dtype)
        out.reshape(blk.shape)[...] = blk
        return out

    def view(self, dtype: Any) -> np.ndarray:
        return self.read().view(dtype)


def box_copier(src, dst) -> Callable[[], None] | None:
    """``dst[...] = src`` as one strided copy of box views, when both are boxed windows of whole boxes of the
    same box shape and dtype (an L1 -> L0 move: the bytes ``np.copyto(scratch, src)`` then
    ``dst[...] = scratch`` would land, in one pass instead of three); None otherwise."""
    if not (isinstance(src, Region) and isinstance(dst, Region)) or src.dtype != dst.dtype:
        return None
    s, d = src._blocks(), dst._blocks()
    if s is None or d is None or not (s[1] and d[1]) or s[0].shape != d[0].shape:
        return None
    sb, db = s[0], d[0]
    if np.may_share_memory(sb, db):  # (an overlap would need the scratch: reads before writes)
        return None

    def copy() -> None:
        db[...] = sb
    return copy


def _boxes(flat: np.ndarray, idx: np.ndarray, box: tuple[int, int]) -> np.ndarray | None:
    """``flat`` as ``[R / ir, ir, C / ic, ic]`` boxes, if that strided view is exactly the map ``idx``."""
    rows, cols = idx.shape
    ir, ic = box
    if rows % ir or cols % ic or idx.size < 2:
        return None
    four = idx.reshape(rows // ir, ir, cols // ic, ic)
    base = int(four[0, 0, 0, 0])
    if base:
        return None
    steps = [int(four[(1 if ax == 0 else 0), (1 if ax == 1 else 0), (1 if ax == 2 else 0), (1 if ax == 3 else 0)])
             if four.shape[ax] > 1 else 0 for ax in range(4)]
    if min(steps) < 0:
        return None
    if sum((n - 1) * st for n, st in zip(four.shape, steps)) >= flat.size:  # the view must stay inside flat
        return None
    from numpy.lib.stride_tricks import as_strided
    probe = as_strided(np.arange(flat.size, dtype=np.int64), four.shape, [st * 8 for st in steps])
    if not np.array_equal(probe, four):
        return None
    item = flat.dtype.itemsize
    if item not in _UINT:
        return None
    # as a same-width unsigned view: as_strided drops dtypes NumPy does not know (ml_dtypes' fp8, bf16)
    boxes = as_strided(flat.view(_UINT[item]), four.shape, [st * item for st in steps], writeable=True)
    return boxes.view(flat.dtype)


_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def tile_view(raw: np.ndarray, tt: TileType, layout: TensorLayout) -> np.ndarray | Region:
    """The logical ``[rows, cols]`` view of a tile whose slot starts at ``raw[0]`` (uint8 bytes)."""
    dt = tt.dtype.np_dtype if tt.dtype.np_dtype is not None else np.dtype(np.uint8)
    rows, cols = tt.shape
    if tt.dtype.packed:  # two 4-bit elements per byte: the view is of bytes, [rows, cols / 2]
        cols = max(1, cols // 2)
    row_major, box = BOXES[layout]
    if box is None:
        n = rows * cols
        flat = raw[:n * dt.itemsize].view(dt)
        return flat.reshape(rows, cols) if row_major else flat.reshape(cols, rows).T
    idx = element_offsets(tt, layout)
    need = int(idx.max()) + 1
    flat = raw[:need * dt.itemsize].view(dt)
    boxes = None if tt.dtype.packed else _boxes(flat, idx, inner_box(tt, layout))
    return Region(flat, idx, boxes, (rows, cols) if boxes is not None else None)


def flat(view: np.ndarray | Region) -> np.ndarray:
    """The slot's elements in storage order (a view of the bytes)."""
    if isinstance(view, Region):
        return view.flat
    if view.flags.c_contiguous:  # ND (a whole slot view is contiguous)
        return view.reshape(-1)
    if view.T.flags.c_contiguous:  # DN: a transposed view of column-major bytes
        return view.T.reshape(-1)
    raise ValueError("fractal.flat needs a whole tile slot view")


def values(view: np.ndarray | Region) -> np.ndarray:
    """A window's values as an array (a copy for a Region; the view itself otherwise)."""
    return view.read() if isinstance(view, Region) else view
