"""Merging the values a name (or a helper's return) has on several run-time paths into one.

After a run-time ``if`` each name has one value per branch; after an inlined helper with
``return`` under run-time control flow, the result has one value per ``return``. Equal
compile-time values stay constants; scalars meet in a new variable assigned on every path (a
phi); tiles of one buffer meet in a slot variable; tuples and lists merge element by element.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pypto_pro.frontend.scalars import ScalarRangeError, _expr, _same_const, is_const, is_scalar_value
from pypto_pro.frontend.values import TileValue
from pypto_pro.ir.expr import BinOp, Const, convert, promote
from pypto_pro.ir.nodes import Assign, Stmt, TileRef
from pypto_pro.language.dtypes import DT_INT64

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser


class MergeError(Exception):
    """The values cannot be merged; ``args`` holds the two descriptions that disagree."""


def merge_values(p: "FunctionParser", name: str, values: list[Any], loc, first_wins: bool) -> tuple[Any, list[list[Stmt]]]:
    """One value standing for ``values`` (one per path) and, per path, the assignments that path
    runs before the paths join. ``first_wins``: a scalar phi takes the first path's dtype (the real
    ``if`` phi, whose other edges convert implicitly); otherwise the promotion of all of them."""
    assigns: list[list[Stmt]] = [[] for _ in values]
    merged = _merge(p, name, values, loc, first_wins, assigns)
    return merged, assigns


def _merge(p: "FunctionParser", name: str, values: list[Any], loc, first_wins: bool,
           assigns: list[list[Stmt]]) -> Any:
    first = values[0]
    if all(v is first for v in values):
        return first
    if all(is_const(v) for v in values) and all(type(v) is type(first) and _same_const(v, first) for v in values):
        return first
    if all(is_scalar_value(v) for v in values):
        try:
            exprs = [_expr(v) for v in values]
        except ScalarRangeError:
            big = next(v for v in values if isinstance(v, int) and not -(1 << 63) <= v < (1 << 64))
            raise MergeError(f"the integer {big} (beyond any 64-bit scalar)", "a value of another kind") from None
        if first_wins:
            dtype = exprs[0].dtype
        else:
            dtype = exprs[0].dtype
            for e in exprs[1:]:
                dtype = e.dtype if e.dtype is dtype else promote(dtype, e.dtype)
        for e in exprs:
            if not dtype.is_float() and e.dtype.is_float():
                raise MergeError(f"an integer ({dtype.short}) on one path", f"a float ({e.dtype.short}) on another")
        var = p.new_var(name, dtype)
        for e, out in zip(exprs, assigns):
            out.append(Assign(var, convert(e, dtype), loc))
        return var
    if all(isinstance(v, TileValue) for v in values) and all(v.ref.buffer is first.ref.buffer for v in values):
        var = p.new_var(f"{name}_slot", DT_INT64)
        for v, out in zip(values, assigns):
            out.append(Assign(var, convert(v.ref.slot, DT_INT64), loc))
        return TileValue(TileRef(first.ref.buffer, var))
    if all(isinstance(v, TileValue) for v in values):
        return _merge_tiles(p, name, values, loc, assigns)
    if all(isinstance(v, (tuple, list)) and type(v) is type(first) and len(v) == len(first) for v in values):
        items = [_merge(p, f"{name}_{i}", [v[i] for v in values], loc, first_wins, assigns)
                 for i in range(len(first))]
        return type(first)(items)
    from pypto_pro.frontend.structs import StructValue, TupleValue
    if all(isinstance(v, TupleValue) and list(v.fields) == list(first.fields) for v in values):
        return TupleValue({f: _merge(p, f"{name}_{f}", [v.fields[f] for v in values], loc, first_wins, assigns)
                           for f in first.fields})
    if all(isinstance(v, StructValue) and v.storage.type_name == first.storage.type_name for v in values):
        return _merge_structs(p, name, values, loc, assigns)
    other = next(v for v in values if not (v is first))
    raise MergeError(p.describe(first), p.describe(other))


def _merge_tiles(p: "FunctionParser", name: str, values: list, loc, assigns: list[list[Stmt]]) -> Any:
    """Tiles of several buffers of one tile type: the real join slot is a tile object that takes the
    chosen tile (its address and valid shape) on each edge. Here it is a group whose slots are every
    slot of those buffers (their addresses, mutex ids and valid-shape state), indexed by a slot
    variable set on each path."""
    from pypto_pro.ir.nodes import Buffer
    first = values[0].ref.buffer
    bufs: list = []
    for v in values:
        b = v.ref.buffer
        if b.tile_type != first.tile_type:
            raise MergeError(p.describe(values[0]), p.describe(v) + " (another tile type)")
        if b not in bufs:
            bufs.append(b)
    base, addrs, mutex = {}, [], []
    for b in bufs:
        base[b.uid] = len(addrs)
        addrs.extend(b.addrs)
        mutex.extend(b.mutex_ids or ())
    ids = tuple(mutex) if all(b.mutex_ids for b in bufs) else None
    if ids is not None and len({len(row) for row in ids}) > 1:  # the real parser's rule for a tile join
        widths = [len(b.mutex_ids[0]) for b in bufs]
        raise MergeError(f"a tile with {widths[0]} mutex id(s) per slot",
                         f"one with {next(w for w in widths if w != widths[0])} (cannot merge tile mutex metadata "
                         "with different ID counts)")
    join = Buffer(p.ctx.fresh_name(name), first.tile_type, tuple(addrs), ids, True, loc, joins=tuple(bufs))
    p.ctx.buffers.append(join)
    var = p.new_var(f"{name}_slot", DT_INT64)
    for v, out in zip(values, assigns):
        slot = convert(v.ref.slot, DT_INT64)
        off = base[v.ref.buffer.uid]
        out.append(Assign(var, slot if not off else BinOp("+", slot, Const(off)), loc))
    return TileValue(TileRef(join, var))


def _merge_structs(p: "FunctionParser", name: str, values: list, loc, assigns: list[list[Stmt]]) -> Any:
    """Structs of one type on several paths: one object, copied field by field on each path (the
    real join slot is a whole object assigned on every edge); the same object on every path stays it."""
    from pypto_pro.frontend.structs import StructValue
    from pypto_pro.ir.storage import ArrayLoad, ArrayStore, ScalarArray, StructStorage
    first = values[0]
    if all(v.storage is first.storage and isinstance(v.slot, Const) and isinstance(first.slot, Const)
           and v.slot.value == first.slot.value for v in values):
        return first
    storage = StructStorage(first.storage.type_name, p.ctx.fresh_name(name), 1, False, loc=loc)
    for fname, arr in first.storage.fields.items():
        storage.fields[fname] = ScalarArray(storage, fname, arr.ty, arr.width, arr.cbits)
    for v, out in zip(values, assigns):
        for fname, arr in storage.fields.items():
            src = v.storage.fields[fname]
            for elem in ([None] if arr.width is None else [Const(i) for i in range(arr.width)]):
                out.append(ArrayStore(arr, Const(0), elem, ArrayLoad(src, v.slot, elem, loc), loc))
    return StructValue(storage, Const(0))
