"""VF type conversion (``vf_computation/type_conversion``): ``vf.astype``, ``vf.bit_cast``.

``astype`` converts lane by lane with ``round_mode`` (default ``CAST_RINT``) using the tile cast's
numerics (``backends/sim/numerics.cast``: float -> int rounds then saturates, NaN -> 0; int -> int
saturates). When the widths differ, one instruction covers the lanes of the wider type: widening
reads the even (``CastLayout.ZERO``) or odd (``ONE``) narrow lanes (every 4th from ``ZERO..THREE``
for a 4x change); narrowing writes the results there and zeroes the other narrow lanes. The mask
selects at the source's granularity. The 8- and 4-bit float paths (FP32 -> FP8E4M3FN / FP8E5M2 /
HF8, FP16 -> HF8, BF16 -> FP4E2M1 / FP4E1M2 and back) are ``convert_lowp``'s: their own layout,
round-mode and saturation rules. ``bit_cast`` is a view: the same register read as another type.
"""
from __future__ import annotations

import numpy as np

from pypto_pro.backends.sim.numerics import cast as tile_cast
from pypto_pro.backends.sim import torch_cast
from pypto_pro.backends.sim.vf.batch import Spec
from pypto_pro.backends.sim.vf.regfile import PerRegFile, active, lanes, np_of, view
from pypto_pro.frontend.vf.values import RegValue
from pypto_pro.language import dtypes as D
from pypto_pro.language.enums import CastLayout, MergeMode, SaturateMode, VFRoundMode
from pypto_pro.ops.vf import common as c
from pypto_pro.ops.vf import convert_b64 as b64
from pypto_pro.ops.vf import convert_lowp as lowp
from pypto_pro.ops.vf import convert_sat
from pypto_pro.ops.vf import cpp_cce as cce
from pypto_pro.ops.vf import cpp_cvt
from pypto_pro.ops.vf.decl import vf_api, vf_instr
from pypto_pro.ops.vf.lanes import NUMERIC

_B64 = {(D.DT_INT32, D.DT_INT64), (D.DT_FP32, D.DT_INT64), (D.DT_INT64, D.DT_INT32), (D.DT_INT64, D.DT_FP32)}

FAMILY = "vf_type_conversion"
_MODES = {"CAST_RINT": "rint", "CAST_ROUND": "round", "CAST_FLOOR": "floor", "CAST_CEIL": "ceil",
          "CAST_TRUNC": "trunc", "CAST_ODD": "odd"}
_CASTABLE = {np.dtype(t) for t in (np.float16, np.float32, np.int8, np.uint8, np.int16, np.int32)} | \
    {np.dtype(D.DT_BF16.np_dtype)}


def _check_astype(p, node, a):
    r = c.reg(p, a, "src", NUMERIC + lowp.LOW + (D.DT_INT64,))
    m = c.mask(p, a, "mask")
    dt = c.dtype_arg(p, a, "dtype")
    if dt is None:
        p.fail(node, "vf.astype(): dtype= (the destination type) is required")
    low = r.dtype in lowp.LOW or dt in lowp.LOW
    if low and (r.dtype, dt) not in lowp.PATHS:
        to = lowp.targets(r.dtype) if r.dtype in lowp.LOW else ()
        p.fail(a.node("dtype"), f"vf.astype(): {r.dtype.name} converts to {' or '.join(d.name for d in to)}, "
                                f"not {dt.name}" if to else
                                f"vf.astype(): {r.dtype.name} -> {dt.name} is not a conversion of this release")
    if D.DT_INT64 in (r.dtype, dt) and (r.dtype, dt) not in _B64:
        p.fail(a.node("dtype"), f"vf.astype(): {r.dtype.name} -> {dt.name} is not a conversion of the page "
                                "(64-bit: INT32 / FP32 -> INT64, INT64 -> INT32 / FP32)")
    if not low and dt not in NUMERIC + (D.DT_INT64,):
        p.fail(a.node("dtype"), f"vf.astype(): converting to {dt.name} is not supported yet")
    fp4 = r.dtype in lowp.NIBBLE or dt in lowp.NIBBLE
    ws, wd = (4, 1) if dt in lowp.NIBBLE else (1, 4) if r.dtype in lowp.NIBBLE else (c.width(r.dtype), c.width(dt))
    ratio = max(ws, wd) // min(ws, wd)
    if ratio not in (1, 2, 4):
        p.fail(node, f"vf.astype(): {r.dtype.name} -> {dt.name} changes the width {ratio}x (1x, 2x or 4x only)")
    layout = c.enum_arg(p, a, "layout", CastLayout, CastLayout.ZERO)
    part = {"ZERO": 0, "ONE": 1, "TWO": 2, "THREE": 3}[layout.name]
    if c.enum_arg(p, a, "mode", MergeMode, MergeMode.ZEROING) is MergeMode.MERGING:
        p.fail(a.node("mode"), "vf.astype(): mode=MERGING is not supported (the page: ZEROING only)")
    sat = False
    if low:
        rm_given = c.enum_arg(p, a, "round_mode", VFRoundMode, None)
        sat_given = c.enum_arg(p, a, "saturate", SaturateMode, None)
        mode, sat = lowp.check(p, a, node, r.dtype, dt, layout.name, rm_given, sat_given)
    else:
        if part >= ratio and ratio > 1:
            p.fail(a.node("layout"), f"vf.astype(): layout {layout.name} needs a 4x width change")
        rm = c.enum_arg(p, a, "round_mode", VFRoundMode, VFRoundMode.CAST_RINT)
        if rm.name == "CAST_ODD" and (r.dtype, dt) != (D.DT_FP32, D.DT_FP16):
            p.fail(a.node("round_mode"), f"vf.astype(): CAST_ODD rounds FP32 -> FP16 only, not {r.dtype.name} -> "
                                         f"{dt.name} (the real backend's vcvt overloads)")
        if rm.name not in _MODES:
            p.fail(a.node("round_mode"), f"vf.astype(): round_mode {rm.name} is not supported yet "
                                         f"(supported: {', '.join(_MODES)})")
        mode = _MODES[rm.name]
        sat = convert_sat.check(p, a, r.dtype, dt, c.enum_arg(p, a, "saturate", SaturateMode, None))
    d = c.dst(p, c.VREG, dt)
    lane_dt = (D.DT_FP16 if fp4 else dt) if wd > ws else (D.DT_FP16 if fp4 else r.dtype)
    c.emit(p, node, "vcvt", (d,), (c.read(r), c.read(m)), src=r.dtype, dtype=dt, part=part, ratio=ratio,
           widen=wd > ws, round=mode, saturate=sat, low=low, lanes=lanes(lane_dt), api="astype")
    return d


def convert_lanes(x: np.ndarray, dst: np.dtype, mode: str) -> np.ndarray:
    out = np.empty(x.shape, dst)
    if x.dtype in _CASTABLE and dst in _CASTABLE:
        tile_cast(out.reshape(1, -1), x.reshape(1, -1), mode)
    elif dst.kind in "iu":
        with np.errstate(all="ignore"):
            wide = x.astype(np.float64) if x.dtype.kind == "f" else x.astype(np.int64)
            info = np.iinfo(dst)
            out[:] = np.clip(np.nan_to_num(wide), info.min, info.max).astype(dst)
    else:
        out[:] = x.astype(np.float64).astype(dst)
    return out


_F32, _F16, _BF16 = np.dtype(np.float32), np.dtype(np.float16), np.dtype(D.DT_BF16.np_dtype)
_PLAIN = {(_F32, _F16), (_F32, _BF16), (_F16, _F32), (_BF16, _F32)}


def _sim_vcvt(instr):
    src, mk = instr.args
    at = instr.attrs
    sdt, ddt, part, ratio, widen, mode = at["src"], at["dtype"], at["part"], at["ratio"], at["widen"], at["round"]
    if at.get("low"):
        return _sim_vcvt_low(instr)
    uid = instr.dsts[0].uid
    dt_np = np_of(ddt)
    sat = at.get("saturate", False)

    def bind(rf):  # source lanes, their predicate, dst
        x, act = view(rf.v[src.reg.uid], sdt), active(rf.m[mk.reg.uid], sdt)
        if widen and ratio > 1:
            x, act = x[part::ratio], act[part::ratio]
        return x, act, view(rf.v[uid], ddt)
    views = PerRegFile(bind)

    def put(out, res) -> None:
        if not widen and ratio > 1:
            out[:] = 0
            out[part::ratio] = res
        else:
            out[:] = res

    def conv(x):
        if b64.is_b64(x.dtype, dt_np):
            return b64.lanes(x, dt_np, mode, sat)
        return convert_sat.lanes(x, dt_np, mode, sat, convert_lanes)

    def run(rf, mem, bases):
        x, act, out = views(rf)
        put(out, np.where(act, conv(x), dt_np.type(0)))

    # an unsaturated round-to-nearest between fp32 and fp16 / bf16 is NumPy's (ml_dtypes') own cast, which
    # is what numerics.cast runs for it (one RNE rounding; widening is exact): no per-call dispatch
    plain = not sat and mode == "rint" and (np_of(sdt), dt_np) in _PLAIN

    def full(rf, mem, bases):  # every source lane active (call.py's plan): no lane is zeroed
        x, _, out = views(rf)
        put(out, x.astype(dt_np) if plain else conv(x))
    run.full, run.full_mask = full, (mk.reg.uid, sdt)  # type: ignore[attr-defined]
    if plain:  # batched (backends/sim/vf/batch.py): the same cast over [N, lanes] stacks
        st = np_of(sdt)

        def make(bases, scs, size):
            def kernel(ins, outs, mem):
                x = ins[0].view(st)
                if widen and ratio > 1:
                    x = x[:, part::ratio]
                out = outs[0].view(dt_np)
                res = torch_cast.cast(x, dt_np)  # x.astype(dt_np)'s bytes, through torch when trusted
                if res is None:
                    res = x.astype(dt_np)
                if not widen and ratio > 1:
                    out[...] = 0
                    out[:, part::ratio] = res
                else:
                    out[...] = res
            return kernel
        full.batched = Spec(("vcvt", sdt, ddt, part, ratio, widen), make)  # type: ignore[attr-defined]
    return run


def _sim_vcvt_low(instr):
    """The 8- / 4-bit float paths (``convert_lowp``): narrow results in byte ``k * ratio + part``."""
    src, mk = instr.args
    at = instr.attrs
    sdt, ddt, part, ratio, widen = at["src"], at["dtype"], at["part"], at["ratio"], at["widen"]
    mode, sat, uid = at["round"], at["saturate"], instr.dsts[0].uid

    def run(rf, mem, bases):
        sreg, m = rf.v[src.reg.uid], rf.m[mk.reg.uid]
        out = rf.v[uid]
        if widen:
            codes = view(sreg, D.DT_UINT8)[part::ratio]
            act = active(m, D.DT_UINT8)[part::ratio]
            if sdt in lowp.NIBBLE:
                vals = lowp.widen_4bit(codes, act, sdt)
            else:
                vals = np.where(act, lowp.decode(codes, sdt), 0.0)
            view(out, ddt)[:] = vals.astype(np_of(ddt))
            return
        x = view(sreg, sdt)
        act = active(m, sdt)
        if ddt in lowp.NIBBLE:
            res = lowp.narrow_4bit(x, act, ddt, mode, sat)
        else:
            res = np.where(act, lowp.encode(x.astype(np.float64), ddt, mode, sat), 0).astype(np.uint8)
        b = view(out, D.DT_UINT8)
        b[:] = 0
        b[part::ratio] = res
    return run


vf_api(FAMILY, "astype", "src, mask, dtype=None, layout=None, round_mode=None, saturate=None, mode=None",
       "Convert the active lanes to dtype with round_mode (vcvt); layout places the narrow lanes.", _check_astype)
vf_instr("vcvt", FAMILY, _sim_vcvt, "VCVT", cpp=cpp_cvt.vcvt)


def _check_bit_cast(p, node, a):
    r = a["src"]
    if not isinstance(r, RegValue) or r.is_mask:
        p.fail(a.node("src"), f"vf.bit_cast(): 'src' must be a vector register, got {p.describe(r)}")
    dt = c.dtype_arg(p, a, "dtype")
    if dt is None or dt.bits < 8:
        p.fail(a.node("dtype"), "vf.bit_cast(): dtype= must be a type of 8 bits or more")
    return RegValue(r.reg, dt)


vf_api(FAMILY, "bit_cast", "src, *, dtype",
       "The same register read as dtype (no instruction: a reinterpretation of its 256 bytes).", _check_bit_cast)


def _check_muls_cast(p, node, a):
    r = c.reg(p, a, "src", (D.DT_FP32,))
    m = c.mask(p, a, "mask")
    dt = c.dtype_arg(p, a, "dtype")
    if dt is None:  # muls_cast.md: dtype is required (the result type differs from the source's)
        p.fail(node, "vf.muls_cast(): dtype= is required (the result type, pl.DT_FP16)")
    if dt is not D.DT_FP16:  # the page's table and the real backend's EmitVFMulsCast: FP16 only
        p.fail(a.node("dtype"), f"vf.muls_cast(): the result is DT_FP16, got {dt.name}")
    layout = c.enum_arg(p, a, "layout", CastLayout, CastLayout.ZERO)
    s = c.scalar(p, a, "scalar", D.DT_FP32)
    d = c.dst(p, c.VREG, dt)
    c.emit(p, node, "vmulscvt", (d,), (c.read(r), c.read(m), s), dtype=dt, odd=layout.name == "ONE",
           lanes=lanes(D.DT_FP32), api="muls_cast")
    return d


def _sim_muls_cast(instr):
    src, mk = instr.args[:2]
    dt, uid, odd = instr.attrs["dtype"], instr.dsts[0].uid, instr.attrs["odd"]
    t = np_of(dt)

    def run(rf, mem, bases, scalar):
        x = view(rf.v[src.reg.uid], D.DT_FP32).astype(np.float64) * float(np.float32(scalar))
        act = active(rf.m[mk.reg.uid], D.DT_FP32)
        out = view(rf.v[uid], dt)
        out[:] = 0
        out[1 if odd else 0::2] = np.where(act, x, 0.0).astype(t)  # one rounding of the exact product
    return run


vf_api(FAMILY, "muls_cast", "src, scalar, mask, dtype=None, layout=None",
       "fp32 src * scalar rounded once to fp16 into the even (ZERO) or odd (ONE) lanes.", _check_muls_cast)
vf_instr("vmulscvt", FAMILY, _sim_muls_cast, "VCVT", cpp=cce.vmulscvt)
