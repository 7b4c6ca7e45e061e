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


def plain_window(t: TileAccess, arrays: list, pidx: int, pname: str, descriptors: dict,
                 write: bool) -> Callable[[int, int, int], Prepared | None]:
    """The fast dispatch of one load (``write`` False) or store call site of tensor parameter ``pidx``
    (see the module docstring): ``(slot, row offset, column offset) -> Prepared``, or None when the call
    is not the plain case (a store: also when the tensor's dtype is not the tile's)."""
    # (slot, rows, cols) -> (slot view, rows whole, on-chip record, commits, bytes); each part a pure
    # function of the key, as TileAccess's memos are
    slots: dict[tuple, tuple] = {}
    item = t.item
    valid = t.valid
    kind = "store" if write else "load"
    many = batch_ops.store_many if write else batch_ops.load_many

    def dispatch(slot: int, o0: int, o1: int) -> Prepared | None:
        g = arrays[pidx]
        if not FAST or g.ndim != 2 or descriptors.get(pidx) is not None:
            return None
        r, c = valid[slot]
        s0, s1 = g.shape
        # data_movement's _window, one pass: inside on both axes (else the general rule says why)
        if not (0 <= o0 < s0 and o0 + r <= s0 and 0 <= o1 < s1 and o1 + c <= s1):
            return None
        key = (slot, r, c)
        got = slots.get(key)
        if got is None:
            view = t.region(slot, r, c)
            if not isinstance(view, np.ndarray):  # a boxed tile's region (fractal): the general rule
                return None
            got = slots[key] = (view, c * item == t.row_bytes, (t.access(slot, r, c, not write),),
                                () if write else (t.written(slot, r, c),), r * c * item)
        view, full, acc, commits, nbytes = got
        gm = g[o0:o0 + r, o1:o1 + c]
        if gm.dtype != view.dtype:
            if write:  # (a conversion on the way out: the general rule)
                return None
            gm = gm.view(view.dtype)  # same width: the bytes move as they are
        prep = Prepared(r, c, full, acc, ((pidx, pname, ((o0, o0 + r), (o1, o1 + c)), write),), nbytes,
                        copy_run(gm, view) if write else copy_run(view, gm), commits)
        if batch_replay.LANES > 1:
            prep.batch = BatchSpec((kind, gm.shape, gm.strides, gm.dtype.str), many,
                                   ((gm, g, (slice(o0, o0 + r), slice(o1, o1 + c))), view))
        return prep
    return dispatch
