"""Matrix computation on the Cube: ``pl.matmul`` and ``pl.matmul_acc`` (real pages
``matrix_computation/{matmul,matmul_acc}.md``).

Left [M, K] x Right [K, N] -> Acc [M, N] over the operands' valid shapes (M and K from the left
tile, N from the right; the destination's valid shape must cover M x N). Products are exact and
summed in float64, then rounded once to the accumulator dtype, so the result does not depend on
any BLAS blocking; int8 accumulates exactly in int32 (wrapping).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from pypto_pro.backends.sim import batch_ops, batch_replay
from pypto_pro.backends.sim.fractal import Region
from pypto_pro.backends.sim.batch_replay import BatchSpec, padded_empty
from pypto_pro.backends.sim.kit import Prepared, SimEnv, deferred, fault, tiles
from pypto_pro.backends.sim.prep_memo import memoized
from pypto_pro.frontend.operands import Args, in_section, want_enum, want_tile
from pypto_pro.ir.nodes import TileOp, TileRef
from pypto_pro.backends.sim import hf8
from pypto_pro.backends.sim.undefined import carriable, matmul_carry
from pypto_pro.language.dtypes import (DT_BF16, DT_FP8E4M3FN, DT_FP8E5M2, DT_FP16, DT_FP32, DT_HF8, DT_INT8,
                                       DT_INT32)
from pypto_pro.language.enums import AccPhase, MemorySpace, PipeType, SectionKind
from pypto_pro.ops import matrix_bound
from pypto_pro.ops.decl import CUBE, api, instruction

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

FAMILY = "matrix_computation"
L, R, A, B = MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc, MemorySpace.Bias
# (lhs dtype, rhs dtype) -> accumulator dtype (PTO-ISA TMATMUL)
MATMUL_DTYPES = {(DT_FP16, DT_FP16): DT_FP32, (DT_BF16, DT_BF16): DT_FP32, (DT_INT8, DT_INT8): DT_INT32,
                 (DT_FP32, DT_FP32): DT_FP32, (DT_HF8, DT_HF8): DT_FP32,
                 **{(x, y): DT_FP32 for x in (DT_FP8E4M3FN, DT_FP8E5M2) for y in (DT_FP8E4M3FN, DT_FP8E5M2)}}
A5_ONLY_INPUTS = (DT_HF8, DT_FP8E4M3FN, DT_FP8E5M2)  # the 8-bit float Cube inputs exist on a5 only
# operand dtypes whose float64 conversion gives the same bits from any layout (every one of the 65,536
# patterns, NaN payloads included: tests/backends/sim/test_batch_ops.py), so a boxed operand converts
# as it is copied out of its boxes (fractal.Region.astype) instead of being copied, then converted
CAST_ON_COPY = (DT_FP16, DT_BF16)
_CAST_ON_COPY_NP = tuple(np.dtype(d.np_dtype) for d in CAST_ON_COPY)
# the Cube's fused float64 epilogue (compute): the accumulator added in place and the result cast to the
# accumulator's dtype as it is stored into its (boxed) window, with no scratch in an undeferred run; the
# same NumPy ufuncs and casts on the same layouts as the unfused path, byte for byte
# (tests/ops/test_matrix_fused.py compares the two); False restores the unfused path
FUSED = True
# the fused path with its operands bound once per record (ops/matrix_bound.py): box views found at dispatch,
# float64 scratch from a per-shape pool; the same casts, BLAS call, add and store byte for byte
# (tests/ops/test_matrix_bound.py compares the two); False restores the per-call fused path
BOUND = True
# the real parse-time builders' operand names (ir/op/block_ops.py _ir_matmul / _ir_matmul_acc): ``pl.matmul(dst=c,
# lhs=a, rhs=b)`` binds too; the bias has no keyword in either spelling (the real page: 4th positional only)
MATMUL_ALIASES = {"dst": "dst_tile", "acc": "acc_tile", "lhs": "lhs_tile", "rhs": "rhs_tile"}


@api(FAMILY, aliases={k: v for k, v in MATMUL_ALIASES.items() if k != "acc"})
def matmul(dst_tile: Any, lhs_tile: Any, rhs_tile: Any, bias_tile: Any = None, *, phase: Any = None) -> None:
    """``dst = lhs @ rhs (+ bias)`` on the Cube: Left [M, K] x Right [K, N] -> Acc [M, N]; ``bias_tile`` is a
    [1, N] Bias tile broadcast over the rows; ``phase`` the unit-flag drain phase (pl.AccPhase)."""


@api(FAMILY, aliases=MATMUL_ALIASES)
def matmul_acc(dst_tile: Any, acc_tile: Any, lhs_tile: Any, rhs_tile: Any, *, phase: Any = None) -> None:
    """``dst = acc + lhs @ rhs`` on the Cube (``dst`` may be ``acc``): accumulate over K."""


def _cube_tile(p: "FunctionParser", a: Args, name: str, space: MemorySpace) -> TileRef:
    t = want_tile(p, a, name)
    if t.buffer.space is not space:
        p.fail(a.node(name), f"'{name}' must be a {space.name} tile, '{t.buffer.name}' is in {t.buffer.space.name}")
    return t


def _matmul_check(p: "FunctionParser", node, a: Args, with_acc: bool) -> None:
    in_section(p, node, SectionKind.CUBE, a.display)
    dst = _cube_tile(p, a, "dst_tile", A)
    lhs, rhs = _cube_tile(p, a, "lhs_tile", L), _cube_tile(p, a, "rhs_tile", R)
    lt, rt, dt = lhs.tile_type, rhs.tile_type, dst.tile_type
    acc_dtype = MATMUL_DTYPES.get((lt.dtype, rt.dtype))
    if acc_dtype is None:
        pairs = ", ".join(f"{x.name} x {y.name}" for x, y in MATMUL_DTYPES)
        p.fail(node, f"the Cube multiplies {pairs}; not {lt.dtype.name} x {rt.dtype.name}")
    if p.ctx.arch.name != "a5" and lt.dtype in A5_ONLY_INPUTS:
        p.fail(node, f"the {p.ctx.arch.name} Cube has no {lt.dtype.name} inputs (a5 only)")
    if dt.dtype is not acc_dtype:
        p.fail(a.node("dst_tile"), f"{lt.dtype.name} x {rt.dtype.name} accumulates in {acc_dtype.name}; 'dst_tile' is "
                                   f"{dt.dtype.name}")
    if lt.cols != rt.rows:
        p.fail(a.node("rhs_tile"), f"{a.display}: lhs is [{lt.rows}, {lt.cols}] and rhs is [{rt.rows}, {rt.cols}]: "
                                   "K differs")
    if (dt.rows, dt.cols) != (lt.rows, rt.cols):
        p.fail(a.node("dst_tile"), f"{a.display}: dst must be [{lt.rows}, {rt.cols}], is [{dt.rows}, {dt.cols}]")
    srcs: tuple = (lhs, rhs)
    attrs: dict = {"api": a.name}
    if a["phase"] is not None:
        attrs["phase"] = want_enum(p, a, "phase", AccPhase)
    if with_acc:
        acc = _cube_tile(p, a, "acc_tile", A)
        if acc.tile_type.shape != dt.shape or acc.tile_type.dtype is not dt.dtype:
            p.fail(a.node("acc_tile"), f"{a.display}: 'acc_tile' must have dst's shape and dtype")
        srcs = (lhs, rhs, acc)
    elif a["bias_tile"] is not None:
        if any(k.arg == "bias_tile" for k in a.call.keywords):  # the real parser takes it positionally only
            p.fail(a.node("bias_tile"), f"{a.display}(bias_tile=...): pass the bias positionally, "
                                        f"{a.display}(dst, lhs, rhs, bias)")
        bias = _cube_tile(p, a, "bias_tile", B)
        if bias.tile_type.cols != dt.cols or bias.tile_type.dtype is not dt.dtype:
            p.fail(a.node("bias_tile"), f"{a.display}: bias must be [1, {dt.cols}] {dt.dtype.name}")
        srcs = (lhs, rhs, bias)
        attrs["bias"] = True
    p.ctx.builder.emit(TileOp("matmul_acc" if with_acc else "matmul", PipeType.M, dst, srcs, (), attrs, p.loc(node)))


matmul.check(lambda p, node, a: _matmul_check(p, node, a, False))
matmul_acc.check(lambda p, node, a: _matmul_check(p, node, a, True))


def _matmul_sim(op: TileOp, env: SimEnv) -> Callable:
    ts = tiles(op, env)
    d, lhs, rhs = ts[0], ts[1], ts[2]
    extra = ts[3] if len(ts) > 3 else None
    accumulate = op.op == "matmul_acc"
    acc_np = op.dst.tile_type.dtype.np_dtype  # type: ignore[union-attr]
    comp = np.int64 if acc_np == np.int32 else np.float64
    lhs_dt, rhs_dt = (t.tile_type.dtype for t in op.srcs[:2])  # type: ignore[union-attr]
    carry = carriable(*ts)

    def values(x, dt) -> np.ndarray:
        if dt is DT_HF8:
            return hf8.decode(np.asarray(x))
        if dt in CAST_ON_COPY and isinstance(x, Region):  # converted as it is copied out of the boxes
            return x.astype(comp)
        return np.asarray(x).astype(comp)

    def dispatch(sd: int, sl: int, sr: int, *rest: int) -> Prepared:
        m, k = lhs.valid[sl]
        k2, n = rhs.valid[sr]
        if k != k2:
            raise fault(op, f"pl.{op.op}: lhs '{lhs.label}' has valid K {k} but rhs '{rhs.label}' has valid K {k2}")
        drows, dcols = op.dst.tile_type.shape  # type: ignore[union-attr]
        if drows < m or dcols < n:  # TMATMUL writes M x N of L0C whatever the destination's valid shape
            raise fault(op, f"pl.{op.op}: the {m} x {n} product does not fit dst '{d.label}' of shape {drows} x "
                            f"{dcols}")
        av, bv = lhs.region(sl, m, k), rhs.region(sr, k, n)
        acc_view = None
        accesses = [lhs.access(sl, m, k, False), rhs.access(sr, k, n, False)]
        if extra is not None:
            se = rest[0]
            er, ec = extra.valid[se]
            if accumulate:  # the M x N of L0C the products add to (an earlier matmul wrote all of it)
                acc_view = extra.region(se, m, n)
                accesses.append(extra.access(se, m, n, False))
            else:
                if ec < n:
                    raise fault(op, f"pl.matmul: bias '{extra.label}' has {ec} valid columns, fewer than N = {n}")
                acc_view = extra.region(se, 1, n)
                accesses.append(extra.access(se, 1, n, False))
        accesses.append(d.access(sd, m, n, True))

        def compute(out: np.ndarray) -> None:
            prod = values(av, lhs_dt) @ values(bv, rhs_dt)
            if FUSED and comp is np.float64:  # the same ufuncs on the same layouts, fewer temporaries
                if acc_view is not None:
                    np.add(prod, acc_view.astype(comp), out=prod)
                out[...] = prod  # NumPy's float64 -> fp32 cast, done as the result is stored
                return
            if acc_view is not None:
                prod = prod + acc_view.astype(comp)
            out[...] = prod.astype(acc_np) if comp is not np.int64 else \
                (prod & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
        out_view = d.region(sd, m, n)
        if BOUND and FUSED and comp is np.float64 and lhs_dt in CAST_ON_COPY and rhs_dt in CAST_ON_COPY:
            compute = matrix_bound.bind(av, bv, acc_view, out_view, m, k, n, compute) or compute
        # fused: straight into the (boxed) Acc window when undeferred; safe because compute has read every
        # operand (the accumulator too, into a float64 copy) first and L0C shares no bytes with L0A / L0B
        run = deferred(compute, out_view, direct=FUSED)
        written = d.written(sd, m, n)
        if carry:  # padding rows / columns of the operands make only their rows / columns of C undefined
            acc = (extra, rest[0], m if accumulate else 1) if extra is not None else None
            written = (*written, matmul_carry(d, sd, lhs, sl, rhs, sr, m, k, n, acc))
        prep = Prepared(m, n, True, tuple(accesses), (), 0, run, (written,), k)
        if batchable and batch_ops.BATCH_CUBE and batch_replay.LANES > 1 and (extra is None or accumulate):  # (a bias row is broadcast: not)
            prep.batch = BatchSpec((id(op), sd, sl, sr, rest, m, k, n), _matmul_many,
                                   (av, bv, acc_view, out_view, comp, acc_np))
        return prep
    batchable = DT_HF8 not in (lhs_dt, rhs_dt)
    return memoized(dispatch, [(1, lhs.valid), (2, rhs.valid)] + ([(3, extra.valid)] if extra is not None else []),
                    state=lambda: (FUSED, BOUND))  # (the record's run depends on them)


def _operand(stack: Callable, view, comp) -> np.ndarray | None:
    """Every block's ``np.asarray(view).astype(comp)`` (the per-block product's operand), padded."""
    if isinstance(view, np.ndarray):
        return batch_ops.astype(stack(view), comp)
    got = batch_ops.boxes(stack, view)
    if got is None:
        return None
    return got.astype(comp) if view.dtype in _CAST_ON_COPY_NP else batch_ops.astype(got.read(), comp)


def _matmul_many(preps: list, stack: Callable, defer: bool):
    """The chunk's products as one ``np.matmul`` over the block axis (batch_ops: per block the same BLAS
    call on the same shapes, every other step on per-block layouts)."""
    av, bv, acc_view, out_view, comp, acc_np = preps[0].batch.data
    dst = batch_ops.stacked(stack, out_view)
    if not batch_ops.landable(dst):
        return NotImplemented
    a, b = _operand(stack, av, comp), _operand(stack, bv, comp)
    acc = None
    if acc_view is not None:
        s = batch_ops.stacked(stack, acc_view)
        acc = None if s is None else s.astype(comp) if isinstance(s, batch_ops.Boxes) else batch_ops.astype(s, comp)
        if acc is None:
            return NotImplemented
    if a is None or b is None:
        return NotImplemented

    def compute(out: np.ndarray) -> None:
        prod = padded_empty((a.shape[0], a.shape[1], b.shape[2]), comp)
        np.matmul(a, b, out=prod)
        if acc is not None:
            total = padded_empty(prod.shape, comp)
            np.add(prod, acc, out=total)
            prod = total
        if comp is not np.int64:
            out[...] = batch_ops.astype(prod, acc_np)
        else:
            out[...] = (prod & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
    return batch_ops.land(dst, compute, defer)


def _matmul_cpp(op: TileOp, ctx, arch: str) -> list[str]:
    """TMATMUL / TMATMUL_ACC / TMATMUL_BIAS; a unit-flag phase is PTO-ISA's ``<AccPhase::X>`` overload."""
    t = [ctx.tile(x) for x in (op.dst, *op.srcs)]
    phase = op.attrs.get("phase")
    tmpl = f"<AccPhase::{phase.name}>" if phase is not None else ""
    if op.op == "matmul_acc":
        call = f"TMATMUL_ACC{{}}({t[0]}, {t[3]}, {t[1]}, {t[2]});"
    elif len(t) > 3:
        call = f"TMATMUL_BIAS{{}}({t[0]}, {t[1]}, {t[2]}, {t[3]});"
    else:
        return [f"TMATMUL{tmpl}({t[0]}, {t[1]}, {t[2]});"]
    if not tmpl:
        return [call.format("")]
    # PTO-ISA's CPU model has no unit-flag overload of these two (a phase only tells the fixpipe when it
    # may drain; the CPU model runs in order): it gets the plain call, the NPU the phase
    return ["#if defined(__CPU_SIM)", call.format(""), "#else", call.format(tmpl), "#endif"]


@api(FAMILY, "set_mm_layout_transform", namespace="pl.system")
def set_mm_layout_transform(*, enabled: Any) -> None:
    """See ``pypto_pro.language.system.set_mm_layout_transform``."""


@set_mm_layout_transform.check
def _mm_layout_check(p: "FunctionParser", node, a: Args) -> None:
    """The fixpipe's L0C read direction (real page ``matrix_computation/set_mm_layout_transform.md``): an
    a5 Cube mode bit. It changes the order the fixpipe reads L0C in, not the values it writes, so the
    simulator checks the call and records nothing."""
    if not isinstance(a["enabled"], bool):
        p.fail(a.node("enabled"), f"'enabled' must be True or False, got {p.describe(a['enabled'])}")
    if p.ctx.arch.name != "a5":
        p.fail(node, f"pl.system.set_mm_layout_transform exists on a5 only (not on {p.ctx.arch.name})")
    in_section(p, node, SectionKind.CUBE, "pl.system.set_mm_layout_transform")


instruction("matmul", FAMILY, _matmul_sim, CUBE, _matmul_cpp)
instruction("matmul_acc", FAMILY, _matmul_sim, CUBE, _matmul_cpp)
