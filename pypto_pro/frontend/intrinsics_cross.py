"""Cross-core synchronisation: ``pl.system.set_cross_core / wait_cross_core / sync_all``."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from pypto_pro.frontend.intrinsics import handler, want_event
from pypto_pro.frontend.operands import Args, want_enum, want_pipe
from pypto_pro.ir.expr import Const
from pypto_pro.ir.nodes import SyncOp
from pypto_pro.language.enums import CrossCoreSyncMode, PipeType

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser


@handler("set_cross_core", "wait_cross_core")
def cross_core(p: "FunctionParser", node: ast.Call, a: Args) -> None:
    if p.ctx.section is None:
        p.fail(node, f"pl.system.{a.name} must be inside a section")
    pipe = want_pipe(p, a, "pipe")
    ev = want_event(p, a, "event_id", int(p.ctx.arch.cross_core_event_ids.value), "cross-core event id")
    mode = want_enum(p, a, "sync_mode", CrossCoreSyncMode)
    if mode is not CrossCoreSyncMode.INTRA_BLOCK:
        p.fail(a.node("sync_mode"), f"pl.system.{a.name}(sync_mode={mode.name}) is not supported yet in this release "
                                    "(INTRA_BLOCK: between the Cube and Vector cores of one block)")
    kind = "xset" if a.name == "set_cross_core" else "xwait"
    p.ctx.builder.emit(SyncOp(kind, pipe, None, ev, p.loc(node)))


@handler("sync_all")
def sync_all(p: "FunctionParser", node: ast.Call, a: Args) -> None:
    if p.ctx.section is None:
        p.fail(node, "pl.system.sync_all must be inside a section")
    p.ctx.builder.emit(SyncOp("sync_all", PipeType.S, None, Const(0), p.loc(node)))
