"""a2a3's cross-core wait, which stalls the whole scalar unit of its core.

a2a3 lowers ``pl.system.wait_cross_core`` to ``wait_flag_dev(id)``, with no pipe (real codegen
``MakeCrossCoreWaitCodegenCCE``); PTO-ISA ``wait-flag-dev.md``: it "blocks the entire SU of the calling
core", all pipelines stall (``arch/pipes.py`` ``SU_CROSS_CORE_WAIT``; a5's ``wait_intra_block`` stalls
only its pipe and stays fused into its pipe's queue). So the recorder makes it a record of its own on
S, never fused, and gates every later record of the core by it (``Inst.gate``): the scheduler starts a
gated record no earlier than the wait's end and joins the wait's clock into it (scheduler.py
``start_time`` / ``_start``); the counter check's frontier stops at a stalled one (xcounter.py).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from pypto_pro.backends.sim.inst import PIPE_INDEX, SET, SyncSpec
from pypto_pro.ir.nodes import SyncOp
from pypto_pro.language.enums import PipeType

if TYPE_CHECKING:
    from pypto_pro.backends.sim.recorder import Recorder


def su_wait_builder(rec: "Recorder", stmt: SyncOp, key_of: Callable) -> Callable[[int], None]:
    """The builder of one a2a3 ``wait_cross_core`` call site of ``rec``. The syncs still pending before
    it become records of their own (dispatched before it, they are not held by it), it becomes a
    standalone record on S, no later sync is fused into a record built before it, and it gates every
    record ``rec`` builds after it."""
    s = PIPE_INDEX[PipeType.S]

    def build_su_wait(ev: int) -> None:
        at = rec.dispatched
        for p in range(len(PIPE_INDEX)):
            if rec.pending[p]:
                rec._flush(p)
        key = key_of(ev)
        spec = SyncSpec(xwaits=(key,))
        spec.origins.append(("xwait", key, stmt))
        inst = rec._standalone(s, SET, stmt, "xwait", spec, at)
        inst.su = True
        rec.gate = inst
        rec.last[:] = [None] * len(rec.last)
        rec.dispatched += 1
    return build_su_wait
