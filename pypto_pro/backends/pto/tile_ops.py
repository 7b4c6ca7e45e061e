"""Tile instructions as PTO-ISA calls: each instruction's C++ spelling comes from its declaration
(``pypto_pro/ops``, ``Instruction.cpp``). Valid shapes are tile state, as in PTO-ISA: a tile's
``SetValidShape`` is emitted where the kernel sets it (``pl.set_validshape``), never per op.
"""
from __future__ import annotations

from typing import Callable

from pypto_pro.errors import CompileError
from pypto_pro.ir.expr import Expr
from pypto_pro.ir.nodes import Buffer, TileOp, TileRef


class OpContext:
    """What an instruction's C++ rule needs from the program emitter: names and expression spelling."""

    def __init__(self, cexpr: Callable[[Expr], str], tile_name: Callable[[Buffer], str],
                 type_name: Callable[[Buffer], str], gm_type: Callable[[str], str],
                 dims: Callable[[str], list[str]], strides: Callable[[str], tuple[str, str, str] | None] = None):
        self.cexpr = cexpr
        self.tile_name = tile_name
        self.type_name = type_name
        self.gm_type = gm_type
        self.dims = dims
        # a tensor's pl.set_stride descriptor in this program: C++ names of (set?, row stride, col stride)
        self.strides = strides or (lambda tensor: None)

    def tile(self, ref: TileRef) -> str:
        name = self.tile_name(ref.buffer)
        # a subview at a run-time start is one descriptor, re-addressed where the subview is taken
        return f"{name}[{self.cexpr(ref.slot)}]" if ref.buffer.is_group and ref.buffer.view_starts is None else name


def no_cpp(what: str, reason: str, loc) -> CompileError:
    """The located error for a construct PTO-ISA (or this backend) cannot spell: ``kernel.emit()`` fails
    at the kernel's line instead of writing C++ that does not build."""
    return CompileError(f"the PTO-ISA C++ backend cannot emit {what}: {reason}", loc, kind="unsupported")


def op_lines(op: TileOp, ctx: OpContext, arch: str) -> list[str]:
    """C++ statements for one tile instruction; several lines are wrapped in a block by the caller.
    An instruction without a C++ form (``cpp_missing``, or a spelling raising ``NoCpp``) is a located
    ``CompileError``."""
    from pypto_pro.ops import INSTRUCTIONS
    from pypto_pro.ops.cpp import NoCpp
    ins = INSTRUCTIONS.get(op.op)
    what = f"pl.{op.attrs.get('api', op.op)}"
    if ins is None:
        raise no_cpp(what, f"tile op '{op.op}' has no PTO-ISA mapping", op.loc)
    if ins.cpp is None:
        raise no_cpp(what, ins.cpp_missing, op.loc)
    try:
        return ins.cpp(op, ctx, arch)
    except NoCpp as exc:
        raise no_cpp(what, str(exc), op.loc) from None
