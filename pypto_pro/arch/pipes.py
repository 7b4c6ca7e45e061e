"""Which pipes each engine has, and what the hardware guarantees between two instructions of one
pipe's queue, per arch family. docs/simulator.md ("Hazards inside one pipe") gives the reasoning.

A pipe is *in order* (``ORDERED``) when a later instruction of its queue always observes the
memory effects of every earlier one, so dependent instructions need no barrier between them. On
the other pipes an instruction may start while its predecessor's writes are still landing:
dependent instructions of one queue need ``pipe_barrier(pipe)`` between them (or a flag / buffer-id
round trip through another pipe, which also waits for the queue to drain).
"""
from __future__ import annotations

from pypto_pro.language.enums import PipeType, SectionKind

P = PipeType

# Pipes each engine's program may name (sync, barrier, cross-core calls). Source: the real pages
# operation/synchronization/barrier.md ("调用位置": bar_m / bar_mte1 / bar_fix in a Cube section,
# bar_mte2 / bar_mte3 / bar_all in either) and set_cross_core_wait_cross_core.md (Cube -> V with
# set(FIX) + wait(V), V -> Cube with set(MTE3 / V) + wait(MTE1 / FIX)). Same on both families.
ENGINE_PIPES: dict[SectionKind, frozenset[PipeType]] = {
    SectionKind.VECTOR: frozenset({P.S, P.V, P.MTE2, P.MTE3}),
    SectionKind.CUBE: frozenset({P.S, P.M, P.MTE1, P.MTE2, P.MTE3, P.FIX}),
}

ENGINE_NAMES = {SectionKind.VECTOR: "the Vector engine (section_vector)", SectionKind.CUBE: "the Cube engine (section_cube)"}

_ASCENDC = ("Ascend C PipeBarrier(ISASI) (hiascend.com, atlasascendc_api_07_0271): 'dependent instructions of the "
            "same pipe need this barrier'; PIPE_S is ordered by the hardware (PipeBarrier<PIPE_S> is an error)")
_A2A3 = ("PTO-ISA include/pto/npu/a2a3/TSync.hpp: TSYNC<Op> accepts S/V/M/MTE1/MTE2/MTE3/FIX and a same-pipe "
         "Event waits with pipe_barrier(pipe); the a2a3 tile ops put pipe_barrier(PIPE_V) between their own "
         "dependent vector instructions (e.g. TRowReduceOps.hpp, TCvt.hpp)")
_A5 = ("PTO-ISA include/pto/npu/a5/TSync.hpp: TSYNC<Op> only accepts MTE2 / MTE3 / ALL, and a same-pipe Event "
       "emits pipe_barrier only when the pipe is MTE2 or MTE3; docs/isa/vector/pipeline-sync.md: 'without a "
       "barrier, MTE3 may reorder' two copies to one GM address")

# pipes whose queue is in order (see the module docstring), per family, with the source
ORDERED: dict[str, tuple[frozenset[PipeType], str]] = {
    "a2a3": (frozenset({P.S}), f"{_ASCENDC}; {_A2A3}"),
    "a5": (frozenset({P.S, P.V, P.M, P.MTE1, P.FIX}), f"{_ASCENDC}; {_A5}"),
}


def in_order(arch: str, pipe: PipeType) -> bool:
    """True when dependent instructions of ``pipe``'s queue need no barrier on ``arch``."""
    return pipe in ORDERED[arch][0]


def unordered_pipes(arch: str) -> tuple[PipeType, ...]:
    """The pipes of ``arch`` whose dependent instructions need ``pipe_barrier`` between them."""
    return tuple(p for p in PipeType if p is not P.ALL and p not in ORDERED[arch][0])


# Whether a cross-core wait (``pl.system.wait_cross_core``) blocks the whole scalar unit (every pipe:
# nothing the core dispatches after it starts before it is satisfied) or only its named pipe, per
# family, with the source. a2a3 lowers every mode to ``wait_flag_dev(id)``, which has no pipe
# (real codegen ``MakeCrossCoreWaitCodegenCCE`` in framework/src/interface/pypto_pro/backend/
# backend_cce_ops.cpp, the op registered on PIPE_S); a5 lowers INTRA_BLOCK / UNICAST_BLOCK to
# ``wait_intra_block(pipe, id)``.
SU_CROSS_CORE_WAIT: dict[str, tuple[bool, str]] = {
    "a2a3": (True, "PTO-ISA docs/isa/scalar/ops/pipeline-sync/wait-flag-dev.md: 'blocks the entire SU of the calling "
                   "core ... all pipelines are stalled', 'A2A3 only'; Ascend C CrossCoreWaitFlag(ISASI) "
                   "(atlasascendc_api_07_0274, A2/A3): with the counter at 0, every instruction after the wait is "
                   "blocked until it is non-zero"),
    "a5": (False, "PTO-ISA docs/isa/scalar/ops/pipeline-sync/wait-intra-core.md: 'Only the named pipeline stalls; "
                  "other pipelines on the same core continue executing'"),
}


def cross_core_wait_blocks_su(arch: str) -> bool:
    """True when a cross-core wait on ``arch`` stalls the core's scalar unit (all pipes), not one pipe."""
    return SU_CROSS_CORE_WAIT[arch][0]
