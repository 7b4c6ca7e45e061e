"""``pl.get_spr()`` (``vf_computation/data_movement/get_spr.md``): the scalar unit reads the AR special
register, the byte count the last ``vf.squeeze(..., STORE_REG)`` of this core left (``vf.clear_spr``
sets it to 0). Kernel code only (the real ``get_ar`` is an ``__aicore__`` instruction, not a VF one),
an int64 scalar.

AR is one register per core (``backends/sim/vec_mask.py`` holds it with the other special registers;
0 at kernel start, our assumption: the page does not say). The read is an S-pipe instruction whose
value the scalar program waits for (``backends/sim/live.py``, as ``pl.getval``): it sees AR as the
VF calls executed before it in the schedule left it, so read it after the VF call is ordered before
S (the V pipe drains before a ``pl.section_vector()`` ends).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from pypto_pro.backends.sim.kit import scalar_read
from pypto_pro.frontend.operands import Args
from pypto_pro.ir.nodes import TileOp
from pypto_pro.language.dtypes import DT_INT64
from pypto_pro.language.enums import PipeType
from pypto_pro.ops.decl import SCALAR, api, instruction

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

FAMILY = "vf_data_movement"


@api(FAMILY)
def get_spr() -> int:
    """Read the AR special register (the byte count of the last vf.squeeze with STORE_REG) as an int64."""


@get_spr.check
def _check(p: "FunctionParser", node, a: Args):
    if getattr(p, "vf", None) is not None:
        p.fail(node, "pl.get_spr() is a scalar-unit instruction: call it in the kernel, not inside a "
                     "@pl.vector_function")
    var = p.new_var("spr_ar", DT_INT64)
    p.ctx.builder.emit(TileOp("get_spr", PipeType.S, None, (), (), {"result": var, "api": "get_spr"}, p.loc(node)))
    return var


def _sim(op: TileOp, env):
    spr = env.spr

    def dispatch():
        return scalar_read((), (), 8, lambda: int(getattr(spr, "ar", 0)))
    return dispatch


def _cpp(op: TileOp, ctx, arch: str) -> list[str]:
    return [f"{ctx.cexpr(op.attrs['result'])} = get_ar();"]


instruction("get_spr", FAMILY, _sim, SCALAR, _cpp, pipe=PipeType.S, params=lambda op, arch: {"bytes": 8})
