"""The cost of one SIMT launch, from what its threads execute (the price pass of ``interp.py``).

Model (numbers: ``arch.simt``, the Ascend 950's SIMT engine, each with its source):

    cycles = launch_cycles + max(issue, gm_traffic) + latency

* ``issue``: warp-instructions issued (each statement's operations, once per warp with at least
  one active thread; a divergent ``if`` issues both sides) over ``schedulers * issue_per_cycle``.
* ``gm_traffic``: the distinct GM cache lines the threads touch, times the line size, over the
  core's SIMT GM bandwidth.
* ``latency``: warps hide each other's memory latency but not a thread's own chain of loads: each
  *round* of loads (one load statement executed once by the warps) exposes one latency: a GM miss
  when it touches a line no earlier round touched, a data-cache hit otherwise, a UB load latency
  for tiles. Stores are posted (no latency).

Accesses whose addresses depend on loaded data are unknown at pricing time: each active thread is
counted as touching its own line (an upper bound).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from pypto_pro.arch.model import SimtModel
    from pypto_pro.ir.simt import SimtParam


class Usage:
    """What the price pass saw: warp-instructions, GM lines and load rounds, and per parameter the
    bounding box of the elements read and written (None: unknown addresses, the whole region)."""

    def __init__(self, line_bytes: int, alias: dict[int, int] | None = None):
        self.line = line_bytes
        self.alias = alias or {}  # parameter index -> the first parameter bound to the same memory
        self.owner: dict[int, np.ndarray] = {}  # memory -> the thread that last wrote each element (-1: none)
        self.issued = 0
        self.lines: set[int] = set()
        self.unknown_lines = 0
        self.gm_miss_rounds = 0
        self.gm_hit_rounds = 0
        self.ub_rounds = 0
        self.boxes: dict[tuple[int, bool], list | None] = {}  # (param index, is_write) -> [lo, hi] per axis

    def record(self, prm: "SimtParam", offsets: np.ndarray | None, mask: np.ndarray, write: bool, stmt) -> None:
        key = (prm.index, write)
        if offsets is None:
            self.boxes[key] = None
            n = int(mask.sum())
            if prm.kind == "tensor":
                self.unknown_lines += n
                if not write:
                    self.gm_miss_rounds += 1
            elif not write:
                self.ub_rounds += 1
            return
        if offsets.size == 0:
            return
        seen = self._own(prm, offsets, np.flatnonzero(mask), write)
        if seen.size and (key not in self.boxes or self.boxes[key] is not None):
            idx = np.unravel_index(seen, prm.shape)
            lo = [int(a.min()) for a in idx]
            hi = [int(a.max()) + 1 for a in idx]
            box = self.boxes.get(key)
            if box is not None:
                lo = [min(a, b) for a, b in zip(lo, box[0])]
                hi = [max(a, b) for a, b in zip(hi, box[1])]
            self.boxes[key] = [lo, hi]
        if prm.kind != "tensor":
            if not write:
                self.ub_rounds += 1
            return
        lines = set(np.unique(offsets * prm.dtype.itemsize // self.line + (prm.index << 40)).tolist())
        new = lines - self.lines
        self.lines |= lines
        if not write:
            if new:
                self.gm_miss_rounds += 1
            else:
                self.gm_hit_rounds += 1


    def _own(self, prm: "SimtParam", offsets: np.ndarray, lanes: np.ndarray, write: bool) -> np.ndarray:
        """The offsets of this access the memory checkers see: a thread reading an element it wrote
        itself earlier in the launch reads its own write, not the memory as the launch found it."""
        mem = self.alias.get(prm.index, prm.index)
        owner = self.owner.get(mem)
        if write:
            if owner is None:
                owner = self.owner[mem] = np.full(prm.size, -1, np.int64)
            owner[offsets] = lanes
            return offsets
        return offsets if owner is None else offsets[owner[offsets] != lanes]


def launch_cycles(model: "SimtModel", usage: Usage) -> tuple[float, float]:
    """(cycles of the launch, its issue-bound part: the SIMT work in the roofline)."""
    issue = usage.issued / (model.schedulers.value * model.issue_per_cycle.value)
    traffic = (len(usage.lines) + usage.unknown_lines) * model.cacheline_bytes.value / model.gm_bytes_per_cycle.value
    latency = (usage.gm_miss_rounds * model.gm_miss_latency.value + usage.gm_hit_rounds * model.gm_hit_latency.value
               + usage.ub_rounds * model.ub_latency.value)
    return float(model.launch_cycles.value + max(issue, traffic) + latency), float(issue)
