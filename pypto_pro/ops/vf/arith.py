"""VF arithmetic, logical and composite instructions (``vf_computation/{basic_arithmetic,
logical_computation,composite_computation}``): ``vf.add`` ... ``vf.exp_sub``, lane-wise on the
active lanes (``ops/vf/lanes.py`` for the shared numerics).

Fused instructions (``mul_add_dst``, ``mul_dst_add``, ``axpy``) round once, as one FMA: the product is
exact in float64 and the sum is rounded to odd there, so the one rounding to the register type is the
correctly rounded exact result (a float64 sum then a cast would round twice). ``exp_sub`` on fp16
sources computes in fp32 and produces fp32 from the even (``CastLayout.ZERO``) or odd (``ONE``)
lanes, as the page's figure shows.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from pypto_pro.backends.sim.vf.batch import Spec, merge_rows
from pypto_pro.backends.sim.vf.regfile import PerRegFile, active, active_rows, lanes, merge, np_of, view
from pypto_pro.language import dtypes as D
from pypto_pro.language.enums import CastLayout
from pypto_pro.ops.vf import common as c
from pypto_pro.ops.vf import cpp as vcpp
from pypto_pro.ops.vf import cpp_cce as cce
from pypto_pro.ops.vf.decl import vf_api, vf_instr
from pypto_pro.ops.vf.lanes import (FLOATS, INTS, NUMERIC, accumulator, declare_binary, declare_scalar,
                                    declare_unary, merge_mode, on_bits, sim_lanewise)

FAMILY = "vf_arithmetic"
_DOC = "For each active lane i: dst[i] = {}; inactive lanes are zeroed (mode=ZEROING) or kept (MERGING)."


def _f64(fn):
    """A transcendental evaluated in float64 and rounded once to the lane type (as the tile ops do:
    reproducible, independent of NumPy's CPU-specific fp32 kernels)."""
    return lambda x: fn(x.astype(np.float64))


def _ln_times(c: float):
    """``log2`` / ``log10`` as the real backend synthesizes them (the pages: the natural log times 1/ln 2,
    1/ln 10): ``vln`` rounded to the lane type, then ``vmuls`` by the C float literal ``c`` (converted to
    the lane type as vmuls takes its scalar), a second rounding."""
    def fn(x):
        t = x.dtype
        return np.log(x.astype(np.float64)).astype(t) * t.type(np.float32(c))
    return fn


def _zero_signed(ufunc: np.ufunc, both: bool) -> Callable:
    """``np.maximum`` / ``np.minimum`` with the pages' zero signs: max.md / maxs.md give max(-0, +0) = +0
    (a -0 result only when both are -0), min.md / mins.md min(-0, +0) = -0 (either order; our choice for
    +0, -0: the page gives src0 = -0); NaN in either gives NaN (PTO-ISA vmax / vmin). NumPy's loops return
    one zero operand or the other depending on the dtype's loop, so a zero result's sign is set here.
    Callable as a ufunc (``out=``, ``ufunc_like``), so the batched plans keep their one-call forms
    (``lanes._direct``, the scan form); a result with no zero costs one ``count_nonzero`` (a third of
    ``ndarray.all``'s cost on a register: these run once per level of every max chain)."""
    count, signbit = np.count_nonzero, np.signbit

    def fn(a, b, out=None):
        r = ufunc(a, b, out=out)
        if r.dtype.kind == "f" and count(r) != r.size:
            sa, sb = signbit(a), signbit(b)
            z = r == 0
            r[z] = 0
            r[z & ((sa & sb) if both else (sa | sb))] = -0.0
        return r
    def reduce(a, axis=0, out=None):
        """``fn`` folded over ``axis`` in order: NumPy's reduce, then each zero result's sign from the
        column: max gives -0 only when no operand is +0, min -0 when any operand is -0 (what the pairwise
        rule gives in any order of the column)."""
        r = ufunc.reduce(a, axis=axis, out=out)
        if r.dtype.kind == "f" and count(r) != r.size:
            zeros = a == 0
            neg = ~(zeros & ~signbit(a)).any(axis=axis) if both else (zeros & signbit(a)).any(axis=axis)
            z = r == 0
            r[z] = 0
            r[z & neg] = -0.0
        return r
    fn.ufunc_like = True  # type: ignore[attr-defined]
    fn.reduce, fn.commutes = reduce, ufunc  # type: ignore[attr-defined]  (lanes._last_level)
    fn.__name__ = ufunc.__name__
    return fn


_max = _zero_signed(np.maximum, both=True)
_min = _zero_signed(np.minimum, both=False)


def _relu(a):
    """relu: src[i] where src[i] >= 0 else 0 (the real _vf_api.py docstring; PTO-ISA vrelu passes zeros
    through unchanged, so -0 stays -0; a NaN stays NaN as in max)."""
    return np.where(a < 0, a.dtype.type(0), a)


def _idiv(a, b):
    if a.dtype.kind == "f":
        return a / b
    q = np.abs(a.astype(np.int64)) // np.where(b == 0, 1, np.abs(b.astype(np.int64)))
    return np.where(b == 0, -1, np.sign(a.astype(np.int64)) * np.sign(b.astype(np.int64)) * q)


# the dtypes each basic_arithmetic page lists (the real backend's EmitVF* checks agree or are wider)
# abs, neg: the pages' types and INT64, which the real backend's EmitVFAbs / EmitVFNeg also take
_I8_16_32_F = (D.DT_INT8, D.DT_INT16, D.DT_INT32, D.DT_INT64, D.DT_FP16, D.DT_FP32)
_DIV = (D.DT_INT16, D.DT_UINT16, D.DT_INT32, D.DT_UINT32, D.DT_FP16, D.DT_FP32)  # div, muls
_MUL = _DIV + (D.DT_BF16,)
_RELU = (D.DT_FP16, D.DT_INT32, D.DT_INT64, D.DT_FP32)  # relu.md and INT64 (EmitVFRelu)
_F16_32 = (D.DT_FP16, D.DT_FP32)  # exp, ln, log, log2, log10, sqrt, leaky_relu, prelu

# MERGING: only add, max and min take it (their pages; the real backend's VFAnyMode); the other
# basic_arithmetic pages say "not supported yet" and the real backend refuses it (VFZeroingOnly)
_MERGING = ("add", "max", "min")  # the basic_arithmetic pages that take MergeMode.MERGING

for _name, _fn, _cost, _types, _text in (
        ("add", np.add, "VADD", NUMERIC, "src0[i] + src1[i]"),
        ("sub", np.subtract, "VADD", NUMERIC, "src0[i] - src1[i]"),
        ("mul", np.multiply, "VMUL", _MUL, "src0[i] * src1[i]"),
        ("div", _idiv, "VDIV", _DIV, "src0[i] / src1[i]"),
        ("max", _max, "VMIN", NUMERIC, "max(src0[i], src1[i])"),
        ("min", _min, "VMIN", NUMERIC, "min(src0[i], src1[i])")):
    declare_binary(FAMILY, _name, _fn, _cost, _types, _DOC.format(_text), merging=_name in _MERGING)
# abs_sub.md: FP16 / FP32, ZEROING only; the real backend's EmitVFAbsSub also takes INT64 (|a - b| wrapping)
declare_binary(FAMILY, "abs_sub", lambda a, b: np.abs(a - b), "VADD", (D.DT_FP16, D.DT_FP32, D.DT_INT64),
               "For each active lane i: dst[i] = |src0[i] - src1[i]| (one rounding of the difference); inactive "
               "lanes are zeroed (MERGING is not supported).", merging=False)

_LOGIC = " (mask registers: the predicate operation, under the mask)"
_BITS = (" Float registers are taken as their bit patterns (the real pages list FP16 / BF16 / FP32 and, for"
         " and_ / or_ / xor, the 8-bit floats too). mode=MERGING is refused (the pages: not supported).")
# and_ / or_ / xor pages: the integers, FP16 / BF16 / FP32 and the 8-bit floats; not_: the integers, FP16, FP32
_BIT_TYPES = INTS + FLOATS + (D.DT_FP8E4M3FN, D.DT_FP8E5M2, D.DT_FP8E8M0, D.DT_HF8)
declare_binary(FAMILY, "and_", on_bits(np.bitwise_and), "VADD", _BIT_TYPES,
               _DOC.format("src0[i] & src1[i]") + _LOGIC + _BITS, on_masks=np.logical_and, merging=False)
declare_binary(FAMILY, "or_", on_bits(np.bitwise_or), "VADD", _BIT_TYPES,
               _DOC.format("src0[i] | src1[i]") + _LOGIC + _BITS, on_masks=np.logical_or, merging=False)
declare_binary(FAMILY, "xor", on_bits(np.bitwise_xor), "VADD", _BIT_TYPES,
               _DOC.format("src0[i] ^ src1[i]") + _LOGIC + _BITS,
               params="src0, src1, mask, mode=None, dtype=None", on_masks=np.logical_xor, merging=False)
declare_unary(FAMILY, "not_", on_bits(np.invert), "VADD", INTS + (D.DT_FP16, D.DT_FP32),
              _DOC.format("~src[i]") + _LOGIC + _BITS, on_masks=np.logical_not, merging=False)
declare_unary(FAMILY, "truncate", np.trunc, "VCVT", FLOATS,
              "For each active lane i: dst[i] = trunc(src[i]) (the same float type); inactive lanes are zeroed "
              "(MERGING is not supported).", instr="vtrc", merging=False)

for _name, _fn, _cost, _types, _text in (
        ("abs", np.abs, "VADD", _I8_16_32_F, "|src[i]|"),
        ("neg", np.negative, "VMIN", _I8_16_32_F, "-src[i]"),
        ("relu", _relu, "VMIN", _RELU, "max(src[i], 0)"),
        ("log2", _ln_times(1.4426950408889634), "VEXP", _F16_32, "log2(src[i]) (ln, then times 1/ln 2)"),
        ("log10", _ln_times(0.4342944819032518), "VEXP", _F16_32, "log10(src[i]) (ln, then times 1/ln 10)")):
    declare_unary(FAMILY, _name, _fn, _cost, _types, _DOC.format(_text), merging=False)

for _name, _fn, _cost, _text in (("exp", _f64(np.exp), "VEXP", "e^src[i]"), ("ln", _f64(np.log), "VEXP", "ln(src[i])"),
                                 ("log", _f64(np.log), "VEXP", "ln(src[i])")):
    declare_unary(FAMILY, _name, _fn, _cost, _F16_32, _DOC.format(_text),
                  params="src, mask, mode=None, precision=None", instr=f"v{_name}", merging=False)

# vf.sqrt(precision=True): the high-precision mode of the real _vf_api.py (the backend's vsqrt with
# SqrtSpecificMode): 0 ulp for FP32 inputs up to 85070596800837026223494223584045301760 (just above 2**126:
# every larger FP32, +inf included, is past it), and those inputs give 0; FP16 is unaffected
_HP_LIMIT = np.float32(2.0 ** 126)


def _sqrt_hp(x):
    return np.where(x > _HP_LIMIT, 0.0, np.sqrt(x.astype(np.float64)))


def _check_sqrt(p, node, a):
    r = c.reg(p, a, "src", _F16_32)
    m = c.mask(p, a, "mask")
    d = c.dst(p, c.VREG, r.dtype)
    op = "vsqrt_hp" if a["precision"] is True and r.dtype is D.DT_FP32 else "vsqrt"
    c.emit(p, node, op, (d,), (c.read(r), c.read(m)), dtype=r.dtype, merging=merge_mode(p, a, merging=False),
           lanes=lanes(r.dtype), api="sqrt")
    return d


vf_api(FAMILY, "sqrt", "src, mask, mode=None, precision=None",
       _DOC.format("sqrt(src[i])") + " precision=True (FP32): the high-precision mode, inputs above 2**126 give 0.",
       _check_sqrt)
vf_instr("vsqrt", FAMILY, sim_lanewise(_f64(np.sqrt)), "VSQRT", **vcpp.lanewise("vsqrt"))
vf_instr("vsqrt_hp", FAMILY, sim_lanewise(_sqrt_hp), "VSQRT", cpp=cce.vsqrt_hp)

for _name, _fn, _cost, _types, _text in (
        ("adds", np.add, "VADD", NUMERIC, "src[i] + scalar"),
        ("subs", np.subtract, "VADD", NUMERIC, "src[i] - scalar"),
        ("muls", np.multiply, "VMUL", _DIV, "src[i] * scalar"),
        ("maxs", _max, "VMIN", NUMERIC, "max(src[i], scalar)"),
        ("mins", _min, "VMIN", NUMERIC, "min(src[i], scalar)")):
    declare_scalar(FAMILY, _name, _fn, _cost, _types, _DOC.format(_text), merging=False)

declare_scalar(FAMILY, "leaky_relu", lambda a, s: np.where(a >= 0, a, a * s), "VMUL", _F16_32,
               _DOC.format("src[i] >= 0 ? src[i] : src[i] * alpha"), scalar_name="alpha", instr="vlrelu",
               merging=False)


def _check_prelu(p, node, a):
    regs = [c.reg(p, a, n, _F16_32) for n in ("src", "slope")]
    dt = c.same_dtype(p, a, ("src", "slope"), regs)
    m = c.mask(p, a, "mask")
    d = c.dst(p, c.VREG, dt)
    c.emit(p, node, "vprelu", (d,), (*map(c.read, regs), c.read(m)), dtype=dt, merging=merge_mode(p, a, merging=False),
           lanes=lanes(dt), api="prelu")
    return d


vf_api(FAMILY, "prelu", "src, slope, mask, mode=None", _DOC.format("src[i] >= 0 ? src[i] : src[i] * slope[i]"),
       _check_prelu)
vf_instr("vprelu", FAMILY, sim_lanewise(lambda a, b: np.where(a >= 0, a, a * b)), "VMUL",
         cpp=vcpp.binary("vprelu"))


# ---- shifts: a scalar or a per-lane register amount -------------------------------------------------


def _declare_shift(name: str, fn, doc: str, params: str) -> None:
    """A shift by a scalar (every lane) or by a register of the source's dtype (per lane). The pages:
    unsigned types shift logically, signed types arithmetically (right: the sign fills); a per-lane
    amount past the width gives 0 (left; right of an unsigned or non-negative lane) or -1 (right of a
    negative signed lane); a negative amount is undefined; MERGING is not supported. A scalar amount
    past the width follows the per-lane rule (the pages state it for the register form only). A
    per-lane amount register has the source's dtype (the pages) or the signed integer of its width
    (the real backend takes only INT8 / INT16 / INT32 there), each lane read as the source's type."""
    def check(p, node, a):
        r = c.reg(p, a, "src", INTS)
        m = c.mask(p, a, "mask")
        d = c.dst(p, c.VREG, r.dtype)
        merging = merge_mode(p, a, merging=False)
        amount = a["shift"]
        from pypto_pro.frontend.vf.values import RegValue
        if isinstance(amount, RegValue):
            s = c.reg(p, a, "shift", INTS)
            signed = D.DT_INT8 if r.dtype.bits == 8 else D.DT_INT16 if r.dtype.bits == 16 else D.DT_INT32
            if s.dtype not in (r.dtype, signed):  # the page: src's dtype; the real backend: a signed int register
                p.fail(a.node("shift"), f"{a.display}(): 'shift' is a register of {s.dtype.name}; a per-lane amount "
                                        f"is a register of {r.dtype.name} or {signed.name} (the source's width)")
            c.emit(p, node, f"v{name}_v", (d,), (c.read(r), c.read(s), c.read(m)), dtype=r.dtype,
                   merging=merging, lanes=lanes(r.dtype), api=name)
        else:
            s = c.scalar(p, a, "shift", D.DT_INT32)
            c.emit(p, node, f"v{name}_s", (d,), (c.read(r), c.read(m), s), dtype=r.dtype, merging=merging,
                   lanes=lanes(r.dtype), api=name)
        return d
    vf_api(FAMILY, name, params, doc, check)

    def scalar_fn(x, s):
        bits, n = x.dtype.itemsize * 8, int(s)
        if 0 <= n < bits:
            return fn(x, x.dtype.type(n))
        if name == "shift_left" or x.dtype.kind == "u":
            return np.zeros_like(x)
        return fn(x, x.dtype.type(bits - 1))  # an arithmetic shift by >= width keeps the sign

    vf_instr(f"v{name}_s", FAMILY, sim_lanewise(scalar_fn), "VADD", **vcpp.lanewise(f"v{name}_s"))
    vf_instr(f"v{name}_v", FAMILY, sim_lanewise(lambda x, s: fn(x, s.astype(x.dtype))), "VADD",
             **vcpp.lanewise(f"v{name}_v"))


_declare_shift("shift_left", np.left_shift, _DOC.format("src[i] << shift"), "src, shift, mask, mode=None")
_declare_shift("shift_right", np.right_shift, _DOC.format("src[i] >> shift (arithmetic for signed types)"),
               "src, shift, mask, mode=None, dtype=None")


# ---- fused and composite ---------------------------------------------------------------------------


def _odd_add(p, d, out=None):
    """``p + d`` (float64 operands) rounded to odd: the float64 nearest below or above the exact sum whose
    last significand bit is 1 when the sum is inexact. Rounding that once more to a type of at most 51
    significand bits gives the correctly rounded exact sum (Boldo and Melquiond's round-to-odd): a plain
    float64 sum then a cast would round twice (exact 1 + 2^-11 + 2^-24 + 2^-60 goes to the fp32 tie
    1 + 2^-11 + 2^-24, then down to even, where one rounding goes up). Integer lanes: the wrapping sum."""
    if p.dtype.kind != "f":
        return np.add(p, d, out=out)
    s = np.add(p, d)
    bp = s - d
    e = (p - bp) + (d - (s - bp))   # Knuth's TwoSum: the exact error of s (finite sums)
    fix = np.isfinite(s) & (e != 0) & ((s.view(np.uint64) & 1) == 0)
    r = np.where(fix, np.nextafter(s, np.copysign(np.inf, e)), s)
    if out is None:
        return r
    out[...] = r
    return out


def _odd_f32(x):
    """float64 ``x`` (already rounded to odd) to float32 rounded to odd: bf16 lanes compute in fp32 and
    round once more to bf16 (lanes.py), and this keeps that last rounding the only one that counts."""
    r = x.astype(np.float32)
    fix = np.isfinite(r) & (r.astype(np.float64) != x) & ((r.view(np.uint32) & 1) == 0)
    return np.where(fix, np.nextafter(r, np.copysign(np.float32(np.inf), (x - r).astype(np.float32))), r)


def _fused(product, addend: int, narrow: bool = False):
    """A fused multiply-add ``product(*others) + xs[addend]``: the product exact in float64 (two
    fp32 / bf16 / fp16 significands fit in 53 bits), the sum rounded once to the register type (through
    ``_odd_add``; ``narrow``: the bf16 form, whose fp32 compute lanes are rounded to odd as well). Integer
    lanes wrap at their width. ``split = (addend, product, _odd_add)`` (lanes.scan_form: ``product``
    once over every level's operands, then the addition per level into a float64 buffer)."""
    def f(*xs):
        others = [x for i, x in enumerate(xs) if i != addend]
        if xs[addend].dtype.kind != "f":
            return product(*others) + xs[addend]
        r = _odd_add(product(*(np.float64(x) if np.ndim(x) == 0 else x.astype(np.float64) for x in others)),
                     np.asarray(xs[addend], np.float64))
        return _odd_f32(r) if narrow else r
    if not narrow:
        f.split = (addend, lambda *xs: product(*(x.astype(np.float64) if x.dtype.kind == "f" else x for x in xs)),
                   _odd_add)
    return f


# the CCE accumulate-into-destination intrinsics (the real backend's EmitVFMulAddDst / MulDstAdd / Axpy)
_ACC_CPP = {"vmul_add_dst": "vmula", "vmul_dst_add": "vmadd", "vaxpy": "vaxpy"}


def _declare_accumulating(name: str, text: str, product, addend: int, dtypes: tuple, scalar: bool = False) -> None:
    op = f"v{name}"
    fused, narrow = _fused(product, addend), _fused(product, addend, narrow=True)

    def build(instr):  # the sim builder: bf16 lanes take the narrow form
        return sim_lanewise(narrow if instr.attrs["dtype"] is D.DT_BF16 else fused)(instr)

    def check(p, node, a):
        if scalar:
            r = c.reg(p, a, "src", dtypes)
            regs, dt = [r], r.dtype
        else:
            regs = [c.reg(p, a, n, dtypes) for n in ("src0", "src1")]
            dt = c.same_dtype(p, a, ("src0", "src1"), regs)
        m = c.mask(p, a, "mask")
        acc = accumulator(p, node, dt)
        args = (c.read(acc), *map(c.read, regs), c.read(m))
        if scalar:
            args += (c.scalar(p, a, "scalar", dt),)
        c.emit(p, node, op, (acc,), args, dtype=dt, merging=merge_mode(p, a, merging=False), lanes=lanes(dt),
               api=name)
        return acc
    vf_api(FAMILY, name, ("src, scalar" if scalar else "src0, src1") + ", mask, mode=None",
           f"For each active lane i: dst[i] = {text}; inactive lanes are zeroed (MERGING is not supported).", check)
    vf_instr(op, FAMILY, build, "VMUL",
             cpp=vcpp.accumulate(_ACC_CPP[op], scalar=scalar), lanewise=True)


# operands as the sim passes them: (dst, src0, src1) / (dst, src, scalar); ``addend``: the one added.
# The dtypes of each page (the real backend's EmitVFMulAddDst / MulDstAdd / Axpy refuse 8-bit and
# the others); axpy also INT64 / UINT64, which EmitVFAxpy takes (wrapping), though axpy.md does not list them
_declare_accumulating("mul_add_dst", "src0[i] * src1[i] + dst[i] (one rounding)", lambda a, b: a * b, 0,
                      FLOATS + (D.DT_INT16, D.DT_UINT16, D.DT_INT32, D.DT_UINT32))
_declare_accumulating("mul_dst_add", "dst[i] * src0[i] + src1[i] (one rounding)", lambda d, a: d * a, 2, FLOATS)
_declare_accumulating("axpy", "scalar * src[i] + dst[i] (one rounding)", lambda a, s: s * a, 0,
                      (D.DT_FP16, D.DT_FP32, D.DT_INT64, D.DT_UINT64), scalar=True)


def _check_exp_sub(p, node, a):
    regs = [c.reg(p, a, n, (D.DT_FP16, D.DT_FP32)) for n in ("src", "max_val")]
    dt = c.same_dtype(p, a, ("src", "max_val"), regs)
    m = c.mask(p, a, "mask")
    layout = c.enum_arg(p, a, "layout", CastLayout, CastLayout.ZERO)
    if c.dtype_arg(p, a, "dtype", D.DT_FP32) is not D.DT_FP32:
        p.fail(a.node("dtype"), "vf.exp_sub(): the result is DT_FP32 (dtype= may only say so)")
    d = c.dst(p, c.VREG, D.DT_FP32)
    c.emit(p, node, "vexpsub", (d,), (*map(c.read, regs), c.read(m)), dtype=dt, odd=layout.name == "ONE",
           lanes=lanes(D.DT_FP32), api="exp_sub")
    return d


def _sim_exp_sub(instr):
    x, y, mk = instr.args
    dt, uid = instr.attrs["dtype"], instr.dsts[0].uid
    part = slice(1, None, 2) if instr.attrs["odd"] else slice(0, None, 2)

    def bind(rf):  # src, max, predicate, dst
        a, b, act = view(rf.v[x.reg.uid], dt), view(rf.v[y.reg.uid], dt), active(rf.m[mk.reg.uid], dt)
        if dt is D.DT_FP16:  # 64 results from the even / odd fp16 lanes
            a, b, act = a[part], b[part], act[part]
        return a, b, act, view(rf.v[uid], D.DT_FP32)
    views = PerRegFile(bind)

    def result(a, b):  # (warnings off: vf/call.py runs a body under one errstate)
        a, b = a.astype(np.float32, copy=False), b.astype(np.float32, copy=False)
        return np.exp((a - b).astype(np.float64)).astype(np.float32)  # fp32 difference, one rounding of exp

    def run(rf, mem, bases):
        a, b, act, out = views(rf)
        merge(out, result(a, b), act, False)

    def full(rf, mem, bases):  # every lane active (call.py's plan): the zeroing merge is a copy
        a, b, _, out = views(rf)
        out[:] = result(a, b)
    run.full, run.full_mask = full, (mk.reg.uid, dt)  # type: ignore[attr-defined]
    t, fp16 = np_of(dt), dt is D.DT_FP16

    def batched(is_full: bool):  # backends/sim/vf/batch.py: [N, lanes] stacks, the same result()
        def make(bases, scs, size):
            def kernel(ins, outs, mem):
                a, b = ins[0].view(t), ins[1].view(t)
                if fp16:
                    a, b = a[:, part], b[:, part]
                out = outs[0].view(np.float32)
                if is_full:
                    out[...] = result(a, b)
                else:
                    act = active_rows(ins[2], dt)
                    merge_rows(out, result(a, b), act[:, part] if fp16 else act, False)
            return kernel
        return make
    key = ("vexpsub", dt, instr.attrs["odd"])
    run.batched = Spec(key + (False,), batched(False))  # type: ignore[attr-defined]
    full.batched = Spec(key + (True,), batched(True))  # type: ignore[attr-defined]
    return run


vf_api(FAMILY, "exp_sub", "src, max_val, mask, layout=None, dtype=None",  # dtype: on the page, not in _vf_api.py
       "For each active lane i: dst[i] = e^(src[i] - max_val[i]) in fp32 (fp16 sources: the even / odd lanes "
       "by layout).", _check_exp_sub)
vf_instr("vexpsub", FAMILY, _sim_exp_sub, "VEXP", cpp=vcpp.vexpdif)


def _check_mull(p, node, a):
    regs = [c.reg(p, a, n, (D.DT_INT32, D.DT_UINT32)) for n in ("src0", "src1")]
    dt = c.same_dtype(p, a, ("src0", "src1"), regs)
    m = c.mask(p, a, "mask")
    lo, hi = c.dst(p, c.VREG, dt, 0), c.dst(p, c.VREG, dt, 1)
    merge_mode(p, a)  # mode= is taken (the page's prototype) but vmull has none: unselected lanes are zeroed
    c.emit(p, node, "vmull", (lo, hi), (*map(c.read, regs), c.read(m)), dtype=dt, merging=False,
           lanes=lanes(dt), api="mull")
    return lo, hi


def _sim_mull(instr):
    x, y, mk = instr.args
    dt, merging = instr.attrs["dtype"], instr.attrs["merging"]
    u_lo, u_hi = (d.uid for d in instr.dsts)
    signed = dt is D.DT_INT32

    def run(rf, mem, bases):
        a = view(rf.v[x.reg.uid], dt).astype(np.int64 if signed else np.uint64)
        b = view(rf.v[y.reg.uid], dt).astype(np.int64 if signed else np.uint64)
        prod = [int(i) * int(j) for i, j in zip(a, b)]  # exact 64-bit products
        lo = np.array([q & 0xFFFFFFFF for q in prod], np.uint64).astype(np.uint32)
        hi = np.array([(q >> 32) & 0xFFFFFFFF for q in prod], np.uint64).astype(np.uint32)
        act = active(rf.m[mk.reg.uid], dt)
        merge(view(rf.v[u_lo], D.DT_UINT32), lo, act, merging)
        merge(view(rf.v[u_hi], D.DT_UINT32), hi, act, merging)
    return run


vf_api(FAMILY, "mull", "src0, src1, mask, mode=None",
       "The 64-bit product of 32-bit lanes: (low 32 bits, high 32 bits) as two registers; unselected lanes are 0 "
       "in both, whatever mode says (vmull has no merge mode: the real backend drops it).", _check_mull)
vf_instr("vmull", FAMILY, _sim_mull, "VMUL", cpp=vcpp.vmull)
