"""The common GM <-> UB transfer in one step: a plain load or store of a window inside a 2-D tensor.

Most loads and stores of an SPMD launch move a ``rows x cols`` window of a 2-D tensor along its two
axes in order (``order=[0, 1]``), with no ``pl.set_stride`` descriptor, no packed type, no
``pl.make_tensor`` view and no fixpipe conversion: the window is a NumPy slice of the tensor, and
the numerics are one copy between it and the tile's slot view. Their windows move with the block
and the iteration, so the dispatch memo (prep_memo) rarely hits; :class:`PlainWindow` dispatches
them with the general rule's per-call work folded into one cached lookup per (slot, valid shape).

It builds exactly the :class:`~kit.Prepared` the general rule (``ops/data_movement.py``) builds for
such a window — same work size, accesses, commits, GM record and bytes moved — and returns None for
every other case (a window that leaves the tensor, a descriptor, another rank), which the caller
then dispatches the general way (``FAST = False`` dispatches every call that way; the tests compare
both). The copy reads and writes as the general rule's does: straight from the GM window into the
slot view (a load) or from the slot view into the window (a store); with deferred commits through
a scratch copy made at the start, as :func:`kit.deferred` does.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from pypto_pro.backends.sim import batch_ops, batch_replay
from pypto_pro.backends.sim.batch_replay import BatchSpec
from pypto_pro.backends.sim.kit import Prepared, TileAccess, landing

FAST = True  # False: every load and store dispatches through the general rule


def copy_run(dst: np.ndarray, src: np.ndarray) -> Callable[[bool], Callable | None]:
    """``kit.deferred(lambda out: np.copyto(out, src), dst)`` for a plain-array ``dst``, in one closure."""
    def run(defer: bool) -> Callable | None:
        if not defer:
            np.copyto(dst, src)
            return None
        scratch = np.empty(dst.shape, dst.dtype)
        np.copyto(scratch, src)
        return landing(dst, scratch, True)
    return run


class PlainWindow:
    """The fast dispatch of one load or store call site (see the module docstring). ``pidx`` / ``pname``:
    the tensor parameter; ``write``: a store (the GM checker's record says so)."""

    __slots__ = ("t", "arrays", "pidx", "pname", "descriptors", "write", "_slots")

    def __init__(self, t: TileAccess, arrays: list, pidx: int, pname: str, descriptors: dict, write: bool):
        self.t = t
        self.arrays = arrays
        self.pidx = pidx
        self.pname = pname
        self.descriptors = descriptors
        self.write = write
        # (slot, rows, cols) -> (slot view, whether its rows are whole, on-chip record, commits or None);
        # each part a pure function of the key, as TileAccess's memos are
        self._slots: dict[tuple, tuple] = {}

    def window(self, slot: int, o0: int, o1: int) -> tuple | None:
        """(GM window, slot view, rows, cols, full rows, on-chip record, commits, GM record), or None
        when the call is not the plain case."""
        g = self.arrays[self.pidx]
        if not FAST or g.ndim != 2 or self.descriptors.get(self.pidx) is not None:
            return None
        t = self.t
        r, c = t.valid[slot]
        s0, s1 = g.shape
        # data_movement's _window, one pass: inside on both axes (else the general rule says why)
        if not (0 <= o0 < s0 and o0 + r <= s0 and 0 <= o1 < s1 and o1 + c <= s1):
            return None
        key = (slot, r, c)
        got = self._slots.get(key)
        if got is None:
            view = t.region(slot, r, c)
            if not isinstance(view, np.ndarray):  # a boxed tile's region (fractal): the general rule
                return None
            got = self._slots[key] = (view, c * t.item == t.row_bytes, (t.access(slot, r, c, not self.write),),
                                      None if self.write else (t.written(slot, r, c),))
        view, full, acc, commits = got
        rect = ((o0, o0 + r), (o1, o1 + c))
        return g[o0:o0 + r, o1:o1 + c], view, r, c, full, acc, commits, ((self.pidx, self.pname, rect, self.write),)

    def load(self, slot: int, o0: int, o1: int) -> Prepared | None:
        """A load's record (None: not the plain case); its bytes move as they are (same-width dtypes)."""
        got = self.window(slot, o0, o1)
        if got is None:
            return None
        src, view, r, c, full, acc, commits, gm = got
        if src.dtype != view.dtype:
            src = src.view(view.dtype)
        prep = Prepared(r, c, full, acc, gm, r * c * self.t.item, copy_run(view, src), commits)
        if batch_replay.LANES > 1:
            idx = (slice(o0, o0 + r), slice(o1, o1 + c))
            prep.batch = BatchSpec(("load", src.shape, src.strides, src.dtype.str), batch_ops.load_many,
                                   ((src, self.arrays[self.pidx], idx), view))
        return prep

    def store(self, slot: int, o0: int, o1: int) -> Prepared | None:
        """A plain store's record (None: not the plain case, or a conversion on the way out)."""
        got = self.window(slot, o0, o1)
        if got is None:
            return None
        dst, view, r, c, full, acc, _, gm = got
        if dst.dtype != view.dtype:
            return None
        prep = Prepared(r, c, full, acc, gm, r * c * self.t.item, copy_run(dst, view))
        if batch_replay.LANES > 1:
            idx = (slice(o0, o0 + r), slice(o1, o1 + c))
            prep.batch = BatchSpec(("store", dst.shape, dst.strides, dst.dtype.str), batch_ops.store_many,
                                   ((dst, self.arrays[self.pidx], idx), view))
        return prep
