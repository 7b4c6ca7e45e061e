"""The scheduler's production loop (``CoreScheduler.fast``): heads in a heap, narrow invalidation.

The reference (``scheduler.CoreScheduler._loop_ref`` with ``start_time``) recomputes every head that
may depend on what changed and scans every queue for the earliest (start time, seq) at each step.
This loop makes the same choice at every step, more cheaply:

* each queue's head has one live heap entry ``(start time, seq, queue)``, kept in ``_cache``; an
  entry is live while it is its queue's cached entry (``cache[q] is entry``), and a recomputation
  that finds the same time for the same head keeps it (no second push, no stale entry to pop later);
* only the heads that may depend on what changed are recomputed (``run``'s doc); a cross-core
  signal that arrives or is consumed marks only the heads that wait for its key (``_xwaiters``, kept
  as heads change: a head's start time reads the signals of its own keys only), and the heads that
  use the GM port are kept in a set (``_ports``), instead of a scan of every queue;
* a start that moves the GM port (``port_free`` only grows: a head that uses the port starts no
  earlier than it) moves a port head's cached time to ``max(time, port_free)``, which is exactly
  its recomputation when nothing else it depends on changed (a head that cannot start still cannot);

``verify_cache`` (tests) checks at every step that each cached entry is its head's live entry and
that its time equals a fresh ``start_time`` (tests/backends/sim/test_scheduler_fast.py).
"""
from __future__ import annotations

import heapq
from typing import Callable

from pypto_pro.backends.sim.xcounter import recheck as recheck_xcounter


class HeapLoop:
    """The fast loop of :class:`~pypto_pro.backends.sim.scheduler.CoreScheduler` (a mixin: it reads
    and changes the scheduler's state through the scheduler's own methods)."""

    def _register_xwaits(self, p: int, ex) -> None:
        """Queue ``p``'s head is now one whose cross-core waits are ``ex.xwaits`` (None: it has none)."""
        waiters = self._xwaiters
        old = self._xreg[p]
        if old is not None:
            for key, _ in old.xwaits:
                waiters[key].discard(p)
        if ex is not None:
            for key, _ in ex.xwaits:
                w = waiters.get(key)
                if w is None:
                    w = waiters[key] = set()
                w.add(p)
        self._xreg[p] = ex

    def _loop_fast(self, until: Callable[[], bool] | None) -> bool:
        queues, heads = self.queues, self.heads
        pending = sum(len(q) - h for q, h in zip(queues, heads))
        time_of = self.start_time
        events = self.events
        steps = self.steps
        if self._cache is None:
            self._cache = [None] * self.nq  # each queue's head's live heap entry; None: cannot start yet
        cache = self._cache
        dirty, ready, ports = self.dirty, self.ready, self._ports
        xreg, register = self._xreg, self._register_xwaits
        push, pop = heapq.heappush, heapq.heappop
        start, finish = self._start, self._finish
        verify = self.verify_cache
        while True:
            if dirty:  # recompute the heads whose inputs changed; the others keep their cached entries
                for p in dirty:
                    h = heads[p]
                    q = queues[p]
                    if h < len(q):
                        head = q[h]
                        if head.port:
                            ports.add(p)
                        else:
                            ports.discard(p)
                        ex = head.extra
                        if ex is not None and not ex.xwaits:
                            ex = None
                        if xreg[p] is not ex:
                            register(p, ex)
                        t = time_of(head)
                        if t is None:
                            cache[p] = None
                        else:
                            e = cache[p]
                            if e is None or e[0] != t or e[1] != head.seq:
                                e = cache[p] = (t, head.seq, p)
                                push(ready, e)
                    else:
                        cache[p] = None
                        ports.discard(p)
                        if xreg[p] is not None:
                            register(p, None)
                dirty.clear()
            best = None
            best_t = 0.0
            while ready:  # the earliest (time, seq) of the heads that can start: the heap's first live entry
                e = ready[0]
                p = e[2]
                if cache[p] is e:
                    best, best_t = queues[p][heads[p]], e[0]
                    break
                pop(ready)  # an entry of a head that started, or whose start time changed
            if verify:
                self._verify_cache(cache)
            if events and (best is None or events[0][0] <= best_t):
                _, _, inst, snapshot, commit = pop(events)
                if steps is not None:
                    steps.append(~inst.seq)
                finish(inst, snapshot, commit)
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
            start(best, best_t)
            heads[p] += 1
            pending -= 1
            if self.xover:  # the frontier of its core moved (xcounter.py)
                recheck_xcounter(self, best)
            dirty.add(p)
            if best.port and ports:  # the GM port moved: the port heads not recomputed anyway start no earlier
                pf = self.port_free
                for o in ports:
                    if o not in dirty:
                        e = cache[o]
                        if e is not None and e[0] < pf:
                            e = cache[o] = (pf, e[1], o)
                            push(ready, e)
            if until is not None and until():
                return True
        return True
