"""Never-written bytes carried through a kernel's data path, as the chip computes with them.

Real kernels compute on whole tiles whose padding was never written: a wide L1 tile whose valid
shape is widened to the full M before the L1 -> L0 copy and a matmul over those padding rows; an
accumulator moved to UB with its valid N padded up to the fixpipe's alignment, then a column-wise
softmax over the padding columns. The chip copies and computes with whatever the memory holds;
the padding rows (columns) of the results are garbage, and the kernel leaves them out of its
stores. Reading such bytes is only a fault when what was *derived* from them is used.

So never-written bytes may *enter* at a copy that moves padding as it is (``pl.move`` Mat -> Left /
Right, the fixpipe's Acc -> Vec move): the destination elements copied from them are left
undefined (*tainted*) instead of stopping the run, with a note. Instructions that compute element
by element or along one axis (elementwise, expands, row / column reductions, matmul, UB -> L1
copies) carry taint on: an element of their result is defined only where every source element it
is made of is. A carrier reading bytes that are never-written but not tainted (nothing carried them
in) is still a fault, as is any other instruction, a store included, reading tainted bytes:
that ``UninitializedReadError`` names where the never-written bytes entered.

Each carrying instruction attaches a :class:`Carry` to its last committed region; this module
turns a tile window's bytes into a per-element "defined" mask (through the tile's layout,
``arch.layouts.element_offsets``) and gives the destination bytes left undefined.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from pypto_pro.arch.layouts import element_offsets

Written = dict  # (core, space) -> the checker's written bitmap of that memory


def _byte_addrs(ta, slot: int, r0: int, c0: int, rows: int, cols: int) -> np.ndarray:
    """Byte addresses [rows, cols, itemsize] of the elements of a window of ``ta``'s slot."""
    st = ta.st
    off = element_offsets(st.buffer.tile_type, st.layout)[r0:r0 + rows, c0:c0 + cols]
    return ta.addrs[slot] + off[..., None] * ta.item + np.arange(ta.item)


def defined(written: Written, ta, slot: int, r0: int, c0: int, rows: int, cols: int) -> np.ndarray:
    """Per element of the window: whether all its bytes are written."""
    return written[(ta.st.core, ta.space)][_byte_addrs(ta, slot, r0, c0, rows, cols)].all(axis=-1)


def carriable(*tas) -> bool:
    """Whether the tiles' elements are whole bytes (packed 4-bit tiles are not carried)."""
    return all(not ta.st.buffer.tile_type.dtype.packed for ta in tas)


class Carry:
    """How one instruction's result depends on its sources: ``undefined(written)`` gives the
    destination byte addresses left undefined, the sources' bytes being ``written`` when the
    instruction lands. ``entry``: never-written bytes may enter here (a copy of padding);
    otherwise only bytes already tainted are carried on."""

    __slots__ = ("undefined", "entry")

    def __init__(self, undefined: Callable[[Written], np.ndarray], entry: bool):
        self.undefined, self.entry = undefined, entry


class SelfCarry(Carry):
    """A carrier that computes which bytes it leaves undefined as it runs (a VF call,
    ``backends/sim/vf/defined.py``): the checker calls ``arm(written)`` before it runs when it reads
    undefined bytes, with the memories' definedness then; ``undefined`` gives its result per commit."""

    __slots__ = ("arm",)

    def __init__(self, undefined: Callable[[Written], np.ndarray], arm: Callable[[Written], None]):
        super().__init__(undefined, True)
        self.arm = arm


def _elements(dst, sd: int, mask_of: Callable[[Written], np.ndarray], entry: bool, r0: int = 0,
              c0: int = 0) -> Carry:
    """A result whose ``mask_of`` (per element of the destination window at [r0, c0]) says what is defined."""
    def undefined(written: Written) -> np.ndarray:
        m = mask_of(written)
        if m.all():
            return np.empty(0, np.int64)
        return _byte_addrs(dst, sd, r0, c0, *m.shape)[~m].ravel()
    return Carry(undefined, entry)


def copy_carry(dst, sd: int, src, ss: int, r0: int, c0: int, rows: int, cols: int, transpose: bool = False,
               entry: bool = True) -> Carry:
    """An element-for-element copy of the source window (transposed or not) into ``dst[:., :.]``."""
    def mask(written: Written) -> np.ndarray:
        m = defined(written, src, ss, r0, c0, rows, cols)
        return m.T if transpose else m
    return _elements(dst, sd, mask, entry)


def matmul_carry(dst, sd: int, lhs, sl: int, rhs, sr: int, m: int, k: int, n: int,
                 acc: tuple | None = None) -> Carry:
    """``C[i, j]`` from row ``i`` of the lhs and column ``j`` of the rhs (and, with ``acc`` =
    (tile, slot, rows), the earlier ``C[i, j]`` or the bias row's ``j``)."""
    def mask(written: Written) -> np.ndarray:
        rows_ok = defined(written, lhs, sl, 0, 0, m, k).all(axis=1)
        cols_ok = defined(written, rhs, sr, 0, 0, k, n).all(axis=0)
        out = rows_ok[:, None] & cols_ok[None, :]
        if acc is not None:
            t, se, r = acc
            out = out & defined(written, t, se, 0, 0, r, n)  # r == 1: a bias row, broadcast over M
        return out
    return _elements(dst, sd, mask, False)


def map_carry(dst, sd: int, rows: int, cols: int, parts: tuple) -> Carry:
    """A result over ``dst[:rows, :cols]`` made of source windows from [0, 0]: each part is
    (tile, slot, how) with ``how`` one of "same" (element [i, j]), "row" (a per-row [rows, 1]
    operand), "col" (a per-column [1, cols] operand)."""
    def mask(written: Written) -> np.ndarray:
        out = np.ones((rows, cols), np.bool_)
        for t, s, how in parts:
            if how == "same":
                out &= defined(written, t, s, 0, 0, rows, cols)
            elif how == "row":
                out &= defined(written, t, s, 0, 0, rows, 1)
            else:
                out &= defined(written, t, s, 0, 0, 1, cols)
        return out
    return _elements(dst, sd, mask, False)


def reduce_carry(dst, sd: int, src, ss: int, rows: int, cols: int, per_row: bool) -> Carry:
    """One value per row (``per_row``: into column 0) or per column (into row 0) of the source's
    ``rows x cols``: defined when all of its row / column is."""
    def mask(written: Written) -> np.ndarray:
        m = defined(written, src, ss, 0, 0, rows, cols)
        return m.all(axis=1, keepdims=True) if per_row else m.all(axis=0, keepdims=True)
    return _elements(dst, sd, mask, False)


def bytes_carry(dst, sd: int, src, ss: int, bursts: list, item: int) -> Carry:
    """A copy of storage runs (``(src offset, dst offset, length)`` in elements of ``item`` bytes)."""
    def undefined(written: Written) -> np.ndarray:
        sbm = written[(src.st.core, src.space)]
        out = []
        for so, do, n in bursts:
            a = src.addrs[ss] + so * item
            bad = np.flatnonzero(~sbm[a:a + n * item])
            if bad.size:
                out.append(dst.addrs[sd] + do * item + bad)
        return np.concatenate(out) if out else np.empty(0, np.int64)
    return Carry(undefined, False)
