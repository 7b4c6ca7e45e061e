"""Compile-time values of a ``@pl.vector_function`` body: registers, UB pointers, address registers,
and the state of the body being compiled."""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from pypto_pro.frontend.values import FrontendObject
from pypto_pro.ir.expr import Expr, Var
from pypto_pro.ir.nodes import Stmt, TileRef
from pypto_pro.ir.vf import MASK, VReg
from pypto_pro.language.dtypes import DataType


@dataclass(frozen=True, eq=False)
class RegValue(FrontendObject):
    """A register, read as ``dtype`` (its declared dtype, or another one through ``vf.bit_cast``)."""

    reg: VReg
    dtype: DataType | None

    @property
    def is_mask(self) -> bool:
        return self.reg.kind == MASK

    def describe(self) -> str:
        kind = {"vreg": "register", "mask": "mask register", "align": "unaligned register"}[self.reg.kind]
        dt = f" of {self.dtype.short}" if self.dtype is not None and self.reg.kind == "vreg" else ""
        return f"{kind} '{self.reg.name}'{dt}"


@dataclass(frozen=True, eq=False)
class TilePtr(FrontendObject):
    """A UB pointer into tile argument ``index`` of the call: ``offset`` elements of the tile dtype
    past the tile's start (``tile + k`` / ``tile[k]`` move it; a post-update load / store moves a
    cursor of its own, see :class:`VfState`)."""

    index: int
    ref: TileRef
    offset: Expr

    @property
    def dtype(self) -> DataType:
        return self.ref.tile_type.dtype

    def describe(self) -> str:
        return f"tile '{self.ref.buffer.name}'"

    def frontend_getattr(self, p, node: ast.AST, attr: str) -> Any:
        tt = self.ref.tile_type
        if attr == "dtype":
            return tt.dtype
        if attr == "shape":
            return list(tt.shape)
        p.fail(node, f"a tile inside a vector function has .dtype and .shape, not '{attr}'")


@dataclass(frozen=True, eq=False)
class AddrValue(FrontendObject):
    """An address register (``vf.create_addr_reg``): ``offset`` elements of ``dtype``."""

    offset: Expr
    dtype: DataType

    def describe(self) -> str:
        return "address register"


@dataclass
class VfState:
    """What the compiler keeps while it compiles one VF call (the outermost one and every VF it
    inlines): the call's tile arguments, the post-update cursors, the assignment being compiled
    (its targets name the destination registers) and the body's first statements (where cursors
    are initialised)."""

    name: str
    tiles: list[TileRef] = field(default_factory=list)
    written: set[int] = field(default_factory=set)
    read: set[int] = field(default_factory=set)
    cursors: dict[tuple, Var] = field(default_factory=dict)  # (tile, pointer key) -> post-update cursor (elements)
    body: list[Stmt] = field(default_factory=list)           # the body's top-level statements (cursor inits)
    prologue: list[Stmt] = field(default_factory=list)
    params: set[int] = field(default_factory=set)           # Var uids bound at entry (scalar params)
    target: ast.expr | None = None                          # the assignment's target being compiled
    target_call: ast.Call | None = None                     # ... and its value (the vf.* call)
    temps: int = 0
    ar_set: bool = False                                     # a vf.squeeze(STORE_REG) has set the AR register
