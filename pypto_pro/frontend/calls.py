"""Calls in kernel code: ``pl.*`` intrinsics, tile-group methods, inline helpers, compile-time Python."""
from __future__ import annotations

import ast
import builtins
from typing import TYPE_CHECKING, Any, Callable

from pypto_pro.frontend import intrinsics
from pypto_pro.ops import resources
from pypto_pro.frontend.context import _Return
from pypto_pro.frontend.diagnostics import did_you_mean
from pypto_pro.frontend.scalars import _expr, is_const, is_scalar_value
from pypto_pro.frontend.scope import Scope, closure_vars
from pypto_pro.frontend.source import parse_function
from pypto_pro.frontend.values import BoundGroupMethod, InlineFunction
from pypto_pro.ir.expr import BinOp, Expr
from pypto_pro.language.intrinsic import intrinsic_name

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser


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
        name = intrinsic_name(func)
        if name is not None:
            return intrinsics.call(self, node, name, func, args, kwargs)
        if isinstance(func, BoundGroupMethod):
            return resources.group_method(self, node, func, args, kwargs)
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
        sub = type(self)(self.ctx, fn.src, scope, in_inline=True)
        self.ctx.inline_depth += 1
        try:
            sub.visit_body(fdef.body)
        except _Return as ret:
            return ret.value
        finally:
            self.ctx.inline_depth -= 1
        return None

    def eval_in(self, fn: InlineFunction, node: ast.expr) -> Any:
        return type(self)(self.ctx, fn.src, Scope(fn.globals, fn.closure), in_inline=True).eval(node)



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

