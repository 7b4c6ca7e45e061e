"""Placing tiles: ``pl.make_tile(tile_type, *, addr, size=None)``, ``pl.make_tile_group(*, type, addrs,
mutex_ids=None, depth=None, fwd_ids=None, bwd_ids=None)`` and ours ``pl.make_view`` (real pages
``resource_management/{make_tile,make_tile_group}.md``); the tile-group methods ``.next()``,
``.current()``, ``.previous()`` and ``group[i]``.

The author chooses every address; a tile occupies ``size`` bytes (default: elements x dtype
width, the real ``tile_slot_size``), aligned as its space requires on the arch. A run-time
``valid_shape`` in the TileType becomes a ``set_validshape`` at the placement.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from pypto_pro.arch.layouts import layout_violation
from pypto_pro.frontend.operands import Args, element_node, want_index, want_int, want_tile, want_tiletype
from pypto_pro.frontend.values import BoundGroupMethod, GroupValue, TileValue
from pypto_pro.ir.expr import BinOp, Const, Expr, Var
from pypto_pro.ir.nodes import Assign, Buffer, SetValidShape, TileRef
from pypto_pro.language.enums import MemorySpace
from pypto_pro.language.tile_type import DYNAMIC_VALID, TileType, _is_runtime
from pypto_pro.ops.decl import api

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

FAMILY = "resource_management"


@api(FAMILY)
def make_tile(tile_type: Any, *, addr: int, size: int | None = None) -> Any:
    """One tile of ``tile_type`` at byte address ``addr`` of its memory space; ``size`` reserves more bytes
    than the tile's footprint (an NZ / ZN tile rounded up to whole fractals)."""


@api(FAMILY)
def make_tile_group(*, type: Any, addrs: Any, mutex_ids: Any = None, depth: int | None = None, fwd_ids: Any = None,
                    bwd_ids: Any = None) -> Any:
    """A ring of tiles (multi-buffering). ``addrs``: a base address (slots back to back) or one per slot.

    ``mutex_ids`` (per slot one id or a list of ids) lets auto_mutex order every op on each slot; without
    them (None or ``[]``) give ``depth``.
    Methods: ``.next()``, ``.current()``, ``.previous()``, ``group[i]``. ``fwd_ids`` / ``bwd_ids`` (one
    cross-core event id per slot) share the group between a Cube and a Vector stage (``pl.pipeline``)."""


@api(FAMILY)
def make_view(tile: Any, type: Any, offset: int = 0) -> Any:
    """Ours: a declared alias, ``tile``'s bytes from byte ``offset`` seen as ``type``."""


def place(p: "FunctionParser", node: ast.AST, tt: TileType, addrs: list[int],
          mutex_ids: tuple[tuple[int, ...], ...] | None,
          is_group: bool, addr_node: ast.AST, size: int | None = None) -> Buffer:
    arch = p.ctx.arch
    space = tt.target_memory
    if space not in arch.memories:
        p.fail(node, f"{arch.name} has no {space.name} memory in this release's machine model")
    mem = arch.memory(space)
    bad_layout = layout_violation(tt, arch.name)
    if bad_layout:
        p.fail(node, bad_layout)
    extent = size if size is not None else tt.slot_size
    for i, addr in enumerate(addrs):
        slot = f" (slot {i})" if is_group else ""
        if addr % mem.alignment:
            p.fail(addr_node, f"address 0x{addr:x}{slot} is not aligned to {mem.alignment} bytes, as "
                              f"{space.name} requires on {arch.name}")
        if addr + extent > mem.capacity:
            p.fail(addr_node, f"tile of {extent} bytes at 0x{addr:x}{slot} does not fit {space.name} "
                              f"({mem.capacity} bytes on {arch.name}): it ends at 0x{addr + extent:x}")
    buf = Buffer(f"_tile{len(p.ctx.buffers)}", tt, tuple(addrs), mutex_ids, is_group, p.loc(node))
    p.ctx.buffers.append(buf)
    _runtime_valid(p, node, buf)
    return buf


def _runtime_valid(p: "FunctionParser", node: ast.AST, buf: Buffer) -> None:
    """A TileType whose valid_shape holds run-time scalars: set it where the tile is placed."""
    tt = buf.tile_type
    if not any(_is_runtime(v) for v in tt.valid_shape):
        return
    dims = [v if _is_runtime(v) else Const(s if v == DYNAMIC_VALID else v) for v, s in zip(tt.valid_shape, tt.shape)]
    p.ctx.builder.emit(SetValidShape(buf, None, dims[0], dims[1], p.loc(node)))


@make_tile.check
def _make_tile(p: "FunctionParser", node: ast.Call, a: Args) -> TileValue:
    tt = want_tiletype(p, a, "tile_type")
    addr = want_int(p, a, "addr")
    if addr < 0:
        p.fail(a.node("addr"), "address must be non-negative")
    size = a["size"]
    if size is not None:
        size = want_int(p, a, "size")
        if size <= 0:
            p.fail(a.node("size"), f"pl.make_tile() 'size' must be a positive byte count, got {size}")
        # the real parser takes any positive size (a reservation, for planning); the tile still spans
        # its type's footprint, which is what must fit the memory
        size = max(size, tt.nbytes)
    buf = place(p, node, tt, [addr], None, False, a.node("addr"), size)
    return TileValue(TileRef(buf, Const(0)))


def mutex_side(tt) -> str:
    """Which core's buffer ids a tile's mutex ids are: the Vector core's for UB tiles, the Cube core's
    otherwise (each AI core has its own ids, so the real tests reuse an id across the two sections)."""
    return "vector" if tt.target_memory is MemorySpace.Vec else "cube"


def check_mutex_ids(p: "FunctionParser", a: Args, ids: Any, depth: int | None,
                    side: str = "vector") -> tuple[tuple[int, ...], ...] | None:
    """The real ``mutex_ids``: None or ``[]`` (no auto mutex), else one entry per slot, each an int or a
    non-empty list / tuple of ints (several buffer ids for one slot: ``[[0, 1], [2, 3]]``). Every slot has
    the same number of ids, distinct within the slot; slots (and groups) may share ids. Returns one tuple
    of ids per slot."""
    if ids is None:
        return None
    node = a.node("mutex_ids")
    if not isinstance(ids, (list, tuple)):
        p.fail(node, f"mutex_ids must be a list, tuple or None, got {p.describe(ids)}")
    if not ids:
        return None
    limit = int(p.ctx.arch.mutex_ids.value)
    slots: list[tuple[int, ...]] = []
    for i, entry in enumerate(ids):
        where = element_node(node, len(ids), i)
        row = tuple(entry) if isinstance(entry, (list, tuple)) else (entry,)
        if not row:
            p.fail(where, f"the mutex ids of slot {i} must not be empty")
        for m in row:
            if not isinstance(m, int) or isinstance(m, bool):
                p.fail(where, f"mutex id {m!r} must be a compile-time int")
            if not 0 <= m < limit:
                p.fail(where, f"mutex id {m} is outside 0-{limit - 1}")
        if len(set(row)) != len(row):
            p.fail(where, f"the mutex ids of slot {i} repeat an id: {list(row)}; one slot needs distinct ids")
        if slots and len(row) != len(slots[0]):
            p.fail(where, f"every slot of a tile group needs the same number of mutex ids: slot 0 has "
                          f"{len(slots[0])}, slot {i} has {len(row)}")
        slots.append(row)
    if depth is not None and len(slots) != depth:
        p.fail(node, f"{len(slots)} mutex_ids for a group of depth {depth}; give one entry per slot")
    if p.ctx.arch.name != "a5":  # a5 has hardware buffer locks that groups may share; a2a3 emulates them
        for i, row in enumerate(slots):  # per group with events, so each id belongs to one slot of one group
            for m in row:
                owner = p.ctx.mutex_owner.get((side, m))
                if owner is not None:
                    where = f" (line {owner.loc.line})" if owner.loc else ""
                    p.fail(element_node(node, len(ids), i), f"mutex id {m} is already used by '{owner.name}'{where}"
                                                            " (ids may be shared only on a5)")
                if any(m in r for r in slots[:i]):
                    p.fail(element_node(node, len(ids), i), f"mutex_ids {list(ids)} repeat id {m}; on "
                                                            f"{p.ctx.arch.name} each slot needs its own")
    return tuple(slots)


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


@make_tile_group.check
def _make_tile_group(p: "FunctionParser", node: ast.Call, a: Args) -> GroupValue:
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
        space = tt.target_memory
        if space in p.ctx.arch.memories:  # depth may be huge: list no more slots than can fit, plus the
            n = min(n, p.ctx.arch.memory(space).capacity // max(tt.slot_size, 1) + 1)  # first that can't (place fails on it)
        addr_list = [addrs + i * tt.slot_size for i in range(n)]
    else:
        p.fail(a.node("addrs"), f"addrs must be a base address or a list of addresses, got {p.describe(addrs)}")
    mutex = check_mutex_ids(p, a, ids, len(addr_list), mutex_side(tt))
    cross = {k: check_cross_ids(p, a, k, len(addr_list)) for k in ("fwd_ids", "bwd_ids")}
    # either alone is a one-way notification (the real page: fwd_ids without bwd_ids says the ring is deep
    # enough that the writer need not wait for the reader to free a slot), both a two-way handshake
    buf = place(p, node, tt, addr_list, mutex, True, a.node("addrs"))
    buf.fwd_ids, buf.bwd_ids = cross["fwd_ids"], cross["bwd_ids"]
    for m in dict.fromkeys(m for row in mutex or () for m in row):
        p.ctx.mutex_owner.setdefault((mutex_side(tt), m), buf)
    for k in ("fwd_ids", "bwd_ids"):
        for e in cross[k] or ():
            p.ctx.cross_owner[e] = buf
    counter = Var(f"{buf.name}_pos")
    buf.ring_counter = counter
    p.ctx.builder.emit(Assign(counter, Const(len(addr_list) - 1), p.loc(node)))
    return GroupValue(buf, counter)


@make_view.check
def _make_view(p: "FunctionParser", node: ast.Call, a: Args) -> TileValue:
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
    bad_layout = layout_violation(tt, p.ctx.arch.name)
    if bad_layout:
        p.fail(node, bad_layout)
    buf = Buffer(f"_tile{len(p.ctx.buffers)}", tt, tuple(x + offset for x in bb.addrs), bb.mutex_ids, bb.is_group,
                 p.loc(node), alias_of=bb)
    p.ctx.buffers.append(buf)
    return TileValue(TileRef(buf, base.slot))


# ---- tile-group methods ------------------------------------------------------------------------------


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
