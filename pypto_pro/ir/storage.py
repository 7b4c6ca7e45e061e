"""Scalar storage of the IR: the fields of ``pl.struct`` / ``pl.struct_array`` objects and of the
kernel's tiling dataclass, read and written with (possibly run-time) indices.

A :class:`StructStorage` is one object (or array of objects) in the scalar unit's memory: a C
struct type name, a slot count and its fields. Each field is a :class:`ScalarArray` of
``slots x width`` scalars of one type (``width`` None for a scalar field). Kernel code reads a
field element with :class:`ArrayLoad` (an expression), writes one with :class:`ArrayStore` and
(re)initialises every slot of a field with :class:`ArrayInit` where ``pl.struct(...)`` runs.
The tiling dataclass is a one-slot storage of kind ``"tiling"`` whose values the launch provides
(:class:`TilingParam`); it is read-only.

Indices the frontend could check are in range; run-time ones are checked where they are used
(the simulator reports a located fault; the C++ backend indexes without a check, as C does).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from pypto_pro.errors import SourceLocation
from pypto_pro.ir.expr import Expr, walk
from pypto_pro.language.dtypes import DT_BOOL, DT_FP32, DT_INT32, DT_INT64, DataType
from pypto_pro.ir.nodes import (Assign, For, GMRef, If, SetValidShape, StageSync, Stmt, SyncOp, TileOp, TileRef,
                                walk_stmts)

_uid = itertools.count()

SCALAR_TYPES = ("int", "float", "bool")


@dataclass(eq=False)
class StructStorage:
    """One struct object, or ``slots`` of them (``is_array``), or the tiling object (``kind``)."""

    type_name: str          # the C struct type (pl.struct's "Name"; the dataclass name for tiling)
    var: str                # the DSL variable it was created for (C identifier base)
    slots: int
    is_array: bool
    kind: str = "local"     # "local" (pl.struct / struct_array) | "tiling" (the tiling parameter)
    fields: dict[str, "ScalarArray"] = field(default_factory=dict)
    param: str | None = None  # tiling: the kernel parameter's name
    loc: SourceLocation | None = None
    uid: int = field(default_factory=lambda: next(_uid))

    @property
    def read_only(self) -> bool:
        return self.kind == "tiling"


@dataclass(eq=False)
class ScalarArray:
    """One field of a :class:`StructStorage`: ``slots x (width or 1)`` scalars of type ``ty``."""

    storage: StructStorage
    field: str
    ty: str                 # "int" | "float" | "bool"
    width: int | None       # elements of an array field; None for a scalar field
    cbits: int = 32         # width of an int in the C struct (tiling ints are int64_t)
    uid: int = field(default_factory=lambda: next(_uid))

    @property
    def dtype(self) -> DataType:
        """The scalar dtype of an element (its C type in the struct)."""
        if self.ty == "float":
            return DT_FP32
        if self.ty == "bool":
            return DT_BOOL
        return DT_INT64 if self.cbits == 64 else DT_INT32

    @property
    def per_slot(self) -> int:
        return self.width or 1

    @property
    def size(self) -> int:
        return self.storage.slots * self.per_slot

    @property
    def label(self) -> str:
        return f"{self.storage.var}.{self.field}"


@dataclass(frozen=True, eq=False)
class ArrayLoad(Expr):
    """``s.f`` / ``s.f[elem]`` / ``arr[slot].f[elem]``: one element of a field (``elem`` None for
    a scalar field)."""

    array: ScalarArray
    slot: Expr
    elem: Expr | None = None
    loc: SourceLocation | None = None

    @property
    def dtype(self) -> DataType:  # type: ignore[override]
        return self.array.dtype

    def children(self) -> tuple[Expr, ...]:
        return (self.slot,) if self.elem is None else (self.slot, self.elem)


@dataclass(eq=False)
class ArrayStore(Stmt):
    """Write ``value`` into one element of a field."""

    array: ScalarArray
    slot: Expr
    elem: Expr | None
    value: Expr
    loc: SourceLocation | None = None


@dataclass(eq=False)
class ArrayInit(Stmt):
    """Set every slot of a field to its initial values (one per element of a slot)."""

    array: ScalarArray
    values: tuple[Expr, ...]
    loc: SourceLocation | None = None


@dataclass(frozen=True)
class TilingParam:
    """The kernel's tiling dataclass parameter (always the last one): its class, its fields'
    storage, and the C layout the host packs (``pypto_pro.language.tiling``)."""

    name: str
    cls: Any
    index: int
    storage: StructStorage

    @property
    def ty(self) -> str:
        return "tiling"

    @property
    def type(self) -> Any:
        return self.cls


def storage_exprs(s: Stmt) -> list[Expr]:
    """The expressions a storage statement evaluates (for verifiers and walkers)."""
    if isinstance(s, ArrayStore):
        return [s.slot, s.value] + ([s.elem] if s.elem is not None else [])
    if isinstance(s, ArrayInit):
        return list(s.values)
    return []


def arrays_used(body: list[Stmt]) -> list[ScalarArray]:
    """Every field array a program reads, writes or initialises, in first-use order."""
    seen: dict[int, ScalarArray] = {}

    def note_expr(e: Expr) -> None:
        for sub in walk(e):
            if isinstance(sub, ArrayLoad):
                seen.setdefault(sub.array.uid, sub.array)

    for s in walk_stmts(body):
        if isinstance(s, (ArrayStore, ArrayInit)):
            seen.setdefault(s.array.uid, s.array)
        for e in stmt_exprs(s):
            note_expr(e)
    return list(seen.values())


def stmt_exprs(s: Stmt) -> list[Expr]:
    """Every scalar expression a statement evaluates (any statement kind)."""
    if isinstance(s, Assign):
        return [s.value]
    if isinstance(s, For):
        return [s.start, s.stop, s.step]
    if isinstance(s, If):
        return [s.cond]
    if isinstance(s, TileOp):
        out: list[Expr] = []
        for o in (s.dst, *s.srcs):
            if isinstance(o, TileRef):
                out.append(o.slot)
            elif isinstance(o, GMRef):
                out.extend(o.offsets)
                out.extend(getattr(o.param, "view_exprs", lambda: ())())
        return out + list(s.scalars)
    if isinstance(s, SetValidShape):
        return [s.rows, s.cols] + ([s.slot] if s.slot is not None else [])
    if isinstance(s, SyncOp):
        return [s.event] if s.event is not None else []
    if isinstance(s, StageSync):
        return [s.slot]
    return storage_exprs(s)
