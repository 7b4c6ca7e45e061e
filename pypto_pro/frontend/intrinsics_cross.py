"""Cross-core synchronisation: ``pl.system.set_cross_core / wait_cross_core / sync_all``.

Event ids are 0-15 (a static id outside is a ``ValueError``, as in the real ``system_ops.py``).
``sync_mode`` (``pl.CrossCoreSyncMode``) says who meets whom; the simulator's model of each mode
is in docs/simulator.md ("Cross-core flags").
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from pypto_pro.frontend.intrinsics import handler
from pypto_pro.frontend.intrinsics_system import engine_pipe, in_section, want_event
from pypto_pro.frontend.operands import Args, element_node, want_enum
from pypto_pro.frontend.values import TensorValue, TileValue
from pypto_pro.ir.expr import Const, Expr
from pypto_pro.ir.nodes import SyncOp
from pypto_pro.language.enums import CrossCoreSyncMode, MemorySpace, PipeType, SectionKind, SyncAllMode, SyncCoreType

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

M = CrossCoreSyncMode


@handler("set_cross_core", "wait_cross_core")
def cross_core(p: "FunctionParser", node: ast.Call, a: Args) -> None:
    what = f"pl.system.{a.name}"
    section = in_section(p, node, what)
    pipe = engine_pipe(p, a, "pipe", what)
    ev = want_event(p, a, "event_id", int(p.ctx.arch.cross_core_event_ids.value), "cross-core event id", kind="value")
    mode = want_enum(p, a, "sync_mode", CrossCoreSyncMode)
    if mode is M.UNICAST_BLOCK and p.ctx.arch.name != "a5":
        p.fail(a.node("sync_mode"), f"{what}: UNICAST_BLOCK is an a5 mode (set_intra_block / wait_intra_block per "
                                    f"Vector core); {p.ctx.arch.name}'s FFTS cross-core flag pairs the Cube with both "
                                    "Vector cores: use INTRA_BLOCK")
    if mode is M.INTER_SUBBLOCK and section is SectionKind.CUBE:
        p.fail(a.node("sync_mode"), f"{what}: INTER_SUBBLOCK pairs the two Vector cores of a block; call it in "
                                    "section_vector()")
    kind = "xset" if a.name == "set_cross_core" else "xwait"
    p.ctx.builder.emit(SyncOp(kind, pipe, None, ev, p.loc(node), attrs={"sync_mode": mode}))


def _workspaces(p: "FunctionParser", a: Args, core_type: Any) -> dict[str, Any]:
    """Soft-mode workspaces by role (real ``DeduceSyncAllType``): gm (a GM tensor), ub (a Vec tile),
    l1 (a Mat tile), used_cores (an integer)."""
    items = a["workspaces"]
    node = a.node("workspaces")
    if not isinstance(items, (list, tuple)) or not items:
        p.fail(node, "Soft mode sync_all requires workspaces list (e.g. [gm, ub])", kind="value")
    found: dict[str, Any] = {}
    for i, v in enumerate(items):
        at = element_node(node, len(items), i)
        if isinstance(v, TensorValue):
            role = "gm"
        elif isinstance(v, TileValue):
            space = v.ref.buffer.space
            if space not in (MemorySpace.Vec, MemorySpace.Mat):
                p.fail(at, f"pl.system.sync_all: a workspace tile must be in Vec or Mat, got {space.name}", kind="type")
            role = "ub" if space is MemorySpace.Vec else "l1"
        elif (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, Expr) and v.ty == "int"):
            role = "used_cores"
        else:
            p.fail(at, f"pl.system.sync_all: workspace {i} must be a GM tensor, a Vec or Mat tile or an integer "
                       f"core count, got {p.describe(v)}", kind="type")
        if role in found:
            p.fail(at, f"pl.system.sync_all: duplicate {role} in workspaces", kind="type")
        found[role] = v
    if "gm" not in found:
        p.fail(node, "pl.system.sync_all soft mode: workspaces must contain a GM tensor (the arrival counter)",
               kind="type")
    need = {SyncCoreType.AIV_ONLY: ("ub",), SyncCoreType.AIC_ONLY: ("l1",), SyncCoreType.MIX: ("ub", "l1")}[core_type]
    banned = {SyncCoreType.AIV_ONLY: "l1", SyncCoreType.AIC_ONLY: "ub"}.get(core_type)
    names = {"ub": "a Vec tile (ub_workspace)", "l1": "a Mat tile (l1_workspace)"}
    for role in need:
        if role not in found:
            p.fail(node, f"pl.system.sync_all soft {core_type.name}: workspaces must contain {names[role]}", kind="type")
    if banned in found:
        p.fail(node, f"pl.system.sync_all soft {core_type.name}: {names[banned]} is not allowed", kind="type")
    return found


@handler("sync_all")
def sync_all(p: "FunctionParser", node: ast.Call, a: Args) -> None:
    in_section(p, node, "pl.system.sync_all")
    core_type = want_enum(p, a, "core_type", SyncCoreType)
    mode = want_enum(p, a, "mode", SyncAllMode)
    attrs: dict[str, Any] = {"core_type": core_type, "mode": mode}
    used: Expr = Const(0)
    if mode is SyncAllMode.HARD:
        ws = a["workspaces"]
        if ws is not None and (not isinstance(ws, (list, tuple)) or ws):
            p.fail(a.node("workspaces"), "Hard mode sync_all does not accept workspace arguments", kind="value")
    else:
        found = _workspaces(p, a, core_type)
        attrs["workspaces"] = found
        cores = found.get("used_cores", 0)
        used = cores if isinstance(cores, Expr) else Const(cores)
    p.ctx.builder.emit(SyncOp("sync_all", PipeType.S, None, used, p.loc(node), attrs=attrs))
