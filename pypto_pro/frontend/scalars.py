"""Compile-time vs run-time values of the frontend, and small helpers on scalar expressions.

A compile-time scalar is a plain Python ``int`` / ``float`` / ``bool`` (it folds with Python's
rules, as the real parser folds constants); a typed constant (``pl.const``) is a ``Const`` with a
dtype; everything known only at run time is another ``Expr``.
"""
from __future__ import annotations

import ast
import operator
from typing import Any, Callable

from pypto_pro.frontend.values import (BoundGroupMethod, FrontendObject, GroupValue, InlineFunction, RangeValue,
                                       SectionValue, ShapeValue, TensorValue, TileValue)
from pypto_pro.ir.expr import BinOp, Const, Expr, convert, int_range
from pypto_pro.language.dtypes import DT_INT64, DT_UINT64

_BINOPS: dict[type, tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Add: ("+", operator.add), ast.Sub: ("-", operator.sub), ast.Mult: ("*", operator.mul),
    ast.FloorDiv: ("//", operator.floordiv), ast.Mod: ("%", operator.mod), ast.Div: ("/", operator.truediv),
    ast.LShift: ("<<", operator.lshift), ast.RShift: (">>", operator.rshift), ast.BitAnd: ("&", operator.and_),
    ast.BitOr: ("|", operator.or_), ast.BitXor: ("^", operator.xor), ast.Pow: ("**", operator.pow),
    ast.MatMult: ("@", operator.matmul),
}
_RUNTIME_BINOPS = {"+", "-", "*", "//", "%", "/", "<<", ">>", "&", "|", "^"}
_CMPOPS: dict[type, tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Lt: ("<", operator.lt), ast.LtE: ("<=", operator.le), ast.Gt: (">", operator.gt),
    ast.GtE: (">=", operator.ge), ast.Eq: ("==", operator.eq), ast.NotEq: ("!=", operator.ne),
    ast.Is: ("is", operator.is_), ast.IsNot: ("is not", operator.is_not),
    ast.In: ("in", lambda a, b: a in b), ast.NotIn: ("not in", lambda a, b: a not in b),
}
# Python semantics of the run-time operators, for folding typed constants (the real _fold_const_binop)
FOLD: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "//": operator.floordiv,
    "%": operator.mod, "<<": operator.lshift, ">>": operator.rshift, "&": operator.and_, "|": operator.or_,
    "^": operator.xor, "min": min, "max": max, "<": operator.lt, "<=": operator.le, ">": operator.gt,
    ">=": operator.ge, "==": operator.eq, "!=": operator.ne,
}


class ScalarRangeError(ValueError):
    """A Python int too large for any scalar register (INT64, or UINT64 for big positives)."""


def is_const(v: Any) -> bool:
    """True for a compile-time value (no run-time scalar, tile, tensor or group inside)."""
    if isinstance(v, (Expr, TileValue, GroupValue, TensorValue, ShapeValue, RangeValue, BoundGroupMethod,
                      SectionValue, InlineFunction, FrontendObject)):
        return False
    if isinstance(v, (list, tuple)):
        return all(is_const(x) for x in v)
    return True


def is_scalar_value(v: Any) -> bool:
    return isinstance(v, Expr) or (isinstance(v, (int, float)) and not isinstance(v, bool)) or isinstance(v, bool)


def is_number(v: Any) -> bool:
    """A compile-time scalar: a Python int, float or bool."""
    return isinstance(v, (int, float, bool))


def known(v: Any) -> tuple[bool, Any]:
    """``(True, value)`` when ``v`` is a scalar known while compiling (a Python number or a typed
    constant), else ``(False, None)``."""
    if isinstance(v, Const):
        return True, v.value
    if is_number(v):
        return True, v
    return False, None


def _expr(v: Any) -> Expr:
    """``v`` as an IR expression (Python ints become INT64 constants; too large ones are refused)."""
    if isinstance(v, Expr):
        return v
    if isinstance(v, int) and not isinstance(v, bool):
        lo, hi = int_range(DT_INT64)
        if not lo <= v <= hi:
            if 0 <= v <= int_range(DT_UINT64)[1]:
                return Const(v, DT_UINT64)
            raise ScalarRangeError(f"integer constant {v} does not fit a 64-bit scalar")
    return Const(v)


def _ty(v: Any) -> str:
    if isinstance(v, Expr):
        return v.ty
    if isinstance(v, bool):
        return "bool"
    return "float" if isinstance(v, float) else "int"


def _same_const(a: Any, b: Any) -> bool:
    """``a == b`` for compile-time values whose ``==`` may not give a plain bool (NumPy arrays)."""
    try:
        return bool(a == b)
    except Exception:
        return a is b


def _range_len(r: range) -> int:
    if r.step > 0:
        return max(0, (r.stop - r.start + r.step - 1) // r.step)
    return max(0, (r.start - r.stop - r.step - 1) // -r.step)


def simplify(e: BinOp) -> Expr:
    """Fold identities so printed IR stays readable (x + 0, x * 1, 0 * x); the result keeps ``e``'s
    dtype (``i32 + 0`` is an INT64, as the real promotion makes it)."""
    lhs, rhs = e.lhs, e.rhs
    lc = lhs.value if isinstance(lhs, Const) else None
    rc = rhs.value if isinstance(rhs, Const) else None
    out: Expr = e
    if e.op in ("+", "-") and rc == 0 and not isinstance(rc, bool) and not e.dtype.is_float():
        out = lhs
    elif e.op == "+" and lc == 0 and not isinstance(lc, bool) and not e.dtype.is_float():
        out = rhs
    elif e.op in ("*", "//") and rc == 1 and not isinstance(rc, bool) and not e.dtype.is_float():
        out = lhs
    elif e.op == "*" and lc == 1 and not isinstance(lc, bool) and not e.dtype.is_float():
        out = rhs
    elif e.op == "*" and not e.dtype.is_float() and any(c == 0 and not isinstance(c, bool) for c in (lc, rc)):
        return Const(0, e.dtype)
    return convert(out, e.dtype)


def assigned_names(body: list[ast.stmt]) -> set[str]:
    names: set[str] = set()

    def visit(n: ast.AST) -> None:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            return
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            names.add(n.id)
        for c in ast.iter_child_nodes(n):
            visit(c)

    for s in body:
        visit(s)
    return names
