"""Expressions of kernel code: names, attributes, subscripts, operators, comparisons, conditionals."""
from __future__ import annotations

import ast
from typing import Any

from pypto_pro.frontend import intrinsics, subview
from pypto_pro.ops import resources
from pypto_pro.frontend.diagnostics import did_you_mean
from pypto_pro import language
from pypto_pro.frontend.scalars import is_const, is_scalar_value
from pypto_pro.frontend.scope import MISSING
from pypto_pro.frontend.statements import _not_supported
from pypto_pro.frontend.tuple_index import runtime_index
from pypto_pro.frontend.values import (BoundGroupMethod, FrontendObject, GroupValue, ShapeValue, TensorValue,
                                       TileValue)
from pypto_pro.ir.expr import Expr, TensorDim
from pypto_pro.ir.nodes import TensorParam
from pypto_pro.language.intrinsic import intrinsic_name
from pypto_pro.language.types import DTypeVar

_UNSUPPORTED_EXPRS = {
    ast.Lambda: "lambda", ast.ListComp: "list comprehensions", ast.SetComp: "set comprehensions",
    ast.DictComp: "dict comprehensions", ast.GeneratorExp: "generator expressions", ast.Yield: "yield",
    ast.YieldFrom: "yield from", ast.Await: "await", ast.NamedExpr: "assignment expressions (:=)",
    ast.Starred: "starred arguments", ast.JoinedStr: "f-strings",
}
# displays of Python values a kernel cannot hold: the real parser builds the value and then rejects its type
_UNSUPPORTED_VALUES = {ast.Set: "set", ast.Dict: "dict"}


class ExpressionParser:
    """The expression evaluators of :class:`pypto_pro.frontend.parser.FunctionParser`."""

    def eval(self, node: ast.expr) -> Any:
        for kind, what in _UNSUPPORTED_EXPRS.items():
            if isinstance(node, kind):
                self.fail(node, _not_supported(what), kind="unsupported")
        for kind, what in _UNSUPPORTED_VALUES.items():
            if isinstance(node, kind):
                self.fail(node, f"Unsupported closure variable type: {what} ({what} displays are not supported in "
                                "kernels; values must be int, float, bool, list, tuple, tiles or tensors)", kind="type")
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
        if not is_const(base) and subview.is_slice_subscript(node):  # tile[r0:r1, c0:c1]
            return subview.tile_subview(self, node, base)
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
        if isinstance(base, (TensorValue, TileValue)):
            return self.element_op(node, "getval", base, index, None, node)
        if isinstance(base, ShapeValue):
            return self.shape_dim(node, base.param, index)
        if isinstance(base, GroupValue):
            return resources.group_index(self, node, base, index)
        if isinstance(base, (list, tuple)) and isinstance(index, Expr):
            return runtime_index(self, node, base, index)  # frontend/tuple_index.py
        if isinstance(base, (list, tuple)) and is_const(index):  # elements may be run-time values
            return self.py_call(node, lambda: base[index])
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

    # ---- element access (the real getval / setval sugar) ------------------------------------------

    def element_access(self, target: ast.Subscript, op: str, value: Any, node: ast.AST) -> Any:
        """``x[i, j]`` / ``x[i, j] = v`` on a tensor or tile: ``pl.getval`` / ``pl.setval`` at the
        row-major element offset of the indices (one index per axis)."""
        base = self.eval(target.value)
        if not isinstance(base, (TensorValue, TileValue)):
            self.fail(target, f"{self.describe(base)} does not support item assignment")
        index = self.eval(target.slice)
        return self.element_op(target, op, base, index, value, node)

    def element_op(self, target: ast.Subscript, op: str, base: Any, index: Any, value: Any, node: ast.AST) -> Any:
        indices = list(index) if isinstance(index, tuple) else [index]
        if isinstance(base, TensorValue):
            dims: list[Any] = [d if isinstance(d, int) else TensorDim(base.param.name, a)
                               for a, d in enumerate(base.param.type.dims)]
        else:
            dims = list(base.ref.tile_type.shape)
        if len(indices) != len(dims):
            self.fail(target.slice, f"{self.describe(base)} has rank {len(dims)}; index it with {len(dims)} "
                                    f"indices, got {len(indices)}")
        for i in indices:
            if not is_scalar_value(i) or isinstance(i, float) or (isinstance(i, Expr) and not i.dtype.is_int()):
                self.fail(target.slice, f"an element index must be an integer, got {self.describe(i)}")
        offset: Any = 0
        for i, d in zip(indices, dims):
            offset = self.add_int(target, self.mul_int(target, offset, d), i)
        fn = getattr(language, op, None)
        if intrinsic_name(fn) != op:
            self.fail(target, f"element {'assignment' if op == 'setval' else 'access'} x[...] is pl.{op}(), "
                              "which is not supported yet in this release")
        args = [base, offset] + ([value] if op == "setval" else [])
        call = ast.copy_location(ast.Call(func=target.value, args=[target.value, target.slice] +
                                          ([node.value] if op == "setval" else []), keywords=[]), target)
        return intrinsics.call(self, call, op, fn, args, {})

    def add_int(self, node: ast.AST, a: Any, b: Any) -> Any:
        return a + b if is_const(a) and is_const(b) else self.scalar_binop(node, "+", a, b)

    def mul_int(self, node: ast.AST, a: Any, b: Any) -> Any:
        return a * b if is_const(a) and is_const(b) else self.scalar_binop(node, "*", a, b)


def _attr_name_node(node: ast.Attribute) -> ast.AST:
    """A node at the name of ``node``'s attribute (``ad`` in ``pl.ad``), so a caret lands under it."""
    line, col = getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)
    if line is None or col is None or col < len(node.attr):
        return node
    return ast.Name(id=node.attr, ctx=ast.Load(), lineno=line, col_offset=col - len(node.attr))


