"""``pl.system``: flags, buffer ids, barriers and cache control inside one core (cross-core calls:
``intrinsics_cross.py``). Every pipe a call names must be one of its section's engine
(``pypto_pro.arch.pipes.ENGINE_PIPES``): a FIX wait in ``section_vector()`` is a located error."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from pypto_pro.arch.pipes import ENGINE_NAMES, ENGINE_PIPES
from pypto_pro.frontend.intrinsics import handler
from pypto_pro.frontend.operands import Args, element_node, want_enum, want_index
from pypto_pro.frontend.values import GroupValue, TensorValue, TileValue
from pypto_pro.ir.expr import Const, Expr
from pypto_pro.ir.nodes import SyncOp
from pypto_pro.language.enums import CacheLine, DcciDst, MemorySpace, PipeType, SectionKind

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

MUTEX_IDS = 32  # buffer ids 0-31 (mutex_lock_mutex_unlock.md; Ascend C Mutex ISASI)


def in_section(p: "FunctionParser", node: ast.AST, what: str) -> SectionKind:
    section = p.ctx.section
    if section is None:
        p.fail(node, f"{what} must be inside `with pl.section_vector():` or `with pl.section_cube():`")
    return section


def engine_pipe(p: "FunctionParser", a: Args, name: str, what: str, allow_all: bool = False) -> PipeType:
    """Argument ``name``: a pipe of the engine of the current section (``ALL`` only where allowed)."""
    v = a[name]
    if not isinstance(v, PipeType):
        p.fail(a.node(name), f"'{name}' must be a pl.PipeType, got {p.describe(v)}", kind="type")
    section = in_section(p, a.call, what)
    if v is PipeType.ALL:
        if not allow_all:
            p.fail(a.node(name), f"{what}: '{name}' must name one pipe, not pl.PipeType.ALL")
        return v
    have = ENGINE_PIPES[section]
    if v not in have:
        names = ", ".join(sorted(x.name for x in have))
        p.fail(a.node(name), f"{what}: pl.PipeType.{v.name} is not a pipe of {ENGINE_NAMES[section]}; its pipes are "
                             f"{names}")
    return v


def want_event(p: "FunctionParser", a: Args, name: str, limit: int, what: str, kind: str | None = None) -> Expr:
    """A static id in ``0 .. limit-1`` or a run-time integer (the caller keeps it in range)."""
    v = want_index(p, a.node(name), a[name], name)
    if isinstance(v, int) and not 0 <= v < limit:
        p.fail(a.node(name), f"{what} {v} is outside 0-{limit - 1} on {p.ctx.arch.name}", kind=kind)
    return v if isinstance(v, Expr) else Const(v)


@handler("sync_src", "sync_dst")
def sync_flag(p: "FunctionParser", node: ast.Call, a: Args) -> None:
    what = f"pl.system.{a.name}"
    src = engine_pipe(p, a, "set_pipe", what)
    dst = engine_pipe(p, a, "wait_pipe", what)
    if src is dst:
        p.fail(node, f"set_pipe and wait_pipe are both {src.name}; order instructions of one pipe with "
                     f"pl.system.barrier(pl.PipeType.{src.name}) (a flag needs two different pipes)")
    ev = want_event(p, a, "event_id", int(p.ctx.arch.event_ids_per_pipe_pair.value), "event id")
    kind = "set_flag" if a.name == "sync_src" else "wait_flag"
    p.ctx.builder.emit(SyncOp(kind, src, dst, ev, p.loc(node)))


def _candidates(p: "FunctionParser", a: Args) -> tuple[int, ...]:
    """The ids a run-time ``mutex_id`` is compared against (the real if-chain's targets)."""
    ids = a["mutex_ids"]
    if ids is not None:
        if not isinstance(ids, (list, tuple)) or not ids:
            p.fail(a.node("mutex_ids"), f"mutex_ids must be a non-empty list of ints, got {p.describe(ids)}",
                   kind="type")
        for i, m in enumerate(ids):
            if isinstance(m, bool) or not isinstance(m, int) or not 0 <= m < MUTEX_IDS:
                p.fail(element_node(a.node("mutex_ids"), len(ids), i), f"mutex id {m!r} must be an int in 0-31",
                       kind="type")
        return tuple(dict.fromkeys(ids))
    top = a["max_mutex_id"]
    if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= MUTEX_IDS:
        p.fail(a.node("max_mutex_id"), f"max_mutex_id must be an int in 1-32, got {p.describe(top)}", kind="type")
    return tuple(range(top))


@handler("mutex_lock", "mutex_unlock")
def mutex(p: "FunctionParser", node: ast.Call, a: Args) -> None:
    what = f"pl.system.{a.name}"
    in_section(p, node, what)
    if not p.ctx.arch.has_buffer_mutex:
        p.fail(node, f"{p.ctx.arch.name} has no hardware buffer mutex; use pl.system.sync_src/sync_dst "
                     "(or auto_mutex=True, which emulates mutexes with event pairs)")
    pipe = engine_pipe(p, a, "pipe", what)
    mode = a["mode"]
    if isinstance(mode, bool) or not isinstance(mode, int) or mode < 0:
        p.fail(a.node("mode"), f"mode must be a non-negative int, got {p.describe(mode)}", kind="type")
    ev = want_event(p, a, "mutex_id", min(MUTEX_IDS, int(p.ctx.arch.mutex_ids.value)), "mutex id")
    attrs: dict[str, Any] = {"mode": mode}
    if not isinstance(ev, Const):
        attrs["candidates"] = _candidates(p, a)
    p.ctx.builder.emit(SyncOp("lock" if a.name == "mutex_lock" else "unlock", pipe, None, ev, p.loc(node),
                              attrs=attrs))


def _barrier(p: "FunctionParser", node: ast.Call, pipe: PipeType, what: str) -> None:
    section = in_section(p, node, what)
    if pipe is PipeType.S:
        p.fail(node, f"{what}: the scalar pipe is in order by itself; pipe_barrier(PIPE_S) is a hardware error")
    if pipe is not PipeType.ALL and pipe not in ENGINE_PIPES[section]:
        cube_only = section is SectionKind.VECTOR
        p.fail(node, f"{what} drains PIPE_{pipe.name}, which {ENGINE_NAMES[section]} does not have"
                     + (" (bar_m / bar_mte1 / bar_fix are Cube-section calls)" if cube_only else ""))
    p.ctx.builder.emit(SyncOp("barrier", pipe, None, None, p.loc(node)))


@handler("barrier")
def barrier(p: "FunctionParser", node: ast.Call, a: Args) -> None:
    v = a["pipe"]
    if not isinstance(v, PipeType):
        p.fail(a.node("pipe"), f"'pipe' must be a pl.PipeType, got {p.describe(v)}", kind="type")
    _barrier(p, node, v, "pl.system.barrier")


_BARS = {"bar_m": PipeType.M, "bar_mte1": PipeType.MTE1, "bar_mte2": PipeType.MTE2, "bar_mte3": PipeType.MTE3,
         "bar_fix": PipeType.FIX, "bar_all": PipeType.ALL}


@handler(*_BARS)
def bar(p: "FunctionParser", node: ast.Call, a: Args) -> None:
    if a.name == "bar_all" and p.ctx.section is None:
        return  # the real frontend takes it anywhere; before any section nothing was issued: nothing to wait for
    _barrier(p, node, _BARS[a.name], f"pl.system.{a.name}()")


@handler("dcci")
def dcci(p: "FunctionParser", node: ast.Call, a: Args) -> None:
    """Clean + invalidate the scalar data cache for a GM tensor or a Vec tile (system_ops.py dcci)."""
    target, offset = a["target"], a["offset"]
    if not isinstance(target, TensorValue):  # a GM tensor's line may be flushed by shared code too (the real jit)
        in_section(p, node, "pl.system.dcci")
    cache_line = want_enum(p, a, "cache_line", CacheLine)
    dst = want_enum(p, a, "dst", DcciDst)
    attrs: dict[str, Any] = {"cache_line": cache_line, "dst": dst}
    if isinstance(target, GroupValue):
        p.fail(a.node("target"), f"pl.system.dcci takes a tensor or one tile, not tile group '{target.buffer.name}'",
               kind="type")
    if isinstance(target, TensorValue):
        param = target.param
        attrs["tensor"] = param
        if dst is DcciDst.AUTO:
            attrs["dst"] = DcciDst.CACHELINE_OUT
        if isinstance(offset, (list, tuple)):
            if len(offset) != param.type.rank:
                p.fail(a.node("offset"), f"pl.system.dcci: '{param.name}' has rank {param.type.rank}; give one offset "
                                         f"per axis, got {len(offset)}", kind="type")
            offs = [want_index(p, element_node(a.node("offset"), len(offset), i), o, "dcci offset")
                    for i, o in enumerate(offset)]
            attrs["offsets"] = tuple(o if isinstance(o, Expr) else Const(o) for o in offs)
        elif offset is not None:
            o = want_index(p, a.node("offset"), offset, "dcci offset")
            attrs["linear"] = o if isinstance(o, Expr) else Const(o)
    elif isinstance(target, TileValue):
        ref = target.ref
        if ref.buffer.space is not MemorySpace.Vec:
            p.fail(a.node("target"), f"pl.system.dcci takes a GM tensor or a Vec tile, not a {ref.buffer.space.name} "
                                     "tile", kind="type")
        attrs["tile"] = ref
        if dst is DcciDst.AUTO:
            attrs["dst"] = DcciDst.CACHELINE_UB
        if isinstance(offset, (list, tuple)):
            p.fail(a.node("offset"), "pl.system.dcci: a tile target takes one element offset (an int), not a list; "
                                     "per-axis offsets are for tensor targets", kind="type")
        if offset is not None:
            o = want_index(p, a.node("offset"), offset, "dcci offset")
            attrs["linear"] = o if isinstance(o, Expr) else Const(o)
    else:
        p.fail(a.node("target"), f"pl.system.dcci takes a GM tensor or a Vec tile, got {p.describe(target)}",
               kind="type")
    p.ctx.builder.emit(SyncOp("dcci", PipeType.S, None, None, p.loc(node), attrs=attrs))
