"""Python AST -> IR. Parses the kernel's source (never traces it).

Compile-time values (ints, floats, TileTypes, lists, ...) are folded as Python objects; values
known only at run time (shapes of dynamic dims, block ids, loop variables) become IR scalar
expressions. Tile operations become ``TileOp`` statements. Every mistake is a located
``CompileError``.
"""
from __future__ import annotations

import ast
import builtins
import inspect
import operator
from typing import Any, Callable

from pypto_pro.arch.model import ArchModel
from pypto_pro.errors import CompileError, InternalCompilerError, PyptoError
from pypto_pro.frontend import intrinsics
from pypto_pro.frontend.builder import Builder
from pypto_pro.frontend.diagnostics import SourceFile, did_you_mean, fail
from pypto_pro.frontend.scope import MISSING, Scope, closure_vars
from pypto_pro.frontend.source import parse_function
from pypto_pro.frontend.values import (BoundGroupMethod, GroupValue, InlineFunction, RangeValue,
                                       SectionValue, ShapeValue, TensorValue, TileValue)
from pypto_pro.ir.expr import (BinOp, BoolOp, Compare, Const, Expr, ListIndex, Select, TensorDim,
                               UnaryOp, Var)
from pypto_pro.ir.nodes import (Assign, Buffer, For, If, KernelIR, ScalarParam, Section,
                                TensorParam, TileRef)
from pypto_pro.language.enums import SectionKind
from pypto_pro.language.intrinsic import intrinsic_name
from pypto_pro.language.types import Constexpr, DTypeVar, TensorType

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
_UNSUPPORTED_EXPRS = {
    ast.Lambda: "lambda", ast.ListComp: "list comprehensions", ast.SetComp: "set comprehensions",
    ast.DictComp: "dict comprehensions", ast.GeneratorExp: "generator expressions", ast.Yield: "yield",
    ast.YieldFrom: "yield from", ast.Await: "await", ast.NamedExpr: "assignment expressions (:=)",
    ast.Starred: "starred arguments", ast.JoinedStr: "f-strings", ast.Set: "set displays", ast.Dict: "dict displays",
}
MAX_UNROLL = 4096


def _not_supported(what: str) -> str:
    name, paren, hint = what.partition(" (")
    text = f"{name} are not supported in kernels" if name.endswith("s") else f"'{name}' is not supported in kernels"
    return text + (f" ({hint}" if paren else "")


def is_const(v: Any) -> bool:
    """True for a compile-time value (no run-time scalar, tile, tensor or group inside)."""
    if isinstance(v, (Expr, TileValue, GroupValue, TensorValue, ShapeValue, RangeValue, BoundGroupMethod,
                      SectionValue, InlineFunction)):
        return False
    if isinstance(v, (list, tuple)):
        return all(is_const(x) for x in v)
    return True


def is_scalar_value(v: Any) -> bool:
    return isinstance(v, Expr) or (isinstance(v, (int, float)) and not isinstance(v, bool)) or isinstance(v, bool)


class _Return(Exception):
    """Unwinds an inline helper's body at its ``return``."""

    def __init__(self, value: Any):
        self.value = value


class KernelContext:
    """State shared by one kernel's compilation: arch, IR builder, buffers, sections, ids."""

    def __init__(self, arch: ArchModel, kernel_name: str):
        self.arch = arch
        self.kernel_name = kernel_name
        self.builder = Builder()
        self.buffers: list[Buffer] = []
        self.mutex_owner: dict[int, Buffer] = {}
        self.section: SectionKind | None = None
        self.sections_seen: set[SectionKind] = set()
        self.inline_depth = 0
        self.names_used: dict[str, int] = {}
        self.param_vars: dict[str, Var] = {}
        self.cross_owner: dict[int, Buffer] = {}
        self.dtype_bindings: dict[str, Any] = {}  # DTypeVar name -> DataType bound at launch
        self.unbound_constexprs: set[str] = set()  # pl.Constexpr parameters compiled without a value

    def fresh_name(self, base: str) -> str:
        n = self.names_used.get(base, 0)
        self.names_used[base] = n + 1
        return base if n == 0 else f"{base}_{n}"


class FunctionParser:
    """Compiles one function body (the kernel, or an inlined helper) into the context's builder."""

    def __init__(self, ctx: KernelContext, src: SourceFile, scope: Scope, in_inline: bool = False):
        self.ctx = ctx
        self.src = src
        self.scope = scope
        self.in_inline = in_inline
        self.runtime_blocks: list[str] = []  # enclosing run-time ifs / pl.range loops (innermost last)
        self.unmerged: dict[str, str] = {}  # names a run-time if left unusable, with the reason

    # ---- diagnostics -----------------------------------------------------------------------

    def fail(self, node: ast.AST | None, message: str, notes: list[str] | tuple = ()) -> Any:
        fail(self.src, node, message, notes)

    def loc(self, node: ast.AST | None):
        return self.src.loc(node)

    def py_call(self, node: ast.AST, fn: Callable, *args: Any, **kwargs: Any) -> Any:
        """Run user-level Python at compile time; its exceptions become located CompileErrors."""
        try:
            return fn(*args, **kwargs)
        except PyptoError:
            raise
        except RecursionError:
            self.fail(node, "recursion too deep while evaluating this expression at compile time")
        except Exception as exc:  # user code raised: report it at the user's line
            self.fail(node, f"{type(exc).__name__} while evaluating at compile time: {exc}")

    # ---- statements ------------------------------------------------------------------------

    def visit_body(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self.visit_stmt(stmt)

    def visit_stmt(self, node: ast.stmt) -> None:
        for kind, what in _UNSUPPORTED_STMTS.items():
            if isinstance(node, kind):
                self.fail(node, _not_supported(what))
        method = getattr(self, "st_" + type(node).__name__, None)
        if method is None:
            self.fail(node, f"unsupported statement: {type(node).__name__}")
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
        else:
            self.fail(target, "only assignment to names (or tuples of names) is supported in kernels")

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

    # ---- expressions ---------------------------------------------------------------------

    def eval(self, node: ast.expr) -> Any:
        for kind, what in _UNSUPPORTED_EXPRS.items():
            if isinstance(node, kind):
                self.fail(node, _not_supported(what))
        method = getattr(self, "ev_" + type(node).__name__, None)
        if method is None:
            self.fail(node, f"unsupported expression: {type(node).__name__}")
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
            self.fail(node, f"name '{node.id}' is not defined{did_you_mean(node.id, self.scope.known_names())}")
        return value

    def ev_Tuple(self, node: ast.Tuple) -> tuple:
        return tuple(self.eval(e) for e in node.elts)

    def ev_List(self, node: ast.List) -> list:
        return [self.eval(e) for e in node.elts]

    def ev_Attribute(self, node: ast.Attribute) -> Any:
        base = self.eval(node.value)
        attr = node.attr
        at = _attr_name_node(node)  # errors point at the attribute's name
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
                return intrinsics.snapshot(self, node, base, base.counter, "pos").ref.slot
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
        if isinstance(base, ShapeValue):
            return self.shape_dim(node, base.param, index)
        if isinstance(base, GroupValue):
            return intrinsics.group_index(self, node, base, index)
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

    def ev_Call(self, node: ast.Call) -> Any:
        func = self.eval(node.func)
        for a in node.args:
            if isinstance(a, ast.Starred):
                self.fail(a, "starred arguments are not supported in kernels")
        for k in node.keywords:
            if k.arg is None:
                self.fail(k.value, "**kwargs arguments are not supported in kernels")
        args = [self.eval(a) for a in node.args]
        kwargs = {k.arg: self.eval(k.value) for k in node.keywords}
        name = intrinsic_name(func)
        if name is not None:
            return intrinsics.call(self, node, name, func, args, kwargs)
        if isinstance(func, BoundGroupMethod):
            return intrinsics.group_method(self, node, func, args, kwargs)
        if isinstance(func, InlineFunction):
            return self.inline_call(node, func, args, kwargs)
        if getattr(func, "__pypto_inline__", False):
            return self.inline_call(node, inline_from_function(func, self), args, kwargs)
        if getattr(func, "__pypto_kernel__", False):
            self.fail(node, "a @pl.jit kernel cannot be called from another kernel; make the helper @pl.inline")
        if (func is builtins.min or func is builtins.max) and not all(is_const(a) for a in args):
            return self.runtime_minmax(node, func.__name__, args, kwargs)
        if func is builtins.range and not all(is_const(a) for a in args):
            self.fail(node, "range() with run-time bounds: use pl.range(start, stop, step)")
        if not callable(func):
            self.fail(node.func, f"{self.describe(func)} is not callable")
        if not (all(is_const(a) for a in args) and all(is_const(v) for v in kwargs.values())):
            fname = getattr(func, "__name__", repr(func))
            self.fail(node, f"'{fname}' is an ordinary Python function: it runs at compile time and cannot take "
                            "run-time values or tiles; decorate it with @pl.inline to use it in device code")
        return self.py_call(node, func, *args, **kwargs)

    def runtime_minmax(self, node: ast.AST, fname: str, args: list, kwargs: dict) -> Expr:
        if kwargs or len(args) < 2:
            self.fail(node, f"{fname}() of run-time values takes two or more positional scalars")
        for a in args:
            if not is_scalar_value(a):
                self.fail(node, f"{fname}() cannot take {self.describe(a)}")
        result = _expr(args[0])
        for a in args[1:]:
            result = BinOp(fname, result, _expr(a))
        return result

    def inline_call(self, node: ast.Call, fn: InlineFunction, args: list, kwargs: dict) -> Any:
        if self.ctx.inline_depth > 32:
            self.fail(node, "inline helpers nest deeper than 32 calls (recursion?)")
        fdef = fn.node
        params = [p.arg for p in fdef.args.posonlyargs + fdef.args.args]
        if fdef.args.vararg or fdef.args.kwarg or fdef.args.kwonlyargs:
            self.fail(node, f"inline helper '{fn.name}' may only have plain positional parameters")
        defaults = [self.eval_in(fn, d) for d in fdef.args.defaults]
        bound: dict[str, Any] = dict(zip(params[len(params) - len(defaults):], defaults))
        if len(args) > len(params):
            self.fail(node, f"'{fn.name}' takes {len(params)} arguments but {len(args)} were given")
        bound.update(zip(params, args))
        for k, v in kwargs.items():
            if k not in params:
                self.fail(node, f"'{fn.name}' has no parameter '{k}'{did_you_mean(k, params)}")
            if k in dict(zip(params, args)):
                self.fail(node, f"'{fn.name}' got two values for parameter '{k}'")
            bound[k] = v
        missing = [p for p in params if p not in bound]
        if missing:
            self.fail(node, f"'{fn.name}' is missing argument(s): {', '.join(missing)}")
        scope = Scope(fn.globals, fn.closure)
        scope.locals.update(bound)
        sub = FunctionParser(self.ctx, fn.src, scope, in_inline=True)
        self.ctx.inline_depth += 1
        try:
            sub.visit_body(fdef.body)
        except _Return as ret:
            return ret.value
        finally:
            self.ctx.inline_depth -= 1
        return None

    def eval_in(self, fn: InlineFunction, node: ast.expr) -> Any:
        return FunctionParser(self.ctx, fn.src, Scope(fn.globals, fn.closure), in_inline=True).eval(node)

    # ---- helpers ---------------------------------------------------------------------------

    def describe(self, v: Any) -> str:
        if isinstance(v, TileValue):
            return f"tile '{v.ref.buffer.name}'"
        if isinstance(v, GroupValue):
            return f"tile group '{v.buffer.name}'"
        if isinstance(v, TensorValue):
            return f"tensor '{v.param.name}'"
        if isinstance(v, Expr):
            return "a run-time scalar"
        if isinstance(v, (RangeValue, SectionValue, BoundGroupMethod, ShapeValue)):
            return type(v).__name__.replace("Value", "").lower()
        return f"{type(v).__name__} {v!r}" if len(repr(v)) < 60 else type(v).__name__


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


def _attr_name_node(node: ast.Attribute) -> ast.AST:
    """A node at the name of ``node``'s attribute (``ad`` in ``pl.ad``), so a caret lands under it."""
    line, col = getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)
    if line is None or col is None or col < len(node.attr):
        return node
    return ast.Name(id=node.attr, ctx=ast.Load(), lineno=line, col_offset=col - len(node.attr))


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


def inline_from_function(fn: Callable, parser: FunctionParser) -> InlineFunction:
    cache = getattr(fn, "__pypto_inline_ast__", None)
    if cache is None:
        node, src = parse_function(fn)
        cache = (node, src)
        try:
            fn.__pypto_inline_ast__ = cache  # type: ignore[attr-defined]
        except AttributeError:
            pass
    node, src = cache
    return InlineFunction(node, src, fn.__globals__, closure_vars(fn), fn.__name__)


# ---- kernel entry ------------------------------------------------------------------------------


def parse_kernel(fn: Callable, arch: ArchModel, constexprs: dict[str, Any] | None = None,
                 fold: dict[str, Any] | None = None, pipeline: Any = None,
                 dtypes: dict[str, Any] | None = None) -> KernelIR:
    """Parse ``fn``'s source into a ``KernelIR``. ``constexprs`` gives values of ``pl.Constexpr``
    parameters; ``fold`` adds extra compile-time names (TilingKey fields); ``pipeline`` (a
    ``PipelineConfig``) first rewrites the kernel's AST with the pipeline transform."""
    node, src = parse_function(fn)
    ctx = KernelContext(arch, fn.__name__)
    ctx.dtype_bindings = dict(dtypes or {})
    scope = Scope(fn.__globals__, closure_vars(fn))
    generated = None
    if pipeline is not None:
        from pypto_pro.frontend.pipeline_transform import transform
        generated = transform(node, src, scope, pipeline)
        node = ast.parse(generated.kernel_text).body[0]  # type: ignore[assignment]
        src = SourceFile(src.path, 0, 0, generated.line_map)
    parser = FunctionParser(ctx, src, scope)
    params = kernel_params(parser, fn, node, constexprs or {})
    if fold:
        scope.locals.update(fold)
    try:
        parser.visit_body(node.body)
    except _Return:
        pass
    except (PyptoError, InternalCompilerError):
        raise
    except RecursionError:
        raise CompileError("kernel nests too deeply to compile", src.loc(node)) from None
    if not ctx.sections_seen and any(True for _ in ctx.builder.root):
        raise CompileError("the kernel has no pl.section_vector() / pl.section_cube(); device code must be inside one",
                           src.loc(node))
    constants = {k: v for k, v in (constexprs or {}).items()}
    constants.update(fold or {})
    kernel = KernelIR(fn.__name__, params, ctx.builder.root, ctx.buffers, src.path, constants=constants,
                      param_vars=ctx.param_vars, subblocks=2 if SectionKind.CUBE in ctx.sections_seen else 1)
    kernel.generated = generated
    return kernel


def kernel_params(parser: FunctionParser, fn: Callable, node: ast.FunctionDef,
                  constexprs: dict[str, Any]) -> list[TensorParam | ScalarParam]:
    args = node.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
        parser.fail(node, "kernel parameters must be plain positional parameters")
    if args.defaults:
        parser.fail(args.defaults[0], "kernel parameters cannot have default values")
    try:
        hints = inspect.get_annotations(fn, eval_str=True, locals=closure_vars(fn))
    except Exception as exc:
        parser.fail(node, f"cannot evaluate the kernel's annotations: {exc}")
    params: list[TensorParam | ScalarParam] = []
    for i, a in enumerate(args.args):
        ann = hints.get(a.arg)
        if isinstance(ann, TensorType):
            if isinstance(ann.dtype, DTypeVar):
                if ann.dtype.name not in parser.ctx.dtype_bindings:
                    parser.fail(a, f"parameter '{a.arg}' has dtype variable {ann.dtype.name}, which no launch "
                                   f"argument (or compile(dtypes=...)) binds")
                ann = ann.bind(parser.ctx.dtype_bindings)
            p = TensorParam(a.arg, ann, i)
            parser.scope.locals[a.arg] = TensorValue(p)
        elif ann is int or ann is float:
            p = ScalarParam(a.arg, ann.__name__, i)
            parser.scope.locals[a.arg] = parser.ctx.param_vars.setdefault(a.arg, Var(a.arg, ann.__name__))
        elif ann is Constexpr:
            p = ScalarParam(a.arg, "constexpr", i)
            if a.arg in constexprs:
                parser.scope.locals[a.arg] = constexprs[a.arg]
            else:
                parser.ctx.unbound_constexprs.add(a.arg)
        else:
            parser.fail(a, f"parameter '{a.arg}' needs an annotation: pl.Tensor[[dims], dtype], int, float "
                           "or pl.Constexpr")
        params.append(p)
    return params
