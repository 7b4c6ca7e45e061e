"""Expressions of kernel code: names, attributes, subscripts, operators, comparisons, conditionals."""
from __future__ import annotations

import ast
import operator
from typing import Any

from pypto_pro.ops import resources
from pypto_pro.frontend.diagnostics import did_you_mean
from pypto_pro.frontend.scalars import (_BINOPS, _CMPOPS, _RUNTIME_BINOPS, _as_float, _expr, _ty, is_const,
                                        is_scalar_value, simplify)
from pypto_pro.frontend.scope import MISSING
from pypto_pro.frontend.statements import _not_supported
from pypto_pro.frontend.values import (BoundGroupMethod, FrontendObject, GroupValue, ShapeValue, TensorValue,
                                       TileValue)
from pypto_pro.ir.expr import BinOp, BoolOp, Compare, Const, Expr, ListIndex, Select, TensorDim, UnaryOp
from pypto_pro.ir.nodes import TensorParam
from pypto_pro.language.types import DTypeVar

_UNSUPPORTED_EXPRS = {
    ast.Lambda: "lambda", ast.ListComp: "list comprehensions", ast.SetComp: "set comprehensions",
    ast.DictComp: "dict comprehensions", ast.GeneratorExp: "generator expressions", ast.Yield: "yield",
    ast.YieldFrom: "yield from", ast.Await: "await", ast.NamedExpr: "assignment expressions (:=)",
    ast.Starred: "starred arguments", ast.JoinedStr: "f-strings", ast.Set: "set displays", ast.Dict: "dict displays",
}


class ExpressionParser:
    """The expression evaluators of :class:`pypto_pro.frontend.parser.FunctionParser`."""

    def eval(self, node: ast.expr) -> Any:
        for kind, what in _UNSUPPORTED_EXPRS.items():
            if isinstance(node, kind):
                self.fail(node, _not_supported(what), kind="unsupported")
        method = getattr(self, "ev_" + type(node).__name__, None)
        if method is None:
            self.fail(node, f"unsupported expression: {type(node).__name__}", kind="unsupported")
        return method(node)

    def ev_Constant(self, node: ast.Constant) -> Any:
        return node.value

    def ev_Name(self, node: ast.Name) -> Any:
        return self.load_name(node)

    def load_name(self, node: ast.Name) -> Any:
        if node.id in self.unmerged and node.id not in self.scope.locals:  # a local never falls back to a global
            self.fail(node, self.unmerged[node.id])
        value = self.scope.lookup(node.id)
        if isinstance(value, DTypeVar):  # the dtype the launch bound it to: a compile-time constant
            bound = self.ctx.dtype_bindings.get(value.name)
            if bound is None:
                self.fail(node, f"dtype variable {value.name} is not bound: it must annotate a tensor parameter")
            return bound
        if value is MISSING:
            if not self.in_inline and node.id in self.ctx.unbound_constexprs:
                self.fail(node, f"pl.Constexpr parameter '{node.id}' has no value: pass it at launch or as "
                                f"kernel.compile({node.id}=...)")
            self.fail(node, f"name '{node.id}' is not defined{did_you_mean(node.id, self.scope.known_names())}",
                      kind="undefined")
        return value

    def ev_Tuple(self, node: ast.Tuple) -> tuple:
        return tuple(self.eval(e) for e in node.elts)

    def ev_List(self, node: ast.List) -> list:
        return [self.eval(e) for e in node.elts]

    def ev_Attribute(self, node: ast.Attribute) -> Any:
        base = self.eval(node.value)
        attr = node.attr
        at = _attr_name_node(node)  # errors point at the attribute's name
        if isinstance(base, FrontendObject):  # structs, tuples, tiling values (frontend/structs.py)
            return base.frontend_getattr(self, at, attr)
        if isinstance(base, TensorValue):
            if attr == "shape":
                return ShapeValue(base.param)
            if attr == "dtype":
                return base.param.type.dtype
            self.fail(at, f"tensor '{base.param.name}' has no attribute '{attr}' (use .shape or .dtype)")
        if isinstance(base, GroupValue):
            if attr in ("next", "current", "previous"):
                return BoundGroupMethod(base, attr)
            if attr == "depth":
                return base.buffer.depth
            if attr == "pos":
                return resources.snapshot(self, node, base, base.counter, "pos").ref.slot
            self.fail(at, f"tile group has no attribute '{attr}'{did_you_mean(attr, ['next', 'current', 'previous', 'depth', 'pos'])}")
        if isinstance(base, TileValue):
            tt = base.ref.tile_type
            if attr in ("shape", "dtype", "valid_shape"):
                return {"shape": tt.shape, "dtype": tt.dtype, "valid_shape": tt.valid_shape}[attr]
            self.fail(at, f"tile has no attribute '{attr}' (tiles have .shape, .dtype, .valid_shape)")
        if not is_const(base):
            self.fail(at, f"{self.describe(base)} has no attribute '{attr}'")
        try:
            return getattr(base, attr)
        except AttributeError:
            names = [n for n in dir(base) if not n.startswith("_")]
            owner = getattr(base, "__name__", type(base).__name__)
            if owner.startswith("pypto_pro.language"):
                owner = "pl" + owner[len("pypto_pro.language"):]
            self.fail(at, f"'{owner}' has no attribute '{attr}'{did_you_mean(attr, names)}")
        except Exception as exc:
            self.fail(at, f"{type(exc).__name__} while reading attribute '{attr}': {exc}")

    def ev_Subscript(self, node: ast.Subscript) -> Any:
        base = self.eval(node.value)
        if isinstance(node.slice, ast.Slice):
            if not is_const(base):
                self.fail(node, "slicing is only supported on compile-time values")
            lo, hi, st = (self.eval(x) if x is not None else None
                          for x in (node.slice.lower, node.slice.upper, node.slice.step))
            if not all(is_const(x) for x in (lo, hi, st)):
                self.fail(node.slice, "slice bounds must be compile-time constants")
            return self.py_call(node, lambda: base[lo:hi:st])
        index = self.eval(node.slice)
        if isinstance(base, FrontendObject):
            return base.frontend_getitem(self, node, index)
        if isinstance(base, ShapeValue):
            return self.shape_dim(node, base.param, index)
        if isinstance(base, GroupValue):
            return resources.group_index(self, node, base, index)
        if isinstance(base, (list, tuple)) and isinstance(index, Expr):
            if all(isinstance(x, int) and not isinstance(x, bool) for x in base):
                return ListIndex(tuple(base), index)
            self.fail(node, "run-time indexing needs a list of compile-time ints")
        if not is_const(base):
            self.fail(node, f"{self.describe(base)} cannot be indexed")
        if not is_const(index):
            self.fail(node.slice, "index must be a compile-time constant here")
        return self.py_call(node, lambda: base[index])

    def shape_dim(self, node: ast.AST, param: TensorParam, index: Any) -> Any:
        if not isinstance(index, int) or isinstance(index, bool):
            self.fail(node, "tensor.shape[...] needs a compile-time integer index")
        rank = param.type.rank
        if not -rank <= index < rank:
            self.fail(node, f"tensor '{param.name}' has rank {rank}; shape index {index} is out of range")
        axis = index % rank
        if hasattr(param, "dim_expr"):  # a pl.make_tensor view: its shape expressions (ir/views.py)
            return param.dim_expr(axis)
        dim = param.type.dims[axis]
        return dim if isinstance(dim, int) else TensorDim(param.name, axis)

    def ev_BinOp(self, node: ast.BinOp) -> Any:
        return self.binop(node, node.op, self.eval(node.left), self.eval(node.right))

    def binop(self, node: ast.AST, op: ast.operator, a: Any, b: Any) -> Any:
        sym, fn = _BINOPS[type(op)]
        if is_const(a) and is_const(b):
            return self.py_call(node, fn, a, b)
        for v in (a, b):
            if not is_scalar_value(v):
                hint = " (tile arithmetic is written as pl.add(dst, a, b) etc.)" if isinstance(v, TileValue) else ""
                self.fail(node, f"operator '{sym}' is not supported on {self.describe(v)}{hint}")
        if sym not in _RUNTIME_BINOPS:
            self.fail(node, f"operator '{sym}' is only supported on compile-time values")
        if sym in ("//", "%", "/") and isinstance(b, (int, float)) and b == 0:
            self.fail(node, "division by zero")
        if sym in ("<<", ">>", "&", "|", "^") and "float" in (_ty(a), _ty(b)):
            self.fail(node, f"operator '{sym}' needs integer operands, got a float")
        return simplify(BinOp(sym, _expr(a), _expr(b)))

    def ev_UnaryOp(self, node: ast.UnaryOp) -> Any:
        v = self.eval(node.operand)
        ops = {ast.USub: ("-", operator.neg), ast.UAdd: ("+", operator.pos), ast.Not: ("not", operator.not_),
               ast.Invert: ("~", operator.invert)}
        sym, fn = ops[type(node.op)]
        if is_const(v):
            return self.py_call(node, fn, v)
        if not is_scalar_value(v):
            self.fail(node, f"operator '{sym}' is not supported on {self.describe(v)}")
        if sym == "~" and _ty(v) == "float":
            self.fail(node, "operator '~' needs an integer operand, got a float")
        return v if sym == "+" else UnaryOp(sym, v)

    def ev_Compare(self, node: ast.Compare) -> Any:
        left = self.eval(node.left)
        parts: list[Any] = []
        for op, right_node in zip(node.ops, node.comparators):
            right = self.eval(right_node)
            sym, fn = _CMPOPS[type(op)]
            if is_const(left) and is_const(right):
                parts.append(self.py_call(node, fn, left, right))
            else:
                if sym in ("is", "is not", "in", "not in"):
                    self.fail(node, f"'{sym}' is only supported on compile-time values")
                for v in (left, right):
                    if not is_scalar_value(v):
                        self.fail(node, f"cannot compare {self.describe(v)}")
                parts.append(Compare(sym, _expr(left), _expr(right)))
            left = right
        return self.combine_bool(node, "and", parts)

    def combine_bool(self, node: ast.AST, op: str, parts: list[Any]) -> Any:
        runtime: list[Expr] = []
        for p in parts:
            if is_const(p):
                truth = self.py_call(node, bool, p)
                if op == "and" and not truth:
                    return False if not runtime else BoolOp("and", (*runtime, Const(False)))
                if op == "or" and truth:
                    return True if not runtime else BoolOp("or", (*runtime, Const(True)))
                continue
            runtime.append(p)
        if not runtime:
            return parts[-1] if parts else (op == "and")
        return runtime[0] if len(runtime) == 1 else BoolOp(op, tuple(runtime))

    def ev_BoolOp(self, node: ast.BoolOp) -> Any:
        op = "and" if isinstance(node.op, ast.And) else "or"
        parts = []
        for v in node.values:
            val = self.eval(v)
            if not is_const(val) and not is_scalar_value(val):
                self.fail(v, f"'{op}' is not supported on {self.describe(val)}")
            parts.append(val)
            if is_const(val) and self.py_call(v, bool, val) == (op == "or"):
                break  # short-circuit: like Python, the remaining operands are never evaluated
        if all(is_const(p) for p in parts):
            result = parts[0]
            for p in parts[1:]:
                result = self.py_call(node, lambda r, q: (r and q) if op == "and" else (r or q), result, p)
            return result
        return self.combine_bool(node, op, parts)

    def ev_IfExp(self, node: ast.IfExp) -> Any:
        cond = self.eval(node.test)
        if is_const(cond):
            return self.eval(node.body if self.py_call(node.test, bool, cond) else node.orelse)
        a, b = self.eval(node.body), self.eval(node.orelse)
        if not (is_scalar_value(a) and is_scalar_value(b)):
            self.fail(node, "a run-time conditional expression must choose between scalars")
        if "float" in (_ty(a), _ty(b)):  # the result is a float whichever side is taken
            a, b = _as_float(a), _as_float(b)
        return Select(self.as_condition(node.test, cond), _expr(a), _expr(b))

    def as_condition(self, node: ast.AST, v: Any) -> Expr:
        if not is_scalar_value(v):
            self.fail(node, f"{self.describe(v)} cannot be used as a condition")
        return v if isinstance(v, Expr) else Const(v)


def _attr_name_node(node: ast.Attribute) -> ast.AST:
    """A node at the name of ``node``'s attribute (``ad`` in ``pl.ad``), so a caret lands under it."""
    line, col = getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)
    if line is None or col is None or col < len(node.attr):
        return node
    return ast.Name(id=node.attr, ctx=ast.Load(), lineno=line, col_offset=col - len(node.attr))


