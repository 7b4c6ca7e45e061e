"""Reuse of one block's schedule by the blocks whose instruction streams time the same way.

SPMD kernels give most blocks the same instruction stream up to global addresses: same pipes,
costs, issue times, sync structure and on-chip tiles. The scheduler's decisions (start and end
of every instruction, vector clocks, the order of starts and finishes) depend on nothing else,
so a block whose :func:`schedule_signature` equals an earlier block's gets that block's schedule
replayed: times and clocks are copied, and the numerics and their commits run in the recorded
order, exactly as the scheduler would run them.

The signature also fixes every on-chip access (a tile instruction's on-chip footprint is a
function of its statement, its tile slots and its work size, all in the signature), and the
on-chip checker starts each block afresh; a schedule is kept only if its block reported no
fault, so a replayed block cannot have on-chip faults either and only the global-memory checker
(other addresses, other blocks) runs during a replay. Blocks that differ (edge tiles, another
wave's bandwidth share, other L2 reuse or trip counts) are scheduled and checked from scratch.
"""
from __future__ import annotations

from operator import attrgetter
from typing import Callable

from pypto_pro.backends.sim.inst import Inst

_PRICED = attrgetter("cycles", "port")


def schedule_signature(tokens: list, l2_insts: list[Inst]) -> tuple:
    """What a block's schedule depends on: the recorders' tokens (which cost entry each op call
    used, which statement and event each sync had; the recorder is deterministic in these, so
    they fix every record's pipe, cost, issue time and sync effects) and the L2-priced cost of
    each GM access. Addresses and numerics are left out."""
    return tuple(tokens), tuple(map(_PRICED, l2_insts))


class RecordedSchedule:
    """A scheduled block: per-instruction times and clocks, and the order of starts (``i``) and
    finishes (``~i``) that the scheduler went through."""

    def __init__(self, insts: list[Inst], steps: list[int], busy: list[float], end_time: float,
                 flows: list[tuple[Inst, Inst, str]] | None):
        self.times = [(i.start, i.end, i.cycles, i.vc) for i in insts]
        self.steps = steps
        self.busy = list(busy)
        self.end_time = end_time
        self.flows = [(a.seq, b.seq, label) for a, b, label in flows] if flows is not None else None

    def replay(self, insts: list[Inst], on_start: Callable[[Inst], None] | None, defer: bool,
               on_commit: Callable | None) -> list[tuple[Inst, Inst, str]] | None:
        """Give ``insts`` this schedule and run their numerics and checks in its order; return the
        flow arrows (set -> wait edges) for the trace, if they were recorded."""
        for inst, (start, end, cycles, vc) in zip(insts, self.times):
            inst.start = start
            inst.end = end
            inst.cycles = cycles
            inst.vc = vc
        pending: dict[int, Callable] = {}
        for k in self.steps:
            if k >= 0:
                inst = insts[k]
                if on_start is not None:
                    on_start(inst)
                if inst.run is not None:
                    commit = inst.run(defer)
                    if commit is not None:
                        pending[k] = commit
            else:
                k = ~k
                commit = pending.pop(k, None)
                if commit is not None:
                    commit()
                if on_commit is not None:
                    for w in insts[k].commits:
                        on_commit(*w)
        if self.flows is None:
            return None
        return [(insts[a], insts[b], label) for a, b, label in self.flows]
