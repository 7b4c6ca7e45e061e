"""Scalar expressions evaluated by the scalar unit: index arithmetic, shapes, block ids, scalar params.

Every expression has a ``dtype`` (a scalar-capable ``pl.DT_*``), computed the way the real PyPTO
Pro's IR computes it (``framework/include/ir/scalar_expr_ops.h``): bool operands count as INT64;
operands of one category (int / float) promote to the wider one (the left one on a tie); an int
meeting a float gives FP32; ``/`` of ints is FP32; comparisons and ``and`` / ``or`` / ``not`` are
BOOL. Bare int literals are INT64 (the real INDEX, which shares INT64's representation), bare float
literals FP32. ``ty`` (``"int"`` / ``"float"`` / ``"bool"``) is the dtype's category, kept for code
that only needs that.

Run-time arithmetic follows C++ on the declared width (what the real backend emits): integers wrap,
``//`` and ``%`` of ints truncate toward zero (C ``/`` and ``%``), ``//`` of floats is a plain
division. Compile-time constants fold with Python's rules, as the real parser folds them.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

from pypto_pro.language.dtypes import DT_BOOL, DT_FP32, DT_INT64, DataType

_uid = itertools.count()

# Python operator spelling of every binary scalar operator the IR knows.
BIN_OPS = ("+", "-", "*", "//", "%", "/", "<<", ">>", "&", "|", "^", "min", "max")
INT_ONLY_OPS = ("<<", ">>", "&", "|", "^")
CMP_OPS = ("<", "<=", ">", ">=", "==", "!=")

_TY = {"int": DT_INT64, "float": DT_FP32, "bool": DT_BOOL}


def category(dtype: DataType) -> str:
    """``"int"``, ``"float"`` or ``"bool"``: the dtype's category (unsigned ints are ``"int"``)."""
    if dtype.is_bool():
        return "bool"
    return "float" if dtype.is_float() else "int"


def literal_dtype(value: int | float | bool) -> DataType:
    """The dtype of a bare Python literal in kernel code."""
    if isinstance(value, bool):
        return DT_BOOL
    return DT_FP32 if isinstance(value, float) else DT_INT64


def numeric(dtype: DataType) -> DataType:
    """Bool counts as INT64 in arithmetic (the real ``NormalizeBoolDtype``)."""
    return DT_INT64 if dtype.is_bool() else dtype


def promote(a: DataType, b: DataType, op: str = "+") -> DataType:
    """The dtype both operands of ``op`` are converted to (the real ``PromoteBinaryOperands``)."""
    a, b = numeric(a), numeric(b)
    if category(a) == category(b):
        out = b if b.bits > a.bits else a
    else:
        out = DT_FP32
    if op == "/" and not out.is_float():
        out = DT_FP32
    return out


def int_range(dtype: DataType) -> tuple[int, int]:
    """Smallest and largest value of an integer dtype."""
    if dtype.is_bool():
        return 0, 1
    if dtype.is_unsigned_int():
        return 0, (1 << dtype.bits) - 1
    return -(1 << (dtype.bits - 1)), (1 << (dtype.bits - 1)) - 1


def wrap_value(v: int, dtype: DataType) -> int:
    """``v`` reduced to the integer ``dtype`` (two's complement for signed types)."""
    if dtype.is_bool():
        return int(bool(v))
    mask = (1 << dtype.bits) - 1
    if dtype.is_unsigned_int():
        return v & mask
    half = 1 << (dtype.bits - 1)
    return ((v + half) & mask) - half


def literal_value(value: float) -> float:
    """The value a float constant has on the device: the real PyPTO Pro writes a float constant into
    the kernel's C++ with ``std::to_string`` (six decimals, ``"%f"``) followed by ``f``, so
    ``1.0 / 3`` runs as ``0.333333f`` and ``1e-7`` as ``0.000000f``."""
    if value != value or value in (float("inf"), float("-inf")):
        return value
    return float(f"{value:f}")


class Expr:
    """Base of scalar expressions: ``dtype`` is a scalar ``pl.DT_*``; ``ty`` its category."""

    dtype: DataType = DT_INT64

    @property
    def ty(self) -> str:
        return category(self.dtype)

    def children(self) -> tuple["Expr", ...]:
        return ()


def _set(obj: object, name: str, value: object) -> None:
    object.__setattr__(obj, name, value)


@dataclass(frozen=True, eq=False)
class Const(Expr):
    """A constant; ``dtype`` defaults to the dtype of the Python literal (``pl.const`` sets another)."""

    value: int | float | bool
    dtype: DataType = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.dtype is None:
            _set(self, "dtype", literal_dtype(self.value))


class Var(Expr):
    """A mutable scalar variable of the kernel (a scalar register) of one dtype.

    ``Var(name)`` is an INT64; ``Var(name, "float")`` / ``Var(name, "bool")`` (the old spelling)
    or ``Var(name, dtype=pl.DT_INT32)`` choose another dtype."""

    __slots__ = ("name", "dtype", "uid")

    def __init__(self, name: str, ty: str | None = None, uid: int = -1, dtype: DataType | None = None):
        self.name = name
        self.dtype = dtype if dtype is not None else _TY[ty or "int"]
        self.uid = uid if uid >= 0 else next(_uid)

    def __repr__(self) -> str:
        return f"Var({self.name!r}, {self.dtype.short}, uid={self.uid})"


@dataclass(frozen=True, eq=False)
class BinOp(Expr):
    """``lhs op rhs``; both operands are converted to ``promote(lhs, rhs, op)``, which is also the
    result dtype (``/`` of ints gives FP32)."""

    op: str
    lhs: Expr
    rhs: Expr

    def __post_init__(self) -> None:
        _set(self, "dtype", promote(self.lhs.dtype, self.rhs.dtype, self.op))

    @property
    def operand_dtype(self) -> DataType:
        return self.dtype

    def children(self) -> tuple[Expr, ...]:
        return (self.lhs, self.rhs)


@dataclass(frozen=True, eq=False)
class UnaryOp(Expr):
    op: str  # "-", "not", "~"
    operand: Expr

    def __post_init__(self) -> None:
        _set(self, "dtype", DT_BOOL if self.op == "not" else numeric(self.operand.dtype))

    def children(self) -> tuple[Expr, ...]:
        return (self.operand,)


@dataclass(frozen=True, eq=False)
class Compare(Expr):
    """``lhs op rhs`` on operands converted to ``promote(lhs, rhs)``; BOOL."""

    op: str
    lhs: Expr
    rhs: Expr

    dtype = DT_BOOL

    @property
    def operand_dtype(self) -> DataType:
        return promote(self.lhs.dtype, self.rhs.dtype)

    def children(self) -> tuple[Expr, ...]:
        return (self.lhs, self.rhs)


@dataclass(frozen=True, eq=False)
class BoolOp(Expr):
    """C ``&&`` / ``||`` (short-circuit) of the operands' truth values; BOOL."""

    op: str  # "and" | "or"
    values: tuple[Expr, ...]

    dtype = DT_BOOL

    def children(self) -> tuple[Expr, ...]:
        return self.values


@dataclass(frozen=True, eq=False)
class Select(Expr):
    """``if_true if cond else if_false``; the branches are of one category, the result has the
    wider dtype (the real ternary promotion)."""

    cond: Expr
    if_true: Expr
    if_false: Expr

    def __post_init__(self) -> None:
        a, b = self.if_true.dtype, self.if_false.dtype
        _set(self, "dtype", a if a is b else promote(a, b))

    def children(self) -> tuple[Expr, ...]:
        return (self.cond, self.if_true, self.if_false)


@dataclass(frozen=True, eq=False)
class Cast(Expr):
    """``operand`` converted to ``dtype`` as C converts: ints wrap, floats truncate toward zero."""

    operand: Expr
    dtype: DataType  # type: ignore[assignment]

    def children(self) -> tuple[Expr, ...]:
        return (self.operand,)


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


def convert(e: Expr, dtype: DataType) -> Expr:
    """``e`` as ``dtype``: itself when it already is, a retyped constant, or a ``Cast``."""
    if e.dtype is dtype:
        return e
    if isinstance(e, Const):
        return Const(convert_value(e.value, dtype), dtype)
    return Cast(e, dtype)


def convert_value(value: int | float | bool, dtype: DataType) -> int | float | bool:
    """A constant converted to ``dtype`` the way the real parser folds a cast of a constant."""
    if dtype.is_bool():
        return bool(value)
    if dtype.is_float():
        return float(value)
    return int(value)


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
