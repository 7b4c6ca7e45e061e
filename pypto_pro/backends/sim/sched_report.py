"""What the block scheduler reports rather than schedules: the static double-lock check, the
end-of-kernel findings (signals and flags left over) and the deadlock / stall report.

Split out of scheduler.py (which keeps the discrete-event loop): each function reads a
:class:`~pypto_pro.backends.sim.scheduler.CoreScheduler`'s state and reports through its reporter;
none changes the schedule.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from pypto_pro.backends.sim.cross_core import xid_str
from pypto_pro.backends.sim.inst import CORE_NAMES, NPIPES, PIPES, Inst, queue_name, sync_where
from pypto_pro.errors_sim import DeadlockError, SyncError

if TYPE_CHECKING:
    from pypto_pro.backends.sim.scheduler import CoreScheduler


def lock_id(mid) -> str:
    """A buffer id as messages name it: ``3 on AIV0`` for a core's own id space."""
    return f"{mid[1]} on {core_name(mid[0])}" if isinstance(mid, tuple) else str(mid)


def core_name(core: int) -> str:
    if core < 0:
        return f"core{-core - 2} (sync_all barrier)"
    return CORE_NAMES[core] if core < len(CORE_NAMES) else f"core{core}"


def flag_str(key: tuple) -> str:
    src, dst, ev = key
    core = f"{core_name(src // NPIPES)}." if src >= NPIPES else ""
    return f"set_flag({core}{PIPES[src % NPIPES].name}, {PIPES[dst % NPIPES].name}, event={ev})"


def _loc_line(inst: Inst) -> str:
    loc = inst.loc
    if loc is None:
        return ""
    src = loc.source_line.strip() if loc.source_line else ""
    return f"{loc.path}:{loc.line}" + (f"  `{src}`" if src else "")


def check_double_locks(s: "CoreScheduler") -> None:
    """Static check of each queue's lock / unlock pairs: a second lock of a held id, an unlock of an
    id not held, an id still held at the end."""
    for q in s.queues:
        held: dict = {}
        for inst in q:
            ex = inst.extra
            if ex is None:
                continue
            seen: dict = {}
            for mid in ex.acquires:
                nth = seen[mid] = seen.get(mid, -1) + 1
                if mid in held:
                    first, first_nth = held[mid]
                    s.reporter.report(SyncError(
                        f"{PIPES[inst.pipe % NPIPES].name} locks buffer id {lock_id(mid)} twice without unlocking it "
                        f"(this hangs the hardware):\n  first:  lock at {sync_where(first, 'lock', mid, first_nth)}\n"
                        f"  second: lock at {sync_where(inst, 'lock', mid, nth)}"))
                held[mid] = (inst, nth)
            for mid in ex.releases:
                if mid not in held:
                    s.reporter.report(SyncError(
                        f"{PIPES[inst.pipe % NPIPES].name} unlocks buffer id {lock_id(mid)} that it does not hold "
                        f"(unlock at {sync_where(inst, 'unlock', mid)})"))
                held.pop(mid, None)
        for mid, (inst, nth) in held.items():
            s.reporter.report(SyncError(
                f"{PIPES[inst.pipe % NPIPES].name} still holds buffer id {lock_id(mid)} when the kernel ends "
                f"(lock at {sync_where(inst, 'lock', mid, nth)} is never unlocked)"))


def end_checks(s: "CoreScheduler") -> None:
    """The end-of-kernel checks (with ``checks``): cross-core signals and flags left over."""
    if s.checks:  # a cross-core flag is a counter (PTO-ISA set-cross-core): a count left over is benign
        for key, senders in s.xflags.items():
            for pend in senders.values():
                if pend and key[0] < 0:  # a sync_all barrier signal left over: our barrier model is wrong
                    s.reporter.report(SyncError(f"sync_all barrier signal left pending at kernel end: "
                                                f"{pend[0][2].describe()}"))
                elif pend:
                    s.reporter.notes.append(
                        f"cross-core event {xid_str(key[1])} to {core_name(key[0])} is signalled but never waited "
                        f"for ({len(pend)} pending at kernel end): the event's counter is left at {len(pend)}, "
                        f"which changes nothing in this launch\n  set_cross_core at "
                        f"{sync_where(pend[0][2], 'xset', key)} (after {pend[0][2].describe()})")
    if s.checks and s.flags:  # the real kernels pre-set "slot free" flags and never drain them
        for key, (t, _, setter) in sorted(s.flags.items(), key=lambda kv: kv[1][0]):
            s.reporter.notes.append(
                f"{flag_str(key)} is never waited for: the flag is still set when the kernel ends. Nothing "
                f"in this launch depends on it (the real flash-attention kernels pre-set their slot-free flags "
                f"this way), but a later kernel on this core that waits for it first would pass at once: drain "
                f"it with a wait_flag at the end if its kernels do\n  set at "
                f"{sync_where(setter, 'set_flag', key)} (after {setter.describe()})")


def _stall_line(s: "CoreScheduler", p: int) -> str:
    """Why pipe ``p`` is stalled at a set_flag: the flag is still set by an earlier set."""
    inst, _, key, (sets, _, _) = s.stalled[p]
    nth = sum(1 for k in inst.extra.sets[:len(inst.extra.sets) - len(sets)] if k == key)
    first = s.flags[key][2]
    left = len(s.queues[p]) - s.heads[p]
    return (f"  {queue_name(p, s.nq > NPIPES):8} stalled at {flag_str(key)} ({sync_where(inst, 'set_flag', key, nth)}): "
            f"the flag is still set by the set at {sync_where(first, 'set_flag', key)} (after {first.describe()}), "
            f"which no wait_flag has cleared (a set_flag of a flag still set waits until a wait_flag clears it)  "
            f"[{left} instruction(s) left]")


def deadlock(s: "CoreScheduler") -> None:
    """Raise the ``DeadlockError`` that says, for every queue left, what its head waits for."""
    lines = [_stall_line(s, p) for p in sorted(s.stalled)]
    behind: dict[Inst, list[int]] = {}  # a2a3: a stalled cross-core wait -> the queues held only by it
    for p in range(s.nq):
        h = s.heads[p]
        if h >= len(s.queues[p]) or p in s.stalled:
            continue
        inst = s.queues[p][h]
        ex = inst.extra
        what = []
        for key in ex.waits if ex else ():
            if key not in s.flags:
                what.append(f"wait_{flag_str(key)[4:]}: no pending set_flag (wait at {sync_where(inst, 'wait_flag', key)})")
        for key, count in ex.xwaits if ex else ():
            pend = s.xflags.get(key, {})
            if type(count) is tuple:
                have = 1 if pend.get(count[1]) else 0
                whose = f"the signal of {core_name(count[1])} has not arrived" if not have else "arrived"
                what.append(f"wait_cross_core(event={xid_str(key[1])}) at "
                            f"{sync_where(inst, 'xwait', (key, count))}: {whose}")
                continue
            have = sum(1 for q in pend.values() if q)
            what.append(f"wait_cross_core(event={xid_str(key[1])}) at {sync_where(inst, 'xwait', (key, count))}: "
                        f"{have} of {count} signal(s) arrived")
        for mid in ex.acquires if ex else ():
            lock = s.locks[mid]
            holder = lock.holder
            ahead = lock.line[lock.pos]
            where = sync_where(inst, "lock", mid)
            if holder is not None:
                what.append(f"lock(buf_id={lock_id(mid)}) at {where}: held by {holder.describe()}")
            elif ahead is not inst:
                what.append(f"lock(buf_id={lock_id(mid)}) at {where}: granted in dispatch order, waiting behind "
                            f"{ahead.describe()}")
        g = inst.gate
        if g is not None and g.vc is None:
            if not what:  # only the stalled scalar unit holds it: one line per core below
                behind.setdefault(g, []).append(p)
                continue
            what.append(f"the scalar unit, stalled at wait_cross_core at {sync_where(g, 'xwait', g.extra.xwaits[0])}")
        left = len(s.queues[p]) - h
        lines.append(f"  {queue_name(p, s.nq > NPIPES):8} blocked at {inst.name} ({_loc_line(inst)}) waiting for "
                     f"{'; '.join(what) or 'nothing?'}  [{left} instruction(s) left]")
    for g, qs in behind.items():
        names = ", ".join(queue_name(q, s.nq > NPIPES) for q in qs)
        lines.append(f"  {names}: held by the scalar unit, stalled at wait_cross_core at "
                     f"{sync_where(g, 'xwait', g.extra.xwaits[0])} (a2a3: wait_flag_dev blocks every pipe of the "
                     f"core until its signals arrive)")
    pending = [f"  {flag_str(key)} from {sync_where(setter, 'set_flag', key)} is set and not waited for"
               for key, (_, _, setter) in s.flags.items()]
    text = f"deadlock in block {s.block}: no pipe can make progress\n" + "\n".join(lines)
    if pending:
        text += "\npending flags:\n" + "\n".join(pending)
    if s.reporter.faults:
        text += "\nfaults reported before the deadlock:\n" + "\n".join(f"  {f}" for f in s.reporter.faults)
    raise DeadlockError(text)
