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

from typing import Any

import numpy as np

from pypto_pro.arch.layouts import BOXES, element_offsets
from pypto_pro.language.enums import TensorLayout
from pypto_pro.language.tile_type import TileType


class Region:
    """A logical 2-D window of a boxed tile: ``idx`` holds the storage offset of each element."""

    __slots__ = ("flat", "idx")

    def __init__(self, flat: np.ndarray, idx: np.ndarray):
        self.flat = flat
        self.idx = idx

    shape = property(lambda self: self.idx.shape)
    ndim = property(lambda self: self.idx.ndim)
    size = property(lambda self: self.idx.size)
    dtype = property(lambda self: self.flat.dtype)

    def read(self) -> np.ndarray:
        """The window's values now (a copy)."""
        return self.flat[self.idx]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self.read()
        return out if dtype is None else out.astype(dtype)

    def __getitem__(self, key: Any) -> "Region":
        return Region(self.flat, self.idx[key])

    def __setitem__(self, key: Any, value: Any) -> None:
        self.flat[self.idx[key]] = value

    @property
    def T(self) -> "Region":  # noqa: N802 - NumPy's name
        return Region(self.flat, self.idx.T)

    def astype(self, dtype: Any) -> np.ndarray:
        return self.read().astype(dtype)

    def view(self, dtype: Any) -> np.ndarray:
        return self.read().view(dtype)


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
    return Region(flat, idx)


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
