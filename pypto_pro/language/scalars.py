"""Scalar helpers of the DSL (signatures and docs only; the frontend compiles the calls).

``pl.const(value, dtype)`` makes a typed constant; ``pl.constexpr(cond)`` marks the condition of an
``if`` / conditional expression as one that must be known at compile time. Scalar parameters and
locals are annotated with a scalar dtype, e.g. ``n: pl.DT_INT64``.
"""
from __future__ import annotations

from typing import Any

from pypto_pro.language.dtypes import DataType
from pypto_pro.language.intrinsic import intrinsic


@intrinsic("const")
def const(value: int | float, dtype: DataType) -> Any:
    """A compile-time scalar constant of ``dtype`` (``pl.const(0, pl.DT_INT32)``)."""


@intrinsic("constexpr")
def constexpr(cond: Any) -> Any:
    """``if pl.constexpr(cond):`` / ``a if pl.constexpr(cond) else b``: ``cond`` must be a compile-time
    constant; the branch not taken is not compiled."""
