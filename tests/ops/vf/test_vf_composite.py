"""The composite VF ops (``vf_computation/composite_computation``) against exact references: every
dtype each page lists, a partial mask (``M3``: lanes 0, 3, 6, ...) and all lanes, the zeroed inactive
lanes, special values, and the located errors for what the pages (and the real backend) refuse.

``mul_add_dst`` and ``mul_dst_add`` are one FMA (their pages: no rounding of the product), ``axpy``
too (its page gives the formula only; the chip's ``vaxpy`` is the same multiply-accumulate unit, and
its sibling pages say fused, so we take one rounding). The reference is the exact rational
``x * y + z`` rounded once (``vf_exact.round_exact``); the data hold triples where one rounding,
two roundings (product, then sum) and a float64 sum then a cast all give different results.
``abs_sub`` is one rounding of the exact difference; ``muls_cast`` one rounding of the exact product
to fp16 (the page: ``cast_round_to_f16(src * scalar)``, rounding CAST_ROUND, taken as nearest-even).
``exp_sub`` is transcendental: see its test for the tolerance.
"""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.errors import CompileError
from pypto_pro.language import Vf as vf

from located import check_location, marked_line
from vf_exact import NP, assert_same, finite, fraction, lanes, random_floats, reg_kernel, round_exact, run_kernel

COVERED = frozenset({"abs_sub", "axpy", "exp_sub", "mul_add_dst", "mul_dst_add", "muls_cast"})

F16, BF16, F32 = pl.DT_FP16, pl.DT_BF16, pl.DT_FP32
PATTERNS = [pl.MaskPattern.M3, pl.MaskPattern.ALL]


def active_lanes(pattern, n: int) -> np.ndarray:
    return np.arange(n) % 3 == 0 if pattern is pl.MaskPattern.M3 else np.ones(n, bool)


# (x, y, z) where one rounding of x * y + z differs from two (the product, then the sum) or from a
# float64 sum then a cast; also overflow, underflow to a subnormal / zero and signed zeros
TIES = {
    F32: [(1 + 2**-12, 1 + 2**-12, 2**-60), (1 + 2**-12, 1 + 2**-12, -2**-60), (1 + 2**-12, 1 + 2**-12, -1.0),
          (-(1 + 2**-12), 1 + 2**-12, -(2**-60)), (3.0, 2**127, -float(np.finfo(np.float32).max)), (2**-75, 2**-75, 0.0)],
    F16: [(1 + 2**-6, 1 + 2**-6, -1.0), (1 + 2**-6, -(1 + 2**-6), 1.0), (1 + 2**-10, 1 + 2**-10, 2**-24),
          (256.0, 256.0, 0.0), (2**-12, 2**-12, 0.0), (2**-12, 2**-12, -0.0)],
    BF16: [(1 + 2**-4, 1 + 2**-4, 2**-30), (1 + 2**-4, 1 + 2**-4, -1.0), (1 + 2**-4, -(1 + 2**-4), -(2**-30)),
           (2.0**100, 2.0**100, -1.0), (2**-70, 2**-70, 0.0)],
}


def fma_ref(x, y, z, t: np.dtype):
    """``x * y + z`` rounded once to ``t`` (IEEE 754 fusedMultiplyAdd)."""
    if not finite(x, y, z):
        with np.errstate(all="ignore"):
            return np.float64(np.float64(x) * np.float64(y) + np.float64(z)).astype(t)
    p, s = fraction(x) * fraction(y), fraction(z)
    neg_zero = p == 0 and s == 0 and np.signbit(float(z)) and (np.signbit(float(x)) != np.signbit(float(y)))
    return round_exact(p + s, t, neg_zero)


def triples(dt, seed: int) -> np.ndarray:
    """[3, lanes] of ``dt``: random values with specials, the tie triples in the lanes M3 selects."""
    n = lanes(dt)
    x = np.stack([random_floats(dt, n, seed + k) for k in range(3)])
    for i, tr in enumerate(TIES[dt] * 2):
        x[:, 3 * i] = np.array(tr, np.float64).astype(NP[dt])
    return x


def check_lanes(got, want, act, where):
    """Active lanes as ``want``, inactive lanes +0 (ZEROING)."""
    want = np.where(act, want, np.zeros_like(want))
    assert_same(got, want, where)


# ---- the accumulating FMAs ----------------------------------------------------------------------


def mul_add_dst_body(dt, pattern):
    n = lanes(dt)

    @pl.vector_function
    def body(ti, to):
        m = vf.create_mask(pattern=pattern, dtype=dt)
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=dt)
        a = vf.load_align(ti, 0)
        b = vf.load_align(ti, n)
        d = vf.load_align(ti, 2 * n)
        d = vf.mul_add_dst(a, b, m)
        vf.store_align(to, d, full)
    return body


def mul_dst_add_body(dt, pattern):
    n = lanes(dt)

    @pl.vector_function
    def body(ti, to):
        m = vf.create_mask(pattern=pattern, dtype=dt)
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=dt)
        d = vf.load_align(ti, 0)
        a = vf.load_align(ti, n)
        b = vf.load_align(ti, 2 * n)
        d = vf.mul_dst_add(a, b, m)
        vf.store_align(to, d, full)
    return body


@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: p.name)
@pytest.mark.parametrize("dt", [F16, BF16, F32], ids=lambda d: d.name)
@pytest.mark.parametrize("op", ["mul_add_dst", "mul_dst_add"])
def test_fma_rounds_once(op, dt, pattern):
    """mul_add_dst: dst = src0 * src1 + dst (rows x, y, z = src0, src1, dst); mul_dst_add: dst = dst *
    src0 + src1 (rows x, y, z = dst, src0, src1): x * y + z either way."""
    x = triples(dt, 11)
    body = (mul_add_dst_body if op == "mul_add_dst" else mul_dst_add_body)(dt, pattern)
    got = run_kernel(reg_kernel(body, dt, 3, dt), x, dt)[0]
    want = np.array([fma_ref(*x[:, i], NP[dt]) for i in range(x.shape[1])], NP[dt])
    check_lanes(got, want, active_lanes(pattern, x.shape[1]), f"{op} {dt.name}")


@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: p.name)
@pytest.mark.parametrize("dt", [pl.DT_INT16, pl.DT_UINT16, pl.DT_INT32, pl.DT_UINT32], ids=lambda d: d.name)
def test_mul_add_dst_integers_wrap(dt, pattern):
    t = NP[dt]
    n = lanes(dt)
    info = np.iinfo(t)
    g = np.random.default_rng(5)
    x = g.integers(info.min, info.max, (3, n), endpoint=True, dtype=t)
    x[:, :4] = np.array([[info.max, info.min, info.max, -1 if info.min else info.max],
                         [info.max, info.min, 2, -1 if info.min else 2], [1, info.min, info.max, 0]], np.int64).astype(t)
    got = run_kernel(reg_kernel(mul_add_dst_body(dt, pattern), dt, 3, dt), x, dt)[0]
    bits = 8 * t.itemsize
    exact = [(int(a) * int(b) + int(d)) % 2**bits for a, b, d in x.T]
    want = np.array(exact, np.uint64).astype(f"u{t.itemsize}").view(t)
    check_lanes(got, want, active_lanes(pattern, n), dt.name)


# The scalar is a literal the real backend writes with std::to_string (6 decimals; our codegen does the
# same), so the scalars here are exact in 6 decimals and the tie bits sit in src: 3 * (1 + 2^-23) is an
# fp32 tie (3 + 2^-22 + 2^-23), 3 * (1 + 2^-10) an fp16 one.
AXPY_SCALARS = {F32: [3.0, -3.0, 0.5], F16: [3.0, -3.0, 65504.0]}
AXPY_TIES = {F32: [(1 + 2**-23, 2**-60), (1 + 2**-23, -(2**-60)), (1 + 2**-23, -3.0), (1 + 2**-23, 3.0)],
             F16: [(1 + 2**-10, 2**-24), (1 + 2**-10, -(2**-24)), (1 + 2**-10, -3.0), (65504.0, 65504.0)]}


def axpy_body(dt, pattern, scalar):
    n = lanes(dt)

    @pl.vector_function
    def body(ti, to):
        m = vf.create_mask(pattern=pattern, dtype=dt)
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=dt)
        a = vf.load_align(ti, 0)
        d = vf.load_align(ti, n)
        d = vf.axpy(a, scalar, m)
        vf.store_align(to, d, full)
    return body


@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: p.name)
@pytest.mark.parametrize("dt,scalar", [(d, s) for d, ss in AXPY_SCALARS.items() for s in ss],
                         ids=lambda v: getattr(v, "name", repr(v)))
def test_axpy_rounds_once(dt, scalar, pattern):
    """dst = scalar * src + dst, the scalar in the register type (the page: src, scalar and dst share it)."""
    n = lanes(dt)
    x = np.stack([random_floats(dt, n, 17), random_floats(dt, n, 18)])  # rows: src, dst
    for i, tr in enumerate(AXPY_TIES[dt] * 2):
        x[:, 3 * i] = np.array(tr, np.float64).astype(NP[dt])
    got = run_kernel(reg_kernel(axpy_body(dt, pattern, scalar), dt, 2, dt), x, dt)[0]
    s = np.float64(scalar).astype(NP[dt])
    want = np.array([fma_ref(s, x[0, i], x[1, i], NP[dt]) for i in range(x.shape[1])], NP[dt])
    check_lanes(got, want, active_lanes(pattern, x.shape[1]), f"axpy {dt.name} {scalar}")


# ---- abs_sub ----------------------------------------------------------------------------------------


def abs_sub_body(dt, pattern):
    n = lanes(dt)

    @pl.vector_function
    def body(ti, to):
        m = vf.create_mask(pattern=pattern, dtype=dt)
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=dt)
        a = vf.load_align(ti, 0)
        b = vf.load_align(ti, n)
        r = vf.abs_sub(a, b, m)
        vf.store_align(to, r, full)
    return body


@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: p.name)
@pytest.mark.parametrize("dt", [F16, F32], ids=lambda d: d.name)
def test_abs_sub(dt, pattern):
    """|src0 - src1|: the exact difference rounded once, then its magnitude (|-0| = +0; inf - inf NaN;
    fp16 65504 - (-65504) overflows to inf)."""
    n = lanes(dt)
    x = np.stack([random_floats(dt, n, 21), random_floats(dt, n, 22)])
    fi = np.finfo(NP[dt])
    x[:, 0], x[:, 3], x[:, 6] = (fi.max, -fi.max), (-0.0, 0.0), (1.0, 1 + float(fi.eps) / 4)
    x[:, 9], x[:, 12] = (np.inf, np.inf), (float(fi.smallest_subnormal), -float(fi.smallest_subnormal))
    got = run_kernel(reg_kernel(abs_sub_body(dt, pattern), dt, 2, dt), x, dt)[0]
    want = []
    for a, b in x.T:
        if finite(a, b):
            want.append(abs(round_exact(fraction(a) - fraction(b), NP[dt])))
        else:
            with np.errstate(all="ignore"):
                want.append(abs(np.float64(a) - np.float64(b)))
    check_lanes(got, np.array(want, np.float64).astype(NP[dt]), active_lanes(pattern, n), f"abs_sub {dt.name}")


def _wrapped(values, t: np.dtype) -> np.ndarray:
    """Python-int results as two's-complement lanes of ``t``."""
    bits = 8 * t.itemsize
    return np.array([v % 2**bits for v in values], np.uint64).view(t)


def _int64_rows(t: np.dtype, seed: int) -> np.ndarray:
    info = np.iinfo(t)
    x = np.random.default_rng(seed).integers(info.min, info.max, (2, 32), endpoint=True, dtype=t)
    x[:, :4] = np.array([[info.min, info.max, info.max, 0], [1, info.min, info.max, info.min]], dtype=object).astype(t)
    return x


@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: p.name)
def test_abs_sub_int64_wraps(pattern):
    """INT64 lanes (the real backend's EmitVFAbsSub takes them; abs_sub.md lists FP16 / FP32): |a - b| of the
    wrapped difference, so INT64_MIN - 1 = INT64_MAX stays INT64_MAX and |INT64_MIN| is INT64_MIN."""
    t = np.dtype(np.int64)
    x = _int64_rows(t, 31)
    got = run_kernel(reg_kernel(abs_sub_body(pl.DT_INT64, pattern), pl.DT_INT64, 2, pl.DT_INT64), x, pl.DT_INT64)[0]
    diff = _wrapped([int(a) - int(b) for a, b in x.T], t)
    want = _wrapped([abs(int(v)) for v in diff], t)
    check_lanes(got, want, active_lanes(pattern, 32), "abs_sub INT64")


@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: p.name)
@pytest.mark.parametrize("dt,scalar", [(pl.DT_INT64, 3), (pl.DT_INT64, -7), (pl.DT_UINT64, 5)], ids=lambda v: getattr(v, "name", repr(v)))
def test_axpy_64_bit_integers_wrap(dt, scalar, pattern):
    """INT64 / UINT64 lanes (EmitVFAxpy takes them; axpy.md lists FP16 / FP32): scalar * src + dst wrapping."""
    t = NP[dt]
    x = _int64_rows(t, 37)
    got = run_kernel(reg_kernel(axpy_body(dt, pattern, scalar), dt, 2, dt), x, dt)[0]
    want = _wrapped([scalar * int(a) + int(d) for a, d in x.T], t)
    check_lanes(got, want, active_lanes(pattern, 32), f"axpy {dt.name} {scalar}")


# ---- muls_cast --------------------------------------------------------------------------------------


def muls_cast_body(layout, pattern, scalar):
    @pl.vector_function
    def body(ti, to):
        m = vf.create_mask(pattern=pattern, dtype=pl.DT_FP32)
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP16)
        a = vf.load_align(ti, 0)
        h = vf.muls_cast(a, scalar, m, dtype=pl.DT_FP16, layout=layout)
        vf.store_align(to, h, full)
    return body


@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: p.name)
@pytest.mark.parametrize("layout", [None, pl.CastLayout.ZERO, pl.CastLayout.ONE], ids=lambda v: getattr(v, "name", "default"))
@pytest.mark.parametrize("scalar", [3.0, -1.5, 0.015625])
def test_muls_cast_rounds_the_exact_product_once(scalar, layout, pattern):
    """64 fp32 lanes to the even (ZERO, the default) or odd (ONE) fp16 lanes; the other half and the
    inactive lanes are 0. With scalar 3, (2 + 2^-10) / 3 (exact in fp32) gives the fp16 tie 2 + 2^-10
    (to even: 2) and its fp32 neighbours land just above / below it; 65504 * 3 overflows to inf; fp32
    values below the fp16 range go to 0 or a subnormal. (Scalars are exact in 6 decimals: see AXPY_SCALARS.)"""
    x = random_floats(F32, 64, 31)[None]
    t = np.float32((2 + 2**-10) / 3)
    x[0, 0:18:3] = [t, np.nextafter(t, np.float32(2)), np.nextafter(t, np.float32(0)), 65504.0, 2**-26, 2**-30]
    got = run_kernel(reg_kernel(muls_cast_body(layout, pattern, scalar), F32, 1, F16), x, F16)[0]
    act = active_lanes(pattern, 64)
    want = np.zeros(128, np.float16)
    part = slice(1, None, 2) if layout is pl.CastLayout.ONE else slice(0, None, 2)
    vals = []
    for v in x[0]:
        if finite(v):
            vals.append(round_exact(fraction(v) * fraction(np.float32(scalar)), np.float16,
                                    neg_zero=bool(np.signbit(v)) != (scalar < 0)))
        else:
            vals.append(np.float16(np.float64(v) * scalar))
    want[part] = np.where(act, np.array(vals, np.float16), np.float16(0))
    assert_same(got, want, f"muls_cast {layout} {scalar}")


# ---- exp_sub ----------------------------------------------------------------------------------------


def exp_sub_body(dt, layout, pattern):
    n = lanes(dt)

    @pl.vector_function
    def body(ti, to):
        m = vf.create_mask(pattern=pattern, dtype=dt)
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
        a = vf.load_align(ti, 0)
        b = vf.load_align(ti, n)
        r = vf.exp_sub(a, b, m, layout=layout)
        vf.store_align(to, r, full)
    return body


EXP_CASES = [(F32, None), (F16, None), (F16, pl.CastLayout.ZERO), (F16, pl.CastLayout.ONE)]


@pytest.mark.parametrize("pattern", [pl.MaskPattern.VL16, pl.MaskPattern.ALL], ids=lambda p: p.name)
@pytest.mark.parametrize("dt,layout", EXP_CASES, ids=lambda v: getattr(v, "name", "default"))
def test_exp_sub(dt, layout, pattern):
    """e^(src0 - src1) in fp32 (fp16 sources: widened, then the even (ZERO, default) or odd (ONE) lanes
    give the 64 results). The page's own examples accept rtol = atol = 1e-5 for fp32 and 1e-3 for fp16
    sources: the chip's exponential is an approximation the page does not pin down, so finite results are
    checked to rtol 1e-5 against float64 exp of the fp32 difference (the fp32 subtraction is exact IEEE
    rounding, as the page's formula says); specials exactly (e^-inf = +0, e^inf = inf, NaN). Masks are
    prefixes (VL16 counted in source lanes) because the page's figure leaves a non-prefix fp16 mask's
    pairing open. Inactive results are 0."""
    n = lanes(dt)
    x = np.stack([random_floats(dt, n, 41, scale=3), random_floats(dt, n, 42, scale=3)])
    x[:, :8] = np.array([[0.0, np.inf, -np.inf, np.nan, 1.0, np.inf, 88.0, -0.0],
                         [0.0, 1.0, 1.0, 0.0, np.nan, np.inf, -1.0, 0.0]]).astype(NP[dt])
    got = run_kernel(reg_kernel(exp_sub_body(dt, layout, pattern), dt, 2, F32), x, F32)[0]
    a, b = x.astype(np.float32)
    act = active_lanes(pattern, n) if pattern is pl.MaskPattern.ALL else np.arange(n) < 16
    if dt is F16:
        part = slice(1, None, 2) if layout is pl.CastLayout.ONE else slice(0, None, 2)
        a, b, act = a[part], b[part], act[part]
    with np.errstate(all="ignore"):
        want = np.exp((a - b).astype(np.float64)).astype(np.float32)
    want = np.where(act, want, np.float32(0))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    exact = ok & (~np.isfinite(want) | (want == 0) | ~act)
    assert_same(got[exact], want[exact], "exp_sub specials / inactive")
    np.testing.assert_allclose(got[ok & ~exact], want[ok & ~exact], rtol=1e-5, atol=0)


# ---- what the pages refuse --------------------------------------------------------------------------


def _refused(make):
    return pytest.param(make, id=make.__name__)


def abs_sub_bf16():
    @pl.vector_function
    def body(ti, to):
        m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=BF16)
        a = vf.load_align(ti, 0)
        r = vf.abs_sub(a, a, m)  # <- here
        vf.store_align(to, r, m)
    return body, BF16, "a, a", "vf.abs_sub"


def abs_sub_merging():
    @pl.vector_function
    def body(ti, to):
        m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=F32)
        a = vf.load_align(ti, 0)
        r = vf.abs_sub(a, a, m, mode=pl.MergeMode.MERGING)  # <- here
        vf.store_align(to, r, m)
    return body, F32, "pl.MergeMode.MERGING", "only MergeMode.ZEROING"


def axpy_int32():
    @pl.vector_function
    def body(ti, to):
        m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_INT32)
        a = vf.load_align(ti, 0)
        d = vf.load_align(ti, 64)
        d = vf.axpy(a, 2, m)  # <- here
        vf.store_align(to, d, m)
    return body, pl.DT_INT32, "a, 2", "vf.axpy"


def axpy_bf16():
    @pl.vector_function
    def body(ti, to):
        m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=BF16)
        a = vf.load_align(ti, 0)
        d = vf.load_align(ti, 128)
        d = vf.axpy(a, 2.0, m)  # <- here
        vf.store_align(to, d, m)
    return body, BF16, "a, 2.0", "vf.axpy"


def mul_add_dst_int8():
    @pl.vector_function
    def body(ti, to):
        m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_INT8)
        a = vf.load_align(ti, 0)
        d = vf.load_align(ti, 256)
        d = vf.mul_add_dst(a, a, m)  # <- here
        vf.store_align(to, d, m)
    return body, pl.DT_INT8, "a, a", "vf.mul_add_dst"


def mul_add_dst_merging():
    @pl.vector_function
    def body(ti, to):
        m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=F32)
        a = vf.load_align(ti, 0)
        d = vf.load_align(ti, 64)
        d = vf.mul_add_dst(a, a, m, mode=pl.MergeMode.MERGING)  # <- here
        vf.store_align(to, d, m)
    return body, F32, "pl.MergeMode.MERGING", "only MergeMode.ZEROING"


def mul_dst_add_int32():
    @pl.vector_function
    def body(ti, to):
        m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_INT32)
        a = vf.load_align(ti, 0)
        d = vf.load_align(ti, 64)
        d = vf.mul_dst_add(a, a, m)  # <- here
        vf.store_align(to, d, m)
    return body, pl.DT_INT32, "a, a", "vf.mul_dst_add"


def mul_dst_add_merging():
    @pl.vector_function
    def body(ti, to):
        m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=F16)
        a = vf.load_align(ti, 0)
        d = vf.load_align(ti, 128)
        d = vf.mul_dst_add(a, a, m, mode=pl.MergeMode.MERGING)  # <- here
        vf.store_align(to, d, m)
    return body, F16, "pl.MergeMode.MERGING", "only MergeMode.ZEROING"


def axpy_merging():
    @pl.vector_function
    def body(ti, to):
        m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=F32)
        a = vf.load_align(ti, 0)
        d = vf.load_align(ti, 64)
        d = vf.axpy(a, 2.0, m, mode=pl.MergeMode.MERGING)  # <- here
        vf.store_align(to, d, m)
    return body, F32, "pl.MergeMode.MERGING", "only MergeMode.ZEROING"


def muls_cast_bf16():
    @pl.vector_function
    def body(ti, to):
        m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=F32)
        a = vf.load_align(ti, 0)
        h = vf.muls_cast(a, 2.0, m, dtype=pl.DT_BF16)  # <- here
        vf.store_align(to, h, m)
    return body, F32, "pl.DT_BF16", "the result is DT_FP16"


def muls_cast_without_dtype():
    @pl.vector_function
    def body(ti, to):
        m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=F32)
        a = vf.load_align(ti, 0)
        h = vf.muls_cast(a, 2.0, m)  # <- here
        vf.store_align(to, h, m)
    return body, F32, "vf.muls_cast", "dtype= is required"


def muls_cast_fp16_source():
    @pl.vector_function
    def body(ti, to):
        m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=F16)
        a = vf.load_align(ti, 0)
        h = vf.muls_cast(a, 2.0, m, dtype=pl.DT_FP16)  # <- here
        vf.store_align(to, h, m)
    return body, F16, "a, 2.0", "vf.muls_cast"


def exp_sub_bf16():
    @pl.vector_function
    def body(ti, to):
        m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=BF16)
        a = vf.load_align(ti, 0)
        r = vf.exp_sub(a, a, m)  # <- here
        vf.store_align(to, r, m)
    return body, BF16, "a, a", "vf.exp_sub"


def exp_sub_fp16_result():
    @pl.vector_function
    def body(ti, to):
        m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=F16)
        a = vf.load_align(ti, 0)
        r = vf.exp_sub(a, a, m, dtype=pl.DT_FP16)  # <- here
        vf.store_align(to, r, m)
    return body, F16, "pl.DT_FP16", "the result is DT_FP32"


REFUSED = [abs_sub_bf16, abs_sub_merging, axpy_int32, axpy_bf16, axpy_merging, mul_add_dst_int8, mul_add_dst_merging,
           mul_dst_add_int32, mul_dst_add_merging, muls_cast_bf16, muls_cast_without_dtype, muls_cast_fp16_source,
           exp_sub_bf16, exp_sub_fp16_result]


@pytest.mark.parametrize("make", [_refused(m) for m in REFUSED])
def test_refused_is_a_located_error(make):
    body, dt, token, match = make()
    with pytest.raises(CompileError, match=match) as info:
        reg_kernel(body, dt, 2, dt).compile()
    check_location(info.value, *marked_line(body), token)
