"""The ``vf_call`` instruction: a call of a ``@pl.vector_function`` from a ``pl.section_vector()``
(``ir.vf.VfCall``), one instruction of the V pipe whose simulator rule runs the VF body
(``backends/sim/vf/call.py``) and whose cost is the body's (``arch/costs_a5_vf.py``)."""
from __future__ import annotations

from pypto_pro.language.enums import PipeType
from pypto_pro.ops.decl import Cost, instruction

VF = Cost("vf", flops=True)


def rule(op, env):
    from pypto_pro.backends.sim.vf.call import rule as vf_rule  # the simulator imports the arch tables
    return vf_rule(op, env)


instruction("vf_call", "vf", rule, VF, pipe=PipeType.V,
            cpp_missing="the PTO-ISA C++ backend does not emit VF bodies (__VEC_SCOPE__ micro-instructions) yet; "
                        "run @pl.vector_function kernels on the simulator")
