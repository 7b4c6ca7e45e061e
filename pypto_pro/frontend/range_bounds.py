"""The bounds of a ``pl.range`` loop as the real tool chain runs them.

The real parser takes any scalar for ``start`` / ``stop`` / ``step`` (its type check asks for a
ScalarType only), and its CCE codegen writes ``for (uint64_t i = start; i < stop; i += step)``
(``CCECodegen::VisitStmt_(ForStmtPtr)``). A float bound therefore means: ``start`` converted to the
integer loop variable (truncated toward zero), and the loop runs while ``i < stop`` compared as floats,
i.e. up to ``ceil(stop)``. The most common source is ``/`` of two ints, which the real promotion makes an
FP32 (``x.shape[0] / TILE``). A float step is kept an error: ``i += 0.5f`` on an integer ``i``
truncates back and never advances."""
from __future__ import annotations

import math

from pypto_pro.ir.expr import BinOp, Cast, Compare, Const, Expr, Select, convert
from pypto_pro.language.dtypes import DT_INT64


def float_start(e: Expr) -> Expr:
    """A float ``start``: the integer loop variable it initialises (C's truncation toward zero)."""
    return convert(e, DT_INT64)


def float_stop(e: Expr) -> Expr | str:
    """A float ``stop`` as the integer bound of ``i < stop``: ``ceil(stop)``; a message for a
    constant that is not finite."""
    if isinstance(e, Const):
        if not math.isfinite(e.value):
            return f"pl.range stop must be finite, got {e.value}"
        return Const(math.ceil(e.value), DT_INT64)
    t = Cast(e, DT_INT64)
    return BinOp("+", t, Select(Compare("<", Cast(t, e.dtype), e), Const(1, DT_INT64), Const(0, DT_INT64)))
