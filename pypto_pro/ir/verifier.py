"""Structural checks of the IR between passes: catches compiler bugs early (not user mistakes)."""
from __future__ import annotations

from pypto_pro.errors import InternalCompilerError
from pypto_pro.ir.expr import Var, walk
from pypto_pro.ir.nodes import (JUMPS, Assign, Break, Continue, For, GMRef, If, KernelIR, Section, SetValidShape,
                                StageSync, Stmt, SyncOp, TileOp, TileRef, While)
from pypto_pro.ir.storage import ArrayInit, ArrayStore, storage_exprs


def verify(kernel: KernelIR, stage: str) -> None:
    """Raise ``InternalCompilerError`` if a pass produced malformed IR."""
    defined: set[int] = {v.uid for v in kernel.param_vars.values()}
    known_buffers = {b.uid for b in kernel.buffers}

    def check_expr(e, where: Stmt) -> None:
        for sub in walk(e):
            if isinstance(sub, Var) and sub.uid not in defined:
                raise InternalCompilerError(f"after {stage}: variable {sub.name} read before assignment at {where.loc}")

    def check_operand(o, where: Stmt) -> None:
        if isinstance(o, TileRef):
            if o.buffer.uid not in known_buffers:
                raise InternalCompilerError(f"after {stage}: unknown buffer {o.buffer.name}")
            check_expr(o.slot, where)
        elif isinstance(o, GMRef):
            for x in (*o.offsets, *getattr(o.param, "view_exprs", tuple)()):
                check_expr(x, where)

    def visit(body: list[Stmt], in_section: bool, in_loop: bool = False) -> None:
        for s in body:
            if isinstance(s, Assign):
                check_expr(s.value, s)
                defined.add(s.var.uid)
            elif isinstance(s, For):
                for e in (s.start, s.stop, s.step):
                    check_expr(e, s)
                defined.add(s.var.uid)
                visit(s.body, in_section, True)
            elif isinstance(s, While):
                check_expr(s.cond, s)
                visit(s.body, in_section, True)
            elif isinstance(s, If):
                check_expr(s.cond, s)
                visit(s.then_body, in_section, in_loop)
                visit(s.else_body, in_section, in_loop)
            elif isinstance(s, JUMPS):
                if isinstance(s, (Break, Continue)) and not in_loop:
                    raise InternalCompilerError(f"after {stage}: {type(s).__name__.lower()} outside a loop at {s.loc}")
            elif isinstance(s, Section):
                if in_section:
                    raise InternalCompilerError(f"after {stage}: nested section at {s.loc}")
                visit(s.body, True, in_loop)
            elif isinstance(s, TileOp):
                check_operand(s.dst, s)
                for o in s.srcs:
                    check_operand(o, s)
                for e in s.scalars:
                    check_expr(e, s)
                res = s.attrs.get("result")  # pl.getval / pl.ssbuf_load define their scalars
                for v in res if isinstance(res, tuple) else (res,) if res is not None else ():
                    defined.add(v.uid)
            elif isinstance(s, SetValidShape):
                for e in (s.rows, s.cols) + ((s.slot,) if s.slot is not None else ()):
                    check_expr(e, s)
            elif isinstance(s, SyncOp):
                if s.event is not None:
                    check_expr(s.event, s)
            elif isinstance(s, StageSync):
                check_expr(s.slot, s)
            elif isinstance(s, (ArrayStore, ArrayInit)):
                for e in storage_exprs(s):
                    check_expr(e, s)
            else:
                raise InternalCompilerError(f"after {stage}: unknown statement {type(s).__name__}")

    visit(kernel.body, kernel.kind is not None)
