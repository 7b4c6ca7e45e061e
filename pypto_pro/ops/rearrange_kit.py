"""Shared pieces of the data-rearrangement families (scatter_gather, sorting, transpose / index):
frontend checks that several of them make and the simulator dispatch they all use.

A rearrangement instruction reads and writes whole regions picked by its own rule (a flat index,
a byte offset, a sort block) rather than one valid region shared by every operand, so its rule
builds the :class:`~pypto_pro.backends.sim.kit.Prepared` record itself through :func:`dispatcher`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from pypto_pro.backends.sim.kit import Prepared, deferred_many, fault, tiles
from pypto_pro.backends.sim.rearrange import Undefined
from pypto_pro.errors_sim import OutOfBoundsError
from pypto_pro.frontend.operands import Args, row_major, tile_in, want_tile
from pypto_pro.ir.nodes import TileRef
from pypto_pro.language.enums import MemorySpace

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

VEC = (MemorySpace.Vec,)


def vec_tile(p: "FunctionParser", a: Args, name: str, dtypes=None, cpp: str = "", rm: bool = True) -> TileRef:
    """A Vec tile operand (row-major unless ``rm`` is False), of one of ``dtypes``."""
    t = tile_in(p, a, name, VEC, dtypes)
    if rm and cpp:
        row_major(p, a, name, t, cpp)
    return t


def width(p: "FunctionParser", a: Args, name: str, t: TileRef, bits: tuple[int, ...]) -> int:
    """The element width (bits) of ``t``, which must be one of ``bits``."""
    b = t.tile_type.dtype.bits
    if b not in bits:
        p.fail(a.node(name), f"{a.display} takes {'/'.join(f'b{x}' for x in bits)} data for '{name}'; "
                             f"'{t.buffer.name}' is {t.tile_type.dtype.name}")
    return b


def separate(p: "FunctionParser", a: Args, name: str, others: tuple[tuple[str, TileRef], ...]) -> None:
    """Scratch tile ``name`` must not share bytes with any of ``others`` (PTO-ISA: "must not overlap")."""
    t = want_tile(p, a, name)
    for oname, o in others:
        if t.buffer.space is not o.buffer.space:
            continue
        for x in t.buffer.addrs:
            for y in o.buffer.addrs:
                if x < y + o.buffer.slot_bytes and y < x + t.buffer.slot_bytes:
                    p.fail(a.node(name), f"{a.display}: '{name}' ({t.buffer.name}) overlaps '{oname}' "
                                         f"({o.buffer.name}) in {t.buffer.space.name}; it must be a separate region")


def dispatcher(op, env, body: Callable) -> Callable:
    """The dispatch of a rearrangement instruction. ``body(ts, slots)`` returns ``(reads, writes,
    compute, rows, cols)``: ``reads`` / ``writes`` are ``(tile index, rows, cols)`` regions (tile index
    into ``tiles(op, env)``, destination first), ``compute(outs)`` fills scratch copies of the written
    tiles' flat storage (one array per ``writes`` entry, in order; ``outs[i]`` starts as the current
    contents) and raises :class:`Undefined` for operands the chip leaves undefined."""
    ts = tiles(op, env)
    n = len(ts)

    def dispatch(*args) -> Prepared:
        slots = args[:n]
        try:
            reads, writes, compute, rows, cols = body(ts, slots)
        except Undefined as exc:
            raise fault(op, f"pl.{op.attrs.get('api', op.op)}: {exc}", OutOfBoundsError) from None
        flats = [ts[i].views[slots[i]].reshape(-1) for i, _, _ in writes]

        def checked(outs: list[np.ndarray]) -> None:
            for o, f in zip(outs, flats):
                o[...] = f
            try:
                compute(outs)
            except Undefined as exc:
                raise fault(op, f"pl.{op.attrs.get('api', op.op)}: {exc}", OutOfBoundsError) from None
        acc = tuple(ts[i].access(slots[i], r, c, False) for i, r, c in reads) + \
            tuple(ts[i].access(slots[i], r, c, True) for i, r, c in writes)
        commits = tuple(ts[i].written(slots[i], r, c) for i, r, c in writes)
        item = max(t.item for t in ts)
        return Prepared(rows, cols, False, acc, (), rows * cols * item, deferred_many(checked, flats), commits)
    return dispatch


def whole(t) -> tuple[int, int]:
    """The full (rows, cols) of a tile access helper's tile."""
    shape = t.st.buffer.tile_type.shape
    return shape[0], shape[1]


def flat_rows(t, n: int) -> tuple[int, int]:
    """The (rows, cols) window that covers the first ``n`` elements of a tile in row-major order."""
    cols = whole(t)[1]
    return max(1, -(-n // cols)), min(n, cols) if n <= cols else cols
