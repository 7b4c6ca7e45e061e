"""Tile instructions as PTO-ISA calls: each instruction's C++ spelling comes from its declaration
(``pypto_pro/ops``, ``Instruction.cpp``). Valid shapes are tile state, as in PTO-ISA: a tile's
``SetValidShape`` is emitted where the kernel sets it (``pl.set_validshape``), never per op.
"""
from __future__ import annotations

from typing import Callable

from pypto_pro.ir.expr import Expr
from pypto_pro.ir.nodes import Buffer, TileOp, TileRef


class OpContext:
    """What an instruction's C++ rule needs from the program emitter: names and expression spelling."""

    def __init__(self, cexpr: Callable[[Expr], str], tile_name: Callable[[Buffer], str],
                 type_name: Callable[[Buffer], str], gm_type: Callable[[str], str],
                 dims: Callable[[str], list[str]]):
        self.cexpr = cexpr
        self.tile_name = tile_name
        self.type_name = type_name
        self.gm_type = gm_type
        self.dims = dims

    def tile(self, ref: TileRef) -> str:
        name = self.tile_name(ref.buffer)
        # a subview at a run-time start is one descriptor, re-addressed where the subview is taken
        return f"{name}[{self.cexpr(ref.slot)}]" if ref.buffer.is_group and ref.buffer.view_starts is None else name


def op_lines(op: TileOp, ctx: OpContext, arch: str) -> list[str]:
    """C++ statements for one tile instruction; several lines are wrapped in a block by the caller."""
    from pypto_pro.ops import INSTRUCTIONS
    ins = INSTRUCTIONS.get(op.op)
    if ins is None:
        return [f'#error "tile op \'{op.op}\' has no PTO-ISA mapping in this backend"']
    if ins.cpp is None:
        return [f'#error "pl.{op.attrs.get("api", op.op)}: {ins.cpp_missing}"']
    return ins.cpp(op, ctx, arch)
