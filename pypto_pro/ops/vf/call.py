"""The ``vf_call`` instruction: a call of a ``@pl.vector_function`` from a ``pl.section_vector()``
(``ir.vf.VfCall``), one instruction of the V pipe whose simulator rule runs the VF body
(``backends/sim/vf/call.py``) and whose cost is the body's (``arch/costs_a5_vf.py``) and whose C++ is a ``__VEC_SCOPE__`` block (``backends/pto/vf.py``)."""
from __future__ import annotations

from pypto_pro.language.enums import PipeType
from pypto_pro.ops.decl import Cost, instruction

VF = Cost("vf", flops=True)


def rule(op, env):
    from pypto_pro.backends.sim.vf.call import rule as vf_rule  # the simulator imports the arch tables
    return vf_rule(op, env)


def cpp(op, ctx, arch: str) -> list[str]:
    """A ``__VEC_SCOPE__`` block of PTO-ISA a5 micro-instructions (``backends/pto/vf.py``)."""
    from pypto_pro.backends.pto.vf import emit_vf_call
    return emit_vf_call(op, ctx, arch)


instruction("vf_call", "vf", rule, VF, cpp, pipe=PipeType.V)
