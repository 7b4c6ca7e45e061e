"""The ``scale=`` argument of the fixpipe paths (``pl.store`` / ``pl.store_tile`` / ``pl.move`` out of
an Acc tile): what the real frontend accepts, as attributes and scalar operands of the instruction.

A compile-time number is encoded once (``backends/sim/fixpipe.encode``); a run-time fp32 scalar is
bit-cast at run time and a run-time int32 / int64 scalar carries the fp32 bits (as the real
``_resolve_scale_param``). A Scaling tile (per-channel) is not supported yet in this release.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pypto_pro.backends.sim import fixpipe
from pypto_pro.frontend.operands import Args
from pypto_pro.ir.expr import Expr
from pypto_pro.frontend.values import TileValue
from pypto_pro.ir.nodes import TileRef

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser


def scale_operand(p: "FunctionParser", a: Args, src_dtype: str, dst_dtype: str, attrs: dict) -> tuple[Expr, ...]:
    """Check ``scale`` and record it in ``attrs``; returns the run-time scalar operands it needs."""
    v = a["scale"]
    if v is None:
        return ()
    node = a.node("scale")
    if isinstance(v, (TileRef, TileValue)):
        p.fail(node, f"{a.display}(scale=<Scaling tile>): per-channel quantisation is not supported yet in this "
                     "release; pass a float or a run-time fp32 scalar (per-tensor)")
    if (src_dtype, dst_dtype) not in fixpipe.SCALED:
        if dst_dtype == "DT_UINT8":
            p.fail(node, f"{a.display}: scale quantisation to DT_UINT8 is not supported (the fixpipe has no unsigned "
                         "requantisation); write DT_INT8")
        if dst_dtype == "DT_BF16":
            p.fail(node, f"{a.display}: scale quantisation from {src_dtype} to DT_BF16 is not supported (the fixpipe "
                         "only truncates to bf16); write DT_FP16")
    if isinstance(v, bool) or not isinstance(v, (int, float, Expr)):
        p.fail(node, f"scale must be a float, a run-time scalar or a Scaling tile, got {p.describe(v)}")
    if isinstance(v, (int, float)):
        attrs["deq"] = fixpipe.encode(float(v), dst_dtype)
        return ()
    dt = getattr(v, "dtype", None)
    name = getattr(dt, "name", "")
    if name not in ("DT_FP32", "DT_INT32", "DT_INT64"):
        p.fail(node, f"a run-time scale must be a DT_FP32 scalar (its bits are used) or a DT_INT32 / DT_INT64 scalar "
                     f"holding fp32 bits, got {name or p.describe(v)}")
    attrs["deq_runtime"] = "f32" if name == "DT_FP32" else "bits"
    attrs["deq_dst"] = dst_dtype
    return (v,)


def deq_word(attrs: dict, runtime: Any) -> int | None:
    """The deqScalar of one dispatch (None: no scale)."""
    if "deq" in attrs:
        return attrs["deq"]
    kind = attrs.get("deq_runtime")
    if kind is None:
        return None
    if kind == "f32":
        return fixpipe.encode(float(runtime), attrs["deq_dst"])
    return fixpipe.with_sign(int(runtime) & 0xFFFFFFFFFFFFFFFF, attrs["deq_dst"])
