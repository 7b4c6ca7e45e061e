"""Blocks whose scalar program reads data the pipes produce: dispatch and scheduling interleaved.

On the chip the scalar unit runs ``pl.getval`` itself, in program order, on the S pipe: it reads
the element when it gets there, and everything it dispatches afterwards (addresses, trip counts,
branches that depend on the value) comes later. The ordinary timed launch dispatches a block's
whole program before scheduling it, which leaves such a read nothing to read. In a *live* block
(a kernel with a ``getval`` of a tile, or of a GM tensor the kernel writes) the scheduler runs
while the program dispatches:

1. the program runs as usual until a read: the read is logged as an S-pipe instruction;
2. everything logged so far (every core of the block that has run, the reading core up to the
   read) is built into records and added to the block's scheduler, which runs until the read has
   started; its numerics read the element then (reads at start, as every instruction);
3. the value is handed back to the program, whose later instructions issue no earlier than the
   read's end (the scalar unit waited for it), and dispatch goes on.

So the read sees exactly what the schedule has written when S reaches it. The kernel must order
the producing pipe before S (``MTE2 -> S``, ``V -> S`` flags, a buffer id, or ``auto_mutex``):
otherwise the race checker reports the read against the unordered writer, with both source lines.

Differences from the ordinary timed launch, all limited to live kernels: no schedule replay (each
block's dispatch depends on its own data); a sync that follows a read is a record of its own
rather than fused into the op before it; L2 reuse is priced as each access is dispatched (the first
access of a window pays the HBM fetch, later ones hit, as far as L2 holds the windows seen so far)
instead of over the whole launch. Cores of a block dispatch one after another (the Cube core, then
each Vector core); a read that waits for a core dispatched after it cannot complete and is reported.
"""
from __future__ import annotations

from pypto_pro.backends.sim.inst import Inst
from pypto_pro.backends.sim.recorder import L2Tracker, Recorder
from pypto_pro.backends.sim.scheduler import CoreScheduler
from pypto_pro.errors import SimulationError


class LivePricing:
    """L2 miss fraction of each GM access of a live launch, as it is dispatched (module doc)."""

    def __init__(self, l2: L2Tracker, stats) -> None:
        self.l2 = l2
        self.stats = stats
        self.seen: set = set()
        self.unique = 0

    def fractions(self, windows: list) -> tuple[float, ...]:
        out = []
        capacity = self.l2.model.capacity.value
        for window in windows:
            nbytes = self.l2.windows[window][1]
            if window in self.seen:
                frac = 1.0 - min(1.0, capacity / self.unique)
            else:
                self.seen.add(window)
                self.unique += nbytes
                frac = 1.0
            self.stats.gm_bytes += frac * nbytes
            self.stats.l2_hit_bytes += (1.0 - frac) * nbytes
            out.append(frac)
        return tuple(out)


class LiveBlock:
    """One block being dispatched and scheduled together (module doc)."""

    def __init__(self, sched: CoreScheduler, pricing: LivePricing, cores: int) -> None:
        self.sched = sched
        self.pricing = pricing
        self.cores = cores          # cores of the block, dispatched in order
        self.started = 0            # cores whose program has started
        self.insts: list[Inst] = []
        self.priced: dict[int, int] = {}  # id(recorder) -> its L2-priced records already priced

    def begin(self, rec: Recorder) -> None:
        """``rec``'s core starts its program."""
        rec.live = self.read
        self.started += 1

    def _add(self, rec: Recorder, final: bool) -> None:
        new = rec.build(final)
        done = self.priced.get(id(rec), 0)
        fresh = rec.l2_insts[done:]
        if fresh:
            L2Tracker.apply(fresh, self.pricing.fractions(rec.windows[done:done + len(fresh)]))
            self.priced[id(rec)] = done + len(fresh)
        for inst in new:
            inst.seq = len(self.insts)
            self.insts.append(inst)
        self.sched.add(new)

    def end(self, rec: Recorder) -> None:
        """``rec``'s core has dispatched its whole program."""
        self._add(rec, True)

    def read(self, rec: Recorder, prep):
        """Run the schedule until the read ``prep`` (the last op ``rec`` logged) has run; its value."""
        self._add(rec, False)
        inst = rec.op_insts[-1]
        if not self.sched.run_until(lambda: prep.result is not None):
            if self.started < self.cores:
                raise SimulationError(
                    f"{inst.where()}: pl.getval waits for instructions of a core of this block that the simulator "
                    "dispatches later (it dispatches the Cube core, then each Vector core, one after another); "
                    "such a read is not supported yet in this release")
            self.sched._deadlock()
        rec.stall_until(inst.end)
        self.sched.read_done(inst)
        return prep.result

    def finish(self) -> float:
        """Schedule what is left; the block's end time."""
        if self.sched.checks:
            self.sched._check_double_locks()
        return self.sched.run()
