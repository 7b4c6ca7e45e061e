"""Scalar expressions evaluated by the scalar unit: index arithmetic, shapes, block ids."""
from __future__ import annotations

import itertools
from dataclasses import dataclass

_uid = itertools.count()

# Python operator spelling of every binary scalar operator the IR knows.
BIN_OPS = ("+", "-", "*", "//", "%", "/", "<<", ">>", "&", "|", "^", "min", "max")
CMP_OPS = ("<", "<=", ">", ">=", "==", "!=")


class Expr:
    """Base of scalar expressions. ``ty`` is ``"int"``, ``"float"`` or ``"bool"``."""

    ty: str = "int"

    def children(self) -> tuple["Expr", ...]:
        return ()


@dataclass(frozen=True, eq=False)
class Const(Expr):
    value: int | float | bool

    @property
    def ty(self) -> str:  # type: ignore[override]
        if isinstance(self.value, bool):
            return "bool"
        return "float" if isinstance(self.value, float) else "int"


@dataclass(eq=False)
class Var(Expr):
    """A mutable scalar variable of the kernel (a scalar register)."""

    name: str
    ty: str = "int"
    uid: int = -1

    def __post_init__(self) -> None:
        if self.uid < 0:
            self.uid = next(_uid)


@dataclass(frozen=True, eq=False)
class BinOp(Expr):
    op: str
    lhs: Expr
    rhs: Expr

    @property
    def ty(self) -> str:  # type: ignore[override]
        if self.op == "/" or "float" in (self.lhs.ty, self.rhs.ty):
            return "float"
        return "int"

    def children(self) -> tuple[Expr, ...]:
        return (self.lhs, self.rhs)


@dataclass(frozen=True, eq=False)
class UnaryOp(Expr):
    op: str  # "-", "not", "~"
    operand: Expr

    @property
    def ty(self) -> str:  # type: ignore[override]
        return "bool" if self.op == "not" else self.operand.ty

    def children(self) -> tuple[Expr, ...]:
        return (self.operand,)


@dataclass(frozen=True, eq=False)
class Compare(Expr):
    op: str
    lhs: Expr
    rhs: Expr
    ty: str = "bool"

    def children(self) -> tuple[Expr, ...]:
        return (self.lhs, self.rhs)


@dataclass(frozen=True, eq=False)
class BoolOp(Expr):
    op: str  # "and" | "or"
    values: tuple[Expr, ...]
    ty: str = "bool"

    def children(self) -> tuple[Expr, ...]:
        return self.values


@dataclass(frozen=True, eq=False)
class Select(Expr):
    cond: Expr
    if_true: Expr
    if_false: Expr

    @property
    def ty(self) -> str:  # type: ignore[override]
        return "float" if "float" in (self.if_true.ty, self.if_false.ty) else self.if_true.ty

    def children(self) -> tuple[Expr, ...]:
        return (self.cond, self.if_true, self.if_false)


@dataclass(frozen=True, eq=False)
class TensorDim(Expr):
    """``tensor.shape[axis]`` of a dynamic dimension, read from the launch arguments."""

    param: str
    axis: int


# Hardware ids: the block's index and count, the sub-block (AIV) index and count.
SPECIAL_NAMES = ("block_idx", "block_num", "subblock_idx", "subblock_num")


@dataclass(frozen=True, eq=False)
class Special(Expr):
    name: str


@dataclass(frozen=True, eq=False)
class ListIndex(Expr):
    """``values[index]`` for a constant table, e.g. the mutex id of a run-time ring slot."""

    values: tuple[int, ...]
    index: Expr

    def children(self) -> tuple[Expr, ...]:
        return (self.index,)


def const_value(e: Expr | int) -> int | float | bool | None:
    """The value of a constant expression, else None."""
    if isinstance(e, (int, float)):
        return e
    return e.value if isinstance(e, Const) else None


def as_expr(v: Expr | int | float | bool) -> Expr:
    return v if isinstance(v, Expr) else Const(v)


def walk(e: Expr):
    """Yield ``e`` and all sub-expressions."""
    yield e
    for c in e.children():
        yield from walk(c)
