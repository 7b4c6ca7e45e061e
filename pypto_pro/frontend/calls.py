"""Calls in kernel code: ``pl.*`` intrinsics, tile-group methods, helpers, compile-time Python.

The real PyPTO Pro's rule for helpers: a plain Python function called by its bare name is inlined
(positional arguments, defaults, ``return`` anywhere; ``@pl.inline`` is accepted and changes
nothing). Other callables (builtins, classes, ``module.function``, methods of compile-time objects)
run while compiling, on compile-time arguments; so does a helper whose body cannot be compiled as
kernel code when all its arguments are compile-time values (as the real parser falls back to
evaluating the call in Python). ``min`` / ``max`` are the scalar ``pl.min`` / ``pl.max``.
"""
from __future__ import annotations

import ast
import builtins
import inspect
from typing import TYPE_CHECKING, Any, Callable

from pypto_pro.errors import CompileError
from pypto_pro.frontend import intrinsics, simt
from pypto_pro.ops import resources
from pypto_pro.frontend.control_flow import HelperReturns
from pypto_pro.frontend.context import _Return
from pypto_pro.frontend.diagnostics import did_you_mean
from pypto_pro.frontend.merge import MergeError, merge_values
from pypto_pro.frontend.scalar_helpers import scalar_minmax
from pypto_pro.frontend.scalars import assigned_names, is_const
from pypto_pro.frontend.scope import Scope, closure_vars
from pypto_pro.frontend.source import parse_function
from pypto_pro.frontend.values import BoundGroupMethod, InlineFunction
from pypto_pro.ir.expr import Const, Expr
from pypto_pro.ir.nodes import Assign, Break, While
from pypto_pro.language import ops as _ops
from pypto_pro.language.intrinsic import intrinsic_name

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

_MINMAX = {builtins.min: "min", builtins.max: "max", _ops.min: "min", _ops.max: "max"}


class CallParser:
    """The call evaluator of :class:`pypto_pro.frontend.parser.FunctionParser`."""

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
        routed = simt.route_call(self, node, func, args, kwargs)
        if routed is not simt.NOT_SIMT:
            return routed
        minmax = _MINMAX.get(func) if _hashable(func) else None
        if minmax is not None:
            return scalar_minmax(self, node, minmax, args, kwargs)
        name = intrinsic_name(func)
        if name is not None:
            return intrinsics.call(self, node, name, func, args, kwargs)
        if isinstance(func, BoundGroupMethod):
            return resources.group_method(self, node, func, args, kwargs)
        if isinstance(func, InlineFunction):
            return self.inline_call(node, func, args, kwargs)
        if getattr(func, "__pypto_vector_function__", False):  # @pl.vector_function: a VF call (frontend/vf)
            from pypto_pro.frontend.vf.call import call as vf_call
            return vf_call(self, node, func, args, kwargs)
        if getattr(func, "__pypto_kernel__", False):
            self.fail(node, "a @pl.jit kernel cannot be called from another kernel; call a plain helper function")
        if getattr(func, "__pypto_inline__", False) or (isinstance(node.func, ast.Name) and _is_helper(func)):
            return self.helper_call(node, func, args, kwargs)
        if func is builtins.range and not all(is_const(a) for a in args):
            self.fail(node, "range() with run-time bounds: use pl.range(start, stop, step)")
        if not callable(func):
            self.fail(node.func, f"{self.describe(func)} is not callable")
        if not (all(is_const(a) for a in args) and all(is_const(v) for v in kwargs.values())):
            fname = getattr(func, "__name__", repr(func))
            self.fail(node, f"'{fname}' runs at compile time (only a plain function called by its bare name is "
                            "inlined into the kernel), so it cannot take run-time values or tiles")
        return self.py_call(node, func, *args, **kwargs)

    # ---- helpers ------------------------------------------------------------------------------

    def helper_call(self, node: ast.Call, func: Callable, args: list, kwargs: dict) -> Any:
        """Inline a Python function; if its body is not kernel code and every argument is known while
        compiling, run it instead (the real parser's fallback)."""
        constant = all(is_const(a) for a in args) and all(is_const(v) for v in kwargs.values())
        try:
            fn = inline_from_function(func, self)
        except CompileError:
            if constant:
                return self.py_call(node, func, *args, **kwargs)
            raise
        if not constant:
            return self.inline_call(node, fn, args, kwargs)
        saved = self.snapshot()
        try:
            return self.inline_call(node, fn, args, kwargs)
        except CompileError as exc:
            self.restore(saved)
            try:
                return func(*args, **kwargs)
            except Exception:
                raise exc from None

    def snapshot(self) -> tuple:
        c = self.ctx
        return (c.builder.current, len(c.builder.current), len(c.buffers), dict(c.mutex_owner),
                dict(c.cross_owner), set(c.sections_seen), dict(self.scope.locals))

    def restore(self, saved: tuple) -> None:
        c = self.ctx
        block, n, nbuf, mutex, cross, sections, local = saved
        del block[n:]
        del c.buffers[nbuf:]
        c.mutex_owner, c.cross_owner, c.sections_seen = mutex, cross, sections
        self.scope.locals = local

    def inline_call(self, node: ast.Call, fn: InlineFunction, args: list, kwargs: dict) -> Any:
        if self.ctx.inline_depth > 32:
            self.fail(node, "inline helpers nest deeper than 32 calls (recursion?)")
        fdef = fn.node
        params = [p.arg for p in fdef.args.posonlyargs + fdef.args.args]
        if fdef.args.vararg or fdef.args.kwarg or fdef.args.kwonlyargs:
            self.fail(node, f"helper '{fn.name}' may only have plain positional parameters (with defaults) to be "
                            "inlined into a kernel")
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
        scope = Scope(fn.globals, fn.closure, self.ctx.consts)
        reassigned = assigned_names(fdef.body)
        for name, value in bound.items():
            if name in reassigned and isinstance(value, Expr):  # the helper's own copy: the caller's stays
                value = self.scalar_copy(node, name, value)
            scope.locals[name] = value
        sub = type(self)(self.ctx, fn.src, scope, in_inline=True)
        sub.helper_ret = HelperReturns()
        block, start = self.ctx.builder.current, len(self.ctx.builder.current)
        self.ctx.inline_depth += 1
        final: Any = None
        try:
            sub.visit_body(fdef.body)
            reaches_end = not sub.terminated
        except _Return as ret:
            final, reaches_end = ret.value, True
        finally:
            self.ctx.inline_depth -= 1
        if not sub.helper_ret.sites:
            return final
        return self.lower_returns(node, fn, sub.helper_ret, block, start, final, reaches_end)

    def scalar_copy(self, node: ast.AST, name: str, value: Expr) -> Expr:
        var = self.new_var(name, value.dtype)
        self.ctx.builder.emit(Assign(var, value, self.loc(node)))
        return var

    def lower_returns(self, node: ast.Call, fn: InlineFunction, ret: HelperReturns, block: list, start: int,
                      final: Any, reaches_end: bool) -> Any:
        """The helper's statements since ``start`` go into a once-through ``while True`` loop whose
        every run-time ``return`` assigns the merged result and breaks out (the real lowering)."""
        loc = self.loc(node)
        values = [s.value for s in ret.sites] + ([final] if reaches_end else [])
        try:
            merged, assigns = merge_values(self, f"{fn.name}_result", values, loc, first_wins=False)
        except MergeError as exc:
            self.fail(node, f"helper '{fn.name}' returns {exc.args[0]} on one path and {exc.args[1]} on another; "
                            "its returns must agree (scalars, tiles of one group, or equal constants)")
        for site, extra in zip(ret.sites, assigns):
            at = next(i for i, s in enumerate(site.block) if s is site.marker)
            flag = [Assign(ret.flag, Const(True), site.marker.loc)] if ret.flag is not None else []
            site.block[at:at + 1] = [*extra, *flag, Break(site.marker.loc)]
        body = block[start:]
        del block[start:]
        if ret.flag is not None:
            body.insert(0, Assign(ret.flag, Const(False), loc))
        if reaches_end:
            body.extend(assigns[-1])
        body.append(Break(loc))
        block.append(While(Const(True), body, loc))
        return merged

    def eval_in(self, fn: InlineFunction, node: ast.expr) -> Any:
        return type(self)(self.ctx, fn.src, Scope(fn.globals, fn.closure, self.ctx.consts), in_inline=True).eval(node)


def _hashable(v: Any) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True


def _is_helper(func: Any) -> bool:
    """A plain Python function (``def``): the real parser inlines it when called by its bare name."""
    return inspect.isfunction(func) and func.__name__ != "<lambda>"


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
