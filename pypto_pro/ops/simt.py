"""``pl.simt.launch``: the one IR instruction of SIMT code (its ``pl.simt.*`` API and frontend rules:
``language/simt.py``, ``frontend/simt.py``; its IR: ``ir/simt.py``).

A launch is a V-pipe instruction of the Vector core. The simulator runs its body for all threads at
once and prices it from what they executed (``backends/sim/simt``). The C++ backend cannot spell it:
PTO-ISA has no construct for a user-defined SIMT function (its a5 SIMT code exists only inside its own
fixed kernels, such as ``MGather``), so ``kernel.emit()`` reports a located CompileError.
"""
from __future__ import annotations

from pypto_pro.backends.sim.simt.rule import sim_rule
from pypto_pro.errors import CompileError
from pypto_pro.ops.decl import SIMT, instruction
from pypto_pro.language.enums import PipeType

FAMILY = "simt"


def _cpp(op, ctx, arch: str) -> list[str]:
    raise CompileError(f"pl.simt.launch({op.attrs.get('callee', '?')}, ...) cannot be emitted as PTO-ISA C++: "
                       "PTO-ISA has no user-defined SIMT functions; run this kernel on the simulator", op.loc,
                       kind="unsupported")


def _params(op, arch) -> dict[str, int]:
    return {"threads": op.total_threads, "warps": -(-op.total_threads // int(op.model.warp_size.value))}


instruction("simt_launch", FAMILY, sim_rule, SIMT, _cpp, pipe=PipeType.V, params=_params)
