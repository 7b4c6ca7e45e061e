"""What SIMT code sees while it is compiled: its tile and tensor parameters (element access, valid
shape) and the ``x`` / ``y`` / ``z`` thread-context tuples. Each is a ``FrontendObject``: the
expression and statement compilers route attribute reads and subscripts to it."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pypto_pro.frontend.operands import element_node
from pypto_pro.frontend.scalars import is_const, is_scalar_value
from pypto_pro.frontend.values import FrontendObject
from pypto_pro.ir.expr import Const, Expr, convert
from pypto_pro.ir.simt import ElementLoad, ElementStore, SimtParam, ThreadQuery, ValidDim

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

AXES = ("x", "y", "z")


@dataclass(eq=False)
class SimtScope:
    """``ctx.simt`` while SIMT code is compiled: the function's kind (``"vf"`` for a launchable
    function, ``"callee"`` for a helper) and name, and the SIMT functions being compiled (innermost
    last), for the recursion check."""

    kind: str
    name: str
    stack: list


class Dim3Value(FrontendObject):
    """``pl.simt.thread_idx()`` and its siblings: a named tuple of three UINT32 registers."""

    def __init__(self, query: str):
        self.query = query

    def describe(self) -> str:
        return f"pl.simt.{self.query}()"

    def frontend_getattr(self, p: "FunctionParser", node: ast.AST, attr: str) -> Any:
        if attr not in AXES:
            p.fail(node, f"{self.describe()} has no field '{attr}' (it has x, y and z)", kind="unsupported")
        return ThreadQuery(self.query, AXES.index(attr))

    def frontend_setattr(self, p, node, attr, value) -> None:
        p.fail(node, f"{self.describe()} is read-only")

    def frontend_getitem(self, p, node, index) -> Any:
        if isinstance(index, int) and not isinstance(index, bool) and -3 <= index < 3:
            return ThreadQuery(self.query, index % 3)
        p.fail(node, f"{self.describe()} is indexed with 0, 1 or 2 (or read as .x / .y / .z)")

    def frontend_setitem(self, p, node, index, value) -> None:
        p.fail(node, f"{self.describe()} is read-only")


class SimtMemoryValue(FrontendObject):
    """A tile or tensor parameter of SIMT code: ``x[i, j]`` reads one element per thread,
    ``x[i, j] = v`` writes one (row-major offset over its static shape)."""

    def __init__(self, param: SimtParam):
        self.param = param

    def describe(self) -> str:
        return f"SIMT {self.param.kind} parameter '{self.param.name}'"

    def frontend_getattr(self, p: "FunctionParser", node: ast.AST, attr: str) -> Any:
        prm = self.param
        if attr == "shape":
            return tuple(prm.shape)
        if attr == "dtype":
            return prm.dtype
        if attr == "valid_shape" and prm.kind == "tile":
            return (ValidDim(prm, 0), ValidDim(prm, 1))
        have = "shape, dtype, valid_shape" if prm.kind == "tile" else "shape, dtype"
        p.fail(node, f"{self.describe()} has no attribute '{attr}' (it has {have})")

    def frontend_setattr(self, p, node, attr, value) -> None:
        p.fail(node, f"{self.describe()} has no settable attributes")

    def offset(self, p: "FunctionParser", node: ast.Subscript, index: Any) -> Expr:
        prm = self.param
        indices = list(index) if isinstance(index, tuple) else [index]
        rank = len(prm.shape)
        if len(indices) != rank:
            p.fail(node.slice, f"{self.describe()} has rank {rank}; index it with {rank} indices, got {len(indices)}")
        total: Any = 0
        for axis, (i, dim) in enumerate(zip(indices, prm.shape)):
            at = element_node(node.slice, rank, axis)
            if not is_scalar_value(i) or isinstance(i, (bool, float)) or (isinstance(i, Expr) and not i.dtype.is_int()):
                p.fail(at, f"an element index must be an integer, got {p.describe(i)}")
            if is_const(i) and not 0 <= i < dim:
                p.fail(at, f"index {i} is outside axis {axis} of {self.describe()} (size {dim})")
            total = total * dim + i if is_const(total) and is_const(i) else \
                p.add_int(node, p.mul_int(node, total, dim), i)
        return total if isinstance(total, Expr) else Const(total)

    def frontend_getitem(self, p: "FunctionParser", node: ast.Subscript, index: Any) -> Any:
        return ElementLoad(self.param, self.offset(p, node, index), p.loc(node))

    def frontend_setitem(self, p: "FunctionParser", node: ast.Subscript, index: Any, value: Any) -> None:
        offset = self.offset(p, node, index)
        if not is_scalar_value(value):
            p.fail(node, f"{self.describe()} takes a scalar per element, got {p.describe(value)}")
        v = p.scalar_expr(node, value)
        p.ctx.builder.emit(ElementStore(self.param, offset, convert(v, self.param.dtype), p.loc(node)))
