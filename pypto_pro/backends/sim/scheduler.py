"""Discrete-event model of one core's pipes, with the hardware's sync semantics.

Each pipe runs its queue in dispatch order. An instruction starts when its pipe is free, the
scalar unit has dispatched it, every flag it waits on is set and every buffer id it acquires is
granted (ids are granted in dispatch order); it lasts ``cycles``. Effects that happen at an
instruction's end — setting flags, releasing ids, committing its results to memory — are events
in time order, so numerics read inputs at the start and write outputs at the end, exactly as the
schedule says. Happens-before is tracked with vector clocks (one component per pipe) through the
same flag and id edges, and handed to the race checker.
"""
from __future__ import annotations

import heapq
from array import array
from typing import Callable

from pypto_pro.backends.sim.inst import BARRIER, NPIPES, Inst
from pypto_pro.backends.sim.sched_fast import HeapLoop
from pypto_pro.backends.sim.sched_report import check_double_locks, deadlock, end_checks, flag_str
from pypto_pro.backends.sim.xcounter import XFLAG_MAX, check as check_xcounter, recheck as recheck_xcounter


class Reporter:
    """Collects faults: raises the first one (check='raise') or gathers them (check='warn')."""

    def __init__(self, mode: str):
        self.mode = mode
        self.faults: list[Exception] = []
        self.notes: list[str] = []  # benign findings, never raised (report.notes)

    def report(self, exc: Exception) -> None:
        if self.mode == "raise":
            raise exc
        if self.mode == "warn":
            self.faults.append(exc)


class Lock:
    """One buffer id's state: its acquirers in dispatch order (``line``; ``pos``: the next one to be
    granted it), who holds it now and its last release (time, clock snapshot, releaser)."""

    __slots__ = ("line", "pos", "holder", "rel")

    def __init__(self) -> None:
        self.line: list[Inst] = []
        self.pos = 0
        self.holder: Inst | None = None
        self.rel: tuple[float, tuple[int, ...], Inst] | None = None


class CoreScheduler(HeapLoop):
    """Schedules one block's instruction stream on one core."""

    verify_cache = False  # tests: check every cached head start time against a fresh computation
    # the heads' start times kept in a heap, and only the heads that wait for cross-core signals
    # recomputed when such signals arrive or are consumed; False: every queue scanned at each step and
    # every head of the core recomputed (the reference, tests/backends/sim/test_scheduler_fast.py)
    fast = True

    def __init__(self, insts: list[Inst], reporter: Reporter,
                 on_start: Callable[[Inst], None] | None, block: int, checks: bool, record_flows: bool = False,
                 cores: int = 1, defer: bool = True, on_commit: Callable | None = None,
                 record_steps: bool = False, watch: dict | None = None, landed: Callable | None = None):
        self.insts = insts
        # order of starts (seq) and finishes (~seq), for replaying this schedule (schedule_cache)
        self.steps: array | None = array("i") if record_steps else None  # (4 bytes a step: kept for replay)
        self.defer = defer          # numerics write at the end (True) or at the start (exact under check=raise)
        self.on_commit = on_commit  # marks an instruction's written on-chip regions when it ends
        # writes the GM checker waits for (cross-block overlaps judged by their bytes): landed(inst)
        # once inst's bytes are in memory (gm_checker.GlobalChecker.pending / landed)
        self.watch = watch if watch is not None else {}
        self.landed = landed
        nq = cores * NPIPES
        self.nq = nq
        # cross-core flags: (receiver core, id) -> sending core -> pending signals (time, vc, setter,
        # the set's dispatch index on its core)
        self.xflags: dict[tuple, dict[int, list[tuple[float, tuple[int, ...], Inst, float]]]] = {}
        # the counter check (xcounter.py): sender -> keys over the depth only by run-ahead (re-judged as the
        # sender's instructions start), and the (key, sender) pairs already reported / noted
        self.xover: dict[int, set] = {}
        self.xreported: set = set()
        self.xnoted: dict = {}
        self.flows: list[tuple[Inst, Inst, str]] | None = [] if record_flows else None
        self.reporter = reporter
        self.on_start = on_start
        self.block = block
        self.checks = checks
        self.queues: list[list[Inst]] = [[] for _ in range(nq)]
        self.locks: dict = {}  # buffer id -> its Lock
        self._add_locks(insts)
        queues = self.queues
        for inst in insts:
            queues[inst.pipe].append(inst)
        self.heads = [0] * nq
        self.free = [0.0] * nq
        self.busy = [0.0] * nq
        self.vc = [[0] * nq for _ in range(nq)]
        # per queue: its own instructions up to this count are known to have finished (a barrier on
        # it, or a flag / buffer-id / cross-core edge from a pipe that saw them finish): the
        # same-pipe hazard check of pipes whose queue is not in order (arch/pipes.py)
        self.drained = [0] * nq
        self.flags: dict[tuple, tuple[float, tuple[int, ...], Inst]] = {}
        # a set_flag of a flag that is still set waits for the wait_flag that clears it, and its
        # pipe stalls meanwhile (docs/simulator.md, "Flags"): flag key -> the stalled pipe, and
        # pipe -> (the instruction whose signals are held, its clock, the key, the signals left)
        self.held: dict[tuple, int] = {}
        self.stalled: dict[int, tuple[Inst, tuple[int, ...], tuple, tuple]] = {}
        self.events: list[tuple] = []  # (end time, seq, inst, vc snapshot, commit) in time order
        self.event_seq = 0
        self.dirty: set[int] = set(range(nq))  # queues whose head's cached start time must be recomputed (see run)
        self.ready: list[tuple] = []  # (start time, seq, queue) of heads that can start; stale entries skipped
        self.end_time = 0.0
        self.port_free = 0.0
        # per queue, its head's start time (the reference) or heap entry (``fast``); None: cannot start yet
        self._cache: list | None = None
        self.after_read: dict[int, tuple] = {}  # core -> (clock of its last scalar read, queues joined since)
        self.joins: dict[int, tuple] = {}       # seq -> a clock it joins as it starts (read_done)
        self._uses_port: list[bool] = []
        self._ports: set[int] = set()   # fast: the queues whose head uses the GM port
        # fast: cross-core key -> the queues whose head waits for its signals, and per queue the
        # SyncSpec whose keys its entry there came from (None: none)
        self._xwaiters: dict[tuple, set[int]] = {}
        self._xreg: list = [None] * nq
        if checks:
            self._check_double_locks()

    def _check_double_locks(self) -> None:
        check_double_locks(self)

    def _add_locks(self, insts: list[Inst]) -> None:
        """Queue each acquirer of a buffer id in its id's line (dispatch order)."""
        locks = self.locks
        for inst in insts:
            ex = inst.extra
            if ex is not None and ex.acquires:
                for mid in ex.acquires:
                    lock = locks.get(mid)
                    if lock is None:
                        lock = locks[mid] = Lock()
                    lock.line.append(inst)

    # ---- readiness -------------------------------------------------------------------------

    def start_time(self, inst: Inst) -> float | None:
        """When ``inst`` can start, or None while something it waits for is missing (one rule for both
        loops: buffer ids read once per id, a single cross-core wait without the per-call counts)."""
        p = inst.pipe
        if self.stalled and p in self.stalled:
            return None  # its pipe is stalled at a set_flag of a flag still set
        t = self.free[p]
        if inst.t_issue > t:
            t = inst.t_issue
        if inst.port and self.port_free > t:
            t = self.port_free
        g = inst.gate
        if g is not None:  # a2a3: behind a cross-core wait that stalls the scalar unit
            if g.vc is None:
                return None
            if g.end > t:
                t = g.end
        ex = inst.extra
        if ex is None:
            return t
        if ex.waits:
            flags = self.flags
            for key in ex.waits:
                f = flags.get(key)
                if f is None:
                    return None
                if f[0] > t:
                    t = f[0]
        if ex.acquires:
            locks = self.locks
            for mid in ex.acquires:
                lock = locks[mid]
                if lock.holder is not None or lock.line[lock.pos] is not inst:
                    return None
                rel = lock.rel
                if rel is not None and rel[0] > t:
                    t = rel[0]
        xw = ex.xwaits
        if xw:
            if len(xw) == 1:
                (key, count), = xw
                needed = ((key, 1, count),)
            else:  # a fused record may wait on one key several times
                counts: dict = {}
                for key, count in xw:
                    n, c = counts.get(key, (0, count))
                    counts[key] = (n + 1, c)
                needed = tuple((key, n, c) for key, (n, c) in counts.items())
            xflags = self.xflags
            for key, n, count in needed:
                senders = xflags.get(key)
                if senders is None:
                    return None
                if type(count) is tuple:  # ("from", core): n signals of that one sender
                    q = senders.get(count[1])
                    if q is None or len(q) < n:
                        return None
                    if q[n - 1][0] > t:
                        t = q[n - 1][0]
                    continue
                have = 0  # needs n signals from each of `count` sending cores
                for q in senders.values():
                    if len(q) >= n:
                        have += 1
                        if q[n - 1][0] > t:
                            t = q[n - 1][0]
                if have < count:
                    return None
        return t


    # ---- main loop ------------------------------------------------------------------------

    def run(self) -> float:
        """Start the earliest ready head, or finish the earliest event, until every queue is empty.

        Each head's start time is cached and recomputed only when something it depends on changed:
        its own pipe (a new head), the GM port (heads that use it), a flag set for its pipe (a flag
        is waited on only by its destination pipe), a buffer id released that it is next in line
        for, a cross-core signal to its core or consumed cross-core signals (the heads that wait for
        such signals: no other head's start time reads them). Starting one head cannot make another's
        cached time stale otherwise: a buffer id is granted to one instruction at a time, and flags are
        consumed only by the heads that wait for them. The heads that can start sit in a heap by (start
        time, seq); an entry whose head has started or been recomputed since is dropped when it surfaces.
        """
        self._loop(None)
        return self._finish_run()

    def add(self, insts: list[Inst]) -> None:
        """Append instructions the scalar unit dispatched after the scheduler started (a live block:
        ``live.py``); each queue keeps dispatch order."""
        for inst in insts:
            self.queues[inst.pipe].append(inst)
            self.dirty.add(inst.pipe)
            after = self.after_read.get(inst.pipe // NPIPES)
            if after is not None and inst.pipe not in after[1]:  # the first of its queue after the read
                after[1].add(inst.pipe)
                self.joins[inst.seq] = after[0]
        self._add_locks(insts)

    def read_done(self, inst: Inst) -> None:
        """The scalar unit of ``inst``'s core waited for the read ``inst``: whatever it dispatches later
        happens after it (each queue's next instruction joins its clock)."""
        self.after_read[inst.pipe // NPIPES] = (inst.vc, set())

    def run_until(self, done: Callable[[], bool]) -> bool:
        """Schedule until ``done()`` holds after a start; False when nothing dispatched so far can start."""
        return self._loop(done)

    def _loop(self, until: Callable[[], bool] | None) -> bool:
        return self._loop_fast(until) if self.fast else self._loop_ref(until)

    def _loop_ref(self, until: Callable[[], bool] | None) -> bool:
        """The reference loop (``fast`` off): every head recomputed whenever anything it may depend on
        changed, and every queue scanned for the earliest (start time, seq) at each step."""
        queues, heads = self.queues, self.heads
        pending = sum(len(q) - h for q, h in zip(queues, heads))
        start_time = self.start_time
        events = self.events
        steps = self.steps
        if self._cache is None:
            self._cache = [None] * self.nq      # start time of each pipe's head; None: cannot start yet
            self._uses_port = [False] * self.nq
        cache, uses_port = self._cache, self._uses_port
        dirty = self.dirty
        pop = heapq.heappop
        while True:
            if dirty:  # recompute the heads whose inputs changed; the others keep their cached times
                for p in dirty:
                    h = heads[p]
                    q = queues[p]
                    if h < len(q):
                        head = q[h]
                        uses_port[p] = bool(head.port)
                        cache[p] = start_time(head)
                    else:
                        t = cache[p] = None
                dirty.clear()
            best = None
            best_t = 0.0
            for p in range(self.nq):  # every queue scanned
                t = cache[p]
                if t is not None and (best is None or t < best_t or (t == best_t and queues[p][heads[p]].seq < best.seq)):
                    best, best_t = queues[p][heads[p]], t
            if self.verify_cache:
                self._verify_cache(cache)
            if events and (best is None or events[0][0] <= best_t):
                _, _, inst, snapshot, commit = pop(events)
                if steps is not None:
                    steps.append(~inst.seq)
                self._finish(inst, snapshot, commit)
                continue
            if best is None:
                if until is not None:
                    return False
                if pending:
                    self._deadlock()
                break
            p = best.pipe
            if steps is not None:
                steps.append(best.seq)
            self._start(best, best_t)
            heads[p] += 1
            pending -= 1
            if self.xover:  # the frontier of its core moved (xcounter.py)
                recheck_xcounter(self, best)
            dirty.add(p)
            if best.port:
                for o in range(self.nq):
                    if uses_port[o]:
                        dirty.add(o)
            if until is not None and until():
                return True
        return True

    def _finish_run(self) -> float:
        """The end-of-kernel checks; the block's end time."""
        if self.stalled:  # a pipe still stalled at a set_flag: the core never finishes
            self._deadlock()
        end_checks(self)
        return self.end_time

    def _verify_cache(self, cache: list) -> None:
        """Self-check for tests: every cached head start time (``fast``: the head's heap entry, which
        must be in the heap) equals a fresh computation by ``start_time``."""
        live = {id(e) for e in self.ready}
        for p in range(self.nq):
            h = self.heads[p]
            head = self.queues[p][h] if h < len(self.queues[p]) else None
            fresh = self.start_time(head) if head is not None else None
            got = cache[p]
            if self.fast and got is not None:
                if got[1] != head.seq or got[2] != p or id(got) not in live:  # type: ignore[union-attr]
                    raise AssertionError(f"queue {p}: heap entry {got} is not its head's live entry")
                got = got[0]
            if got != fresh:
                raise AssertionError(f"stale cached start time for queue {p}: {got} != {fresh}")

    def _start(self, inst: Inst, t: float) -> None:
        """Start ``inst`` at ``t``: consume its waits and ids, join their clocks into its pipe's
        vector clock, cost it, check its accesses, run its numerics, queue its end. A snapshot whose
        own component the clock already covers is dominated (each queue's clock only grows), so
        joining it is skipped."""
        p = inst.pipe
        vc = self.vc[p]
        drained = self.drained
        flows = self.flows
        ex = inst.extra
        if ex is not None:
            if ex.waits:
                flags, held = self.flags, self.held
                for key in ex.waits:
                    _, fvc, setter = flags.pop(key)
                    if held and key in held:  # the flag is clear: a set stalled on it goes on
                        self._resume(held.pop(key), t)
                    if fvc[p] > drained[p]:
                        drained[p] = fvc[p]
                    if fvc[setter.pipe] > vc[setter.pipe]:  # else this clock already covers the setter's
                        vc[:] = map(max, vc, fvc)
                    if flows is not None:
                        flows.append((setter, inst, flag_str(key)[4:]))
            if ex.acquires:
                locks = self.locks
                for mid in ex.acquires:
                    lock = locks[mid]
                    lock.holder = inst
                    lock.pos += 1
                    rel = lock.rel
                    if rel is not None:
                        rvc = rel[1]
                        if rvc[p] > drained[p]:  # an id released by this very pipe drained it first
                            drained[p] = rvc[p]
                        rp = rel[2].pipe
                        if rvc[rp] > vc[rp]:  # join (elementwise max, in place)
                            for i, c in enumerate(rvc):
                                if c > vc[i]:
                                    vc[i] = c
                        if flows is not None and rp != p:
                            flows.append((rel[2], inst, f"buf_id {mid}"))
            if ex.xwaits:
                xflags = self.xflags
                for key, count in ex.xwaits:
                    for sender, q in xflags[key].items():
                        if q and (type(count) is not tuple or sender == count[1]):
                            _, fvc, setter, _ = q.pop(0)
                            if fvc[p] > drained[p]:
                                drained[p] = fvc[p]
                            if fvc[setter.pipe] > vc[setter.pipe]:
                                for i, c in enumerate(fvc):
                                    if c > vc[i]:
                                        vc[i] = c
                            if flows is not None:
                                flows.append((setter, inst, f"cross-core {key[1]}"))
                    # signals consumed: the heads that wait for them may start later
                    self._dirty_xwaits(key, 0, self.nq)
        g = inst.gate
        if g is not None:  # the scalar unit dispatched it after the wait was satisfied: it happens after it
            gvc = g.vc
            if gvc[p] > drained[p]:
                drained[p] = gvc[p]
            if gvc[g.pipe] > vc[g.pipe]:
                vc[:] = map(max, vc, gvc)
        if self.joins:
            after = self.joins.pop(inst.seq, None)
            if after is not None:
                vc[:] = map(max, vc, after)
        if inst.kind == BARRIER:  # pipe_barrier: every earlier instruction of this queue has finished
            drained[p] = vc[p]
        inst.drained = drained[p]
        vc[p] += 1
        snap = inst.vc = tuple(vc)
        inst.start = t
        free = self.free
        cycles = inst.cycles
        if inst.head and free[p] < t:       # the V queue was empty: pay the startup
            cycles += inst.head
        if inst.tail and ex is not None and (ex.sets or ex.xsets or ex.releases):
            cycles += inst.tail             # a signal to another pipe flushes this one
        inst.cycles = cycles
        inst.head = inst.tail = 0.0
        end = t + cycles
        inst.end = end
        free[p] = end
        if inst.port:
            self.port_free = t + inst.port
        self.busy[p] += cycles
        if end > self.end_time:
            self.end_time = end
        if inst.su:  # the scalar unit goes on: the core's records gated by this wait may start
            c = p - p % NPIPES
            self.dirty.update(range(c, c + NPIPES))
        if self.on_start is not None:
            self.on_start(inst)
        commit = inst.run(self.defer) if inst.run is not None else None
        if commit is None and self.watch and inst in self.watch:
            self.landed(inst)  # type: ignore[misc]
        if ex is not None and (ex.sets or ex.releases or ex.xsets) or commit is not None or inst.commits:
            self.event_seq += 1
            heapq.heappush(self.events, (end, self.event_seq, inst, snap, commit))

    def _finish(self, inst: Inst, snapshot: tuple[int, ...], commit) -> None:
        """End ``inst``: commit its writes, set its flags, release its ids, send its signals (and
        mark the heads that may now start for recomputation)."""
        if commit is not None:
            commit()
            if self.watch and inst in self.watch:
                self.landed(inst)  # type: ignore[misc]
        if inst.commits:
            for w in inst.commits:
                self.on_commit(inst, *w)
        ex = inst.extra
        if ex is None:
            return
        self._signal(inst, snapshot, inst.end, ex.sets, ex.releases, ex.xsets)

    def _dirty_xwaits(self, key: tuple, lo: int, hi: int) -> None:
        """Signals of cross-core ``key`` arrived or were consumed: mark for recomputation the heads whose
        start time depends on them, those that wait for ``key`` (``fast``: ``_xwaiters``, kept as heads
        change; no other head's start time reads them), or every head among queues ``lo`` to ``hi`` (the
        reference)."""
        if not self.fast:
            self.dirty.update(range(lo, hi))
            return
        waiters = self._xwaiters.get(key)
        if waiters:
            self.dirty.update(waiters)

    def _signal(self, inst: Inst, snapshot: tuple[int, ...], t: float, sets: tuple, releases: tuple,
                xsets: tuple) -> None:
        """At ``t``: set ``sets`` in order, release ``releases``, send ``xsets``. A set of a flag
        that is still set (not yet waited for) does not land: ``inst``'s pipe stalls there, holding
        that set and every signal after it, until the wait_flag that clears the flag starts
        (``_resume``). The intra-core flag is one bit (Ascend C SetFlag/WaitFlag; the CCE
        ``set_flag`` intrinsic: a 3-bit event id per pipe pair, one pending set each), and the real
        kernels rely on a set that runs ahead of its wait not being lost."""
        dirty = self.dirty
        if sets:
            flags = self.flags
            for i, key in enumerate(sets):
                dirty.add(key[1])
                if key in flags:
                    p = inst.pipe
                    self.held[key] = p
                    self.stalled[p] = (inst, snapshot, key, (sets[i:], releases, xsets))
                    dirty.add(p)
                    return
                flags[key] = (t, snapshot, inst)
        if releases:
            locks = self.locks
            for mid in releases:
                lock = locks.get(mid)
                if lock is None:  # an unlock with no lock: its release still counts for later acquirers
                    lock = locks[mid] = Lock()
                lock.holder = None
                lock.rel = (t, snapshot, inst)
                line = lock.line
                if lock.pos < len(line):
                    dirty.add(line[lock.pos].pipe)  # the next acquirer in dispatch order
        if xsets:
            ex = inst.extra
            xat = ex.xat if ex is not None and ex.xsets is xsets else ()
            sender = inst.pipe // NPIPES
            xflags = self.xflags
            for i, key in enumerate(xsets):
                core = key[0]
                if core >= 0:  # the receiving core's heads that wait for cross-core signals
                    self._dirty_xwaits(key, core * NPIPES, (core + 1) * NPIPES)
                else:  # a sync_all barrier signal (every core waits on its own)
                    self._dirty_xwaits(key, 0, self.nq)
                senders = xflags.get(key)
                if senders is None:
                    senders = xflags[key] = {}
                pend = senders.get(sender)
                if pend is None:
                    pend = senders[sender] = []
                pend.append((t, snapshot, inst, xat[i] if i < len(xat) else inst.at))
                if len(pend) > XFLAG_MAX and self.checks:
                    check_xcounter(self, key, sender)

    def _resume(self, p: int, t: float) -> None:
        """The flag pipe ``p`` stalled on was cleared at ``t``: its held set lands, then the rest of
        its signals; the pipe goes on from ``t`` (unless a later held set stalls it again). No
        happens-before edge is added: the stall depends on timing, the hardware guarantees none."""
        inst, snapshot, _, (sets, releases, xsets) = self.stalled.pop(p)
        if self.free[p] < t:
            self.free[p] = t
        if self.end_time < t:
            self.end_time = t
        self.dirty.add(p)
        self._signal(inst, snapshot, t, sets, releases, xsets)

    def _deadlock(self) -> None:
        deadlock(self)
