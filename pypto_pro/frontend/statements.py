"""Statements of kernel code: assignments, run-time and compile-time ``if`` / ``for``, sections."""
from __future__ import annotations

import ast
from typing import Any

from pypto_pro.frontend.context import _Return
from pypto_pro.frontend.scalars import (_expr, _range_len, _same_const, _ty, assigned_names, is_const,
                                        is_scalar_value)
from pypto_pro.frontend.scope import MISSING
from pypto_pro.frontend.values import FrontendObject, GroupValue, InlineFunction, RangeValue, SectionValue, TileValue
from pypto_pro.ir.expr import Const, Expr, Var
from pypto_pro.ir.nodes import Assign, For, If, Section, TileRef
from pypto_pro.language.intrinsic import intrinsic_name

_UNSUPPORTED_STMTS = {
    ast.Try: "try statements", ast.While: "while loops (use pl.range for run-time loops)",
    ast.ClassDef: "class definitions", ast.Import: "import statements", ast.ImportFrom: "import statements",
    ast.Global: "global statements", ast.Nonlocal: "nonlocal statements", ast.Delete: "del statements",
    ast.Raise: "raise statements", ast.Break: "break", ast.Continue: "continue",
    ast.AsyncFor: "async for", ast.AsyncWith: "async with", ast.AsyncFunctionDef: "async functions",
    ast.Match: "match statements",
}
if hasattr(ast, "TryStar"):
    _UNSUPPORTED_STMTS[ast.TryStar] = "try statements"
MAX_UNROLL = 4096


def _not_supported(what: str) -> str:
    name, paren, hint = what.partition(" (")
    text = f"{name} are not supported in kernels" if name.endswith("s") else f"'{name}' is not supported in kernels"
    return text + (f" ({hint}" if paren else "")



class StatementParser:
    """The statement visitors of :class:`pypto_pro.frontend.parser.FunctionParser`."""

    def visit_body(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self.visit_stmt(stmt)

    def visit_stmt(self, node: ast.stmt) -> None:
        for kind, what in _UNSUPPORTED_STMTS.items():
            if isinstance(node, kind):
                self.fail(node, _not_supported(what), kind="unsupported")
        method = getattr(self, "st_" + type(node).__name__, None)
        if method is None:
            self.fail(node, f"unsupported statement: {type(node).__name__}", kind="unsupported")
        method(node)

    def st_Pass(self, node: ast.Pass) -> None:
        pass

    def st_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # docstring or comment string
        self.eval(node.value)

    def st_Assert(self, node: ast.Assert) -> None:
        cond = self.eval(node.test)
        if not is_const(cond):
            self.fail(node.test, "assert needs a compile-time condition (run-time asserts are not supported)")
        if not self.py_call(node.test, bool, cond):
            msg = self.eval(node.msg) if node.msg is not None else None
            self.fail(node, "assertion failed" + (f": {msg}" if msg is not None else ""))

    def st_Return(self, node: ast.Return) -> None:
        if self.runtime_blocks:
            self.fail(node, f"'return' inside {self.runtime_blocks[-1]} is not supported: the branch is taken at "
                            "run time; assign the result to a name and return after it")
        if not self.in_inline:
            if node.value is not None:
                self.fail(node, "a kernel cannot return a value; write results to an output tensor")
            raise _Return(None)
        raise _Return(self.eval(node.value) if node.value is not None else None)

    def st_FunctionDef(self, node: ast.FunctionDef) -> None:
        decorators = [self.eval(d) for d in node.decorator_list]
        if not any(getattr(d, "__pypto_inline__", False) for d in decorators):
            self.fail(node, f"nested function '{node.name}' must be decorated with @pl.inline to be used in a kernel")
        if len(decorators) != 1:
            self.fail(node.decorator_list[1] if len(node.decorator_list) > 1 else node,
                      "an inline helper takes only the @pl.inline decorator")
        self.scope.locals[node.name] = InlineFunction(node, self.src, self.scope.globals,
                                                      {**self.scope.closure, **self.scope.locals}, node.name)

    def st_Assign(self, node: ast.Assign) -> None:
        value = self.eval(node.value)
        for target in node.targets:
            self.assign_target(target, value, node)

    def st_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is None:
            self.fail(node, "a declaration without a value is not supported")
        self.assign_target(node.target, self.eval(node.value), node)

    def st_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.target, (ast.Attribute, ast.Subscript)):  # s.total += i on a struct field
            load = type(node.target)(**{**vars(node.target), "ctx": ast.Load()})
            value = self.binop(node, node.op, self.eval(load), self.eval(node.value))
            if self.assign_member(node.target, value):
                return
        if not isinstance(node.target, ast.Name):
            self.fail(node.target, "augmented assignment is only supported to a plain name")
        current = self.load_name(node.target)
        value = self.binop(node, node.op, current, self.eval(node.value))
        self.assign_target(node.target, value, node)

    def assign_target(self, target: ast.expr, value: Any, node: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            self.bind(target.id, value, node)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if not isinstance(value, (tuple, list)):
                self.fail(target, f"cannot unpack {self.describe(value)}")
            if len(value) != len(target.elts):
                self.fail(target, f"cannot unpack {len(value)} values into {len(target.elts)} names")
            for t, v in zip(target.elts, value):
                self.assign_target(t, v, node)
        elif isinstance(target, (ast.Attribute, ast.Subscript)) and self.assign_member(target, value):
            pass
        else:
            self.fail(target, "only assignment to names (or tuples of names) is supported in kernels")

    def assign_member(self, target: ast.Attribute | ast.Subscript, value: Any) -> bool:
        """``obj.field = v`` / ``obj[i] = v`` on a run-time object (a struct field, ...); False if
        ``obj`` is not one (the caller reports the unsupported target)."""
        base = self.eval(target.value)
        if not isinstance(base, FrontendObject) or isinstance(target, ast.Subscript) and \
                isinstance(target.slice, ast.Slice):
            return False
        if isinstance(target, ast.Attribute):
            base.frontend_setattr(self, target, target.attr, value)
        else:
            base.frontend_setitem(self, target, self.eval(target.slice), value)
        return True

    def bind(self, name: str, value: Any, node: ast.AST) -> None:
        """Bind ``name``; run-time scalars live in IR variables so loops and branches can update them."""
        current = self.scope.locals.get(name, MISSING)
        self.unmerged.pop(name, None)
        buf = value.ref.buffer if isinstance(value, TileValue) else value.buffer if isinstance(value, GroupValue) else None
        if buf is not None and buf.name.startswith("_tile"):
            buf.name = self.ctx.fresh_name(name)
            if isinstance(value, GroupValue):
                value.counter.name = f"{buf.name}_pos"
        if isinstance(current, Var):
            if is_scalar_value(value):
                if _ty(value) == "float" and current.ty != "float":
                    self.fail(node, f"'{name}' holds an integer at run time; cannot assign a float to it")
                self.ctx.builder.emit(Assign(current, value if isinstance(value, Expr) else Const(value),
                                             self.loc(node)))
                return
        if isinstance(current, TileValue) and isinstance(current.ref.slot, Var) and self.runtime_blocks and \
                current.ref.slot.name.endswith("_carried") and isinstance(value, TileValue):
            if value.ref.buffer is current.ref.buffer:
                self.ctx.builder.emit(Assign(current.ref.slot, value.ref.slot, self.loc(node)))
                return
            if self.runtime_blocks[-1].endswith("loop"):
                self.fail(node, f"'{name}' is rebound to a tile of another buffer inside {self.runtime_blocks[-1]}; "
                                "use a separate name")
            # inside a run-time if: a plain rebinding (after the if, the name is usable only if both sides agree)
        if isinstance(value, Expr) and not isinstance(value, Var):
            var = Var(self.ctx.fresh_name(name), "float" if value.ty == "float" else "int")
            self.ctx.builder.emit(Assign(var, value, self.loc(node)))
            value = var
        elif isinstance(value, Var):
            var = Var(self.ctx.fresh_name(name), value.ty)
            self.ctx.builder.emit(Assign(var, value, self.loc(node)))
            value = var
        self.scope.locals[name] = value

    def materialize(self, body: list[ast.stmt], node: ast.AST) -> None:
        """Before a run-time loop: names it reassigns that now hold constants become IR variables."""
        for name in sorted(assigned_names(body)):
            current = self.scope.locals.get(name, MISSING)
            if is_scalar_value(current) and not isinstance(current, Var):
                if isinstance(current, Expr):
                    continue
                ty = "float" if isinstance(current, float) else "int"
                var = Var(self.ctx.fresh_name(name), ty)
                self.ctx.builder.emit(Assign(var, Const(current), self.loc(node)))
                self.scope.locals[name] = var
            elif isinstance(current, TileValue) and current.ref.buffer.is_group:
                var = Var(self.ctx.fresh_name(f"{name}_slot") + "_carried")
                self.ctx.builder.emit(Assign(var, current.ref.slot, self.loc(node)))
                self.scope.locals[name] = TileValue(TileRef(current.ref.buffer, var))

    def st_If(self, node: ast.If) -> None:
        cond = self.eval(node.test)
        if is_const(cond):
            self.visit_body(node.body if self.py_call(node.test, bool, cond) else node.orelse)
            return
        cond = self.as_condition(node.test, cond)
        self.materialize(node.body + node.orelse, node)
        before = dict(self.scope.locals)
        self.runtime_blocks.append("a run-time if")
        try:
            with self.ctx.builder.block() as then_body:
                self.visit_body(node.body)
            then_env = self.scope.locals
            self.scope.locals = dict(before)
            with self.ctx.builder.block() as else_body:
                self.visit_body(node.orelse)
            else_env = self.scope.locals
        finally:
            self.runtime_blocks.pop()
        self.scope.locals = self.merge_branches(node, before, then_env, then_body, else_env, else_body)
        self.ctx.builder.emit(If(cond, then_body, else_body, self.loc(node)))

    def merge_branches(self, node, before, then_env, then_body, else_env, else_body) -> dict[str, Any]:
        merged = dict(before)
        for name in set(then_env) | set(else_env):
            a, b = then_env.get(name, MISSING), else_env.get(name, MISSING)
            if a is b:
                merged[name] = a
            elif a is MISSING or b is MISSING:
                merged.pop(name, None)  # bound in one branch only: not usable after the if
                self.unmerged[name] = (f"'{name}' is assigned on only one side of the run-time if at line "
                                       f"{self.loc(node).line}, so it cannot be used after it")
            elif is_const(a) and is_const(b) and type(a) is type(b) and _same_const(a, b):
                merged[name] = a
            elif is_scalar_value(a) and is_scalar_value(b):
                ty = "float" if "float" in (_ty(a), _ty(b)) else "int"
                var = Var(self.ctx.fresh_name(name), ty)
                then_body.append(Assign(var, _expr(a), self.loc(node)))
                else_body.append(Assign(var, _expr(b), self.loc(node)))
                merged[name] = var
            elif isinstance(a, TileValue) and isinstance(b, TileValue) and a.ref.buffer is b.ref.buffer:
                var = Var(self.ctx.fresh_name(f"{name}_slot"))
                then_body.append(Assign(var, a.ref.slot, self.loc(node)))
                else_body.append(Assign(var, b.ref.slot, self.loc(node)))
                merged[name] = TileValue(TileRef(a.ref.buffer, var))
            else:
                merged.pop(name, None)
                self.unmerged[name] = (f"'{name}' is {self.describe(a)} on one side of the run-time if at line "
                                       f"{self.loc(node).line} and {self.describe(b)} on the other, so it cannot be "
                                       "used after it")
        return merged

    def st_For(self, node: ast.For) -> None:
        if node.orelse:
            self.fail(node.orelse[0], "for ... else is not supported in kernels")
        it = self.eval(node.iter)
        if isinstance(it, RangeValue):
            if not isinstance(node.target, ast.Name):
                self.fail(node.target, "a pl.range loop variable must be a single name")
            step = it.step
            if isinstance(step, int) and step <= 0:
                self.fail(node.iter, "pl.range step must be positive")
            self.materialize(node.body, node)
            var = Var(self.ctx.fresh_name(node.target.id))
            before = dict(self.scope.locals)
            self.runtime_blocks.append("a pl.range loop")
            try:
                with self.ctx.builder.block() as body:
                    self.scope.locals[node.target.id] = var
                    self.visit_body(node.body)
            finally:
                self.runtime_blocks.pop()
            self.ctx.builder.emit(For(var, _expr(it.start), _expr(it.stop), _expr(step), body, self.loc(node)))
            self.forget_loop_locals(node, before)
            return
        if isinstance(it, (range, list, tuple)) and is_const(it):
            count = _range_len(it) if isinstance(it, range) else len(it)  # len() overflows on huge ranges
            if count > MAX_UNROLL:
                self.fail(node.iter, f"a compile-time loop over {count} items is unrolled; at most {MAX_UNROLL} "
                                     "are allowed (use pl.range for a run-time loop)")
            for item in it:
                self.assign_target(node.target, item, node)
                self.visit_body(node.body)
            return
        if isinstance(it, range) or (isinstance(it, (list, tuple))):
            self.fail(node.iter, "this loop iterates over run-time values; use pl.range(start, stop, step)")
        self.fail(node.iter, f"cannot iterate over {self.describe(it)}; use pl.range(...) or a compile-time range")

    def forget_loop_locals(self, node: ast.For, before: dict[str, Any]) -> None:
        """Run-time values first set inside a pl.range loop (and its variable) have no value after a loop
        that ran zero times: using them after the loop is an error, not an unset register."""
        line = self.loc(node).line
        for name, value in list(self.scope.locals.items()):
            runtime = isinstance(value, Expr) or (isinstance(value, TileValue) and not isinstance(value.ref.slot, Const))
            if before.get(name, MISSING) is value or not runtime:
                continue
            del self.scope.locals[name]
            self.unmerged[name] = (
                f"'{name}' is the variable of the pl.range loop at line {line}; it has no value after the loop "
                "(the loop may run zero times)" if name == node.target.id else
                f"'{name}' is assigned inside the pl.range loop at line {line}, which may run zero times, so it "
                "cannot be used after the loop; assign it before the loop")

    def st_With(self, node: ast.With) -> None:
        if len(node.items) != 1:
            self.fail(node, "with takes exactly one pl.section_vector() or pl.section_cube()")
        item = node.items[0]
        if isinstance(item.context_expr, ast.Call) and \
                intrinsic_name(self.eval(item.context_expr.func)) not in ("section_vector", "section_cube"):
            self.fail(item.context_expr, "with is only supported for pl.section_vector() and pl.section_cube()")
        value = self.eval(item.context_expr)
        if not isinstance(value, SectionValue):
            self.fail(item.context_expr, "with is only supported for pl.section_vector() and pl.section_cube()")
        if item.optional_vars is not None:
            self.fail(item.optional_vars, "a section takes no 'as' target")
        if self.ctx.section is not None:
            self.fail(node, f"sections cannot be nested (already inside section_{self.ctx.section.value}())")
        self.ctx.section = value.kind
        self.ctx.sections_seen.add(value.kind)
        returned: _Return | None = None
        try:
            with self.ctx.builder.block() as body:
                self.visit_body(node.body)
        except _Return as ret:  # the section's code so far still runs; the return then ends the function
            returned = ret
        finally:
            self.ctx.section = None
        self.ctx.builder.emit(Section(value.kind, body, self.loc(node)))
        if returned is not None:
            raise returned
