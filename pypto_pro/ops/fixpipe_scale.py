"""The ``scale=`` argument of the fixpipe paths (``pl.store`` / ``pl.store_tile`` / ``pl.move`` out of
an Acc tile): what the real frontend accepts, as attributes, scalar operands and a source tile of
the instruction.

* a compile-time number: encoded once (``backends/sim/fixpipe.encode``: its fp32 bits, bit 46 for an
  int8 output, as the real codegen sets it);
* a run-time scalar: DT_FP32 (its bits, reinterpreted) or DT_INT32 / DT_INT64 (carrying the fp32
  bits already), as the real ``_resolve_scale_param``;
* a Scaling tile ``[1, N]`` DT_INT64 (per-channel quantisation, the real ``store_fp`` / ``move_fp``):
  one quant word per output column, read by the fixpipe in its vector mode. The user owns its data
  flow (load to Mat, ``pl.move`` to Scaling, sync before the store), as in the real language; it
  becomes a source operand, so the checkers see the fixpipe read it. The checks and their wording
  follow the real ``_auto_alloc_scaling_tile_hook`` / ``_validate_fp_shape_dtype`` (the hardware
  deqTensor: one row, ``N % 16 == 0`` for 128-byte rows, ``N <= 512`` for the 4 KB fixpipe buffer).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from pypto_pro.backends.sim import fixpipe
from pypto_pro.frontend.operands import Args
from pypto_pro.frontend.values import GroupValue, TensorValue, TileValue
from pypto_pro.ir.expr import Expr
from pypto_pro.ir.nodes import TileRef
from pypto_pro.language.enums import AccToVecMode, MemorySpace

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

FB_MAX_COLS = 512  # 4 KB fixpipe buffer / 8-byte words


def _scaling_tile(p: "FunctionParser", a: Args, v: TileValue) -> TileRef:
    """The real checks of a per-channel scale tile."""
    node, ref = a.node("scale"), v.ref
    tt = ref.tile_type
    if ref.buffer.space is not MemorySpace.Scaling:
        p.fail(node, "scale Tile must be allocated in MemorySpace.Scaling for per-channel quantization, got "
                     f"MemorySpace.{ref.buffer.space.name}")
    rows, cols = tt.rows, tt.cols
    if rows != 1:
        p.fail(node, f"scale tile must have shape [1, N] (row == 1), got [{rows}, {cols}]. Hardware FixPipe deqTensor "
                     "only supports per-column scaling ([1, N]); [N, 1] per-row scaling is not supported. Per-token "
                     "(row-wise) quantization must be done in the Vector (UB) domain.")
    if cols % 16:
        p.fail(node, f"scale tile [1, N]: N must be a multiple of 16 (128B alignment for INT64), got [1, {cols}]")
    if cols > FB_MAX_COLS:
        p.fail(node, f"scale tile [1, N]: N must be <= {FB_MAX_COLS} (4KB fixpipe buffer limit for INT64), got "
                     f"[1, {cols}]")
    if tt.dtype.name == "DT_FP32":
        p.fail(node, "scale tile dtype FP32 is not supported. Please convert FP32 scale to INT64 using "
                     "torch_npu.npu_trans_quant_param() before passing to kernel (or pack the fp32 bits in the "
                     "low word of an INT64 yourself)")
    if tt.dtype.name != "DT_INT64":
        p.fail(node, f"scale tile dtype must be INT64, got {tt.dtype.short}. For FP32 scale, use "
                     "torch_npu.npu_trans_quant_param() to convert to INT64.")
    return ref


def _check_pair(p: "FunctionParser", a: Args, src_dtype: str, dst_dtype: str) -> None:
    """The real ``_check_scale_dst_supported``: no unsigned requantisation, no scaled bf16."""
    node = a.node("scale")
    if dst_dtype == "DT_UINT8":
        p.fail(node, f"{a.display}: scale quantization to UINT8 is not supported (the fixpipe has no unsigned "
                     "requantisation path); write an INT8 output, or quantise in the Vector (UB) domain")
    if dst_dtype == "DT_BF16" and src_dtype in ("DT_FP32", "DT_INT32"):
        p.fail(node, f"{a.display}: scale quantization from {src_dtype} to BF16 is not supported (the fixpipe only "
                     "dequantises INT32 -> FP16 and only truncates FP32 -> BF16 without a scale); write an FP16 "
                     "output, or drop the scale")


def single_mode_only(p: "FunctionParser", a: Args) -> None:
    """A per-channel scale on an Acc -> Vec move takes a single mode (the real frontend checks it before
    the shapes)."""
    if isinstance(a.get("scale"), (TileValue, TileRef)) and \
            a.get("acc_to_vec_mode") in (AccToVecMode.DualModeSplitM, AccToVecMode.DualModeSplitN):
        p.fail(a.node("acc_to_vec_mode"), "scale (per-channel) only supports single-mode acc_to_vec_mode "
                                          "(SingleModeVec0 / SingleModeVec1)")


def scale_operand(p: "FunctionParser", a: Args, src_dtype: str, dst_dtype: str,
                  attrs: dict) -> tuple[tuple[Expr, ...], tuple[TileRef, ...]]:
    """Check ``scale`` and record it in ``attrs`` (``quant``: the fixpipe's mode, None when the pair has
    none and the scale is ignored, as on the chip); returns the run-time scalar operands and the
    Scaling tile (a source operand) it needs."""
    v = a["scale"]
    if v is None:
        return (), ()
    node = a.node("scale")
    arch = p.ctx.arch.name
    if isinstance(v, TensorValue):
        p.fail(node, "scale Tensor is not supported for per-channel quantization — pass a user-prepared Scaling "
                     "Tile (MemorySpace.Scaling, shape [1, N], INT64) instead, and ensure it is ready (load -> move "
                     "-> sync MTE1->FIX) before the store/move")
    if isinstance(v, GroupValue):
        p.fail(node, f"scale is tile group '{v.buffer.name}', not a tile; take one with .next(), .current() or [i]")
    if isinstance(v, (TileValue, TileRef)):
        ref = _scaling_tile(p, a, v if isinstance(v, TileValue) else TileValue(v))
        _check_pair(p, a, src_dtype, dst_dtype)
        for k, text in (("relu_pre_mode", "cannot be used together with relu_pre_mode"),
                        ("phase", "cannot be combined with phase")):
            if a.name != "move" and a.get(k) is not None:  # the real move_fp takes relu_pre_mode
                p.fail(a.node(k), f"scale (per-channel) {text}")
        single_mode_only(p, a)
        mode = fixpipe.quant_mode(arch, src_dtype, dst_dtype, True)
        if mode is None:
            outs = ", ".join(fixpipe.quant_outputs(arch, src_dtype, True)) or "nothing"
            p.fail(node, f"the {arch} fixpipe has no per-channel quantisation from {src_dtype} to {dst_dtype} "
                         f"(it quantises {src_dtype} to {outs})")
        attrs.update(quant=mode, vector_quant=True)
        return (), (ref,)
    if isinstance(v, bool) or not isinstance(v, (int, float, Expr)):
        p.fail(node, f"scale must be float, int, a run-time scalar or a Scaling Tile, got {p.describe(v)}")
    if isinstance(v, Expr):
        dt = getattr(v, "dtype", None)
        if getattr(dt, "name", "") not in ("DT_FP32", "DT_INT32", "DT_INT64"):
            shown = getattr(dt, "short", None) or p.describe(v)
            p.fail(node, f"scale runtime scalar dtype {shown} is not supported — pass an FP32 scalar (its IEEE-754 "
                         "bits are used) or an INT32/INT64 scalar carrying the pre-encoded float32 bit pattern "
                         "(struct.pack(\"!f\", scale))")
    _check_pair(p, a, src_dtype, dst_dtype)
    attrs["quant"] = fixpipe.quant_mode(arch, src_dtype, dst_dtype, False)
    if isinstance(v, (int, float)):
        attrs["deq"] = fixpipe.encode(float(v), dst_dtype)
        return (), ()
    attrs["deq_runtime"] = "f32" if v.dtype.name == "DT_FP32" else "bits"
    attrs["deq_dst"] = dst_dtype
    return (v,), ()


def has_scale(attrs: dict) -> bool:
    return "deq" in attrs or "deq_runtime" in attrs or attrs.get("vector_quant", False)


def deq_word(attrs: dict, runtime: Any) -> int | None:
    """The deqScalar of one dispatch (None: no per-tensor scale)."""
    if "deq" in attrs:
        return attrs["deq"]
    kind = attrs.get("deq_runtime")
    if kind is None:
        return None
    if kind == "f32":
        return fixpipe.encode(float(runtime), attrs["deq_dst"])
    return fixpipe.with_sign(int(runtime) & 0xFFFFFFFFFFFFFFFF, attrs["deq_dst"])


def quant_words(op, fp_view: np.ndarray, fp_valid_cols: int, c0: int, cols: int, fail) -> np.ndarray:
    """The per-column quant words columns ``c0 .. c0+cols`` of the output use (vector mode): the
    Scaling tile's valid columns must cover them (PTO-ISA reads one word per column)."""
    if c0 + cols > fp_valid_cols:
        raise fail(op, f"the Scaling tile has {fp_valid_cols} valid columns; this fixpipe transfer scales columns "
                       f"{c0} .. {c0 + cols - 1} (one quant word per column)")
    return np.asarray(fp_view[0, c0:c0 + cols]).view(np.uint64)


def convert(data: np.ndarray, out_dtype: np.dtype, attrs: dict, deq, relu: bool, hf8_encode) -> np.ndarray | None:
    """The quantised output of a fixpipe transfer (None: the pair has no quant mode, convert as
    without a scale). ``deq``: one word, or the per-column words (vector mode)."""
    mode = attrs.get("quant")
    if mode is None or deq is None:
        return None
    vector = attrs.get("vector_quant", False)
    if mode == "hf8":
        v = fixpipe.scaled(data, deq, vector)
        if relu:
            v = np.where(v > 0, v, np.float32(0))
        return hf8_encode(v)
    return fixpipe.quantize(np.asarray(data), out_dtype, deq, relu, vector)
