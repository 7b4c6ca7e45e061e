"""Cycle-cost tables for the a2a3 vector unit, from PTO-ISA's a2a3 cost model, and the cost forms
both archs use (a5's table is ``arch/costs_a5.py``).

Source: PTO-ISA ``include/pto/costmodel/a2a3/cce_costmodel/*.hpp`` at commit bd32f495
(2026-06-26, recalibrated against 910B3 measurements). An isolated vector instruction costs
``head + slope * repeats + tail`` cycles (one repeat = 256 bytes). Entries marked "fit" are
fitted here to PTO-ISA's measured system-test values because the model's intrinsic sum is far
from hardware for them (tests/costmodel/st).
"""
from __future__ import annotations

from dataclasses import dataclass

_SRC = "PTO-ISA a2a3 cce_costmodel (bd32f495)"


@dataclass(frozen=True)
class StridedCost:
    """PTO-ISA a5's nested-loop form for a region whose rows are not contiguous (valid cols <
    tile cols): ``(per_repeat * repeats_per_row + per_row) * rows + fixed`` cycles."""

    per_repeat: float
    per_row: float
    fixed: float

    def cycles(self, rows: int, repeats_per_row: int) -> float:
        return max(0.0, (self.per_repeat * repeats_per_row + self.per_row) * rows + self.fixed)


@dataclass(frozen=True)
class LinearCost:
    """One vector instruction: ``head + fixed + slope * repeats + tail`` cycles in isolation.

    ``head`` is paid only when the V pipe was idle, ``tail`` only when a signal flushes the pipe
    (PTO-ISA a2a3); ``fixed`` on every instruction (PTO-ISA a5 prices each tile op as its own
    vector function, start-up and drain included); ``strided`` replaces ``fixed + slope * repeats``
    for regions whose rows are not contiguous, where the source gives that form."""

    head: float
    slope: float
    tail: float
    source: str = _SRC
    fixed: float = 0.0
    strided: StridedCost | None = None
    assumed: bool = False

    def cycles(self, repeats: float) -> float:
        return self.head + self.fixed + self.slope * repeats + self.tail

    def parts(self, repeats: int, rows: int, repeats_per_row: int, full_cols: bool) -> tuple[float, float, float]:
        """(head, body, tail) for ``repeats`` (contiguous) or ``rows`` x ``repeats_per_row`` (strided)."""
        if not full_cols and self.strided is not None:
            return self.head, self.strided.cycles(rows, repeats_per_row), self.tail
        return self.head, self.fixed + self.slope * repeats, self.tail


# pypto_pro op -> cost of the intrinsic it lowers to
VECTOR_COSTS: dict[str, LinearCost] = {
    "add": LinearCost(10, 2, 14),       # vadd
    "sub": LinearCost(10, 2, 14),       # vsub
    "mul": LinearCost(10, 2, 15),       # vmul
    "div": LinearCost(11, 4, 19),       # vdiv
    "maximum": LinearCost(10, 2, 14),   # vmax
    "minimum": LinearCost(10, 2, 14),   # vmin
    "adds": LinearCost(13, 1, 18),      # vadds
    "subs": LinearCost(13, 1, 18),      # vadds with a negated scalar
    "muls": LinearCost(11, 1, 15),      # vmuls
    "divs": LinearCost(11, 4, 19),      # vdiv against a duplicated scalar
    "maxs": LinearCost(10, 1, 13),      # vmaxs
    "mins": LinearCost(14, 1, 16),      # vmins
    "exp": LinearCost(13, 2, 18),       # vexp
    "log": LinearCost(13, 2, 20),       # vln
    "sqrt": LinearCost(14, 2, 25),      # vsqrt
    "rsqrt": LinearCost(10, 1, 14),     # vrsqrt
    "recip": LinearCost(11, 4, 19),     # vdiv of a duplicated 1.0
    "abs": LinearCost(13, 1, 16),       # vabs
    "neg": LinearCost(11, 1, 15),       # vmuls by -1
    "relu": LinearCost(10, 1, 13),      # vrelu
    "cast": LinearCost(14, 2, 18),      # vconv_*
    "expands": LinearCost(11, 1, 13),   # vector_dup
    # row reductions: vcadd-class per repeat; fits TROWSUM fp32 64x64 = 492 / half 64x128 = 495 (measured)
    "row_reduce": LinearCost(14, 7, 32),
    # column reductions: one vadd per source row; fit to TCOLSUM fp32 64x64 = 1188 (measured, MID)
    "col_reduce_per_row": LinearCost(14, 18, 18, "fit to PTO-ISA st TCOLSUM fp32 64x64 = 1188"),
    # broadcast of one value per row before an expand op; fit to TROWEXPAND fp32 64x64 = 933 (measured)
    "row_broadcast_per_row": LinearCost(0, 14.3, 18, "fit to PTO-ISA st TROWEXPAND fp32 64x64 = 933"),
    # vmrgsort4 (TMRGSORT, both forms): 910B3 fit 78 x repeat + 20 (fp32, blockLen 64, so 128 records =
    # 1 KiB merged per repeat), charged per 256 bytes of records merged: 78 / 4
    "mrgsort": LinearCost(20, 19.5, 0, "PTO-ISA a2a3 cce_costmodel vmrgsort4 (bd32f495): 910B3 fit 78 x repeat + 20, "
                                       "fp32 blockLen 64 (1 KiB of records per repeat), per 256 bytes merged"),
}
