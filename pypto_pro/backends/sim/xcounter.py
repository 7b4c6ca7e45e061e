"""The cross-core counter check: more than 15 signals of one sender pending for one (receiver, id).

A cross-core flag is a 4-bit counter per id and sender (PTO-ISA ``set-cross-core.md``: "if the counter
would overflow past 15, the hardware wraps the counter and signals an overflow error"; on a5 the
Cube keeps one per Vector core, ids ``e`` and ``e + 16``, ``set-intra-block.md``).

The simulator's scalar unit dispatches a whole program before the pipes run (docs/simulator.md,
"Execution model"), so a core's queues may hold any number of instructions that have not started. On
the chip the scalar unit issues each instruction into its pipe's queue and stops when that queue is
full; the depth of those queues is not documented. It is at least one: a5's ``wait_intra_block``
blocks only its own pipe while the other pipes go on (``wait-intra-core.md``), so a blocked
instruction sits in its queue while the scalar unit feeds the others. So at a given time the chip
has surely dispatched everything before the *second* not-started instruction of each of the core's
queues (its *frontier*, :func:`frontier`); what comes after may still be undispatched on a chip
with shallow queues. On a2a3 a cross-core wait stalls the scalar unit itself (``wait_flag_dev``,
PTO-ISA ``wait-flag-dev.md``): while the head of S is such a wait, the frontier is that wait, since
nothing after it is dispatched (nor, gated by it, started) until it is satisfied.

A signal counts toward an overflow only once it is behind the frontier: then every chip sends it
by this time, whatever its queue depths (in this schedule's timing). More than 15 such signals pending
is a ``SyncError`` naming the set and the receiver's next wait. More than 15 pending only because
the sender's scalar unit ran past its own blocked instructions (the real flash-attention kernels'
idle AIV1 in ``single_vec0`` tail tiles: its ``set_cross_core`` on MTE3 has nothing to wait for,
while its V queue holds the blocked ``wait_cross_core`` of every task) is a note saying how many
not-started instructions one queue would have to hold. The check runs again as the sender's
instructions start (the frontier moves) while such a count lasts.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from pypto_pro.backends.sim.cross_core import xid_str
from pypto_pro.backends.sim.inst import CORE_NAMES, NPIPES, OP, PIPES, Inst, sync_where
from pypto_pro.errors_sim import SyncError

if TYPE_CHECKING:
    from pypto_pro.backends.sim.scheduler import CoreScheduler

XFLAG_MAX = 15  # cross-core flag counter depth (4 bits)
INF = float("inf")


def _core(core: int) -> str:
    return CORE_NAMES[core] if 0 <= core < len(CORE_NAMES) else f"core{core}"


def _entries(inst: Inst) -> tuple:
    """Dispatch indices of the chip instructions behind one record, in order: the syncs folded in
    before it, then its own."""
    ex = inst.extra
    return (ex.pre_at if ex is not None else ()) + (inst.at,)


def frontier(s: "CoreScheduler", core: int) -> tuple[float, int]:
    """(dispatch index, queue): everything ``core`` dispatched below the index has surely been
    dispatched on the chip by now; the queue is the one whose second not-started instruction sets it
    (-1 and ``inf``: no queue holds two). Records of unknown dispatch index (-1) bound nothing."""
    bound, which = INF, -1
    for q in range(core * NPIPES, (core + 1) * NPIPES):
        line, seen = s.queues[q], 0
        h = s.heads[q]
        if h < len(line) and line[h].su and 0 <= line[h].at < bound:
            # a2a3: the scalar unit is stalled at this cross-core wait: it has dispatched it and nothing after
            bound, which = line[h].at + 1, q
        for i in range(s.heads[q], len(line)):
            for at in _entries(line[i]):
                seen += 1
                if seen == 2:
                    if 0 <= at < bound:
                        bound, which = at, q
                    break
            if seen >= 2:
                break
    return bound, which


def _next_wait(s: "CoreScheduler", key: tuple) -> str:
    """The receiver's first not-started ``wait_cross_core`` that takes signals of ``key``."""
    core = key[0]
    for q in range(core * NPIPES, (core + 1) * NPIPES) if core >= 0 else ():
        line = s.queues[q]
        for i in range(s.heads[q], len(line)):
            ex = line[i].extra
            for k, count in ex.xwaits if ex is not None else ():
                if k == key:
                    return (f"the receiver's next wait for it, wait_cross_core at "
                            f"{sync_where(line[i], 'xwait', (k, count))} on {_core(core)}.{PIPES[q % NPIPES].name}, "
                            f"has not started")
    return "no wait_cross_core of the receiver is left for it"


def _behind(s: "CoreScheduler", q: int, upto: float) -> tuple[int, Inst | None]:
    """Not-started instructions of queue ``q`` dispatched before index ``upto``, and the first."""
    line, n, first = s.queues[q], 0, None
    for i in range(s.heads[q], len(line)):
        ats = [a for a in _entries(line[i]) if a < upto]
        if not ats:
            break
        n += len(ats)
        first = first or line[i]
    return n, first


def check(s: "CoreScheduler", key: tuple, sender: int) -> None:
    """Judge the signals of ``sender`` pending for ``key`` (called when one lands beyond the counter's
    depth, and again as the sender's instructions start while the count lasts)."""
    pend = s.xflags.get(key, {}).get(sender, ())
    if len(pend) <= XFLAG_MAX or (key, sender) in s.xreported:
        _unwatch(s, key, sender)
        return
    bound, q = frontier(s, sender)
    sure = [p for p in pend if p[3] < bound]
    newest = pend[-1]
    after = f" (after {newest[2].describe()})" if newest[2].kind == OP else ""
    where = f"  set_cross_core at {sync_where(newest[2], 'xset', key)}{after}"
    head = f"cross-core event {xid_str(key[1])} to {_core(key[0])}"
    if len(sure) > XFLAG_MAX:
        s.xreported.add((key, sender))
        _unwatch(s, key, sender)
        note = s.xnoted.pop((key, sender), None)
        if note is not None:  # the run-ahead it noted has been caught up with: the overflow is sure now
            s.reporter.notes.remove(note)
        s.reporter.report(SyncError(
            f"{head} is signalled {len(sure)} times without being waited for (the hardware counter holds "
            f"{XFLAG_MAX})\n{where}: the {len(sure)}th pending signal of {_core(sender)}\n  {_next_wait(s, key)}"))
        return
    s.xover.setdefault(sender, set()).add(key)
    if (key, sender) in s.xnoted:
        return
    n, first = _behind(s, q, max(p[3] for p in pend))
    blocked = f" (the first: {_first_line(first)})" if first is not None else ""
    note = (f"{head}: {len(pend)} signals of {_core(sender)} pending, more than its counter holds ({XFLAG_MAX}), only "
            f"because the simulator's scalar unit dispatched past {_core(sender)}'s own blocked instructions: surely sent by now "
            f"on the chip: {len(sure)}, the others only if {_core(sender)}'s "
            f"{PIPES[q % NPIPES].name} queue holds {n} instructions that have not started{blocked}; that depth is "
            f"not documented (docs/simulator.md, 'Cross-core counters')\n{where}\n  {_next_wait(s, key)}")
    s.xnoted[(key, sender)] = note
    s.reporter.notes.append(note)


def _unwatch(s: "CoreScheduler", key: tuple, sender: int) -> None:
    keys = s.xover.get(sender)
    if keys is not None:
        keys.discard(key)
        if not keys:
            del s.xover[sender]


_SYNC_NAMES = {"xwait": "wait_cross_core", "xset": "set_cross_core"}


def _first_line(inst: Inst) -> str:
    """The first chip instruction behind ``inst`` (a sync folded in before it, else its own) and its line."""
    ex = inst.extra
    if ex is not None and ex.origins:
        kind, key, _ = ex.origins[0]
        return f"{_SYNC_NAMES.get(kind, kind)} at {sync_where(inst, kind, key)}"
    return f"{_SYNC_NAMES.get(inst.name, inst.name)} at {inst.where()}"


def recheck(s: "CoreScheduler", inst: Inst) -> None:
    """``inst`` started: the frontier of its core may have moved past pending signals."""
    keys = s.xover.get(inst.pipe // NPIPES)
    for key in list(keys) if keys else ():
        check(s, key, inst.pipe // NPIPES)
