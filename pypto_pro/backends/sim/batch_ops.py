"""Batched forms of the Cube's ops, the boxed-tile copies and the reductions (batch_replay, issue 15).

``batch_replay`` runs a step of blocks that replay one schedule as one NumPy call over a leading block
axis; this module gives the ops whose operands are boxed tiles (``fractal.Region``), whose numerics are
a float64 product, or whose numerics are a reduction tree, that form. Each keeps the bytes of the
per-block path by the rule ``batch_replay`` states: every NumPy call runs over each block's data with the
loops the single block's call ran, because

* every intermediate is laid out per block as the per-block path laid it out (C-contiguous) in a
  buffer whose block axis is padded (``batch_replay.padded_empty``), so NumPy can never merge the
  block axis into a tile axis, and the inner loop of each call has the per-block call's length;
* byte copies (loads, moves, extracts, a same-dtype fixpipe) move the same bytes in any layout;
* the float64 product is one ``np.matmul`` over ``[blocks, m, k] @ [blocks, k, n]``: NumPy calls the
  same BLAS ``dgemm`` per block with the same shapes and leading dimensions as the per-block product
  (BLAS at one thread, ``blas_threads``), integer products are exact in any order.

A boxed window batches when its tile's boxes are known (``Region.boxes``): the stacked boxes are then a
strided view with the block axis in front, as the ND views are. ``tests/backends/sim/test_batch_ops.py``
compares every form with the per-block path on random bit patterns with NaN payloads, signed zeros,
subnormals and infinities."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pypto_pro import env_flags
from pypto_pro.backends.sim.batch_replay import copied, deferred, gm_stack, padded_empty
from pypto_pro.backends.sim.fractal import Region

# the Cube's product batched (ops/matrix.py): exact, but measured slower than one product per block (a
# float64 product of a 64-128 tile is bandwidth-bound, and eight blocks' operands, products and sums in
# one call move the same bytes through a larger working set; docs/simulator.md, fifth pass), so off
# unless PYPTO_PRO_SIM_BATCH_CUBE=1 (the tests turn it on)
BATCH_CUBE = env_flags.flag("PYPTO_PRO_SIM_BATCH_CUBE", False)


def _merged(a: np.ndarray, shape: tuple) -> np.ndarray:
    """``a`` reshaped to ``shape`` as a view (never a copy: a write through it must reach ``a``)."""
    out = a.view()
    out.shape = shape  # raises if it would need a copy
    return out


class Boxes:
    """A boxed tile window of every block of a chunk: ``blk[B, I, ir, J, ic]`` the stacked boxes that
    cover it (``Region._blocks``), ``exact`` whether they cover exactly the ``extent``."""

    __slots__ = ("blk", "dtype", "exact", "extent", "shape")

    def __init__(self, blk: np.ndarray, extent: tuple[int, int], exact: bool):
        self.blk, self.extent, self.exact, self.dtype = blk, extent, exact, blk.dtype
        self.shape = (blk.shape[0], *extent)

    def read(self) -> np.ndarray:
        """Every block's window as a fresh copy (per block what ``Region.read`` returns; padded block axis)."""
        n, i, ir, j, ic = self.blk.shape
        out5 = padded_empty(self.blk.shape, self.dtype)
        out5[...] = self.blk
        out = _merged(out5, (n, i * ir, j * ic))
        if self.exact:
            return out
        r, c = self.extent
        crop = padded_empty((n, r, c), self.dtype)
        crop[...] = out[:, :r, :c]
        return crop

    def astype(self, dtype) -> np.ndarray:
        """Per block what ``Region.astype(dtype)`` returns: converted as it is copied out of whole boxes,
        else read, then converted."""
        if self.exact:
            n, i, ir, j, ic = self.blk.shape
            out5 = padded_empty(self.blk.shape, dtype)
            out5[...] = self.blk
            return _merged(out5, (n, i * ir, j * ic))
        return astype(self.read(), dtype)

    def write(self, values: np.ndarray) -> None:
        """``values[B, r, c]`` (the window's dtype) into every block's boxes (exact windows only)."""
        self.blk[...] = values.reshape(self.blk.shape)


def boxes(stack: Callable, view) -> Boxes | None:
    """The stacked form of a boxed window, None when its boxes are not known."""
    if not isinstance(view, Region) or view.boxes is None:
        return None
    blk, exact = view._blocks()
    return Boxes(stack.raw(blk), view.extent, exact)


def stacked(stack: Callable, view):
    """A tile window with the block axis in front: a strided view (ND / DN tiles) or :class:`Boxes`;
    None when it cannot be stacked."""
    if isinstance(view, np.ndarray):
        return stack(view)
    return boxes(stack, view)


def read(stack: Callable, view) -> np.ndarray | None:
    """Every block's copy of a window (``np.asarray`` of it per block), padded; None if not stackable."""
    s = stacked(stack, view)
    if s is None:
        return None
    if isinstance(s, Boxes):
        return s.read()
    out = padded_empty(s.shape, s.dtype)
    np.copyto(out, s)
    return out


def astype(a: np.ndarray, dtype) -> np.ndarray:
    """``a.astype(dtype)`` of every block's C-contiguous array, into a padded buffer."""
    out = padded_empty(a.shape, dtype)
    np.copyto(out, a, casting="unsafe")
    return out


def land(dst, compute: Callable[[np.ndarray], None], defer: bool) -> Callable | None:
    """``kit.deferred`` over a stacked destination (a strided view or exact :class:`Boxes`)."""
    if isinstance(dst, np.ndarray):
        return deferred(compute, dst, defer)
    scratch = padded_empty(dst.shape, dst.dtype)  # a boxed tile is always computed into scratch
    compute(scratch)
    if not defer:
        dst.write(scratch)
        return None
    return lambda: dst.write(scratch)


def landable(dst) -> bool:
    return dst is not None and (isinstance(dst, np.ndarray) or dst.exact)


def copy_many(preps: list, stack: Callable, defer: bool):
    """Batched byte copy ``dst[...] = src`` (or ``src.T``): ``data = (src window, dst window, transpose)``.
    A copy of one dtype moves the bytes as they are, so any layout gives the same bytes."""
    src, dst, transpose = preps[0].batch.data
    d = stacked(stack, dst)
    if not landable(d):
        return NotImplemented
    s = stacked(stack, src)
    if s is None:
        return NotImplemented
    vals = s.read() if isinstance(s, Boxes) else s
    if transpose:
        vals = vals.transpose(0, 2, 1)
    if isinstance(d, np.ndarray):
        return copied(vals, d, defer)
    return land(d, lambda out: np.copyto(out, vals), defer)


def copyable(src, dst) -> bool:
    """Whether a copy between these windows may batch: one dtype, each a plain view or boxed with boxes."""
    for v in (src, dst):
        if not isinstance(v, np.ndarray) and not (isinstance(v, Region) and v.boxes is not None):
            return False
    return src.dtype == dst.dtype


# ---- GM loads and stores (ops/data_movement.py) ----------------------------------------------------------


def load_many(preps: list, stack: Callable, defer: bool):
    """Batched replay of plain loads: the blocks' GM windows (one strided view, else stacked) into
    their tiles."""
    dst = stacked(stack, preps[0].batch.data[1])
    if not landable(dst):
        return NotImplemented
    src = gm_stack([p.batch.data[0] for p in preps])
    if src is None:
        src = np.stack([p.batch.data[0][0] for p in preps])  # a copy made at the start: the loads read then
    if isinstance(dst, np.ndarray):
        return copied(src, dst, defer)
    return land(dst, lambda out: np.copyto(out, src), defer)


def store_many(preps: list, stack: Callable, defer: bool):
    """Batched replay of plain stores (same dtype, no conversion): the tiles into the blocks' GM windows
    when those are one strided view."""
    dst = gm_stack([p.batch.data[0] for p in preps])
    if dst is None:
        return NotImplemented
    return copied(stack(preps[0].batch.data[1]), dst, defer)
