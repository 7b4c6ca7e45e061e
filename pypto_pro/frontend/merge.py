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
from pypto_pro.ir.expr import convert, promote
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
    if all(isinstance(v, (tuple, list)) and type(v) is type(first) and len(v) == len(first) for v in values):
        items = [_merge(p, f"{name}_{i}", [v[i] for v in values], loc, first_wins, assigns)
                 for i in range(len(first))]
        return type(first)(items)
    other = next(v for v in values if not (v is first))
    raise MergeError(p.describe(first), p.describe(other))
