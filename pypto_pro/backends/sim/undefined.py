"""Never-written bytes carried through the Cube's data path, as the chip computes with them.

Real kernels run the Cube on whole tiles whose padding was never loaded: a wide L1 tile whose
valid shape is widened to the full M before the L1 -> L0 copy, a matmul over those padding rows.
The chip copies and multiplies whatever the memory holds; the padding rows (columns) of the
product are garbage and the kernel leaves them out of the store. Reading such bytes is only a
fault when what was *derived* from them is used. So the copies that only move elements
(``pl.move`` Mat -> Left / Right, where they enter) and the matmul (which carries on what a move
carried in; reading never-written L0 bytes directly is still a fault there) carry undefinedness:
an element of the destination is written only where every source element it is made of was;
the others are *tainted*. Any later read of tainted bytes (a compute or a store) is an
``UninitializedReadError`` naming where the never-written bytes entered; a tainted element that
nothing reads (the padding left out of the store) costs a note only.

How each instruction maps source to destination elements is the instruction's :class:`Carry`
(attached to its committed region); this module turns a tile window's bytes into a per-element
"defined" mask and back, through the tile's layout (``arch.layouts.element_offsets``).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from pypto_pro.arch.layouts import element_offsets


def _byte_addrs(ta, slot: int, r0: int, c0: int, rows: int, cols: int) -> np.ndarray:
    """Byte addresses [rows, cols, itemsize] of the elements of a window of ``ta``'s slot."""
    st = ta.st
    off = element_offsets(st.buffer.tile_type, st.layout)[r0:r0 + rows, c0:c0 + cols]
    return ta.addrs[slot] + off[..., None] * ta.item + np.arange(ta.item)


def defined(bitmap: np.ndarray, ta, slot: int, r0: int, c0: int, rows: int, cols: int) -> np.ndarray:
    """Per element of the window: whether all its bytes are marked in ``bitmap``."""
    return bitmap[_byte_addrs(ta, slot, r0, c0, rows, cols)].all(axis=-1)


def mark(bitmap: np.ndarray, ta, slot: int, mask: np.ndarray, value: bool) -> None:
    """Set the bytes of the elements ``mask`` selects (a window from ``[0, 0]``) to ``value``."""
    rows, cols = mask.shape
    bitmap[_byte_addrs(ta, slot, 0, 0, rows, cols)[mask]] = value


def carriable(*tas) -> bool:
    """Whether the tiles' elements are whole bytes (packed 4-bit tiles are not carried)."""
    return all(not ta.st.buffer.tile_type.dtype.packed for ta in tas)


class Carry:
    """How one instruction's destination elements depend on its sources: ``fn(defined)`` gives the
    destination window's per-element "defined" mask, ``defined(ta, slot, r0, c0, rows, cols)``
    being the sources' masks when the instruction lands. ``entry``: never-written bytes may enter
    here (a copy of padding); otherwise only bytes an entry already carried are carried on."""

    __slots__ = ("dst", "slot", "fn", "entry")

    def __init__(self, dst, slot: int, fn: Callable[[Callable], np.ndarray], entry: bool):
        self.dst, self.slot, self.fn, self.entry = dst, slot, fn, entry


def copy_carry(dst, sd: int, src, ss: int, r0: int, c0: int, rows: int, cols: int, transpose: bool) -> Carry:
    """An element-for-element copy of the source window (transposed or not) into ``dst[:., :.]``."""
    def fn(defined: Callable) -> np.ndarray:
        m = defined(src, ss, r0, c0, rows, cols)
        return m.T if transpose else m
    return Carry(dst, sd, fn, True)


def matmul_carry(dst, sd: int, lhs, sl: int, rhs, sr: int, m: int, k: int, n: int,
                 acc: tuple | None = None) -> Carry:
    """``C[i, j]`` from row ``i`` of the lhs and column ``j`` of the rhs (and, with ``acc`` =
    (tile, slot, rows), the earlier ``C[i, j]`` or the bias row's ``j``)."""
    def fn(defined: Callable) -> np.ndarray:
        rows_ok = defined(lhs, sl, 0, 0, m, k).all(axis=1)
        cols_ok = defined(rhs, sr, 0, 0, k, n).all(axis=0)
        out = rows_ok[:, None] & cols_ok[None, :]
        if acc is not None:
            t, se, r = acc
            out = out & defined(t, se, 0, 0, r, n)  # r == 1: a bias row, broadcast over M
        return out
    return Carry(dst, sd, fn, False)
