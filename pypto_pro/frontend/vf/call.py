"""Calls of ``@pl.vector_function`` functions.

From tile code (a ``pl.section_vector()``) a call becomes one ``VfCall`` on the V pipe: its tile
arguments are UB pointers inside the body, its run-time scalar arguments are bound to scalar
parameters, compile-time values are folded. As in the real PyPTO Pro the arguments are positional
(defaults allowed) and, with ``auto_mutex=True``, every tile-group tile passed in is locked around
the call on the V pipe (the ``auto_sync`` pass does it: a ``VfCall`` touches all its tile
arguments). Called inside another VF body, a vector function is inlined into it.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any, Callable

from pypto_pro.frontend.context import _Return
from pypto_pro.frontend.scalars import is_const, is_scalar_value
from pypto_pro.frontend.scope import Scope
from pypto_pro.frontend.values import GroupValue, TensorValue, TileValue
from pypto_pro.frontend.vf.values import TilePtr, VfState
from pypto_pro.ir.expr import Const, Expr, convert
from pypto_pro.ir.nodes import TileRef
from pypto_pro.ir.vf import VfCall
from pypto_pro.language.dtypes import DataType
from pypto_pro.language.enums import MemorySpace, PipeType, SectionKind

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser


def is_vector_function(fn: Any) -> bool:
    return bool(getattr(fn, "__pypto_vector_function__", False))


def call(p: "FunctionParser", node: ast.Call, fn: Callable, args: list, kwargs: dict) -> None:
    """``my_vf(tile_a, tile_b, n)``: a VF call from tile code, or an inlined one inside a VF body."""
    from pypto_pro.frontend.calls import inline_from_function
    from pypto_pro.frontend.vf.body import VfBodyParser
    if kwargs:
        p.fail(node, f"a call of @pl.vector_function '{fn.__name__}' takes positional arguments only "
                     "(as in the real PyPTO Pro)")
    inline = inline_from_function(fn, p)
    params = _params(p, node, inline, args)
    if isinstance(p, VfBodyParser):
        _inline_into(p, node, inline, params)
        return None
    if p.ctx.section is not SectionKind.VECTOR:
        where = "outside a section" if p.ctx.section is None else "in pl.section_cube()"
        p.fail(node, f"@pl.vector_function '{fn.__name__}' is called {where}; call it inside "
                     "pl.section_vector() (it runs on the Vector core's V pipe)")
    if p.ctx.arch.name != "a5":
        p.fail(node, f"@pl.vector_function needs the register-level Vector unit of Ascend 950 (a5); this kernel "
                     f"is compiled for {p.ctx.arch.name}", kind="unsupported")
    state = VfState(fn.__name__)
    scope = Scope(inline.globals, inline.closure, p.ctx.consts)
    scalars: list[Expr] = []
    param_vars = []
    for (name, ann), (value, arg_node) in params:
        bound = _bind_outer(p, state, name, ann, value, arg_node, fn.__name__)
        if isinstance(bound, tuple):  # a run-time scalar: (parameter variable, caller's value)
            var, expr = bound
            param_vars.append(var)
            scalars.append(expr)
            state.params.add(var.uid)
            scope.locals[name] = var
        else:
            scope.locals[name] = bound
    _reserve_vf(scope)
    body_parser = VfBodyParser(p.ctx, inline.src, scope, state)
    with p.ctx.builder.block() as body:
        state.body = body
        _visit(body_parser, inline.node)
    if not state.tiles:
        p.fail(node, f"@pl.vector_function '{fn.__name__}' is called without a tile argument; a vector function "
                     "works on UB tiles passed to it")
    body[:0] = state.prologue
    tiles = tuple(state.tiles)
    attrs = {"api": f"vector_function({fn.__name__!r})", "vf": fn.__name__, "access_scalars": True}
    op = VfCall("vf_call", PipeType.V, tiles[0], tiles[1:], tuple(scalars), attrs,
                p.loc(node), body=body, params=tuple(param_vars), tiles=tiles,
                written=frozenset(state.written), read=frozenset(state.read))
    p.ctx.builder.emit(op)
    return None


def _params(p: "FunctionParser", node: ast.Call, inline, args: list) -> list:
    """((name, annotation node), (value, argument node)) per parameter, defaults filled in."""
    fdef = inline.node
    a = fdef.args
    if a.vararg or a.kwarg or a.kwonlyargs:
        p.fail(node, f"@pl.vector_function '{inline.name}' may only have positional parameters (with defaults)")
    params = a.posonlyargs + a.args
    required = len(params) - len(a.defaults)
    if not required <= len(args) <= len(params):
        p.fail(node, f"'{inline.name}' expects {required} to {len(params)} positional argument(s), got {len(args)}")
    out = []
    for i, prm in enumerate(params):
        if i < len(args):
            out.append(((prm.arg, prm.annotation), (args[i], node.args[i])))
        else:
            d = a.defaults[i - required]
            out.append(((prm.arg, prm.annotation), (p.eval_in(inline, d), d)))
    return out


def _bind_outer(p: "FunctionParser", state: VfState, name: str, ann: ast.expr | None, value: Any,
                arg_node: ast.AST, fname: str) -> Any:
    """What parameter ``name`` is inside the body of an outermost VF call."""
    if isinstance(value, TileValue):
        if value.ref.buffer.space is not MemorySpace.Vec:
            p.fail(arg_node, f"'{fname}' parameter '{name}': a vector function reads and writes UB (Vec) tiles, "
                             f"got a {value.ref.buffer.space.name} tile")
        return TilePtr(_tile_index(state, value.ref), value.ref, Const(0))
    if isinstance(value, (GroupValue, TensorValue)):
        p.fail(arg_node, f"'{fname}' parameter '{name}': pass a tile (group.next() / a slot), not "
                         f"{p.describe(value)}")
    dtype = _annotated_dtype(p, ann)
    if isinstance(value, Expr):
        var = p.new_var(name, dtype or value.dtype)
        return var, convert(value, var.dtype)
    if is_scalar_value(value) and dtype is not None and is_const(value):
        return Const(value, dtype) if not isinstance(value, bool) else value
    return value


def _annotated_dtype(p: "FunctionParser", ann: ast.expr | None) -> DataType | None:
    if ann is None:
        return None
    try:
        v = p.eval(ann)
    except Exception:  # an annotation we do not read (the real parser reads scalar dtypes only)
        return None
    return v if isinstance(v, DataType) and v.scalar_ok else None


def _tile_index(state: VfState, ref: TileRef) -> int:
    for i, t in enumerate(state.tiles):
        if t.buffer is ref.buffer and (t.slot is ref.slot or (isinstance(t.slot, Const) and isinstance(ref.slot, Const)
                                                               and t.slot.value == ref.slot.value)):
            return i
    state.tiles.append(ref)
    return len(state.tiles) - 1


def _inline_into(p, node: ast.Call, inline, params: list) -> None:
    """A VF called inside a VF body: its statements join the caller's body."""
    from pypto_pro.frontend.vf.body import VfBodyParser
    if p.ctx.inline_depth > 32:
        p.fail(node, "vector functions nest deeper than 32 calls (recursion?)")
    scope = Scope(inline.globals, inline.closure, p.ctx.consts)
    from pypto_pro.frontend.scalars import assigned_names
    reassigned = assigned_names(inline.node.body)
    for (name, _ann), (value, _arg) in params:
        if isinstance(value, Expr) and name in reassigned:
            value = p.scalar_copy(node, name, value)
        scope.locals[name] = value
    _reserve_vf(scope)
    sub = VfBodyParser(p.ctx, inline.src, scope, p.vf)
    p.ctx.inline_depth += 1
    try:
        _visit(sub, inline.node)
    finally:
        p.ctx.inline_depth -= 1


def _reserve_vf(scope: Scope) -> None:
    """``vf`` is the VF namespace inside a vector function, with no import (the real reserved name)."""
    from pypto_pro.language.vf import Vf
    if "vf" not in scope.locals:
        scope.locals["vf"] = Vf


def _visit(parser, fdef: ast.FunctionDef) -> None:
    try:
        parser.visit_body(fdef.body)
    except _Return as ret:
        if ret.value is not None:
            parser.fail(fdef, "a @pl.vector_function returns nothing (it writes its results to tiles)")
