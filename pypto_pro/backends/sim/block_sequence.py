"""The bookkeeping of a timed launch whose blocks run one after another on one executable's memories.

Blocks are placed on the arch's physical cores in waves (block ``b`` on core ``b % cores``); each
core's blocks follow each other, so a block starts when its core's previous block ended. This keeps
what the launch report needs across blocks: statistics, the GM object ids, the L2 tracker, each core's
free time and the busy cycles per queue.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from pypto_pro.backends.sim.gm_checker import GlobalChecker
from pypto_pro.backends.sim.inst import PIPES, Inst, queue_name
from pypto_pro.backends.sim.kit import GMBinding
from pypto_pro.backends.sim.launch_stats import BlockStats, L2Tracker
from pypto_pro.backends.sim.report import BlockTiming, LaunchReport
from pypto_pro.backends.sim.scheduler import Reporter

if TYPE_CHECKING:
    from pypto_pro.backends.sim.executor import SimExecutable

POISON = 0xFF  # on-chip bytes at block start: NaN for every float dtype, -1 for ints


class SequentialLaunch:
    """Bookkeeping of a launch whose blocks run one after another on one executable's memories:
    statistics, GM object ids, the L2 tracker, each physical core's free time and the busy cycles
    per queue; a block's GM-port share, its on-chip poison, its report entry and trace."""

    def __init__(self, ex: SimExecutable, report: LaunchReport, block_num: int):
        self.ex, self.report, self.block_num = ex, report, block_num
        self.stats = BlockStats()
        self.cores = ex.physical_cores
        self.ncores_block = len(ex.memories) if ex.mixed else 1
        self.cap = ex.arch.gm_bandwidth_cap_gb_s
        self.core_free = [0.0] * self.cores
        self.pipe_busy = [0.0] * (self.ncores_block * len(PIPES))
        self.objs = GMBinding.launch_objs([r.gm for r in ex.runners])
        self.l2 = L2Tracker(ex.arch.l2)

    def port_share(self, b: int) -> float:
        """GM-port bytes per cycle of block ``b``: the cap shared by the cores of its wave."""
        if not self.cap:
            return 0.0
        active = min(self.cores, self.block_num - (b // self.cores) * self.cores)
        return self.cap.value * 1e9 / active / (self.ex.arch.clock_mhz.value * 1e6)

    def poison(self) -> None:
        """A block's on-chip memories at its start (every byte POISON)."""
        for mem in self.ex.memories:
            for arr in mem.arrays.values():
                arr.fill(POISON)

    def block_done(self, b: int, recs: list, block_end: float, busy: list[float], trace: list | None,
                   insts: list[Inst], flows) -> None:
        """Free block ``b``'s logs; add its timing to the report (and the trace) on its core."""
        core = b % self.cores
        start = self.core_free[core]
        for rec in recs:
            rec.release()
        for i, v in enumerate(busy):
            self.pipe_busy[i] += v
        mixed = self.ex.mixed
        self.report.blocks.append(BlockTiming(b, core, start, start + block_end,
                                              {queue_name(i, mixed): v for i, v in enumerate(busy) if v}))
        if trace is not None:
            trace.append((b, core, start, insts, flows))
        self.core_free[core] = start + block_end

    def finish(self, reporter: Reporter, gmcheck: GlobalChecker | None) -> None:
        report = self.report
        report.cycles = max(self.core_free) if self.core_free else 0.0
        report.pipe_busy = {queue_name(i, self.ex.mixed): v for i, v in enumerate(self.pipe_busy) if v}
        self.ex._fill_report(report, self.stats, reporter, min(self.cores, self.block_num), gmcheck)
