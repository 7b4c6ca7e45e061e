"""Cycle cost of each instruction on the modeled arch. Every constant comes from the arch table
(``pypto_pro/arch``), which names its source."""
from __future__ import annotations

import math

from pypto_pro.arch.model import ArchModel


class CostModel:
    def __init__(self, arch: ArchModel):
        self.arch = arch
        self.clock = arch.clock_mhz.value
        self.repeat = int(arch.vector_repeat_bytes.value)
        self.sync = arch.cost["sync_cycles"].value
        self.issue = arch.cost["issue_cycles"].value

    def repeats(self, rows: int, cols: int, itemsize: int, full_cols: bool) -> int:
        """256-byte repeats the vector unit issues for a rows x cols region."""
        if full_cols:
            return max(1, math.ceil(rows * cols * itemsize / self.repeat))
        return max(1, rows * math.ceil(cols * itemsize / self.repeat))

    def vector(self, cost, rows: int, cols: int, itemsize: int, full_cols: bool) -> float:
        """Cycles of an isolated vector instruction (head + body + tail)."""
        return sum(self.vector_parts(cost, rows, cols, itemsize, full_cols))

    def vector_parts(self, cost, rows: int, cols: int, itemsize: int, full_cols: bool) -> tuple[float, float, float]:
        """(head, body, tail) of a vector instruction (``cost``: its declaration's ``ops.decl.Cost``), as
        PTO-ISA's a2a3 model charges them: the head only when the V queue was empty, the body always,
        the tail when the pipe is flushed (a sync that signals another pipe, or the end). An entry's
        ``fixed`` part (a5) is in the body."""
        reps = self.repeats(rows, cols, itemsize, full_cols)
        per_row = math.ceil(cols * itemsize / self.repeat)
        table = self.arch.vector_cost
        shape = cost.shape
        if shape == "row_reduce":
            c = table("row_reduce", itemsize)
            return c.head, c.fixed + c.slope * reps, c.tail
        if shape == "col_reduce":
            c = table("col_reduce_per_row", itemsize)
            return c.head, c.fixed + rows * c.slope * per_row, c.tail
        if shape == "copy":
            return 0.0, self.path("Vec->Vec", rows * cols * itemsize), 0.0
        head, body, tail = table(cost.key, itemsize).parts(reps, rows, per_row, full_cols)
        if shape == "row_expand":  # one value per row is broadcast first
            bcast = table("row_broadcast_per_row", itemsize)
            return head, body + bcast.slope * rows, tail + bcast.tail
        return head, body, tail

    def path(self, name: str, nbytes: int) -> float:
        return self.arch.paths[name].cycles(nbytes, self.clock)

    def cube(self, m: int, n: int, k: int, itemsize: int, is_float: bool) -> float:
        """TMATMUL: 6 + slope * ceil(m/16) * ceil(k / (32/itemsize)) * ceil(n/16) (PTO-ISA a2a3)."""
        slope = self.arch.cost["cube_fp32_factor"].value if (is_float and itemsize == 4) else 1
        return (self.arch.cost["cube_fixed_cycles"].value
                + slope * math.ceil(m / 16) * math.ceil(k / (32 // itemsize)) * math.ceil(n / 16))
