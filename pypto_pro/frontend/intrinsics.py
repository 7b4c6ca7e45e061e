"""Compiles calls to ``pl.*`` intrinsics and tile-group methods into IR, checking every argument."""
from __future__ import annotations

import ast
import inspect
from typing import TYPE_CHECKING, Any, Callable

from pypto_pro.arch.layouts import layout_violation
from pypto_pro.frontend.diagnostics import did_you_mean
from pypto_pro.frontend.values import (BoundGroupMethod, GroupValue, RangeValue, SectionValue, TensorValue,
                                       TileValue)
from pypto_pro.ir.expr import BinOp, Const, Expr, Special, Var
from pypto_pro.ir.nodes import Assign, Buffer, GMRef, SetValidShape, SyncOp, TileOp, TileRef
from pypto_pro.language.dtypes import DataType
from pypto_pro.language.enums import MemorySpace, PipeType, SectionKind
from pypto_pro.language.types import TileType
from pypto_pro.ops.registry import ACC_STORE_DTYPES, CAST_MODES, LOAD_PIPES, OPS, STORE_PIPES, OpSpec

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

Handler = Callable[["FunctionParser", ast.Call, "Args"], Any]
HANDLERS: dict[str, Handler] = {}
SYSTEM_NAMES = {"sync_src", "sync_dst", "mutex_lock", "mutex_unlock", "barrier", "set_cross_core",
                "wait_cross_core", "sync_all"}


class Args:
    """Bound arguments of one call, with the AST node of each for precise error columns."""

    def __init__(self, name: str, call: ast.Call, sig: inspect.Signature, values: dict[str, Any]):
        self.name = name
        self.values = values
        self.nodes: dict[str, ast.AST] = {}
        names = list(sig.parameters)
        for i, a in enumerate(call.args):
            if i < len(names):
                self.nodes[names[i]] = a
        for k in call.keywords:
            if k.arg:
                self.nodes[k.arg] = k.value
        self.call = call

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def node(self, name: str) -> ast.AST:
        return self.nodes.get(name, self.call)


def handler(*names: str) -> Callable[[Handler], Handler]:
    def reg(fn: Handler) -> Handler:
        for n in names:
            HANDLERS[n] = fn
        return fn
    return reg


def display(name: str) -> str:
    return f"pl.system.{name}" if name in SYSTEM_NAMES else f"pl.{name}"


def call(p: "FunctionParser", node: ast.Call, name: str, func: Any, args: list, kwargs: dict) -> Any:
    sig = inspect.signature(func)
    any_keyword = any(q.kind is q.VAR_KEYWORD for q in sig.parameters.values())  # pl.struct(field=...)
    for k in node.keywords:
        if k.arg not in sig.parameters and not any_keyword:
            p.fail(k, f"{display(name)}() has no parameter '{k.arg}'{did_you_mean(k.arg, sig.parameters)}")
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as exc:
        p.fail(node, f"{display(name)}(): {exc}")
    bound.apply_defaults()
    a = Args(name, node, sig, dict(bound.arguments))
    h = HANDLERS.get(name)
    if h is None and name in OPS:
        return vector_op(p, node, OPS[name], a)
    if h is None:
        p.fail(node, f"{display(name)}() is not supported yet in this release")
    return h(p, node, a)


# ---- argument checks ---------------------------------------------------------------------------


def want_int(p: "FunctionParser", a: Args, name: str, what: str | None = None) -> int:
    v = a[name]
    if not isinstance(v, int) or isinstance(v, bool):
        p.fail(a.node(name), f"'{what or name}' must be a compile-time int, got {p.describe(v)}")
    return v


def want_index(p: "FunctionParser", node: ast.AST, v: Any, what: str) -> Expr | int:
    if isinstance(v, bool) or not (isinstance(v, int) or (isinstance(v, Expr) and v.ty == "int")):
        p.fail(node, f"{what} must be an integer scalar, got {p.describe(v)}")
    return v


def want_tile(p: "FunctionParser", a: Args, name: str) -> TileRef:
    v = a[name]
    if isinstance(v, GroupValue):
        p.fail(a.node(name), f"'{name}' is tile group '{v.buffer.name}', not a tile; take one with "
                             f"{v.buffer.name}.next(), .current() or [i]")
    if not isinstance(v, TileValue):
        p.fail(a.node(name), f"'{name}' must be a tile, got {p.describe(v)}")
    return v.ref


def want_tensor(p: "FunctionParser", a: Args, name: str) -> TensorValue:
    v = a[name]
    if not isinstance(v, TensorValue):
        p.fail(a.node(name), f"'{name}' must be a tensor parameter, got {p.describe(v)}")
    return v


def want_tiletype(p: "FunctionParser", a: Args, name: str) -> TileType:
    v = a[name]
    if not isinstance(v, TileType):
        p.fail(a.node(name), f"'{name}' must be a pl.TileType, got {p.describe(v)}")
    return v


def want_pipe(p: "FunctionParser", a: Args, name: str) -> PipeType:
    v = a[name]
    if not isinstance(v, PipeType):
        p.fail(a.node(name), f"'{name}' must be a pl.PipeType, got {p.describe(v)}")
    return v


def in_section(p: "FunctionParser", node: ast.AST, kind: SectionKind, what: str) -> None:
    cur = p.ctx.section
    if cur is None:
        p.fail(node, f"{what} must be inside `with pl.section_{kind.value}():`")
    if cur is not kind:
        p.fail(node, f"{what} runs on the {kind.value.capitalize()} engine; it cannot be used in "
                     f"section_{cur.value}()")


# ---- placing buffers ----------------------------------------------------------------------------


def place(p: "FunctionParser", node: ast.AST, tt: TileType, addrs: list[int], mutex_ids: tuple[int, ...] | None,
          is_group: bool, addr_node: ast.AST) -> Buffer:
    arch = p.ctx.arch
    space = tt.target_memory
    mem = arch.memory(space)
    if space is MemorySpace.Vec and (tt.cols * tt.dtype.itemsize) % arch.vector_tile_row_alignment:
        p.fail(node, f"a Vec tile row must be a multiple of {arch.vector_tile_row_alignment} bytes: "
                     f"{tt.cols} x {tt.dtype.name} is {tt.cols * tt.dtype.itemsize} bytes")
    bad_layout = layout_violation(tt)
    if bad_layout:
        p.fail(node, bad_layout)
    for i, addr in enumerate(addrs):
        slot = f" (slot {i})" if is_group else ""
        if addr % mem.alignment:
            p.fail(addr_node, f"address 0x{addr:x}{slot} is not aligned to {mem.alignment} bytes, as "
                              f"{space.name} requires on {arch.name}")
        if addr + tt.nbytes > mem.capacity:
            p.fail(addr_node, f"tile of {tt.nbytes} bytes at 0x{addr:x}{slot} does not fit {space.name} "
                              f"({mem.capacity} bytes on {arch.name}): it ends at 0x{addr + tt.nbytes:x}")
    buf = Buffer(f"_tile{len(p.ctx.buffers)}", tt, tuple(addrs), mutex_ids, is_group, p.loc(node))
    p.ctx.buffers.append(buf)
    return buf


def element_node(node: ast.AST, count: int, i: int) -> ast.AST:
    """The AST node of entry ``i`` when ``node`` is a list/tuple literal of ``count`` entries, else ``node``."""
    if isinstance(node, (ast.List, ast.Tuple)) and len(node.elts) == count:
        return node.elts[i]
    return node


def check_mutex_ids(p: "FunctionParser", a: Args, ids: Any, depth: int | None) -> tuple[int, ...] | None:
    if ids is None:
        return None
    node = a.node("mutex_ids")
    if not isinstance(ids, (list, tuple)) or not ids:
        p.fail(node, f"mutex_ids must be a non-empty list of ints, got {p.describe(ids)}")
    limit = int(p.ctx.arch.mutex_ids.value)
    for i, m in enumerate(ids):
        if not isinstance(m, int) or isinstance(m, bool):
            p.fail(element_node(node, len(ids), i), f"mutex id {m!r} must be a compile-time int")
        if not 0 <= m < limit:
            p.fail(element_node(node, len(ids), i), f"mutex id {m} is outside 0-{limit - 1}")
    for i, m in enumerate(ids):
        if m in ids[:i]:
            p.fail(element_node(node, len(ids), i), f"mutex_ids {list(ids)} repeat id {m}; each slot needs its own")
    if depth is not None and len(ids) != depth:
        p.fail(node, f"{len(ids)} mutex_ids for a group of depth {depth}; give one per slot")
    for i, m in enumerate(ids):
        owner = p.ctx.mutex_owner.get(m)
        if owner is not None:
            where = f" (line {owner.loc.line})" if owner.loc else ""
            p.fail(element_node(node, len(ids), i), f"mutex id {m} is already used by '{owner.name}'{where}")
    return tuple(ids)


def check_cross_ids(p: "FunctionParser", a: Args, name: str, depth: int) -> tuple[int, ...] | None:
    ids = a[name]
    if ids is None:
        return None
    node = a.node(name)
    limit = int(p.ctx.arch.cross_core_event_ids.value)
    if not isinstance(ids, (list, tuple)) or len(ids) not in (depth, 1):
        p.fail(node, f"{name} must list one cross-core event id per slot ({depth}), or a single id that all slots "
                     f"share as a counter, got {p.describe(ids)}")
    for e in ids:
        if not isinstance(e, int) or isinstance(e, bool) or not 0 <= e < limit:
            p.fail(node, f"cross-core event id {e!r} in {name} is outside 0-{limit - 1}")
        owner = p.ctx.cross_owner.get(e)
        if owner is not None:
            p.fail(node, f"cross-core event id {e} in {name} is already used by '{owner.name}'"
                         + (f" (line {owner.loc.line})" if owner.loc else ""))
    other = a["bwd_ids" if name == "fwd_ids" else "fwd_ids"]
    if name == "bwd_ids" and isinstance(other, (list, tuple)) and set(other) & set(ids):
        p.fail(node, f"fwd_ids and bwd_ids share id(s) {sorted(set(other) & set(ids))}; each direction needs its own")
    if len(set(ids)) != len(ids):
        p.fail(node, f"{name} {list(ids)} repeat an id")
    return tuple(ids)


@handler("make_tile")
def make_tile(p: "FunctionParser", node: ast.Call, a: Args) -> TileValue:
    tt = want_tiletype(p, a, "type")
    addr = want_int(p, a, "addr")
    if addr < 0:
        p.fail(a.node("addr"), "address must be non-negative")
    buf = place(p, node, tt, [addr], None, False, a.node("addr"))
    return TileValue(TileRef(buf, Const(0)))


@handler("make_tile_group")
def make_tile_group(p: "FunctionParser", node: ast.Call, a: Args) -> GroupValue:
    tt = want_tiletype(p, a, "type")
    addrs, depth, ids = a["addrs"], a["depth"], a["mutex_ids"]
    if depth is not None and (not isinstance(depth, int) or isinstance(depth, bool) or depth < 1):
        p.fail(a.node("depth"), f"depth must be a positive int, got {p.describe(depth)}")
    if isinstance(addrs, (list, tuple)):
        if not addrs:
            p.fail(a.node("addrs"), "addrs must not be empty")
        for x in addrs:
            if not isinstance(x, int) or isinstance(x, bool) or x < 0:
                p.fail(a.node("addrs"), f"address {x!r} must be a non-negative compile-time int")
        if depth is not None and depth != len(addrs):
            p.fail(a.node("depth"), f"depth={depth} but {len(addrs)} addresses were given")
        addr_list = list(addrs)
    elif isinstance(addrs, int) and not isinstance(addrs, bool):
        if addrs < 0:
            p.fail(a.node("addrs"), "address must be non-negative")
        fwd = a["fwd_ids"]
        n = depth if depth is not None else (len(ids) if isinstance(ids, (list, tuple)) and ids else
                                             len(fwd) if isinstance(fwd, (list, tuple)) and fwd else 2)
        addr_list = [addrs + i * tt.nbytes for i in range(n)]
    else:
        p.fail(a.node("addrs"), f"addrs must be a base address or a list of addresses, got {p.describe(addrs)}")
    mutex = check_mutex_ids(p, a, ids, len(addr_list))
    cross = {k: check_cross_ids(p, a, k, len(addr_list)) for k in ("fwd_ids", "bwd_ids")}
    if (cross["fwd_ids"] is None) != (cross["bwd_ids"] is None):
        missing = "bwd_ids" if cross["bwd_ids"] is None else "fwd_ids"
        p.fail(node, f"a shared tile group needs both fwd_ids and bwd_ids (one cross-core id per slot); {missing} "
                     "is missing")
    buf = place(p, node, tt, addr_list, mutex, True, a.node("addrs"))
    buf.fwd_ids, buf.bwd_ids = cross["fwd_ids"], cross["bwd_ids"]
    for m in mutex or ():
        p.ctx.mutex_owner[m] = buf
    for k in ("fwd_ids", "bwd_ids"):
        for e in cross[k] or ():
            p.ctx.cross_owner[e] = buf
    counter = Var(f"{buf.name}_pos")
    buf.ring_counter = counter
    p.ctx.builder.emit(Assign(counter, Const(len(addr_list) - 1), p.loc(node)))
    return GroupValue(buf, counter)


@handler("make_view")
def make_view(p: "FunctionParser", node: ast.Call, a: Args) -> TileValue:
    base = want_tile(p, a, "tile")
    tt = want_tiletype(p, a, "type")
    offset = want_int(p, a, "offset")
    bb = base.buffer
    if tt.target_memory is not bb.space:
        p.fail(a.node("type"), f"a view stays in its tile's memory space ({bb.space.name}), not {tt.target_memory.name}")
    if offset < 0 or offset + tt.nbytes > bb.slot_bytes:
        p.fail(node, f"view of {tt.nbytes} bytes at offset {offset} does not fit inside '{bb.name}' "
                     f"({bb.slot_bytes} bytes)")
    if offset % p.ctx.arch.memory(bb.space).alignment:
        p.fail(a.node("offset"), f"view offset {offset} is not aligned to {p.ctx.arch.memory(bb.space).alignment} bytes")
    buf = Buffer(f"_tile{len(p.ctx.buffers)}", tt, tuple(x + offset for x in bb.addrs), bb.mutex_ids, bb.is_group,
                 p.loc(node), alias_of=bb)
    p.ctx.buffers.append(buf)
    return TileValue(TileRef(buf, base.slot))


@handler("set_validshape")
def set_validshape(p: "FunctionParser", node: ast.Call, a: Args) -> None:
    target = a["tile_or_group"]
    if isinstance(target, GroupValue):
        buf, slot = target.buffer, None
    elif isinstance(target, TileValue):
        buf, slot = target.ref.buffer, target.ref.slot
    else:
        p.fail(a.node("tile_or_group"), f"expected a tile or tile group, got {p.describe(target)}")
    dims = []
    for name, limit in (("rows", buf.tile_type.rows), ("cols", buf.tile_type.cols)):
        v = want_index(p, a.node(name), a[name], name)
        if isinstance(v, int) and not 0 <= v <= limit:
            p.fail(a.node(name), f"valid {name} {v} is outside 0..{limit} for '{buf.name}'")
        dims.append(v if isinstance(v, Expr) else Const(v))
    p.ctx.builder.emit(SetValidShape(buf, slot, dims[0], dims[1], p.loc(node)))


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
        want_index(p, a.node(name), v, f"pl.range {name}")
    if isinstance(step, int) and step == 0:
        p.fail(a.node("step"), "pl.range step must not be zero")
    return RangeValue(start, stop, step)


# ---- tile groups ----------------------------------------------------------------------------------


def snapshot(p: "FunctionParser", node: ast.AST, g: GroupValue, value: Expr, tag: str) -> TileValue:
    var = Var(p.ctx.fresh_name(f"{g.buffer.name}_{tag}"))
    p.ctx.builder.emit(Assign(var, value, p.loc(node)))
    return TileValue(TileRef(g.buffer, var))


def group_method(p: "FunctionParser", node: ast.Call, m: BoundGroupMethod, args: list, kwargs: dict) -> TileValue:
    if args or kwargs:
        p.fail(node, f".{m.name}() takes no arguments")
    g = m.group
    depth = g.buffer.depth
    if m.name == "next":
        g.next_sites.append(node)
        p.ctx.builder.emit(Assign(g.counter, BinOp("%", BinOp("+", g.counter, Const(1)), Const(depth)), p.loc(node)))
        return snapshot(p, node, g, g.counter, "slot")
    if m.name == "current":
        return snapshot(p, node, g, g.counter, "cur")
    return snapshot(p, node, g, BinOp("%", BinOp("+", g.counter, Const(depth - 1)), Const(depth)), "prev")


def group_index(p: "FunctionParser", node: ast.AST, g: GroupValue, index: Any) -> TileValue:
    index = want_index(p, node, index, "tile group index")
    if isinstance(index, int):
        if not -g.buffer.depth <= index < g.buffer.depth:
            p.fail(node, f"index {index} is out of range for '{g.buffer.name}' of depth {g.buffer.depth}")
        return TileValue(TileRef(g.buffer, Const(index % g.buffer.depth)))
    return TileValue(TileRef(g.buffer, BinOp("%", index, Const(g.buffer.depth))))


# ---- data movement ---------------------------------------------------------------------------------


def gm_offsets(p: "FunctionParser", a: Args, argname: str, tensor: TensorValue, tile: TileRef,
               tile_coords: bool) -> tuple[Expr, ...]:
    coords = a[argname]
    node = a.node(argname)
    if not isinstance(coords, (list, tuple)):
        p.fail(node, f"'{argname}' must be a list with one entry per tensor axis")
    rank = tensor.param.type.rank
    if len(coords) != rank:
        p.fail(node, f"tensor '{tensor.param.name}' has rank {rank}; {len(coords)} {argname} given")
    tt = tile.tile_type
    if rank == 1 and tt.rows != 1:
        p.fail(node, f"a rank-1 tensor moves [1, N] tiles; tile '{tile.buffer.name}' has {tt.rows} rows")
    extents = [1] * rank
    extents[-1] = tt.cols
    if rank >= 2:
        extents[-2] = tt.rows
    out: list[Expr] = []
    for axis, (c, ext) in enumerate(zip(coords, extents)):
        at = element_node(node, rank, axis)
        c = want_index(p, at, c, f"{argname}[{axis}]")
        if isinstance(c, int) and c < 0:
            p.fail(at, f"{argname}[{axis}] = {c} is negative")
        off = c * ext if (tile_coords and isinstance(c, int)) else (
            BinOp("*", c, Const(ext)) if tile_coords and ext != 1 else c)
        dim = tensor.param.type.dims[axis]
        if isinstance(off, int) and isinstance(dim, int) and off >= dim:
            p.fail(at, f"offset {off} on axis {axis} is outside tensor '{tensor.param.name}' (size {dim})")
        out.append(off if isinstance(off, Expr) else Const(off))
    return tuple(out)


def check_same_dtype(p: "FunctionParser", node: ast.AST, tile: TileRef, tensor: TensorValue, verb: str) -> None:
    td, gd = tile.tile_type.dtype, tensor.param.type.dtype
    if td != gd:
        p.fail(node, f"{verb} does not convert dtypes: tile '{tile.buffer.name}' is {td.name}, tensor "
                     f"'{tensor.param.name}' is {gd.name} (move the data, then pl.cast)")


def _movement(p: "FunctionParser", node: ast.Call, a: Args, load: bool, tile_coords: bool, opname: str) -> None:
    tile = want_tile(p, a, "tile")
    tensor = want_tensor(p, a, "tensor")
    space = tile.buffer.space
    pipes = LOAD_PIPES if load else STORE_PIPES
    if space not in pipes:
        p.fail(a.node("tile"), f"pl.{opname} cannot {'load into' if load else 'store from'} a {space.name} tile "
                               f"(supported: {', '.join(s.name for s in pipes)})")
    kind = SectionKind.VECTOR if space is MemorySpace.Vec else SectionKind.CUBE
    in_section(p, node, kind, f"pl.{opname} of a {space.name} tile")
    if load or space is not MemorySpace.Acc:
        check_same_dtype(p, node, tile, tensor, f"pl.{opname}")
    else:
        allowed = ACC_STORE_DTYPES.get(tile.tile_type.dtype, ())
        if tensor.param.type.dtype not in allowed:
            p.fail(node, f"the fixpipe converts {tile.tile_type.dtype.name} accumulators to "
                         f"{', '.join(d.name for d in allowed) or 'nothing'}, not {tensor.param.type.dtype.name}")
    offsets = gm_offsets(p, a, "tile_coords" if tile_coords else "offsets", tensor, tile, tile_coords)
    gm = GMRef(tensor.param, offsets)
    if load:
        op = TileOp("load", pipes[space], tile, (gm,), loc=p.loc(node))
    else:
        op = TileOp("store", pipes[space], gm, (tile,), loc=p.loc(node))
    p.ctx.builder.emit(op)


@handler("load")
def load(p, node, a):
    _movement(p, node, a, True, False, "load")


@handler("load_tile")
def load_tile(p, node, a):
    _movement(p, node, a, True, True, "load_tile")


@handler("store")
def store(p, node, a):
    _movement(p, node, a, False, False, "store")


@handler("store_tile")
def store_tile(p, node, a):
    _movement(p, node, a, False, True, "store_tile")


# ---- vector compute ----------------------------------------------------------------------------------


def check_tile(p: "FunctionParser", a: Args, name: str, spec: OpSpec) -> TileRef:
    t = want_tile(p, a, name)
    if t.buffer.space not in spec.spaces:
        p.fail(a.node(name), f"pl.{spec.name} runs on the Vector engine and needs {' or '.join(s.name for s in spec.spaces)} "
                             f"tiles; '{t.buffer.name}' is in {t.buffer.space.name}")
    if t.tile_type.dtype not in spec.dtypes:
        p.fail(a.node(name), f"pl.{spec.name} does not support {t.tile_type.dtype.name} "
                             f"(supported: {', '.join(d.name for d in spec.dtypes)})")
    return t


def same_type(p: "FunctionParser", a: Args, spec: OpSpec, ref: TileRef, other: TileRef, name: str,
              dtype: bool = True) -> None:
    rt, ot = ref.tile_type, other.tile_type
    if rt.shape != ot.shape:
        p.fail(a.node(name), f"pl.{spec.name}: '{name}' has shape {list(ot.shape)} but 'dst' has {list(rt.shape)}")
    if dtype and rt.dtype != ot.dtype:
        p.fail(a.node(name), f"pl.{spec.name}: '{name}' is {ot.dtype.name} but 'dst' is {rt.dtype.name} "
                             "(convert with pl.cast first)")


def want_scalar(p: "FunctionParser", a: Args, name: str, dtype: DataType) -> Expr:
    v = a[name]
    if isinstance(v, bool) or not (isinstance(v, (int, float)) or isinstance(v, Expr)):
        p.fail(a.node(name), f"'{name}' must be a scalar, got {p.describe(v)}")
    if dtype.is_int() and (isinstance(v, float) or (isinstance(v, Expr) and v.ty == "float")):
        p.fail(a.node(name), f"a float scalar cannot be applied to an {dtype.name} tile")
    return v if isinstance(v, Expr) else Const(v)


def vector_op(p: "FunctionParser", node: ast.Call, spec: OpSpec, a: Args) -> None:
    in_section(p, node, SectionKind.VECTOR, f"pl.{spec.name}")
    kind = spec.kind
    attrs: dict[str, Any] = {}
    scalars: tuple[Expr, ...] = ()
    if kind == "binary":
        dst, s0, s1 = (check_tile(p, a, n, spec) for n in ("dst", "src0", "src1"))
        same_type(p, a, spec, dst, s0, "src0")
        same_type(p, a, spec, dst, s1, "src1")
        srcs = (s0, s1)
    elif kind == "scalar":
        dst, s0 = check_tile(p, a, "dst", spec), check_tile(p, a, "src", spec)
        same_type(p, a, spec, dst, s0, "src")
        scalars = (want_scalar(p, a, "scalar", dst.tile_type.dtype),)
        srcs = (s0,)
    elif kind in ("unary", "move"):
        dst, s0 = check_tile(p, a, "dst", spec), check_tile(p, a, "src", spec)
        same_type(p, a, spec, dst, s0, "src")
        srcs = (s0,)
    elif kind == "cast":
        dst, s0 = check_tile(p, a, "dst", spec), check_tile(p, a, "src", spec)
        same_type(p, a, spec, dst, s0, "src", dtype=False)
        mode = a["mode"]
        if mode not in CAST_MODES:
            p.fail(a.node("mode"), f"cast mode must be one of {', '.join(CAST_MODES)}, got {p.describe(mode)}")
        attrs["mode"] = mode
        srcs = (s0,)
    elif kind == "fill":
        dst = check_tile(p, a, "dst", spec)
        scalars = (want_scalar(p, a, "scalar", dst.tile_type.dtype),)
        srcs = ()
    elif kind == "reduce":
        dst, s0 = check_tile(p, a, "dst", spec), check_tile(p, a, "src", spec)
        dim = a["dim"]
        if dim not in (0, 1) or isinstance(dim, bool):
            p.fail(a.node("dim"), f"dim must be 1 (reduce each row) or 0 (reduce each column), got {p.describe(dim)}")
        st, dt = s0.tile_type, dst.tile_type
        if dt.dtype != st.dtype:
            p.fail(a.node("dst"), f"pl.{spec.name}: 'dst' is {dt.dtype.name} but 'src' is {st.dtype.name}")
        if dim == 1 and dt.rows != st.rows:
            p.fail(a.node("dst"), f"pl.{spec.name}(dim=1) writes one value per row: 'dst' needs {st.rows} rows, "
                                  f"has {dt.rows}")
        if dim == 0 and dt.cols != st.cols:
            p.fail(a.node("dst"), f"pl.{spec.name}(dim=0) writes one value per column: 'dst' needs {st.cols} "
                                  f"columns, has {dt.cols}")
        srcs = (s0,)
        if a["tmp"] is not None:
            tmp = check_tile(p, a, "tmp", spec)
            srcs = (s0, tmp)
            attrs["tmp"] = True
        attrs["dim"] = dim
    elif kind == "expand":
        dst, s0, vec = (check_tile(p, a, n, spec) for n in ("dst", "src", "vec"))
        same_type(p, a, spec, dst, s0, "src")
        dim = a["dim"]
        if dim not in (0, 1) or isinstance(dim, bool):
            p.fail(a.node("dim"), f"dim must be 1 (one value per row) or 0 (one value per column), got {p.describe(dim)}")
        vt, st = vec.tile_type, s0.tile_type
        if vt.dtype != st.dtype:
            p.fail(a.node("vec"), f"pl.{spec.name}: 'vec' is {vt.dtype.name} but 'src' is {st.dtype.name}")
        if dim == 1 and vt.rows != st.rows:
            p.fail(a.node("vec"), f"pl.{spec.name}(dim=1): 'vec' needs {st.rows} rows (one per row), has {vt.rows}")
        if dim == 0 and vt.cols != st.cols:
            p.fail(a.node("vec"), f"pl.{spec.name}(dim=0): 'vec' needs {st.cols} columns, has {vt.cols}")
        attrs["dim"] = dim
        srcs = (s0, vec)
    else:  # pragma: no cover - registry and handler disagree
        raise AssertionError(kind)
    p.ctx.builder.emit(TileOp(spec.name, spec.pipe, dst, srcs, scalars, attrs, p.loc(node)))


# ---- manual synchronisation ---------------------------------------------------------------------


def want_event(p: "FunctionParser", a: Args, name: str, limit: int, what: str) -> Expr:
    v = want_index(p, a.node(name), a[name], name)
    if isinstance(v, int) and not 0 <= v < limit:
        p.fail(a.node(name), f"{what} {v} is outside 0-{limit - 1} on {p.ctx.arch.name}")
    return v if isinstance(v, Expr) else Const(v)


def _need_section(p: "FunctionParser", node: ast.AST, what: str) -> None:
    if p.ctx.section is None:
        p.fail(node, f"{what} must be inside a section")


@handler("sync_src", "sync_dst")
def sync_flag(p: "FunctionParser", node: ast.Call, a: Args) -> None:
    name = a.name
    _need_section(p, node, f"pl.system.{name}")
    src, dst = want_pipe(p, a, "set_pipe"), want_pipe(p, a, "wait_pipe")
    if src is dst:
        p.fail(node, f"set_pipe and wait_pipe are both {src.name}; a pipe is ordered with itself already")
    ev = want_event(p, a, "event_id", int(p.ctx.arch.event_ids_per_pipe_pair.value), "event id")
    kind = "set_flag" if name == "sync_src" else "wait_flag"
    p.ctx.builder.emit(SyncOp(kind, src, dst, ev, p.loc(node)))


@handler("mutex_lock", "mutex_unlock")
def mutex(p: "FunctionParser", node: ast.Call, a: Args) -> None:
    name = a.name
    _need_section(p, node, f"pl.system.{name}")
    if not p.ctx.arch.has_buffer_mutex:
        p.fail(node, f"{p.ctx.arch.name} has no hardware buffer mutex; use pl.system.sync_src/sync_dst "
                     "(or auto_mutex=True, which emulates mutexes with event pairs)")
    pipe = want_pipe(p, a, "pipe")
    ev = want_event(p, a, "mutex_id", int(p.ctx.arch.mutex_ids.value), "mutex id")
    p.ctx.builder.emit(SyncOp("lock" if name == "mutex_lock" else "unlock", pipe, None, ev, p.loc(node)))


@handler("barrier")
def barrier(p: "FunctionParser", node: ast.Call, a: Args) -> None:
    _need_section(p, node, "pl.system.barrier")
    p.ctx.builder.emit(SyncOp("barrier", want_pipe(p, a, "pipe"), None, None, p.loc(node)))


# Cube and cross-core intrinsics register themselves into HANDLERS.
from pypto_pro.frontend import intrinsics_cube  # noqa: E402,F401


def _stage_sync(p: "FunctionParser", node: ast.Call, a: Args) -> None:
    from pypto_pro.ir.nodes import StageSync
    kind = a.name.split(".")[1]
    g = a["group"]
    if not isinstance(g, GroupValue):
        p.fail(a.node("group"), f"pl.pipeline.{kind} takes a tile group, got {p.describe(g)}")
    if g.buffer.fwd_ids is None:
        p.fail(a.node("group"), f"'{g.buffer.name}' is not a shared group: declare it with fwd_ids and bwd_ids")
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
