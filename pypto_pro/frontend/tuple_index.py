"""``items[i]`` with a run-time ``i`` on a tuple or list built in kernel code.

The real parser accepts a variable index into a tuple whose elements all have one type (it emits a
``GetItem`` that the C++ backend resolves through the tuple's backing array). Here:

- compile-time ints become a constant table lookup (``ListIndex``);
- run-time scalars (or a mix of scalars and constants of one category) become a chain of selects;
- tiles of one tile type become a slot of a *join*: a group whose slots are every slot of the
  tiles' buffers (their addresses, mutex ids and valid-shape state), the same object an ``if``
  that picks one of several tiles makes (``frontend/merge.py``). The joins of one set of buffers
  are shared, so every ``bufs[i]`` of a kernel names one object.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from pypto_pro.frontend.scalars import _expr, is_const, is_scalar_value
from pypto_pro.frontend.values import TileValue
from pypto_pro.ir.expr import BinOp, Compare, Const, Expr, ListIndex, Select, convert
from pypto_pro.ir.nodes import Buffer, TileRef
from pypto_pro.language.dtypes import DT_INT64

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser


def runtime_index(p: "FunctionParser", node: ast.Subscript, items: tuple | list, index: Expr) -> Any:
    """``items[index]`` for a run-time integer ``index`` (a located CompileError if unsupported)."""
    if not index.dtype.is_int():
        p.fail(node.slice, f"a tuple index must be an integer, got {p.describe(index)}", kind="type")
    if not items:
        p.fail(node, "cannot index into an empty tuple", kind="type")
    if all(isinstance(x, int) and not isinstance(x, bool) for x in items):
        return ListIndex(tuple(items), index)
    if all(isinstance(x, TileValue) for x in items):
        return _tile(p, node, list(items), index)
    if all(is_scalar_value(x) for x in items):
        kinds = {_kind(x) for x in items}
        if len(kinds) == 1:
            return _select(index, [_expr(x) for x in items])
    first = next(i for i, x in enumerate(items) if _type_key(p, x) != _type_key(p, items[0]))
    p.fail(node, f"a run-time index into a tuple needs elements of one type, but element 0 is "
                 f"{p.describe(items[0])} and element {first} is {p.describe(items[first])}",
           ["index it with a compile-time constant to pick elements of different types"], kind="type")


def _kind(x: Any) -> str:
    e = _expr(x)
    return "bool" if e.dtype.is_bool() else "float" if e.dtype.is_float() else "int"


def _type_key(p: "FunctionParser", x: Any) -> Any:
    if isinstance(x, TileValue):
        return ("tile", x.ref.tile_type)
    if is_scalar_value(x):
        return ("scalar", _kind(x))
    return ("other", type(x).__name__, p.describe(x) if not is_const(x) else None)


def _select(index: Expr, values: list[Expr]) -> Expr:
    """``values[index]``: the last value unless ``index`` names an earlier one."""
    out = values[-1]
    for i in range(len(values) - 2, -1, -1):
        out = Select(Compare("==", index, Const(i, index.dtype)), values[i], out)
    return out


def _tile(p: "FunctionParser", node: ast.Subscript, tiles: list[TileValue], index: Expr) -> TileValue:
    tt = tiles[0].ref.tile_type
    for i, t in enumerate(tiles[1:], 1):
        if t.ref.tile_type != tt:
            p.fail(node, f"a run-time index into a tuple needs elements of one type, but element 0 is "
                         f"{p.describe(tiles[0])} and element {i} is {p.describe(t)} (another tile type)",
                   ["index it with a compile-time constant to pick tiles of different types"], kind="type")
    members: list[Buffer] = []
    for t in tiles:
        if t.ref.buffer not in members:
            members.append(t.ref.buffer)
    join, base = _join(p, node, members)
    if all(isinstance(t.ref.slot, Const) for t in tiles):
        table = tuple(int(t.ref.slot.value) + base[t.ref.buffer.uid] for t in tiles)  # type: ignore[attr-defined]
        slot: Expr = ListIndex(table, index)
    else:
        slots = [BinOp("+", convert(t.ref.slot, DT_INT64), Const(base[t.ref.buffer.uid]))
                 if base[t.ref.buffer.uid] else convert(t.ref.slot, DT_INT64) for t in tiles]
        slot = _select(index, slots)
    return TileValue(TileRef(join, slot))


def _join(p: "FunctionParser", node: ast.AST, members: list[Buffer]) -> tuple[Buffer, dict[int, int]]:
    """The join of ``members`` (one per set of buffers in a kernel) and each member's first slot in it."""
    if len(members) == 1:
        return members[0], {members[0].uid: 0}
    base: dict[int, int] = {}
    addrs: list[int] = []
    for b in members:
        base[b.uid] = len(addrs)
        addrs.extend(b.addrs)
    key = tuple(b.uid for b in members)
    join = p.ctx.tuple_joins.get(key)
    if join is None:
        ids = tuple(i for b in members for i in b.mutex_ids) if all(b.mutex_ids for b in members) else None
        # named after the tuple as the user wrote it (``tiles`` of ``tiles[i]``): compile errors name that;
        # the simulator's reports name the member tile a slot is (Buffer.user_label)
        join = Buffer(p.ctx.fresh_name(ast.unparse(node.value)), members[0].tile_type, tuple(addrs), ids, True,
                      p.loc(node), joins=tuple(members))
        p.ctx.buffers.append(join)
        p.ctx.tuple_joins[key] = join
    return join, base
