"""Cycle cost of each instruction on the modeled arch. Every constant comes from the arch table
(``pypto_pro/arch``), which names its source."""
from __future__ import annotations

import math

from pypto_pro.arch.model import ArchModel
from pypto_pro.language.enums import MemorySpace


EXPAND_BASE = {"expand_add": "add", "expand_sub": "sub", "expand_mul": "mul", "expand_div": "div",
               "expand_max": "maximum", "expand_min": "minimum"}


class CostModel:
    def __init__(self, arch: ArchModel):
        self.arch = arch
        self.clock = arch.clock_mhz.value
        self.repeat = int(arch.vector_repeat_bytes.value)
        self.vec = arch.vector_costs
        self.sync = arch.cost["sync_cycles"].value
        self.issue = arch.cost["issue_cycles"].value

    def repeats(self, rows: int, cols: int, itemsize: int, full_cols: bool) -> int:
        """256-byte repeats the vector unit issues for a rows x cols region."""
        if full_cols:
            return max(1, math.ceil(rows * cols * itemsize / self.repeat))
        return max(1, rows * math.ceil(cols * itemsize / self.repeat))

    def vector(self, op: str, kind: str, rows: int, cols: int, itemsize: int, full_cols: bool,
               dim: int | None = None) -> float:
        reps = self.repeats(rows, cols, itemsize, full_cols)
        if kind == "reduce":
            if dim == 1:
                return self.vec["row_reduce"].cycles(reps)
            per_row = self.vec["col_reduce_per_row"]
            return per_row.head + rows * per_row.slope * math.ceil(cols * itemsize / self.repeat) + per_row.tail
        if kind == "expand":
            base = self.vec[EXPAND_BASE[op]]
            bcast = self.vec["row_broadcast_per_row"].cycles(rows) if dim == 1 else 0.0
            return bcast + base.cycles(reps)
        if kind == "move":
            return self.path("Vec->Vec", rows * cols * itemsize)
        key = "expands" if kind == "fill" else op
        return self.vec[key].cycles(reps)

    def path(self, name: str, nbytes: int) -> float:
        return self.arch.paths[name].cycles(nbytes, self.clock)

    @staticmethod
    def path_name(src: MemorySpace | None, dst: MemorySpace | None) -> str:
        return f"{src.name if src else 'GM'}->{dst.name if dst else 'GM'}"

    def cube(self, m: int, n: int, k: int, itemsize: int, is_float: bool) -> float:
        """TMATMUL: 6 + slope * ceil(m/16) * ceil(k / (32/itemsize)) * ceil(n/16) (PTO-ISA a2a3)."""
        slope = self.arch.cost["cube_fp32_factor"].value if (is_float and itemsize == 4) else 1
        return (self.arch.cost["cube_fixed_cycles"].value
                + slope * math.ceil(m / 16) * math.ceil(k / (32 // itemsize)) * math.ceil(n / 16))
