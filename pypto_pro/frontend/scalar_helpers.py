"""The real PyPTO Pro's scalar helpers: ``pl.const(value, dtype)``, ``pl.min(a, b)`` /
``pl.max(a, b)`` (also the builtins ``min`` / ``max`` in kernel code) and ``pl.constexpr(cond)``.

``pl.min`` / ``pl.max`` are scalar operations (Utils-API/python_syntax_sugar): exactly two
operands, promoted like any binary operator; constants fold. ``pl.constexpr`` is only valid as
the condition of an ``if`` or of a conditional expression, where the statement compilers read it.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from pypto_pro.frontend.intrinsics import Args, handler
from pypto_pro.frontend.scalars import is_const, is_scalar_value
from pypto_pro.ir.expr import BinOp, Const
from pypto_pro.language.dtypes import DataType

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser


def scalar_minmax(p: "FunctionParser", node: ast.Call, fname: str, args: list, kwargs: dict) -> Any:
    """``pl.min(lhs, rhs)`` / ``min(lhs, rhs)`` (and ``max``) in kernel code."""
    if kwargs:
        p.fail(node, f"scalar operation '{fname}' does not accept keyword arguments")
    if len(args) != 2:
        p.fail(node, f"scalar operation '{fname}' takes exactly 2 arguments, got {len(args)} (for tiles use "
                     f"pl.{'minimum' if fname == 'min' else 'maximum'})")
    if all(is_const(a) for a in args):
        return p.py_call(node, min if fname == "min" else max, *args)
    for a, arg in zip(args, node.args):
        if not is_scalar_value(a):
            p.fail(arg, f"{fname}() takes scalars, got {p.describe(a)} (for tiles use "
                        f"pl.{'minimum' if fname == 'min' else 'maximum'})")
    x, y = p.scalar_expr(node, args[0]), p.scalar_expr(node, args[1])
    e = BinOp(fname, x, y)
    return p.fold(node, fname, x, y, e.dtype) or e


@handler("const")
def const(p: "FunctionParser", node: ast.Call, a: Args) -> Const:
    """``pl.const(value, dtype)``: a constant of ``dtype`` (the value converts as a cast would)."""
    value, dtype = a["value"], a["dtype"]
    if not isinstance(value, (int, float)) or not is_const(value):
        p.fail(a.node("value"), f"pl.const() needs a numeric literal (int or float) first, got {p.describe(value)}")
    if not isinstance(dtype, DataType):
        p.fail(a.node("dtype"), f"pl.const() needs a dtype (pl.DT_*) second, got {p.describe(dtype)}")
    if not dtype.scalar_ok:
        p.fail(a.node("dtype"), f"pl.{dtype.name} is not a scalar dtype (it is for tensors and tiles only)")
    if dtype.is_bool():
        return Const(bool(value), dtype)
    if dtype.is_float():
        return Const(float(value), dtype)
    return Const(int(value), dtype)


@handler("constexpr")
def constexpr(p: "FunctionParser", node: ast.Call, a: Args) -> None:
    p.fail(node, "pl.constexpr() can only be used as an 'if' condition or in a conditional expression, "
                 "e.g. 'if pl.constexpr(cond):' or 'x = a if pl.constexpr(cond) else b'")
