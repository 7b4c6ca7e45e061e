"""MX (microscaling) matrix computation: ``pl.matmul_mx`` and ``pl.matmul_mx_acc`` (real pages
``matrix_computation/{matmul_mx,matmul_mx_acc}.md``; a5 only; PTO-ISA ``TMATMUL_MX``).

``dst (+)= dequant(lhs, scale_a) @ dequant(rhs, scale_b)``: Left [M, K] and Right [K, N] hold FP8
(E4M3FN / E5M2, mixable) or FP4 (E2M1 / E1M2, mixable) mantissas, never FP8 with FP4; every 32
consecutive K elements share one E8M0 scale: ScaleLeft [M, K/32] (ZZ) and ScaleRight [K/32, N]
(NN). The accumulator is fp32. K is a multiple of 64 (the a5 static_assert).

The hardware finds the scales from the data's address: the ScaleLeft / ScaleRight tile must sit at
``addr(lhs) >> 4`` / ``addr(rhs) >> 4`` (the real page calls it a hard binding); the simulator
checks that when the instruction issues and reports a located fault otherwise, where the chip
would read other bytes. Numerics: ``backends/sim/mx.py``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from pypto_pro.backends.sim import mx
from pypto_pro.backends.sim.kit import Prepared, SimEnv, deferred, fault, tiles
from pypto_pro.frontend.operands import Args, in_section, want_enum
from pypto_pro.ir.nodes import TileOp
from pypto_pro.language.dtypes import DT_FP4E1M2, DT_FP4E2M1, DT_FP8E4M3FN, DT_FP8E5M2, DT_FP8E8M0, DT_FP32
from pypto_pro.language.enums import AccPhase, MemorySpace, PipeType, SectionKind
from pypto_pro.ops.cpp import NoCpp
from pypto_pro.ops.decl import CUBE, api, instruction
from pypto_pro.ops.matrix import MATMUL_ALIASES
from pypto_pro.ops.matrix import _cube_tile as _in  # a tile operand in one memory space

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

FAMILY = "matrix_computation"
FP8 = (DT_FP8E4M3FN, DT_FP8E5M2)
FP4 = (DT_FP4E2M1, DT_FP4E1M2)
BASE_K = 64  # TMatmulMX: aMatrixCol must be a multiple of 64


@api(FAMILY, aliases={k: v for k, v in MATMUL_ALIASES.items() if k != "acc"})
def matmul_mx(dst_tile: Any, lhs_tile: Any, rhs_tile: Any, scale_a: Any, scale_b: Any, *, phase: Any = None) -> None:
    """``dst = dequant(lhs, scale_a) @ dequant(rhs, scale_b)`` on the Cube (MX: FP8 / FP4 mantissas, E8M0
    scales per 32 K elements); ``phase`` the unit-flag drain phase (pl.AccPhase)."""


@api(FAMILY, aliases=MATMUL_ALIASES)
def matmul_mx_acc(dst_tile: Any, acc_tile: Any, lhs_tile: Any, rhs_tile: Any, scale_a: Any, scale_b: Any, *,
                  phase: Any = None) -> None:
    """``dst = acc + dequant(lhs, scale_a) @ dequant(rhs, scale_b)`` (``dst`` may be ``acc``): the K blocks after
    the first."""


def _check(p: "FunctionParser", node, a: Args, with_acc: bool) -> None:
    in_section(p, node, SectionKind.CUBE, a.display)
    if p.ctx.arch.name != "a5":
        p.fail(node, f"{a.display} exists on a5 (Ascend 950) only, not on {p.ctx.arch.name}")
    dst = _in(p, a, "dst_tile", MemorySpace.Acc)
    lhs, rhs = _in(p, a, "lhs_tile", MemorySpace.Left), _in(p, a, "rhs_tile", MemorySpace.Right)
    sa, sb = _in(p, a, "scale_a", MemorySpace.ScaleLeft), _in(p, a, "scale_b", MemorySpace.ScaleRight)
    lt, rt, dt, st_a, st_b = (t.tile_type for t in (lhs, rhs, dst, sa, sb))
    if not ((lt.dtype in FP8 and rt.dtype in FP8) or (lt.dtype in FP4 and rt.dtype in FP4)):
        p.fail(node, f"{a.display} multiplies MXFP8 (DT_FP8E4M3FN / DT_FP8E5M2) or MXFP4 (DT_FP4E2M1 / DT_FP4E1M2) "
                     f"pairs, not mixed: got {lt.dtype.name} x {rt.dtype.name}")
    if dt.dtype is not DT_FP32:
        p.fail(a.node("dst_tile"), f"{a.display} accumulates in DT_FP32; 'dst_tile' is {dt.dtype.name}")
    for name, t in (("scale_a", st_a), ("scale_b", st_b)):
        if t.dtype is not DT_FP8E8M0:
            p.fail(a.node(name), f"'{name}' must be a DT_FP8E8M0 tile, got {t.dtype.name}")
    m, k = lt.shape
    k2, n = rt.shape
    if k != k2:
        p.fail(a.node("rhs_tile"), f"{a.display}: lhs is [{m}, {k}] and rhs is [{k2}, {n}]: K differs")
    if k % BASE_K:
        p.fail(a.node("lhs_tile"), f"{a.display}: K = {k} must be a multiple of {BASE_K} (TMATMUL_MX)")
    if tuple(dt.shape) != (m, n):
        p.fail(a.node("dst_tile"), f"{a.display}: dst must be [{m}, {n}], is {list(dt.shape)}")
    groups = k // mx.GROUP
    if tuple(st_a.shape) != (m, groups):
        p.fail(a.node("scale_a"), f"{a.display}: scale_a must be [{m}, {groups}] (one scale per 32 K elements), is "
                                  f"{list(st_a.shape)}")
    if tuple(st_b.shape) != (groups, n):
        p.fail(a.node("scale_b"), f"{a.display}: scale_b must be [{groups}, {n}], is {list(st_b.shape)}")
    attrs: dict = {"api": a.name}
    if a["phase"] is not None:
        attrs["phase"] = want_enum(p, a, "phase", AccPhase)
    srcs: tuple = (lhs, rhs, sa, sb)
    if with_acc:
        acc = _in(p, a, "acc_tile", MemorySpace.Acc)
        if tuple(acc.tile_type.shape) != tuple(dt.shape) or acc.tile_type.dtype is not dt.dtype:
            p.fail(a.node("acc_tile"), f"{a.display}: 'acc_tile' must have dst's shape and dtype")
        srcs = srcs + (acc,)
    p.ctx.builder.emit(TileOp("matmul_mx_acc" if with_acc else "matmul_mx", PipeType.M, dst, srcs, (), attrs,
                              p.loc(node)))


matmul_mx.check(lambda p, node, a: _check(p, node, a, False))
matmul_mx_acc.check(lambda p, node, a: _check(p, node, a, True))


def _sim(op: TileOp, env: SimEnv) -> Callable:
    ts = tiles(op, env)
    d, lhs, rhs, sa, sb = ts[:5]
    acc = ts[5] if len(ts) > 5 else None
    ldt, rdt = (t.tile_type.dtype for t in op.srcs[:2])  # type: ignore[union-attr]

    def dispatch(sd: int, sl: int, sr: int, ssa: int, ssb: int, *rest: int) -> Prepared:
        m, k = lhs.valid[sl]
        k2, n = rhs.valid[sr]
        if k != k2:
            raise fault(op, f"pl.{op.op}: lhs '{lhs.label}' has valid K {k} but rhs '{rhs.label}' has valid K {k2}")
        for what, data, s, ds, ss in (("scale_a", lhs, sa, sl, ssa), ("scale_b", rhs, sb, sr, ssb)):
            want = data.addrs[ds] >> 4
            if s.addrs[ss] != want:
                raise fault(op, f"pl.{op.op}: the Cube reads {what} at its data's address >> 4 = 0x{want:x} "
                                f"('{data.labels[ds]}' is at 0x{data.addrs[ds]:x}), but '{s.labels[ss]}' is at "
                                f"0x{s.addrs[ss]:x}: place the scale tile there (the real page's address binding)")
        g = -(-k // mx.GROUP)
        drows, dcols = op.dst.tile_type.shape  # type: ignore[union-attr]
        if drows < m or dcols < n:
            raise fault(op, f"pl.{op.op}: the {m} x {n} product does not fit dst '{d.label}' ({drows} x {dcols})")
        accesses = [lhs.access(sl, m, k, False), rhs.access(sr, k, n, False), sa.access(ssa, m, g, False),
                    sb.access(ssb, g, n, False)]
        acc_view = None
        if acc is not None:
            acc_view = acc.views[rest[0]][:m, :n]
            accesses.append(acc.access(rest[0], m, n, False))
        accesses.append(d.access(sd, m, n, True))
        av, bv, sav, sbv = lhs.views[sl], rhs.views[sr], sa.views[ssa], sb.views[ssb]
        e8 = op.srcs[2].tile_type.dtype  # type: ignore[union-attr]

        def compute(out: np.ndarray) -> None:
            prod = mx.matmul_mx(mx.operand(av, m, k, ldt), mx.operand(bv, k, n, rdt), mx.operand(sav, m, g, e8),
                                mx.operand(sbv, g, n, e8))
            if acc_view is not None:
                prod = prod + np.asarray(acc_view, np.float64)
            out[...] = prod.astype(np.float32)
        run = deferred(compute, d.views[sd][:m, :n])
        # the Cube writes L0C in 16-row fractals: the rows up to the next multiple of 16 are written too (with
        # what it computed from the left tile's padding rows; the simulator leaves their bytes as they were)
        wm = min(-(-m // 16) * 16, drows)
        return Prepared(m, n, True, tuple(accesses), (), 0, run, (d.written(sd, wm, n),), k)
    return dispatch


def _cpp(op: TileOp, ctx, arch: str) -> list[str]:
    if arch != "a5":
        raise NoCpp("TMATMUL_MX exists on a5 only")
    t = [ctx.tile(x) for x in (op.dst, *op.srcs)]
    phase = op.attrs.get("phase")
    tmpl = f"<AccPhase::{phase.name}>" if phase is not None else ""
    if op.op == "matmul_mx_acc":
        return [f"TMATMUL_MX{tmpl}({t[0]}, {t[5]}, {t[1]}, {t[3]}, {t[2]}, {t[4]});"]
    return [f"TMATMUL_MX{tmpl}({t[0]}, {t[1]}, {t[3]}, {t[2]}, {t[4]});"]


instruction("matmul_mx", FAMILY, _sim, CUBE, _cpp)
instruction("matmul_mx_acc", FAMILY, _sim, CUBE, _cpp)
