"""vf.astype on the ordinary paths of astype.md tables 2 to 5 (8- to 32-bit integers, FP16 / BF16 / FP32):
every round mode a path lists, every layout of a 2x / 4x width change, a partial (M3) and a full mask,
against references from exact rationals rounded by the mode's definition (RINT: nearest, ties to even;
ROUND: nearest, ties away from zero; FLOOR / CEIL / TRUNC: directed; ODD: the neighbour with an odd
last bit when inexact). Inputs stay in the destination's range (saturation has its own file,
``test_vf_astype_saturate.py``; the 64-bit and 8- / 4-bit float paths theirs too), with the ties and
near-ties each mode separates, signed zeros, +-inf and NaN (floats: kept; float -> int: NaN 0, +-inf
the type's extremes, table 6). Layout: a narrowing result goes to lanes ``part::ratio`` of the narrow
register (the others 0), a widening source is read from them; the mask selects source lanes.
"""
import math
from fractions import Fraction

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.language import Vf as vf

from vf_exact import assert_same, round_exact, uint_of
from vf_kernels import lanes, vf_kernel

COVERED = frozenset({"astype"})

RM = pl.VFRoundMode
FIVE = [RM.CAST_RINT, RM.CAST_ROUND, RM.CAST_FLOOR, RM.CAST_CEIL, RM.CAST_TRUNC]
I8, U8, I16, U16, I32, U32 = pl.DT_INT8, pl.DT_UINT8, pl.DT_INT16, pl.DT_UINT16, pl.DT_INT32, pl.DT_UINT32
F16, BF16, F32 = pl.DT_FP16, pl.DT_BF16, pl.DT_FP32

# (src, dst, round modes): astype.md tables 2 - 5, the paths whose modes the page lists (None: exact)
PATHS = [
    (F16, I8, FIVE), (F16, U8, FIVE), (F16, I16, FIVE), (F16, I32, FIVE), (BF16, I32, FIVE), (F32, I16, FIVE),
    (F32, I32, FIVE),
    (F16, BF16, FIVE), (BF16, F16, FIVE), (F32, F16, [RM.CAST_ODD, *FIVE]), (F32, BF16, FIVE), (F16, F32, [None]),
    (BF16, F32, [None]),
    (I16, F16, FIVE), (I32, F32, FIVE), (I8, F16, [None]), (U8, F16, [None]), (I16, F32, [None]),
    (I8, I16, [None]), (I8, I32, [None]), (U8, U16, [None]), (U8, U32, [None]), (I16, I32, [None]),
    (U16, U32, [None]), (I16, U8, [None]), (U16, U8, [None]), (I32, U8, [None]), (I32, I16, [None]),
    (I32, U16, [None]), (U32, U8, [None]), (U32, I16, [None]), (U32, U16, [None]),
]



def ratio_of(src, dst) -> int:
    return max(src.bits, dst.bits) // min(src.bits, dst.bits)


# every (path, mode, layout) under the M3 mask; the all-lanes mask (the simulator's no-merge fast path) once
# per path and layout, with the path's first mode
CASES = [(s, d, rm, part, pattern) for s, d, rms in PATHS for k, rm in enumerate(rms)
         for part in range(ratio_of(s, d) if s.bits != d.bits else 1)
         for pattern in ([pl.MaskPattern.M3, pl.MaskPattern.ALL] if k == 0 else [pl.MaskPattern.M3])]


def to_int(x: Fraction, mode) -> int:
    fl = math.floor(x)
    if mode is RM.CAST_FLOOR:
        return fl
    if mode is RM.CAST_CEIL:
        return math.ceil(x)
    if mode is RM.CAST_TRUNC:
        return int(x)
    if x - fl != Fraction(1, 2):
        return math.floor(x + Fraction(1, 2))
    if mode is RM.CAST_ROUND:  # ties away from zero
        return fl + 1 if x > 0 else fl
    return fl if fl % 2 == 0 else fl + 1  # RINT: ties to even


def step(v, t, up: bool):
    """The next value of float type ``t`` above (``up``) or below ``v``."""
    u = uint_of(t)
    if v == 0:
        tiny = np.array([1], u).view(t)[0]
        return tiny if up else -tiny
    b = int(np.array([v], t).view(u)[0])
    b += 1 if (v > 0) == up else -1
    return np.array([b], u).view(t)[0]


def to_float(x: Fraction, t, mode):
    """``x`` rounded to float type ``t`` by ``mode`` (x within range)."""
    r = round_exact(x, t)
    if Fraction(float(r)) == x:
        return r
    lo, hi = (r, step(r, t, True)) if Fraction(float(r)) < x else (step(r, t, False), r)
    if mode is RM.CAST_FLOOR:
        return lo
    if mode is RM.CAST_CEIL:
        return hi
    if mode is RM.CAST_TRUNC:
        return lo if x > 0 else hi
    if mode is RM.CAST_ODD:
        return lo if int(np.array([lo], t).view(uint_of(t))[0]) & 1 else hi
    dlo, dhi = x - Fraction(float(lo)), Fraction(float(hi)) - x
    if dlo != dhi:
        return lo if dlo < dhi else hi
    if mode is RM.CAST_ROUND:
        return hi if x > 0 else lo
    return r  # RINT: round_exact's tie to even


def reference(v, src, dst, mode):
    t = dst.np_dtype
    fv = float(v)
    if dst.is_float():
        if not math.isfinite(fv):
            return np.array([fv]).astype(t)[0]
        x = Fraction(fv) if src.is_float() else Fraction(int(v))
        if x == 0:
            return np.array([fv]).astype(t)[0]  # the zero's sign
        return to_float(x, t, mode or RM.CAST_RINT)
    info = np.iinfo(t)
    if src.is_float():
        if math.isnan(fv):
            return t.type(0)
        if math.isinf(fv):
            return info.max if fv > 0 else info.min
        n = to_int(Fraction(fv), mode or RM.CAST_RINT)
    else:
        n = int(v)
    if dst.bits > src.bits:  # widening is exact (the data keep signed -> unsigned non-negative)
        return t.type(n)
    return np.array([n % 2**dst.bits], np.uint64).astype(uint_of(t)).view(t)[0]  # OFF: the low bits


def source_data(src, dst, n: int, seed: int) -> np.ndarray:
    g = np.random.default_rng(seed)
    t = src.np_dtype
    if src.is_float():
        if dst.is_float():
            lim = min(float(np.finfo(dst.np_dtype).max), float(np.finfo(t).max)) / 4
            x = g.standard_normal(n) * 3
            x[: n // 4] = g.uniform(-lim, lim, n // 4)
            vals = x.astype(t)
            grid = (g.standard_normal(n // 4) * 8).astype(dst.np_dtype).astype(np.float64)  # ties of dst
            ties = [(a + float(step(dst.np_dtype.type(a), dst.np_dtype, True))) / 2 for a in grid]
            vals[n // 2:n // 2 + len(ties)] = np.array(ties).astype(t)
        else:
            info = np.iinfo(dst.np_dtype)
            hi = min(float(info.max), 1000.0 if src is F16 else 30000.0)
            lo = 0.0 if info.min == 0 else -hi
            vals = g.uniform(lo, hi, n).astype(t)
            halves = np.floor(g.uniform(lo, hi, n // 4)) + 0.5  # ties
            vals[n // 2:n // 2 + n // 4] = halves.astype(t)
        sp = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, np.inf, -np.inf, np.nan]
        if not dst.is_float() and np.iinfo(dst.np_dtype).min == 0:
            sp = [0.0, -0.0, 0.5, 1.5, 2.5, np.inf, np.nan, 0.75]
        vals[0:3 * len(sp):3] = np.array(sp).astype(t)
        return vals
    info = np.iinfo(t)
    lo = 0 if (dst.bits > src.bits and not dst.is_float() and np.iinfo(dst.np_dtype).min == 0) else int(info.min)
    vals = g.integers(lo, int(info.max), n, endpoint=True, dtype=np.int64)
    vals[:4] = [lo, int(info.max), 0, 1]
    return vals.astype(t)


def astype_body(src, dst, rm, part, pattern):
    layout = [pl.CastLayout.ZERO, pl.CastLayout.ONE, pl.CastLayout.TWO, pl.CastLayout.THREE][part]
    layout = layout if src.bits != dst.bits else None

    @pl.vector_function
    def body(ti, to):
        m = vf.create_mask(pattern=pattern, dtype=src)
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=dst)
        x = vf.load_align(ti, 0)
        r = vf.astype(x, m, dtype=dst, round_mode=rm, layout=layout)
        vf.store_align(to, r, full)
    return body


@pytest.mark.parametrize("src,dst,rm,part,pattern", CASES,
                         ids=lambda v: getattr(v, "name", str(v)).removeprefix("CAST_").removeprefix("DT_"))
def test_astype(src, dst, rm, part, pattern):
    ns, nd = lanes(src), lanes(dst)
    x = source_data(src, dst, ns, seed=src.bits * 31 + dst.bits + part)
    out = np.full((1, nd), 0x5A, dst.np_dtype)
    vf_kernel(astype_body(src, dst, rm, part, pattern), [(src, [1, ns])], (dst, [1, nd]))[None, 1](x[None], out)
    act = np.arange(ns) % 3 == 0 if pattern is pl.MaskPattern.M3 else np.ones(ns, bool)
    r = ratio_of(src, dst)
    if dst.bits > src.bits:  # widening: source lanes part::r
        xs, act = x[part::r], act[part::r]
    else:
        xs = x
    want_vals = np.array([reference(v, src, dst, rm) if a else dst.np_dtype.type(0) for v, a in zip(xs, act)],
                         dst.np_dtype)
    if dst.bits < src.bits:
        want = np.zeros(nd, dst.np_dtype)
        want[part::r] = want_vals
    else:
        want = want_vals
    assert_same(out[0], want, f"{src.name} -> {dst.name} {rm} part {part} {pattern.name}")
