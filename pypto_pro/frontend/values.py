"""Compile-time values the frontend manipulates besides plain Python constants and IR scalars."""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from pypto_pro.frontend.diagnostics import SourceFile
from pypto_pro.ir.expr import Expr, Var
from pypto_pro.ir.nodes import Buffer, TensorParam, TileRef
from pypto_pro.language.enums import SectionKind


class FrontendObject:
    """Base of run-time objects defined outside this module (structs, tuples, tiling values, ...):
    never compile-time constants; kernel code's attribute and subscript reads and writes on them
    go to their ``frontend_getattr`` / ``frontend_setattr`` / ``frontend_getitem`` /
    ``frontend_setitem`` methods (each takes the parser and the AST node first)."""

    def describe(self) -> str:
        return type(self).__name__


@dataclass(frozen=True)
class TensorValue:
    """A tensor parameter inside the kernel."""

    param: TensorParam


@dataclass(frozen=True)
class ShapeValue:
    """``tensor.shape``: indexing gives a constant (static dim) or a ``TensorDim`` expression."""

    param: TensorParam


@dataclass(frozen=True)
class TileValue:
    """A tile: a buffer plus its ring slot (a constant or a run-time scalar)."""

    ref: TileRef


@dataclass(eq=False)
class GroupValue:
    """A tile group; ``counter`` is the run-time ring position (slot of the last ``next()``)."""

    buffer: Buffer
    counter: Var
    next_sites: list[ast.AST] = field(default_factory=list)


@dataclass(frozen=True)
class BoundGroupMethod:
    group: GroupValue
    name: str


@dataclass(frozen=True)
class SectionValue:
    kind: SectionKind


@dataclass(frozen=True)
class RangeValue:
    """``pl.range(start, stop, step)``: a run-time loop."""

    start: Any
    stop: Any
    step: Any


@dataclass(eq=False)
class InlineFunction:
    """A ``@pl.inline`` helper: its AST, its source file and the scope it closes over."""

    node: ast.FunctionDef
    src: SourceFile
    globals: dict[str, Any]
    closure: dict[str, Any]
    name: str


def is_scalar(v: Any) -> bool:
    return isinstance(v, Expr) or (isinstance(v, (int, float)) and not isinstance(v, bool)) or isinstance(v, bool)
