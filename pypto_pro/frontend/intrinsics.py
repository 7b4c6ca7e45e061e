"""Compiles calls to ``pl.*`` functions: binds the arguments against the declared signature and runs
the function's check rule (``pypto_pro.ops.decl.APIS``, one per declared op) or one of the
language-construct handlers registered here with ``@handler`` (sections, block ids, ``pl.range``,
manual synchronisation, tile-group methods)."""
from __future__ import annotations

import ast
import inspect
from typing import TYPE_CHECKING, Any, Callable

from pypto_pro.frontend.diagnostics import did_you_mean
from pypto_pro.frontend.operands import (Args, want_index)
from pypto_pro.frontend.values import GroupValue, RangeValue, SectionValue
from pypto_pro.ir.expr import BinOp, Const, Expr, Special, Var
from pypto_pro.ir.nodes import Assign
from pypto_pro.language.enums import SectionKind

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

Handler = Callable[["FunctionParser", ast.Call, Args], Any]
HANDLERS: dict[str, Handler] = {}
SYSTEM_NAMES = {"sync_src", "sync_dst", "mutex_lock", "mutex_unlock", "barrier", "set_cross_core",
                "wait_cross_core", "sync_all", "bar_m", "bar_mte1", "bar_mte2", "bar_mte3", "bar_fix", "bar_all", "dcci"}


def handler(*names: str) -> Callable[[Handler], Handler]:
    def reg(fn: Handler) -> Handler:
        for n in names:
            HANDLERS[n] = fn
        return fn
    return reg


def display(name: str) -> str:
    return f"pl.system.{name}" if name in SYSTEM_NAMES else f"pl.{name}"


def call(p: "FunctionParser", node: ast.Call, name: str, func: Any, args: list, kwargs: dict) -> Any:
    from pypto_pro.ops import APIS
    entry = APIS.get(name)
    shown = entry.display if entry is not None else display(name)
    if p.ctx.simt is not None:  # SIMT code: only pl.simt.* and pl.range (frontend/simt.py)
        from pypto_pro.frontend.simt import guard
        guard(p, node, name, shown)
    sig = inspect.signature(func)
    params = sig.parameters
    aliases = entry.aliases if entry is not None else {}
    takes_kwargs = any(q.kind is inspect.Parameter.VAR_KEYWORD for q in params.values())
    for k in node.keywords:
        if k.arg not in params and k.arg not in aliases and not takes_kwargs:
            p.fail(k, f"{shown}() got an unexpected keyword argument '{k.arg}': it has no parameter '{k.arg}'"
                      f"{did_you_mean(k.arg, [*params, *aliases])}")
    takes_positional = [n for n, q in params.items() if q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD)]
    kwargs = _unalias(p, node, shown, aliases, kwargs, takes_positional[:len(args)])
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as exc:
        positional = [q for q in params.values() if q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD, q.VAR_POSITIONAL)]
        if args and not positional:  # the real builders take keywords only (system_ops.py: parse_args=False)
            names = ", ".join(f"{q.name}=" for q in params.values() if q.kind is q.KEYWORD_ONLY)
            p.fail(node.args[0], f"{shown}() takes keyword arguments only ({names}), got {len(args)} positional")
        p.fail(node, f"{shown}(): {exc}")
    bound.apply_defaults()
    a = Args(name, node, sig, dict(bound.arguments), shown, aliases)
    check = entry.check if entry is not None else HANDLERS.get(name)
    if check is None:
        p.fail(node, f"{shown}() is not supported yet in this release")
    return check(p, node, a)


def _unalias(p: "FunctionParser", node: ast.Call, shown: str, aliases: dict[str, str], kwargs: dict,
             positional: list[str]) -> dict:
    """Keywords renamed to the stub's parameters: ``out=`` (the real builder's name) binds ``dst_tile``;
    ``positional`` names the parameters the positional arguments already bind."""
    out: dict = {}
    for k in node.keywords:
        target = aliases.get(k.arg, k.arg)
        if target in positional:
            p.fail(k, f"{shown}() got two values for '{target}': the positional argument {positional.index(target) + 1} "
                      f"and {k.arg}= name the same parameter")
        if target in out:
            other = next(q.arg for q in node.keywords if q is not k and aliases.get(q.arg, q.arg) == target)
            p.fail(k, f"{shown}() got two values for '{target}': {other}= and {k.arg}= name the same parameter")
        out[target] = kwargs[k.arg]
    return out


# ---- sections, ids, loops ---------------------------------------------------------------------


@handler("section_vector")
def section_vector(p, node, a):
    return SectionValue(SectionKind.VECTOR)


@handler("section_cube")
def section_cube(p, node, a):
    return SectionValue(SectionKind.CUBE)


@handler("get_block_idx", "get_block_num", "get_subblock_idx", "get_subblock_num")
def special(p, node, a):
    return Special(a.name[4:])


@handler("range")
def pl_range(p: "FunctionParser", node: ast.Call, a: Args) -> RangeValue:
    start, stop, step = a["start"], a["stop"], a["step"]
    if stop is None:
        start, stop = 0, start
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if name != "step" and (isinstance(v, float) or isinstance(v, Expr) and v.ty == "float"):
            continue  # a float start / stop runs as the real C loop does (range_bounds.py)
        want_index(p, a.node(name), v, f"pl.range {name}")
    if isinstance(step, int) and step == 0:
        p.fail(a.node("step"), "pl.range step must not be zero")
    return RangeValue(start, stop, step)


# ---- manual synchronisation: intrinsics_system.py / intrinsics_cross.py ---------------------------




# Cube and cross-core intrinsics register themselves into HANDLERS.
from pypto_pro.frontend import intrinsics_cross, intrinsics_system  # noqa: E402,F401


def _stage_sync(p: "FunctionParser", node: ast.Call, a: Args) -> None:
    from pypto_pro.ir.nodes import StageSync
    kind = a.name.split(".")[1]
    g = a["group"]
    if not isinstance(g, GroupValue):
        p.fail(a.node("group"), f"pl.pipeline.{kind} takes a tile group, got {p.describe(g)}")
    if g.buffer.fwd_ids is None and g.buffer.bwd_ids is None:
        p.fail(a.node("group"), f"'{g.buffer.name}' is not a shared group: declare it with fwd_ids and/or bwd_ids")
    need_ids = "bwd_ids" if kind in ("wait_free", "signal_free") else "fwd_ids"
    if getattr(g.buffer, need_ids) is None:
        p.fail(a.node("group"), f"pl.pipeline.{kind} needs the {need_ids} of '{g.buffer.name}', which declares none")
    depth = g.buffer.depth
    need = a.values.get("min_depth", 1)
    if isinstance(need, int) and depth < need:
        p.fail(node, f"ring '{g.buffer.name}' has {depth} slots but the pipeline keeps {need} iterations in flight here: "
                     f"give it at least {need} slots (or lower the preload)")
    slot = a["slot"]
    if slot is None:
        nxt = kind.startswith("wait")
        slot = BinOp("%", BinOp("+", g.counter, Const(1)), Const(depth)) if nxt else g.counter
        snap = Var(p.ctx.fresh_name(f"{g.buffer.name}_sync"))
        p.ctx.builder.emit(Assign(snap, slot, p.loc(node)))
        slot = snap
    else:
        slot = want_index(p, a.node("slot"), slot, "slot")
        slot = slot if isinstance(slot, Expr) else Const(slot)
    p.ctx.builder.emit(StageSync(kind, g.buffer, slot, p.loc(node)))


for _name in ("pipeline.wait_free", "pipeline.signal_ready", "pipeline.wait_ready", "pipeline.signal_free"):
    HANDLERS[_name] = _stage_sync
