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
instead of over the whole launch. With several cores (AIC + AIVs) each core's program runs in a
thread of its own, one at a time: the block is scheduled whenever every core is blocked on a read
or done, so a read may wait for what any other core dispatches (a cross-core signal).
"""
from __future__ import annotations

import threading
from typing import Callable

from pypto_pro.backends.sim.inst import Inst
from pypto_pro.backends.sim.launch_stats import L2Tracker
from pypto_pro.backends.sim.recorder import Recorder
from pypto_pro.backends.sim.scheduler import CoreScheduler


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


class _Abort(BaseException):
    """Unwinds a core's program when its block stops (another core failed)."""


class _Core:
    """One core's program running in its own thread, handing control back at each read."""

    def __init__(self, rec: Recorder, fn: Callable[[], None], back: threading.Event):
        self.rec = rec
        self.fn = fn
        self.back = back            # set when this core blocks on a read or ends
        self.go = threading.Event()  # set to let it run
        self.prep = None            # the read it waits for
        self.finished = False
        self.error: BaseException | None = None
        self.aborted = False
        self.thread = threading.Thread(target=self._body, daemon=True)

    def _body(self) -> None:
        self.go.wait()
        self.go.clear()
        try:
            self.fn()
            self.finished = True
        except _Abort:
            return
        except BaseException as exc:  # noqa: BLE001 - handed to the dispatching thread
            self.error = exc
        finally:
            self.back.set()

    def step(self) -> None:
        """Let the core run until it blocks on a read or ends."""
        self.back.clear()
        self.go.set()
        self.back.wait()

    def wait_value(self):
        self.back.set()
        self.go.wait()
        self.go.clear()
        if self.aborted:
            raise _Abort()
        return self.prep.result


class LiveBlock:
    """One block being dispatched and scheduled together (module doc). With one core the program
    drives the scheduler at each read; with several, each core's program runs in a thread of its
    own, and this one schedules whenever every core is blocked on a read or done, so a read on one
    core may wait for instructions another core dispatches later."""

    def __init__(self, sched: CoreScheduler, pricing: LivePricing) -> None:
        self.sched = sched
        self.pricing = pricing
        self.insts: list[Inst] = []
        self.priced: dict[int, int] = {}  # id(recorder) -> its L2-priced records already priced
        self.cores: dict[int, _Core] = {}  # id(recorder) -> its thread, with several cores

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

    def _resume(self, rec: Recorder) -> None:
        inst = rec.op_insts[-1]
        rec.stall_until(inst.end)
        self.sched.read_done(inst)

    def read(self, rec: Recorder, prep):
        """The read ``prep`` (the last op ``rec`` logged): its value once the schedule has run it."""
        core = self.cores.get(id(rec))
        if core is not None:
            core.prep = prep
            return core.wait_value()
        self._add(rec, False)
        if not self.sched.run_until(lambda: prep.result is not None):
            self.sched._deadlock()
        self._resume(rec)
        return prep.result

    def dispatch(self, jobs: list[tuple[Recorder, Callable[[], None]]]) -> None:
        """Run every core's program (``jobs``: its recorder and a call that runs it)."""
        for rec, _ in jobs:
            rec.live = self.read
        if len(jobs) == 1:
            rec, fn = jobs[0]
            fn()
            self._add(rec, True)
            return
        back = threading.Event()
        cores = [_Core(rec, fn, back) for rec, fn in jobs]
        for c in cores:
            self.cores[id(c.rec)] = c
            c.thread.start()
        try:
            runnable = list(cores)
            while True:
                for c in runnable:
                    c.step()
                    if c.error is not None:
                        raise c.error
                    if c.finished:
                        self._add(c.rec, True)
                blocked = [c for c in cores if not c.finished]
                if not blocked:
                    return
                for c in blocked:
                    self._add(c.rec, False)
                if not self.sched.run_until(lambda: any(c.prep.result is not None for c in blocked)):
                    self.sched._deadlock()
                runnable = [c for c in blocked if c.prep.result is not None]
                for c in runnable:
                    self._resume(c.rec)
        finally:
            for c in cores:
                if c.thread.is_alive():
                    c.aborted = True
                    c.go.set()
                    c.thread.join()

    def finish(self) -> float:
        """Schedule what is left; the block's end time."""
        if self.sched.checks:
            self.sched._check_double_locks()
        return self.sched.run()
