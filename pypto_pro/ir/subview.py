"""Tile subviews at a run-time start: ``tile[r:, :]`` / ``tile[r0:r1, c0:c1]`` with a scalar ``r``.

The real PyPTO Pro lowers a subview to ``block.subview`` and its C++ backend re-addresses a tile
descriptor at ``base + (row * cols + col) * itemsize`` (ND; ``col * rows + row`` for DN) when the
statement runs. Here the view is a buffer with one *slot per possible start*: slot
``base_slot * (nr * nc) + r * nc + c`` lies at the tile's element ``[r, c]`` (``nr`` / ``nc`` are the
tile's rows / columns on an axis whose start is a run-time value, 1 on an axis whose start is a
constant). So everything that follows a tile operand through its slot (the simulator's views,
the race / stale / never-written checkers' byte ranges, the schedule replay's signature) sees the
actual address without knowing about subviews. :class:`SubviewSlot` is that slot expression; it
checks at run time that the start lies inside the tile (a located ``SimulationError`` otherwise).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from pypto_pro.errors import SourceLocation
from pypto_pro.ir.expr import BinOp, Const, Expr, convert
from pypto_pro.language.dtypes import DT_INT64

if TYPE_CHECKING:
    from pypto_pro.ir.nodes import Buffer


@dataclass(frozen=True)
class ViewStarts:
    """Where each slot of a run-time subview starts in its base tile (see the module doc)."""

    r0: int  # the start row when it is a constant (nr == 1)
    c0: int  # the start column when it is a constant (nc == 1)
    nr: int  # how many start rows the view has slots for (the tile's rows, or 1)
    nc: int  # how many start columns (the tile's columns, or 1)

    @property
    def per_base_slot(self) -> int:
        return self.nr * self.nc

    def decode(self, slot: int) -> tuple[int, int, int]:
        """``(base slot, start row, start column)`` of view slot ``slot``."""
        bs, rest = divmod(slot, self.per_base_slot)
        r, c = divmod(rest, self.nc)
        return bs, self.r0 + r, self.c0 + c

    def slots(self, base: "Buffer") -> list[tuple[int, int, int]]:
        """Every slot's ``(base slot, row, column)``, in slot order."""
        return [self.decode(i) for i in range(base.depth * self.per_base_slot)]


@dataclass(frozen=True, eq=False)
class SubviewSlot(Expr):
    """The view slot of a run-time subview taken at ``[row, col]`` of base slot ``base`` (``row`` /
    ``col`` are None on an axis whose start is the constant of :class:`ViewStarts`)."""

    base: Expr
    row: Expr | None
    col: Expr | None
    starts: ViewStarts
    extent: tuple[int, int]  # the tile's shape: a start must lie inside it
    name: str                # the tile's name, for the run-time error
    loc: SourceLocation | None = None

    @property
    def dtype(self):  # type: ignore[override]
        return DT_INT64

    def children(self) -> tuple[Expr, ...]:
        return tuple(e for e in (self.base, self.row, self.col) if e is not None)

    def arithmetic(self) -> Expr:
        """The slot as plain scalar arithmetic (no range check)."""
        s = self.starts
        out: Expr = BinOp("*", convert(self.base, DT_INT64), Const(s.per_base_slot)) if s.per_base_slot > 1 \
            else convert(self.base, DT_INT64)
        if self.row is not None:
            out = BinOp("+", out, BinOp("*", convert(self.row, DT_INT64), Const(s.nc)))
        if self.col is not None:
            out = BinOp("+", out, convert(self.col, DT_INT64))
        return out

    def sim_code(self, writer: Callable[[Expr], str]) -> str:
        """A call of ``view_slot`` (``backends/sim/scalar_math.py``): the slot, or a located fault when
        the start lies outside the tile."""
        s = self.starts
        row = writer(self.row) if self.row is not None else str(s.r0)
        col = writer(self.col) if self.col is not None else str(s.c0)
        where = f"{self.loc.path}:{self.loc.line}" if self.loc else ""
        if self.loc and self.loc.source_line:
            where += f" ({self.loc.source_line.strip()})"
        return (f"_view_slot({writer(self.base)}, {row}, {col}, {s.r0}, {s.c0}, {s.nr}, {s.nc}, "
                f"{self.extent[0]}, {self.extent[1]}, {self.name!r}, {where!r})")

    def cpp_code(self, writer: Callable[[Expr], str]) -> str:
        return writer(self.arithmetic())

    def text(self, writer: Callable[[Expr], str]) -> str:
        """How the IR printer spells it: the start, e.g. ``@[r, 0]`` (of slot ``s`` of a group)."""
        row = writer(self.row) if self.row is not None else str(self.starts.r0)
        col = writer(self.col) if self.col is not None else str(self.starts.c0)
        base = "" if isinstance(self.base, Const) and self.base.value == 0 else f"{writer(self.base)}"
        return f"{base}@[{row}, {col}]"


def base_slot(starts: ViewStarts, slot: Expr) -> Expr:
    """The base tile's slot that view slot ``slot`` lies in."""
    if isinstance(slot, SubviewSlot):
        return slot.base
    if isinstance(slot, Const):
        return Const(starts.decode(int(slot.value))[0])
    return BinOp("//", convert(slot, DT_INT64), Const(starts.per_base_slot)) if starts.per_base_slot > 1 else slot
