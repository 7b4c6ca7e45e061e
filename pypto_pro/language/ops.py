"""The ``pl.*`` functions: the language constructs declared here (sections, block ids, ``pl.range``)
and every operation declared in ``pypto_pro/ops/`` (one module per family; each declaration
carries its real signature, check, simulator rule, cost and C++ spelling).

Calling any of them outside a ``@pl.jit`` kernel raises: the frontend compiles them.
"""
from __future__ import annotations

from typing import Any

from pypto_pro.language.intrinsic import intrinsic
from pypto_pro.ops.decl import stubs

# ---- sections and ids -------------------------------------------------------------------------


@intrinsic("section_vector")
def section_vector() -> Any:
    """``with pl.section_vector():`` code for the Vector cores (AIV)."""


@intrinsic("section_cube")
def section_cube() -> Any:
    """``with pl.section_cube():`` code for the Cube core (AIC)."""


@intrinsic("get_block_idx")
def get_block_idx() -> int:
    """Index of this block, 0 .. block_num - 1."""


@intrinsic("get_block_num")
def get_block_num() -> int:
    """Number of blocks of the launch (``kernel[stream, block_num]``)."""


@intrinsic("get_subblock_idx")
def get_subblock_idx() -> int:
    """Index of this Vector core inside its block (0 for vector-only kernels)."""


@intrinsic("get_subblock_num")
def get_subblock_num() -> int:
    """Vector cores per block: 2 for mixed Cube+Vector kernels, 1 for vector-only ones."""


@intrinsic("range")
def range(start: int, stop: int | None = None, step: int = 1, /) -> Any:
    """A loop executed at run time (bounds may be run-time values). Positional arguments only, as the
    real parser's ``_parse_range_call`` (a keyword is a ParserSyntaxError)."""


# ---- every declared operation (pypto_pro/ops) ---------------------------------------------------

import pypto_pro.ops  # noqa: E402,F401  (registers the declarations)

OPERATIONS = stubs("pl")
globals().update(OPERATIONS)


# ---- scalar helpers (Utils-API python_syntax_sugar; their rules: frontend/scalar_helpers.py) --------


@intrinsic("max")
def max(lhs: Any, rhs: Any) -> Any:
    """The larger of two scalars (``max(lhs, rhs)`` in kernel code is the same); for tiles use pl.maximum."""


@intrinsic("min")
def min(lhs: Any, rhs: Any) -> Any:
    """The smaller of two scalars (``min(lhs, rhs)`` in kernel code is the same); for tiles use pl.minimum."""
