"""``pl.set_stride(tensor, stride)``: overwrite a GM tensor's row / column strides in place (real page
``memory_vector_computation/transpose_and_element_access/set_stride.md``; a5 only).

The real codegen declares one PTO ``GlobalTensor`` per tensor and emits
``t.SetStride<DIM_3, DIM_4>(row, col)``: later ``pl.load`` / ``pl.store`` of ``t`` step ``row``
elements between the tile's rows and ``col`` between its columns, while their offsets are still
computed from the declared shape. It is a scalar-unit (S pipe) write of a descriptor, in program
order: a load issued before it uses the old strides. The strides may be run-time scalars (read
from GM). For the packed FP4 types they count logical 4-bit elements (the declared shape counts
bytes). Simulator side: ``backends/sim/gm_strided.py``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from pypto_pro.backends.sim.kit import Prepared, SimEnv, no_run
from pypto_pro.frontend.operands import Args, element_node, want_index, want_tensor
from pypto_pro.ir.expr import Const
from pypto_pro.ir.nodes import TileOp
from pypto_pro.language.enums import PipeType
from pypto_pro.ops.decl import SCALAR, api, instruction

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

FAMILY = "transpose_and_element_access"


@api(FAMILY)
def set_stride(tensor: Any, stride: Any) -> None:
    """Overwrite the ``[row_stride, col_stride]`` (elements) that later loads and stores of the GM
    ``tensor`` walk the tile's rows and columns with (S pipe; see the module)."""


@set_stride.check
def _set_stride_check(p: "FunctionParser", node, a: Args) -> None:
    t = want_tensor(p, a, "tensor")
    if p.ctx.arch.name != "a5":
        p.fail(node, f"pl.set_stride exists on a5 (Ascend 950) only, not on {p.ctx.arch.name}")
    stride = a["stride"]
    snode = a.node("stride")
    if not isinstance(stride, (list, tuple)) or len(stride) != 2:
        p.fail(snode, f"'stride' must be a list [row_stride, col_stride], got {p.describe(stride)}")
    vals = []
    for i, v in enumerate(stride):
        at = element_node(snode, 2, i)
        v = want_index(p, at, v, f"stride[{i}]")
        if isinstance(v, int) and v < 0:
            p.fail(at, f"stride[{i}] = {v} is negative; pl.set_stride takes element steps >= 0")
        vals.append(v if not isinstance(v, int) else Const(v))
    if t.param.type.rank < 1:
        p.fail(a.node("tensor"), "pl.set_stride needs a tensor of rank >= 1")
    p.ctx.builder.emit(TileOp("set_stride", PipeType.S, None, (), tuple(vals),  # type: ignore[arg-type]
                              {"api": "set_stride", "tensor": t.param.name, "index": t.param.index}, p.loc(node)))


def _sim(op: TileOp, env: SimEnv) -> Callable:
    descriptors, index = env.gm.strides, op.attrs["index"]

    def dispatch(row: int, col: int) -> Prepared:
        descriptors[index] = (int(row), int(col))  # the scalar unit writes the descriptor when it issues
        return Prepared(0, 0, True, (), (), 0, no_run)
    return dispatch


def _cpp(op: TileOp, ctx, arch: str) -> list[str]:
    """The program's descriptor of the tensor (``backends/pto``: a flag and two steps that every later
    window of it uses, as the real ``SetStride<DIM_3, DIM_4>`` on its one GlobalTensor)."""
    flag, rs, cs = ctx.strides(op.attrs["tensor"])
    row, col = (ctx.cexpr(e) for e in op.scalars)
    return [f"{flag} = true; {rs} = static_cast<int64_t>({row}); {cs} = static_cast<int64_t>({col});"]


instruction("set_stride", FAMILY, _sim, SCALAR, _cpp, pipe=PipeType.S)
