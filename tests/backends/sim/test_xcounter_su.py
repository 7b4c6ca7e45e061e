"""The cross-core counter check's frontier on a2a3 (``xcounter.frontier``): while the head of a core's S
queue is a cross-core wait that stalls the scalar unit, nothing after that wait is dispatched, so the
frontier is the wait itself (docs/simulator.md, "Cross-core counters")."""
from __future__ import annotations

from pypto_pro.backends.sim.inst import OP, PIPE_INDEX, SET, Inst, SyncSpec
from pypto_pro.backends.sim.scheduler import CoreScheduler, Reporter
from pypto_pro.backends.sim.xcounter import frontier
from pypto_pro.language.enums import PipeType

S, V, MTE2 = PIPE_INDEX[PipeType.S], PIPE_INDEX[PipeType.V], PIPE_INDEX[PipeType.MTE2]


def _inst(seq: int, pipe: int, at: int, kind: int = OP, spec: SyncSpec | None = None) -> Inst:
    inst = Inst(seq, pipe, kind, 1.0, None, "op", extra=spec)
    inst.at = at
    return inst


def _sched(su: bool) -> CoreScheduler:
    """One core: a cross-core wait (dispatch index 1) on S (a2a3) or V (a5), with a V op before it and an
    MTE2 load and a V op after it. Nothing has started."""
    wait = _inst(1, S if su else V, 1, SET, SyncSpec(xwaits=(((0, 3), 1),)))
    wait.su = su
    insts = [_inst(0, V, 0), wait, _inst(2, MTE2, 2), _inst(3, V, 3), _inst(4, MTE2, 4)]
    for later in insts[2:]:
        later.gate = wait if su else None
    return CoreScheduler(insts, Reporter("raise"), None, 0, checks=False)


def test_frontier_stops_at_a_stalled_scalar_unit_wait():
    # without the rule it would be V's second not-started instruction (dispatch index 3)
    assert frontier(_sched(True), 0) == (2, S)


def test_a5_frontier_is_the_second_not_started_instruction_of_a_queue():
    # V holds the op (0) and the wait (1), then the op at 3: its second not-started entry is the wait
    assert frontier(_sched(False), 0) == (1, V)
