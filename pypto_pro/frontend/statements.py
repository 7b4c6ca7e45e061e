"""Statements of kernel code: assignments, run-time and compile-time ``if`` / ``for``, sections."""
from __future__ import annotations

import ast
from typing import Any

from pypto_pro.frontend.context import _Return
from pypto_pro.frontend.merge import MergeError, merge_values
from pypto_pro.frontend.range_bounds import float_start, float_stop
from pypto_pro.frontend.scalars import (_expr, _range_len, assigned_names, is_const, is_scalar_value, known)
from pypto_pro.frontend.scope import MISSING
from pypto_pro.frontend.values import FrontendObject, GroupValue, InlineFunction, RangeValue, SectionValue, TileValue
from pypto_pro.ir.expr import Expr, Var, convert, literal_dtype
from pypto_pro.ir.nodes import Assign, For, If, Return, Section, TileRef
from pypto_pro.language.dtypes import DT_INT64, DataType
from pypto_pro.language.intrinsic import intrinsic_name

_UNSUPPORTED_STMTS = {
    ast.Try: "try statements",
    ast.ClassDef: "class definitions", ast.Import: "import statements", ast.ImportFrom: "import statements",
    ast.Global: "global statements", ast.Nonlocal: "nonlocal statements", ast.Delete: "del statements",
    ast.Raise: "raise statements",
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
            if self.terminated:
                return  # after a break / continue / return: the rest of the block never runs
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
        ok, value = known(cond)
        if not (ok or is_const(cond)):
            self.fail(node.test, "assert needs a compile-time condition (run-time asserts are not supported)")
        if not self.py_call(node.test, bool, value if ok else cond):
            msg = self.eval(node.msg) if node.msg is not None else None
            self.fail(node, "assertion failed" + (f": {msg}" if msg is not None else ""))

    def st_FunctionDef(self, node: ast.FunctionDef) -> None:
        """A nested helper: inlined where it is called, like any plain Python function."""
        for d in node.decorator_list:
            if not getattr(self.eval(d), "__pypto_inline__", False):
                self.fail(d, "a helper defined inside a kernel takes no decorator other than @pl.inline")
        self.scope.locals[node.name] = InlineFunction(node, self.src, self.scope.globals,
                                                      {**self.scope.closure, **self.scope.locals}, node.name)

    def st_Assign(self, node: ast.Assign) -> None:
        value = self.eval(node.value)
        for target in node.targets:
            self.assign_target(target, value, node)

    def st_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is None:
            self.fail(node, "a declaration without a value is not supported (write 'name: type = value')")
        value = self.eval(node.value)
        ann = self.annotation(node.annotation)
        if isinstance(ann, DataType):
            self.check_annotated(node, ann, value)
        self.assign_target(node.target, value, node)

    def annotation(self, node: ast.expr) -> Any:
        """The value of a local's annotation, or None where it is not one we check (the real parser
        reads only scalar dtypes and memrefs there)."""
        try:
            return self.eval(node)
        except Exception:
            return None

    def check_annotated(self, node: ast.AnnAssign, dtype: DataType, value: Any) -> None:
        """``name: pl.DT_x = value``: the variable keeps the value's dtype (as in the real PyPTO Pro,
        where the annotation does not convert); a value of another category is a mistake."""
        at = node.annotation
        if not dtype.scalar_ok:
            self.fail(at, f"pl.{dtype.name} is not a scalar dtype (it is for tensors and tiles only)")
        if not is_scalar_value(value):
            self.fail(node.value, f"'{ast.unparse(node.target)}' is annotated pl.{dtype.name} but is assigned "
                                  f"{self.describe(value)}")
        vdt = _expr(value).dtype
        if dtype.is_float() != vdt.is_float():
            what = "a float" if vdt.is_float() else "an integer" if not vdt.is_bool() else "a bool"
            hint = (" (write a float literal, e.g. 0.0, or pl.const(value, pl." + dtype.name + "))"
                    if dtype.is_float() else " (use an integer value; a float never converts implicitly here)")
            self.fail(node.value, f"'{ast.unparse(node.target)}' is annotated pl.{dtype.name} but its value is "
                                  f"{what} ({vdt.short}){hint}")

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
        elif isinstance(target, ast.Subscript):
            self.store_element(target, value, node)
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
        if isinstance(current, Var) and is_scalar_value(value):
            v = self.scalar_expr(node, value)
            # In the block that defined the register a new value of another dtype starts a new register
            # (the real SSA form); under a run-time if / loop the register is shared by every path and
            # the value converts to its dtype, as the C++ assignment does.
            if v.dtype is current.dtype or self.ctx.var_depth.get(current.uid, 0) != self.ctx.runtime_depth:
                self.assign_into(current, v, node, name)
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
        if isinstance(value, Expr):
            value = self.scalar_expr(node, value)
            var = self.new_var(name, value.dtype)
            self.ctx.builder.emit(Assign(var, value, self.loc(node)))
            value = var
        self.scope.locals[name] = value

    def assign_into(self, var: Var, value: Expr, node: ast.AST, name: str) -> None:
        if value.dtype.is_float() and not var.dtype.is_float():
            self.fail(node, f"'{name}' holds an integer ({var.dtype.short}) at run time; cannot assign a float "
                            f"({value.dtype.short}) to it")
        self.ctx.builder.emit(Assign(var, convert(value, var.dtype), self.loc(node)))

    def scalar_expr(self, node: ast.AST, v: Any) -> Expr:
        try:
            return _expr(v)
        except ValueError as exc:
            self.fail(node, str(exc))

    def _other_engines_slot(self, tile: TileValue) -> bool:
        """Whether ``tile``'s slot register belongs to the other section's program."""
        owner = self.ctx.section_slots.get(getattr(tile.ref.slot, "uid", None))
        return owner is not None and owner is not self.ctx.section

    def materialize(self, body: list[ast.stmt], node: ast.AST) -> None:
        """Before a run-time loop: names it reassigns that now hold constants become IR variables."""
        for name in sorted(assigned_names(body)):
            current = self.scope.locals.get(name, MISSING)
            if is_scalar_value(current) and not isinstance(current, Var):
                if isinstance(current, Expr):
                    continue
                var = self.new_var(name, literal_dtype(current))
                self.ctx.builder.emit(Assign(var, self.scalar_expr(node, current), self.loc(node)))
                self.scope.locals[name] = var
            elif isinstance(current, TileValue) and current.ref.buffer.is_group and \
                    self._other_engines_slot(current):
                # the slot is another engine's register: this loop's program cannot start from it, so the
                # name is unbound in the loop until the body binds it (a shared group's own .next())
                self.scope.locals.pop(name)
                continue
            elif isinstance(current, TileValue) and current.ref.buffer.is_group and not \
                    (isinstance(current.ref.slot, Var) and current.ref.slot.name.endswith("_carried")):
                var = self.new_var(f"{name}_slot", DT_INT64)  # (a carried slot register is already shared)
                var.name += "_carried"
                self.ctx.builder.emit(Assign(var, current.ref.slot, self.loc(node)))
                self.scope.locals[name] = TileValue(TileRef(current.ref.buffer, var))

    # ---- if -----------------------------------------------------------------------------------

    def st_If(self, node: ast.If) -> None:
        truth, cond = self.branch_condition(node.test)
        if cond is None:
            self.visit_body(node.body if truth else node.orelse)
            return
        self.materialize(node.body + node.orelse, node)
        before = dict(self.scope.locals)
        with self.runtime_block("a run-time if"):
            with self.ctx.builder.block() as then_body:
                self.visit_body(node.body)
            then_env, then_done = self.scope.locals, self.terminated
            self.scope.locals, self.terminated = dict(before), False
            with self.ctx.builder.block() as else_body:
                self.visit_body(node.orelse)
            else_env, else_done = self.scope.locals, self.terminated
        self.terminated = then_done and else_done
        if then_done and not else_done:
            self.scope.locals = else_env  # only the else side reaches the code after the if
        elif else_done and not then_done:
            self.scope.locals = then_env
        else:
            self.scope.locals = self.merge_branches(node, before, then_env, then_body, else_env, else_body)
        self.ctx.builder.emit(If(cond, then_body, else_body, self.loc(node)))

    def merge_branches(self, node, before, then_env, then_body, else_env, else_body) -> dict[str, Any]:
        merged = dict(before)
        line = self.loc(node).line
        for name in set(then_env) | set(else_env):
            a, b = then_env.get(name, MISSING), else_env.get(name, MISSING)
            if a is b:
                merged[name] = a
                continue
            if a is MISSING or b is MISSING:
                merged.pop(name, None)  # bound in one branch only: not usable after the if
                self.unmerged[name] = (f"'{name}' is assigned on only one side of the run-time if at line "
                                       f"{line}, so it cannot be used after it")
                continue
            try:
                value, (then_set, else_set) = merge_values(self, name, [a, b], self.loc(node), first_wins=True)
            except MergeError as exc:
                merged.pop(name, None)
                self.unmerged[name] = (f"'{name}' is {exc.args[0]} on one side of the run-time if at line {line} "
                                       f"and {exc.args[1]} on the other, so it cannot be used after it")
                continue
            then_body.extend(then_set)
            else_body.extend(else_set)
            merged[name] = value
        return merged

    # ---- for ----------------------------------------------------------------------------------

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
            bounds = [self.range_bound(node.iter, x, role) for x, role in zip((it.start, it.stop, step),
                                                                                ("start", "stop", "step"))]
            self.materialize(node.body, node)
            before = dict(self.scope.locals)
            sites = self.return_sites()
            with self.runtime_block("a pl.range loop"), self.loop_frame(runtime=True):
                var = self.new_var(node.target.id, DT_INT64)
                with self.ctx.builder.block() as body:
                    self.scope.locals[node.target.id] = var
                    self.visit_body(node.body)
            self.terminated = False
            self.ctx.builder.emit(For(var, *bounds, body, self.loc(node)))
            self.after_loop(node, before, sites, node.target.id)
            return
        if isinstance(it, (range, list, tuple)) and is_const(it):
            count = _range_len(it) if isinstance(it, range) else len(it)  # len() overflows on huge ranges
            if count > MAX_UNROLL:
                self.fail(node.iter, f"a compile-time loop over {count} items is unrolled; at most {MAX_UNROLL} "
                                     "are allowed (use pl.range for a run-time loop)")
            self.run_unrolled(node, it)
            return
        if isinstance(it, range) or (isinstance(it, (list, tuple))):
            self.fail(node.iter, "this loop iterates over run-time values; use pl.range(start, stop, step)")
        self.fail(node.iter, f"cannot iterate over {self.describe(it)}; use pl.range(...) or a compile-time range")

    def range_bound(self, node: ast.AST, v: Any, role: str = "step") -> Expr:
        e = self.scalar_expr(node, v)
        if e.dtype.is_float() and role != "step":  # the real loop compares i < stop as C does (range_bounds)
            b = float_start(e) if role == "start" else float_stop(e)
            if isinstance(b, str):
                self.fail(node, b)
            return b
        if not e.dtype.is_int():
            self.fail(node, f"pl.range bounds must be integers, got {e.dtype.short if e.dtype.is_float() else 'a bool'}")
        return convert(e, DT_INT64)

    # ---- with ---------------------------------------------------------------------------------

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
        before = dict(self.scope.locals)
        try:
            with self.ctx.builder.block() as body:
                try:
                    self.visit_body(node.body)
                except _Return as ret:  # this engine's program ends here
                    returned = ret
        finally:
            self.ctx.section = None
        for name, v in self.scope.locals.items():  # tiles at run-time slots this engine's registers hold
            if isinstance(v, TileValue) and isinstance(v.ref.slot, Var) and before.get(name) is not v:
                self.ctx.section_slots.setdefault(v.ref.slot.uid, value.kind)
        # a jump inside the section is this engine's only: the code after it belongs to the others too
        self.terminated = False
        if returned is not None and not self.in_inline:
            body.append(Return(self.loc(node)))
            returned = None
        self.ctx.builder.emit(Section(value.kind, body, self.loc(node)))
        if returned is not None:
            raise returned

    def store_element(self, target: ast.Subscript, value: Any, node: ast.stmt) -> None:
        """``x[i, j] = v``: the real ``pl.setval(x, offset, v)`` sugar (see :meth:`element_offset`)."""
        self.element_access(target, "setval", value, node)
