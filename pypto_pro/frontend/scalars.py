"""Compile-time vs run-time values of the frontend, and small helpers on scalar expressions."""
from __future__ import annotations

import ast
import operator
from typing import Any, Callable

from pypto_pro.frontend.values import (BoundGroupMethod, FrontendObject, GroupValue, InlineFunction, RangeValue,
                                       SectionValue, ShapeValue, TensorValue, TileValue)
from pypto_pro.ir.expr import BinOp, Const, Expr

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



def _expr(v: Any) -> Expr:
    return v if isinstance(v, Expr) else Const(v)


def _ty(v: Any) -> str:
    return v.ty if isinstance(v, Expr) else ("float" if isinstance(v, float) else "int")


def _same_const(a: Any, b: Any) -> bool:
    """``a == b`` for compile-time values whose ``==`` may not give a plain bool (NumPy arrays)."""
    try:
        return bool(a == b)
    except Exception:
        return a is b




def _as_float(v: Any) -> Any:
    if _ty(v) == "float":
        return v
    return float(v) if not isinstance(v, Expr) else BinOp("*", v, Const(1.0))


def _range_len(r: range) -> int:
    if r.step > 0:
        return max(0, (r.stop - r.start + r.step - 1) // r.step)
    return max(0, (r.start - r.stop - r.step - 1) // -r.step)


def simplify(e: BinOp) -> Expr:
    """Fold identities so printed IR stays readable (x + 0, x * 1, 0 * x)."""
    lhs, rhs = e.lhs, e.rhs
    lc = lhs.value if isinstance(lhs, Const) else None
    rc = rhs.value if isinstance(rhs, Const) else None
    if e.op in ("+", "-") and rc == 0 and not isinstance(rc, bool):
        return lhs
    if e.op == "+" and lc == 0 and not isinstance(lc, bool):
        return rhs
    if e.op in ("*", "//") and rc == 1 and not isinstance(rc, bool):
        return lhs
    if e.op == "*" and lc == 1 and not isinstance(lc, bool):
        return rhs
    if e.op == "*" and (lc == 0 or rc == 0) and "float" not in (lhs.ty, rhs.ty):
        return Const(0)
    return e


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

