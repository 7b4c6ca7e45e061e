"""Scalar operators of kernel code: arithmetic, comparisons, ``and`` / ``or`` / ``not``, conditional
expressions, ``in``, with the real PyPTO Pro's typing (see ``pypto_pro.ir.expr``).

Compile-time operands fold with Python's rules (so does the real parser); a typed constant
(``pl.const``) folds too and keeps the promoted dtype. Everything else becomes an IR expression
evaluated at run time at its dtype.
"""
from __future__ import annotations

import ast
import operator
from typing import Any

from pypto_pro.frontend.scalars import (_BINOPS, _CMPOPS, _RUNTIME_BINOPS, FOLD, is_const, is_number,
                                        is_scalar_value, known, simplify)
from pypto_pro.frontend.values import RangeValue, TileValue
from pypto_pro.ir.expr import (BinOp, BoolOp, Compare, Const, Expr, Select, UnaryOp, category, convert,
                               convert_value, numeric, promote)
from pypto_pro.ir.nodes import Assign, If, TileRef
from pypto_pro.language.dtypes import DT_BOOL, DT_INT64
from pypto_pro.language.intrinsic import intrinsic_name


class ScalarOpsParser:
    """Operator evaluators of :class:`pypto_pro.frontend.parser.FunctionParser`."""

    # ---- arithmetic ---------------------------------------------------------------------------

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
        return self.scalar_binop(node, sym, a, b)

    def scalar_binop(self, node: ast.AST, sym: str, a: Any, b: Any) -> Expr:
        """``a sym b`` on scalars at least one of which is an IR expression."""
        x, y = self.scalar_expr(node, a), self.scalar_expr(node, b)
        dx, dy = numeric(x.dtype), numeric(y.dtype)
        if sym in ("<<", ">>", "&", "|", "^") and (dx.is_float() or dy.is_float()):
            self.fail(node, f"operator '{sym}' needs integer operands, got a float")
        out = promote(dx, dy, sym)
        if sym == "%" and out.is_float():
            self.fail(node, "operator '%' is not supported on float scalars (the generated C++ has no float '%')")
        if sym in ("//", "%", "/") and known(y)[0] and known(y)[1] == 0:
            self.fail(node, "division by zero")
        folded = self.fold(node, sym, x, y, out)
        if folded is not None:
            return folded
        return simplify(BinOp(sym, x, y))

    def fold(self, node: ast.AST, sym: str, x: Expr, y: Expr, dtype) -> Const | None:
        """Both operands constant: the value by Python's rules, typed as the operation (the real
        ``_fold_const_binop``)."""
        if not (isinstance(x, Const) and isinstance(y, Const)):
            return None
        xv, yv = convert_value(x.value, numeric(x.dtype)), convert_value(y.value, numeric(y.dtype))
        value = self.py_call(node, FOLD[sym], xv, yv)
        if sym in ("<", "<=", ">", ">=", "==", "!="):
            return Const(bool(value), DT_BOOL)
        return Const(convert_value(value, dtype), dtype)

    def ev_UnaryOp(self, node: ast.UnaryOp) -> Any:
        v = self.eval(node.operand)
        ops = {ast.USub: ("-", operator.neg), ast.UAdd: ("+", operator.pos), ast.Not: ("not", operator.not_),
               ast.Invert: ("~", operator.invert)}
        sym, fn = ops[type(node.op)]
        if is_const(v):
            return self.py_call(node, fn, v)
        if not is_scalar_value(v):
            self.fail(node, f"operator '{sym}' is not supported on {self.describe(v)}")
        if sym == "~" and v.dtype.is_float():
            self.fail(node, "operator '~' needs an integer operand, got a float")
        if sym == "+":
            return convert(v, numeric(v.dtype))
        if isinstance(v, Const):
            out = DT_BOOL if sym == "not" else numeric(v.dtype)
            return Const(convert_value(self.py_call(node, fn, convert_value(v.value, numeric(v.dtype))), out), out)
        return UnaryOp(sym, v)

    # ---- comparisons --------------------------------------------------------------------------

    def ev_Compare(self, node: ast.Compare) -> Any:
        left = self.eval(node.left)
        parts: list[Any] = []
        for op, right_node in zip(node.ops, node.comparators):
            sym, fn = _CMPOPS[type(op)]
            if sym in ("in", "not in") and not is_const(left):
                parts.append(self.membership(node, left, right_node, sym == "not in"))
                left = None
                continue
            right = self.eval(right_node)
            if is_const(left) and is_const(right):
                parts.append(self.py_call(node, fn, left, right))
            else:
                if sym in ("is", "is not", "in", "not in"):
                    self.fail(node, f"'{sym}' is only supported on compile-time values")
                for v in (left, right):
                    if not is_scalar_value(v):
                        self.fail(node, f"cannot compare {self.describe(v)}")
                x, y = self.scalar_expr(node, left), self.scalar_expr(node, right)
                parts.append(self.fold(node, sym, x, y, DT_BOOL) or Compare(sym, x, y))
            left = right
        return self.combine_bool(node, "and", parts)

    def membership(self, node: ast.Compare, left: Any, container: ast.expr, negate: bool) -> Any:
        """``x in (a, b, c)`` / ``x in pl.range(...)`` of a run-time ``x`` (the real desugaring)."""
        if not is_scalar_value(left):
            self.fail(node, f"'in' is not supported on {self.describe(left)}")
        items = self.eval(container)
        if isinstance(items, (RangeValue, range)):
            start, stop, step = ((items.start, items.stop, items.step) if isinstance(items, RangeValue)
                                 else (items.start, items.stop, items.step))
            x = self.scalar_expr(node, left)
            inside = BoolOp("and", (Compare(">=", x, self.scalar_expr(node, start)),
                                    Compare("<", x, self.scalar_expr(node, stop))))
            if known(step) != (True, 1):
                diff = self.scalar_binop(node, "-", x, start)
                inside = BoolOp("and", inside.values + (
                    Compare("==", self.scalar_binop(node, "%", diff, step), Const(0)),))
            return UnaryOp("not", inside) if negate else inside
        if not isinstance(items, (list, tuple)):
            self.fail(container, "'in' with a run-time value needs a tuple / list or pl.range(...) on the right, "
                                 f"got {self.describe(items)}")
        for v in items:
            if not is_scalar_value(v):
                self.fail(container, f"'in' with a run-time value needs scalars on the right, got {self.describe(v)}")
        x = self.scalar_expr(node, left)
        tests = [Compare("!=" if negate else "==", x, self.scalar_expr(node, v)) for v in items]
        if not tests:
            return negate
        return tests[0] if len(tests) == 1 else BoolOp("and" if negate else "or", tuple(tests))

    # ---- and / or / not -----------------------------------------------------------------------

    def combine_bool(self, node: ast.AST, op: str, parts: list[Any]) -> Any:
        runtime: list[Expr] = []
        for p in parts:
            ok, value = known(p)
            if ok or is_const(p):
                truth = self.py_call(node, bool, value if ok else p)
                if op == "and" and not truth:
                    return False if not runtime else BoolOp("and", (*runtime, Const(False)))
                if op == "or" and truth:
                    return True if not runtime else BoolOp("or", (*runtime, Const(True)))
                continue
            runtime.append(p)
        if not runtime:
            return parts[-1] if parts else (op == "and")
        if len(runtime) == 1:  # a lone run-time operand still gives a bool (C '&&' / '||')
            return runtime[0] if runtime[0].dtype is DT_BOOL else BoolOp(op, (runtime[0],))
        return BoolOp(op, tuple(runtime))

    def ev_BoolOp(self, node: ast.BoolOp) -> Any:
        op = "and" if isinstance(node.op, ast.And) else "or"
        parts = []
        for v in node.values:
            val = self.eval(v)
            if not is_const(val) and not is_scalar_value(val):
                self.fail(v, f"'{op}' is not supported on {self.describe(val)}")
            parts.append(val)
            ok, value = known(val)
            if (ok or is_const(val)) and self.py_call(v, bool, value if ok else val) == (op == "or"):
                break  # short-circuit: like Python, the remaining operands are never evaluated
        if all(is_number(p) for p in parts):
            return self.py_call(node, bool, parts[-1])  # the real folds and / or of numbers to a bool
        if all(is_const(p) for p in parts):
            result = parts[0]
            for p in parts[1:]:
                result = self.py_call(node, lambda r, q: (r and q) if op == "and" else (r or q), result, p)
            return result
        return self.combine_bool(node, op, parts)

    # ---- conditional expressions --------------------------------------------------------------

    def unwrap_constexpr(self, test: ast.expr) -> tuple[ast.expr, bool]:
        """``pl.constexpr(cond)`` as an if / conditional-expression condition: ``(cond, True)``."""
        if isinstance(test, ast.Call) and intrinsic_name(self.eval(test.func)) == "constexpr":
            if len(test.args) != 1 or test.keywords:
                self.fail(test, "pl.constexpr() expects exactly one argument")
            return test.args[0], True
        return test, False

    def branch_condition(self, test: ast.expr) -> tuple[bool | None, Expr | None]:
        """The condition of an ``if`` / conditional expression: ``(truth, None)`` when it is known while
        compiling (then only one branch is compiled), else ``(None, run-time condition)``."""
        test, is_constexpr = self.unwrap_constexpr(test)
        cond = self.eval(test)
        ok, value = known(cond)
        if is_constexpr and not (ok or is_const(cond)):
            self.fail(test, "pl.constexpr() can only accept compile-time constants, but got a run-time value")
        if ok or is_const(cond):
            return self.py_call(test, bool, value if ok else cond), None
        return None, self.as_condition(test, cond)

    def ev_IfExp(self, node: ast.IfExp) -> Any:
        truth, cond = self.branch_condition(node.test)
        if cond is None:
            return self.eval(node.body if truth else node.orelse)
        with self.runtime_block("a run-time conditional expression"):
            with self.ctx.builder.block() as then_stmts:
                a = self.eval(node.body)
            with self.ctx.builder.block() as else_stmts:
                b = self.eval(node.orelse)
        if isinstance(a, TileValue) and isinstance(b, TileValue):
            if a.ref.buffer is not b.ref.buffer:
                return self.choose_tile(node, cond, a, b, then_stmts, else_stmts)
            slot = self.choose(node, cond, a.ref.slot, b.ref.slot, then_stmts, else_stmts, "slot")
            return TileValue(TileRef(a.ref.buffer, slot))
        if not (is_scalar_value(a) and is_scalar_value(b)):
            self.fail(node, "a run-time conditional expression must choose between scalars (or tiles of one group)")
        x, y = self.scalar_expr(node.body, a), self.scalar_expr(node.orelse, b)
        if category(x.dtype) != category(y.dtype):
            self.fail(node, f"the branches of this conditional expression have mismatched types: {x.dtype.short} "
                            f"and {y.dtype.short} (both must be integers, both floats, or both bools)")
        return self.choose(node, cond, x, y, then_stmts, else_stmts, "ifexp")

    def choose_tile(self, node: ast.AST, cond: Expr, a: Any, b: Any, then_stmts: list, else_stmts: list) -> Any:
        """``a if cond else b`` for tiles of two buffers: the join a run-time ``if`` makes (its slots are
        both buffers' slots, with their mutex ids), chosen by a slot variable set on each side."""
        from pypto_pro.frontend.merge import MergeError, merge_values
        try:
            value, (then_set, else_set) = merge_values(self, "_ifexp", [a, b], self.loc(node), first_wins=True)
        except MergeError as exc:
            self.fail(node, f"the branches of this conditional expression cannot be merged: {exc.args[0]} and "
                            f"{exc.args[1]}")
        self.ctx.builder.emit(If(cond, then_stmts + then_set, else_stmts + else_set, self.loc(node)))
        return value

    def choose(self, node: ast.AST, cond: Expr, x: Expr, y: Expr, then_stmts: list, else_stmts: list,
               name: str) -> Expr:
        """``x if cond else y``: a ``Select`` when neither branch runs statements, else a real if."""
        dtype = x.dtype if x.dtype is y.dtype else promote(x.dtype, y.dtype)
        if not then_stmts and not else_stmts:
            return Select(cond, convert(x, dtype), convert(y, dtype))
        var = self.new_var(f"_{name}", dtype if name != "slot" else DT_INT64)
        then_stmts.append(Assign(var, convert(x, var.dtype), self.loc(node)))
        else_stmts.append(Assign(var, convert(y, var.dtype), self.loc(node)))
        self.ctx.builder.emit(If(cond, then_stmts, else_stmts, self.loc(node)))
        return var

    def as_condition(self, node: ast.AST, v: Any) -> Expr:
        if not is_scalar_value(v):
            self.fail(node, f"{self.describe(v)} cannot be used as a condition")
        return self.scalar_expr(node, v)
