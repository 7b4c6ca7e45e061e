"""Builds, for each tile instruction of a lowered program, the closure that *dispatches* it: the
rule comes from the instruction's declaration (``pypto_pro/ops``, ``Instruction.sim``; the toolkit
rules build on is ``backends/sim/kit.py``). ``pl.set_validshape`` is handled here: it is the
scalar unit's change of a tile's state, not an instruction of a pipe.
"""
from __future__ import annotations

from typing import Callable

from pypto_pro.backends.sim.kit import GMBinding, SimEnv, fault  # noqa: F401  (GMBinding: executor)
from pypto_pro.backends.sim.tile_state import SlotState
from pypto_pro.ir.expr import Const, Expr
from pypto_pro.ir.nodes import GMRef, SetValidShape, TileOp, TileRef
from pypto_pro.language.enums import MemorySpace


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
            args.extend(getattr(o.param, "view_exprs", tuple)())  # a pl.make_tensor view's shape, strides, offset
    args.extend(stmt.scalars)
    return args


def build(stmt: TileOp | SetValidShape, states: dict[int, SlotState], gm: GMBinding,
          remote: Callable[[int], dict[int, SlotState]] | None = None, kind=None, block: dict | None = None,
          spr=None) -> Callable:
    """The dispatcher of one instruction. ``remote(subblock)`` gives the tile states of another
    core's memory, for moves that write into it (a5 Acc -> Vec from the Cube program); ``kind`` is the
    engine of the program (a ``SectionKind``); ``spr`` the core's vector-mask registers."""
    if isinstance(stmt, SetValidShape):
        parent = states[stmt.clamp_to[0].uid] if stmt.clamp_to is not None else None
        return _set_validshape(stmt, states[stmt.buffer.uid], parent,
                               descriptor_only=getattr(kind, "value", None) == "cube"
                               and stmt.buffer.space is MemorySpace.Vec)
    from pypto_pro.ops import INSTRUCTIONS
    return INSTRUCTIONS[stmt.op].sim(stmt, SimEnv(states, gm, remote, kind, block, spr))


def _set_validshape(s: SetValidShape, st: SlotState, parent: SlotState | None = None,
                    descriptor_only: bool = False) -> Callable:
    """``descriptor_only``: a UB tile in the Cube program, only ever an Acc -> Vec move's destination, whose
    extent is the Acc's valid shape (PTO-ISA a5 TMOV: ``src.GetValidRow/Col``); the real kernels set it to
    the Acc's whole M before a dual-split move (the quantised lightning indexer), so it is not bounded by
    the tile's shape."""
    rows_max, cols_max = s.buffer.tile_type.shape
    if descriptor_only:
        rows_max = cols_max = 1 << 31
    depth = len(st.views)
    valid = st.valid
    starts = s.buffer.view_starts

    def dispatch(slot: int, rows: int, cols: int) -> None:
        if parent is not None:  # a subview: the window clamped to what its tile has valid now
            if starts is not None:  # at a run-time start: the slot says where (ir/subview.py)
                bs, r0, c0 = starts.decode(slot)
            else:
                (_, r0, c0), bs = s.clamp_to, max(slot, 0)
            pr, pc = parent.valid[bs]
            if pr <= r0 or pc <= c0:
                raise fault(s, f"this subview starts at [{r0}, {c0}], past the valid shape [{pr}, {pc}] its tile has "
                               "here")
            rows, cols = min(rows, pr - r0), min(cols, pc - c0)
        # a run-time 0 is what the chip takes (an empty transfer: zero bursts / zero-byte bursts); the
        # real compile-time rule rejects only constant extents below 1 (ir/op/block_ops.py)
        if not (0 <= rows <= rows_max and 0 <= cols <= cols_max):
            raise fault(s, f"pl.set_validshape([{rows}, {cols}]) is outside the tile's 0..{rows_max} x 0..{cols_max}")
        for i in (range(depth) if slot < 0 else (slot,)):
            valid[i][0] = rows
            valid[i][1] = cols
        return None
    return dispatch
