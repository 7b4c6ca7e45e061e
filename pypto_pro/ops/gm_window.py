"""The window of a GM tensor a load or store moves: its NumPy index, the GM checker's rect, and
the located fault (with what the chip would do instead) when it leaves the tensor."""
from __future__ import annotations

import numpy as np

from pypto_pro.backends.sim.kit import fault
from pypto_pro.errors_sim import OutOfBoundsError
from pypto_pro.ir.nodes import TileOp


def on_chip(g: np.ndarray, offs: tuple, rows: int, cols: int, axes: tuple[int, int], verb: str, pname: str) -> str:
    """What the chip does with a window that leaves its tensor: the real codegen gives TLOAD / TSTORE the
    window's corner, its extent and the two axes' strides, and the copy engine walks them with no bound
    (PTO-ISA a5 TLoad / TStore: bursts of the row length at the row stride). So the elements past an
    axis are the tensor's next ones, and past its last byte, whatever GM holds there."""
    if g.ndim < 2 or rows <= 0 or cols <= 0 or not g.flags.c_contiguous:
        return ""
    st = [s // g.itemsize for s in g.strides]
    start = sum(o * s for o, s in zip(offs, st))
    last = start + (rows - 1) * st[axes[0]] + (cols - 1) * st[axes[1]]
    does = "writes" if verb.startswith("store") else "reads"
    head = f"; on the chip the copy walks the window by the tensor's strides with no per-axis bound: it {does} " \
           "the elements that follow in memory"
    if last < g.size:
        return f"{head} (other elements of '{pname}')"
    return f"{head}, up to {(last + 1 - g.size) * g.itemsize} bytes past the end of '{pname}' (whatever GM holds there)"


def window(op: TileOp, g: np.ndarray, offs: tuple, rows: int, cols: int, axes: tuple[int, int], verb: str,
            pname: str) -> tuple[tuple, tuple, bool]:
    """NumPy index, GM rect and transpose flag of a rows x cols window; a located fault when it leaves
    the tensor."""
    shape = g.shape
    a0, a1 = axes
    if g.ndim > 1 and a0 != a1 and len(offs) == g.ndim:  # the common case, one pass: inside on every axis
        fast_idx: list = []
        fast_rect: list = []
        for axis, o in enumerate(offs):
            n = rows if axis == a0 else cols if axis == a1 else 1
            if not (0 <= o < shape[axis] and o + n <= shape[axis]):
                break  # (the general path below says why, or takes an empty window at the end)
            fast_idx.append(slice(o, o + n) if axis == a0 or axis == a1 else o)
            fast_rect.append((o, o + n))
        else:
            return tuple(fast_idx), tuple(fast_rect), a0 > a1
    if g.ndim == 1:
        ext = {0: cols}
    else:
        ext = {a0: rows, a1: cols}
    for axis, o in enumerate(offs):  # an empty window (a run-time valid extent 0) may start at the end
        if not (0 <= o < shape[axis] or o == shape[axis] and ext.get(axis, 1) == 0):
            chip = on_chip(g, offs, rows, cols, axes, verb, pname)
            raise fault(op, f"{verb} '{pname}': offset {o} on axis {axis} is outside the tensor's shape "
                            f"{list(shape)}{chip}", OutOfBoundsError)
    idx: list = []
    rect: list = []
    for axis, o in enumerate(offs):
        n = ext.get(axis, 1)
        if o + n > shape[axis]:
            chip = on_chip(g, offs, rows, cols, axes, verb, pname)
            raise fault(op, f"{verb} '{pname}': the {rows} x {cols} window at offsets {list(offs)} ends at {o + n} on "
                            f"axis {axis}, past the tensor's size {shape[axis]}{chip}; set the tile's valid shape "
                            "with pl.set_validshape for a tail block", OutOfBoundsError)
        idx.append(slice(o, o + n) if axis in ext else o)
        rect.append((o, o + n))
    return tuple(idx), tuple(rect), g.ndim > 1 and a0 > a1
