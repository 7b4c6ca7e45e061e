"""Builds, for each tile instruction of a lowered program, a small closure that executes it.

Everything static (views, dtypes, shapes, the op's numerics function) is captured once; at run
time a closure does index arithmetic and one NumPy call. ``operand_exprs`` gives the run-time
arguments the generated program passes, in the order the closure takes them.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from pypto_pro.backends.sim import numerics
from pypto_pro.backends.sim.tile_state import SlotState
from pypto_pro.errors import SimulationError
from pypto_pro.ir.expr import Const, Expr
from pypto_pro.ir.nodes import GMRef, SetValidShape, TileOp, TileRef
from pypto_pro.ops.registry import OPS


class GMBinding:
    """The launch's global tensors as NumPy arrays, indexed by parameter position."""

    def __init__(self, count: int):
        self.arrays: list[np.ndarray | None] = [None] * count


def where(op) -> str:
    loc = op.loc
    return f"{loc.path}:{loc.line}: " if loc else ""


def fault(op, message: str) -> SimulationError:
    text = f"{where(op)}{message}"
    if op.loc and op.loc.source_line:
        text += f"\n    {op.loc.source_line.strip()}"
    return SimulationError(text)


def operand_exprs(stmt: TileOp | SetValidShape) -> list[Expr]:
    """Run-time arguments of an instruction: tile slots, then GM offsets, then scalars."""
    if isinstance(stmt, SetValidShape):
        return [stmt.slot if stmt.slot is not None else Const(-1), stmt.rows, stmt.cols]
    args: list[Expr] = []
    for o in (stmt.dst, *stmt.srcs):
        if isinstance(o, TileRef):
            args.append(o.slot)
    for o in (stmt.dst, *stmt.srcs):
        if isinstance(o, GMRef):
            args.extend(o.offsets)
    args.extend(stmt.scalars)
    return args


def build(stmt: TileOp | SetValidShape, states: dict[int, SlotState], gm: GMBinding) -> Callable:
    if isinstance(stmt, SetValidShape):
        return _set_validshape(stmt, states[stmt.buffer.uid])
    if stmt.op in ("load", "store"):
        return _movement(stmt, states, gm)
    kind = OPS[stmt.op].kind
    return _BUILDERS[kind](stmt, states)


def _set_validshape(s: SetValidShape, st: SlotState) -> Callable:
    rows_max, cols_max = s.buffer.tile_type.shape
    depth = len(st.views)

    def run(slot: int, rows: int, cols: int) -> None:
        if not (0 <= rows <= rows_max and 0 <= cols <= cols_max):
            raise fault(s, f"set_validshape({rows}, {cols}) is outside the tile's {rows_max} x {cols_max}")
        for i in (range(depth) if slot < 0 else (slot,)):
            st.declared[i][0] = st.valid[i][0] = rows
            st.declared[i][1] = st.valid[i][1] = cols
    return run


def _movement(op: TileOp, states: dict[int, SlotState], gm: GMBinding) -> Callable:
    load = op.op == "load"
    tile = op.dst if load else op.srcs[0]
    ref = op.srcs[0] if load else op.dst
    assert isinstance(tile, TileRef) and isinstance(ref, GMRef)
    st = states[tile.buffer.uid]
    views, declared, valid = st.views, st.declared, st.valid
    pidx = ref.param.index
    pname = ref.param.name
    rank = ref.param.type.rank
    arrays = gm.arrays

    def window(slot: int, offs: tuple[int, ...], limit: list[int]):
        g = arrays[pidx]
        shape = g.shape
        for axis, o in enumerate(offs):
            if not 0 <= o < shape[axis]:
                raise fault(op, f"{'load from' if load else 'store to'} '{pname}': offset {o} on axis {axis} is "
                                f"outside the tensor's shape {list(shape)}")
        if rank == 1:
            r, c = 1, min(limit[1], shape[0] - offs[0])
            return g, (slice(offs[0], offs[0] + c),), r, c, True
        o0, o1 = offs[-2], offs[-1]
        r, c = min(limit[0], shape[-2] - o0), min(limit[1], shape[-1] - o1)
        return g, (*offs[:-2], slice(o0, o0 + r), slice(o1, o1 + c)), r, c, False

    if load:
        def run(slot: int, *offs: int) -> None:
            g, idx, r, c, flat = window(slot, offs, declared[slot])
            views[slot][:r, :c] = g[idx] if not flat else g[idx][None, :]
            valid[slot][0] = r
            valid[slot][1] = c
    else:
        def run(slot: int, *offs: int) -> None:
            g, idx, r, c, flat = window(slot, offs, valid[slot])
            if flat:
                g[idx] = views[slot][0, :c]
            else:
                g[idx] = views[slot][:r, :c]
    return run


def _region(op: TileOp, st: SlotState, slot: int, name: str) -> tuple[int, int]:
    return st.valid[slot][0], st.valid[slot][1]


def _check_covers(op: TileOp, st: SlotState, slot: int, r: int, c: int, name: str) -> None:
    vr, vc = st.valid[slot]
    if vr < r or vc < c:
        raise fault(op, f"pl.{op.op}: '{name}' ({st.buffer.name}) has valid shape {vr} x {vc}, smaller than the "
                        f"{r} x {c} region being computed")


def _binary(op: TileOp, states: dict[int, SlotState]) -> Callable:
    d, a, b = (states[t.buffer.uid] for t in (op.dst, *op.srcs))  # type: ignore[union-attr]
    name = op.op
    fn = numerics.binary

    def run(sd: int, sa: int, sb: int) -> None:
        r, c = a.valid[sa]
        _check_covers(op, b, sb, r, c, "src1")
        dr, dc = d.declared[sd]
        r, c = min(r, dr), min(c, dc)
        fn(name, d.views[sd][:r, :c], a.views[sa][:r, :c], b.views[sb][:r, :c])
        d.valid[sd][0], d.valid[sd][1] = r, c
    return run


def _unary_like(op: TileOp, states: dict[int, SlotState]) -> Callable:
    d, a = (states[t.buffer.uid] for t in (op.dst, op.srcs[0]))  # type: ignore[union-attr]
    kind = OPS[op.op].kind
    name = op.op
    mode = op.attrs.get("mode", "rint")

    def compute(dv, av, scalars):
        if kind == "unary":
            numerics.unary(name, dv, av)
        elif kind == "scalar":
            numerics.binary_scalar(name, dv, av, scalars[0])
        elif kind == "cast":
            numerics.cast(dv, av, mode)
        else:  # move
            dv[...] = av

    def run(sd: int, sa: int, *scalars) -> None:
        r, c = a.valid[sa]
        dr, dc = d.declared[sd]
        r, c = min(r, dr), min(c, dc)
        compute(d.views[sd][:r, :c], a.views[sa][:r, :c], scalars)
        d.valid[sd][0], d.valid[sd][1] = r, c
    return run


def _fill(op: TileOp, states: dict[int, SlotState]) -> Callable:
    d = states[op.dst.buffer.uid]  # type: ignore[union-attr]

    def run(sd: int, scalar) -> None:
        r, c = d.declared[sd]
        numerics.fill(d.views[sd][:r, :c], scalar)
        d.valid[sd][0], d.valid[sd][1] = r, c
    return run


def _reduce(op: TileOp, states: dict[int, SlotState]) -> Callable:
    d, a = (states[t.buffer.uid] for t in (op.dst, op.srcs[0]))  # type: ignore[union-attr]
    name, dim = op.op, op.attrs["dim"]

    def run(sd: int, sa: int, *rest) -> None:
        r, c = a.valid[sa]
        if r == 0 or c == 0:
            raise fault(op, f"pl.{name}: source '{a.buffer.name}' has an empty valid region ({r} x {c})")
        if dim == 1:
            numerics.reduce(name, d.views[sd][:r, :1], a.views[sa][:r, :c], 1)
            d.valid[sd][0], d.valid[sd][1] = r, 1
        else:
            numerics.reduce(name, d.views[sd][:1, :c], a.views[sa][:r, :c], 0)
            d.valid[sd][0], d.valid[sd][1] = 1, c
    return run


def _expand(op: TileOp, states: dict[int, SlotState]) -> Callable:
    d, a, v = (states[t.buffer.uid] for t in (op.dst, *op.srcs))  # type: ignore[union-attr]
    name, dim = op.op, op.attrs["dim"]

    def run(sd: int, sa: int, sv: int) -> None:
        r, c = a.valid[sa]
        dr, dc = d.declared[sd]
        r, c = min(r, dr), min(c, dc)
        if dim == 1:
            _check_covers(op, v, sv, r, 1, "vec")
            vec = v.views[sv][:r, :1]
        else:
            _check_covers(op, v, sv, 1, c, "vec")
            vec = v.views[sv][:1, :c]
        numerics.expand(name, d.views[sd][:r, :c], a.views[sa][:r, :c], vec, dim)
        d.valid[sd][0], d.valid[sd][1] = r, c
    return run


_BUILDERS: dict[str, Callable[[TileOp, dict[int, SlotState]], Callable]] = {
    "binary": _binary, "unary": _unary_like, "scalar": _unary_like, "cast": _unary_like, "move": _unary_like,
    "fill": _fill, "reduce": _reduce, "expand": _expand,
}
