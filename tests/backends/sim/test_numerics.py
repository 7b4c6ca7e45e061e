"""Tests for pypto_pro.backends.sim.numerics against independent references.

References are built without the module under test: values are computed in float64
(or torch float64) and rounded by ``ref_round``, an exact grid-based rounding written
here from scratch (frexp/ldexp/rint in float64), or compared with torch's CPU kernels in
the native dtype.  Every op is also run on non-contiguous views (``base[:r, :c]``) with
a sentinel-filled border that must stay untouched, and with ``dst`` aliasing a source.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numerics_refs import (
    ALL,
    ARITH,
    BF16,
    BIN_REF,
    F16,
    F32,
    FLOATS,
    I8,
    I16,
    I32,
    SHAPE,
    assert_same,
    cases,
    check_border,
    dname,
    embed,
    f64,
    from_torch,
    rand_tile,
    ref_result,
    ref_round,
    ref_scalar,
    to_torch,
    wide,
    wrap,
)

from pypto_pro.backends.sim import numerics as nm
from pypto_pro.testing import ulp_diff

# ----------------------------------------------------------------------------- tables / errors


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


def test_supported_dtype_table() -> None:
    table = nm.SUPPORTED_DTYPES
    expected_keys = (set(nm.BINARY_OPS) | set(nm.SCALAR_OPS) | set(nm.UNARY_OPS)
                     | set(nm.REDUCE_OPS) | set(nm.EXPAND_OPS) | {"cast", "fill"})
    assert set(table) == expected_keys
    float_only = {"div", "divs", "exp", "log", "sqrt", "rsqrt", "recip", "expand_div"}
    for op, dts in table.items():
        if op == "cast":
            assert set(dts) == set(ALL)
        elif op == "fill":  # TEXPANDS also fills the unsigned 16/32-bit tiles (histogram, gather indices)
            assert set(dts) == set(ALL) | {np.dtype(np.uint16), np.dtype(np.uint32)}
        elif op in ("div", "divs"):  # TDIV / TDIVS: floats and 16 / 32 / 64-bit integers (a5; real div.md)
            ints = {np.dtype(t) for t in (np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64)}
            assert set(dts) == set(FLOATS) | ints, op
        elif op in float_only:
            assert set(dts) == set(FLOATS), op
        elif op in ("add", "sub", "maximum", "minimum", "adds", "subs", "maxs", "mins"):  # a5: every 8-64 bit int
            assert set(dts) == set(FLOATS) | {np.dtype(f"{s}int{b}") for s in ("", "u") for b in (8, 16, 32, 64)}, op
        elif op in ("mul", "muls"):  # a5: 16-64 bit ints
            assert set(dts) == set(FLOATS) | {np.dtype(f"{s}int{b}") for s in ("", "u") for b in (16, 32, 64)}, op
        else:
            assert set(dts) == set(ARITH), op
    assert nm.CAST_MODES[0] == "rint"


def test_errors() -> None:
    i16 = np.zeros((2, 3), I16)
    f32 = np.zeros((2, 3), F32)
    i8 = np.zeros((2, 3), I8)
    with pytest.raises(ValueError, match="div"):  # TDIV divides 16/32/64-bit integers, not int8
        nm.binary("div", i8, i8, i8)
    with pytest.raises(ZeroDivisionError):
        nm.binary("div", i16, i16, i16)
    with pytest.raises(ValueError, match="unknown"):
        nm.binary("pow", f32, f32, f32)
    with pytest.raises(ValueError, match="mul"):  # TMUL: 16-64 bit integers, not int8
        nm.binary("mul", i8, i8, i8)
    with pytest.raises(ValueError, match="dtype"):
        nm.binary("add", f32, f32, i16)
    with pytest.raises(ValueError, match="shape"):
        nm.binary("add", f32, f32, np.zeros((3, 2), F32))
    with pytest.raises(ValueError):
        nm.unary("exp", i16, i16)
    with pytest.raises(ValueError):
        nm.unary("tanh", f32, f32)
    with pytest.raises(ValueError):
        nm.binary_scalar("divs", i8, i8, 2)
    with pytest.raises(ValueError, match="mode"):
        nm.cast(f32, i16, "nearest")
    with pytest.raises(ValueError):
        nm.reduce("sum", np.zeros((2, 1), I8), i8, 1)
    with pytest.raises(ValueError, match="shape"):
        nm.reduce("sum", np.zeros((1, 3), F32), f32, 1)
    with pytest.raises(ValueError):
        nm.reduce("prod", np.zeros((2, 1), F32), f32, 1)
    with pytest.raises(ValueError):
        nm.reduce("sum", np.zeros((2, 1), F32), f32, 2)
    with pytest.raises(ValueError, match="vec shape"):
        nm.expand("expand_add", f32, f32, np.zeros((1, 3), F32), 1)
    with pytest.raises(ValueError):
        nm.expand("expand_div", i16, i16, np.zeros((2, 1), I16), 1)
    with pytest.raises(ValueError):
        nm.binary("add", np.zeros(3, F32), np.zeros(3, F32), np.zeros(3, F32))
    with pytest.raises(ValueError):
        nm.unary("abs", np.zeros((2, 3), np.float64), np.zeros((2, 3), np.float64))


# ----------------------------------------------------------------------------- binary


@pytest.mark.parametrize("op,dt", cases(nm.BINARY_OPS))
def test_binary_vs_float64_reference(op: str, dt: np.dtype, rng) -> None:
    if op == "div" and dt.kind in "iu":  # C division: truncated toward zero; no zero divisors (an error)
        info = np.iinfo(dt)
        lo, hi = max(int(info.min), -(1 << 62)), min(int(info.max), 1 << 62)
        a = rng.integers(lo, hi, SHAPE, endpoint=True).astype(dt)
        b = rng.integers(lo, hi, SHAPE, endpoint=True).astype(dt) >> dt.type(info.bits // 2)
        b[b == 0] = 1
        if dt.kind == "i":
            b[(a == np.iinfo(dt).min) & (b == -1)] = 1  # the one overflowing quotient (undefined in C)
        out = np.zeros(SHAPE, dt)
        nm.binary(op, out, a, b)
        q = [(abs(x) // abs(y)) * (-1 if (x < 0) != (y < 0) else 1)
             for x, y in zip(map(int, a.flat), map(int, b.flat))]
        assert out.ravel().tolist() == [int(v) for v in q], dname(dt)
        return
    a = rand_tile(rng, dt, SHAPE)
    b = rand_tile(rng, dt, SHAPE)
    if op == "div":
        b.flat[::11] = 0  # division by +-0
    base_a, va = embed(a)
    base_b, vb = embed(b)
    base_d, vd = embed(np.zeros(SHAPE, dt))
    assert nm.binary(op, vd, va, vb) is None
    with np.errstate(all="ignore"):
        want = ref_result(dt, BIN_REF[op](wide(a), wide(b)))
    assert_same(vd, want, zero_sign=op not in ("maximum", "minimum"), msg=f"{op} {dname(dt)}")
    check_border(base_d, *SHAPE)
    assert_same(va, a)
    assert_same(vb, b)


@pytest.mark.parametrize("dt", [F16, BF16, F32], ids=dname)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "maximum", "minimum"])
def test_binary_bit_exact_vs_torch(op: str, dt: np.dtype, rng) -> None:
    """fp16/bf16/fp32 arithmetic must be bit-identical to torch's CPU kernels."""
    n = 1 << 16
    if dt == F32:
        a = rng.standard_normal(n).astype(F32) * np.float32(1e3)
        b = rng.standard_normal(n).astype(F32)
    else:
        a = rng.integers(0, 1 << 16, n, dtype=np.uint64).astype(np.uint16).view(dt)
        b = rng.integers(0, 1 << 16, n, dtype=np.uint64).astype(np.uint16).view(dt)
    a, b = a.reshape(256, 256), b.reshape(256, 256)
    d = np.empty_like(a)
    nm.binary(op, d, a, b)
    tfn = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
           "maximum": torch.maximum, "minimum": torch.minimum}[op]
    want = from_torch(tfn(to_torch(a), to_torch(b)), dt)
    assert_same(d, want, zero_sign=op not in ("maximum", "minimum"), msg=f"{op} {dname(dt)} vs torch")


def test_int_arithmetic_wraps() -> None:
    a = np.array([[32767, -32768, 300, -2]], I16)
    b = np.array([[1, -1, 300, 16384]], I16)
    d = np.empty_like(a)
    nm.binary("add", d, a, b)
    assert d.tolist() == [[-32768, 32767, 600, 16382]]
    nm.binary("mul", d, a, b)
    assert d.tolist() == wrap([[32767, 32768, 90000, -32768]], I16).tolist()
    a32 = np.array([[2**31 - 1, -(2**31)]], I32)
    d32 = np.empty_like(a32)
    nm.binary("sub", d32, a32, np.array([[-1, 1]], I32))
    assert d32.tolist() == [[-(2**31), 2**31 - 1]]


def test_nan_propagation_in_max_min() -> None:
    for dt in FLOATS:
        a = np.array([[np.nan, 1.0, -np.inf, np.nan]], dt)
        b = np.array([[2.0, np.nan, np.inf, np.nan]], dt)
        d = np.empty_like(a)
        nm.binary("maximum", d, a, b)
        assert np.isnan(f64(d)).tolist() == [[True, True, False, True]]
        assert f64(d)[0, 2] == np.inf
        nm.binary("minimum", d, a, b)
        assert np.isnan(f64(d)).tolist() == [[True, True, False, True]]
        assert f64(d)[0, 2] == -np.inf


@pytest.mark.parametrize("dt", ARITH, ids=dname)
def test_binary_aliasing(dt: np.dtype, rng) -> None:
    a = rand_tile(rng, dt, (6, 10))
    b = rand_tile(rng, dt, (6, 10))
    with np.errstate(all="ignore"):
        want_ab = ref_result(dt, wide(a) - wide(b))
        want_aa = ref_result(dt, wide(a) * wide(a))
    x = a.copy()
    nm.binary("sub", x, x, b)  # dst is a
    assert_same(x, want_ab)
    y = b.copy()
    nm.binary("sub", y, a, y)  # dst is b
    assert_same(y, want_ab)
    z = a.copy()
    nm.binary("mul", z, z, z)  # dst is a is b
    assert_same(z, want_aa)
    base, v = embed(a)
    nm.binary("mul", v, v, v)  # aliasing on a non-contiguous view
    assert_same(v, want_aa)
    check_border(base, 6, 10)


@settings(max_examples=40, deadline=None)
@given(
    op=st.sampled_from(["add", "sub", "mul", "div"]),
    bits=hnp.arrays(np.uint16, (2, 3, 17)),
)
def test_fp16_binary_property_bit_exact(op: str, bits: np.ndarray) -> None:
    a, b = bits[0].view(F16), bits[1].view(F16)
    d = np.empty_like(a)
    nm.binary(op, d, a, b)
    with np.errstate(all="ignore"):
        want64 = ref_round(BIN_REF[op](f64(a), f64(b)), F16)
    assert_same(d, want64)
    tfn = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div}[op]
    assert_same(d, from_torch(tfn(to_torch(a), to_torch(b)), F16))


# ----------------------------------------------------------------------------- scalar


SCALARS = {
    F16: [0.1, -3, 1e5, float("inf"), float("nan"), 2049, 1 + 2.0**-11 + 2.0**-40],
    BF16: [0.1, -3, 1e39, 1 + 2.0**-8 + 2.0**-40, 2**24 + 2**16 + 1, float("-inf")],
    F32: [0.1, -3, 1e39, 16777217, 1 + 2.0**-24 + 2.0**-60, 2**60 + 1],
    I16: [5, -7, 70000, -40000, 2**40 + 3, np.int64(-1)],
    I32: [5, -7, 2**31, -(2**33) - 1, np.int8(-3)],
    **{np.dtype(t): [5, -7, 2**31 + 9, -(2**63), 2**64 - 1, np.int8(-3)]  # a5's wider integer tables
       for t in (np.int8, np.uint8, np.uint16, np.uint32, np.int64, np.uint64)},
}


@pytest.mark.parametrize("op,dt", cases(nm.SCALAR_OPS))
def test_binary_scalar(op: str, dt: np.dtype, rng) -> None:
    if op == "divs" and dt.kind in "iu":  # C division by the scalar, truncated toward zero
        a = rng.integers(-1000 if dt.kind == "i" else 0, 1000, SHAPE).astype(dt)
        for s in ((3, -3, 7) if dt.kind == "i" else (3, 7)):
            out = np.zeros(SHAPE, dt)
            nm.binary_scalar(op, out, a, s)
            want = [(abs(x) // abs(s)) * (-1 if (x < 0) != (s < 0) else 1) for x in map(int, a.flat)]
            assert out.ravel().tolist() == want, (dname(dt), s)
        with pytest.raises(ZeroDivisionError):
            nm.binary_scalar(op, out, a, 0)
        return
    a = rand_tile(rng, dt, SHAPE)
    base_a, va = embed(a)
    base_d, vd = embed(np.zeros(SHAPE, dt))
    fn = BIN_REF[{"adds": "add", "subs": "sub", "muls": "mul", "divs": "div",
                  "maxs": "maximum", "mins": "minimum"}[op]]
    for s in SCALARS[dt]:
        sv = ref_scalar(dt, s)
        nm.binary_scalar(op, vd, va, s)
        with np.errstate(all="ignore"):
            want = ref_result(dt, fn(wide(a), np.float64(sv) if dt in FLOATS else sv))
        assert_same(vd, want, zero_sign=op not in ("maxs", "mins"), msg=f"{op} {dname(dt)} s={s!r}")
        check_border(base_d, *SHAPE)
    # aliasing: dst is the source
    x = a.copy()
    nm.binary_scalar(op, x, x, 3)
    with np.errstate(all="ignore"):
        want = ref_result(dt, fn(wide(a), 3))
    assert_same(x, want, zero_sign=op not in ("maxs", "mins"))


def test_scalar_is_rounded_to_tile_dtype_first() -> None:
    # fp16(1 + 2^-12) == 1, so 2^-11 + s is the tie 1 + 2^-11 -> 1.0 (even).  Using the
    # unrounded scalar would give 1 + 2^-11 + 2^-12 -> 1 + 2^-10.
    a = np.full((1, 2), 2.0**-11, F16)
    d = np.empty_like(a)
    nm.binary_scalar("adds", d, a, 1 + 2.0**-12)
    assert f64(d).tolist() == [[1.0, 1.0]]
    # bf16 scalar: 1 + 2^-8 + 2^-40 must round to 1 + 2^-7 (no double rounding via fp32).
    b = np.zeros((1, 1), BF16)
    nm.binary_scalar("adds", b, b, 1 + 2.0**-8 + 2.0**-40)
    assert float(b[0, 0]) == 1 + 2.0**-7
    # int scalar wraps to the tile width
    i = np.zeros((1, 1), I16)
    nm.binary_scalar("adds", i, i, 70000)
    assert int(i[0, 0]) == 70000 - 65536


# ----------------------------------------------------------------------------- unary


def ref_unary(op: str, dt: np.dtype, a: np.ndarray) -> np.ndarray:
    x = f64(a)
    with np.errstate(all="ignore"):
        if op in ("exp", "log", "rsqrt"):
            t = {"exp": torch.exp, "log": torch.log, "rsqrt": torch.rsqrt}[op](torch.from_numpy(x)).numpy()
            r32 = ref_round(t, F32)  # ideal fp32 unit ...
            return r32 if dt == F32 else ref_round(f64(r32), dt)  # ... then one rounding
        if op == "sqrt":
            return ref_round(np.sqrt(x), dt)
        if op == "recip":
            return ref_round(1.0 / x, dt)
        if dt in FLOATS:
            v = {"abs": np.abs, "neg": np.negative, "relu": lambda z: np.where(z > 0, z, 0.0)}[op](x)
            v = np.where(np.isnan(x), np.nan, v)
            return v.astype(dt)
        iv = a.astype(np.int64)
        v = {"abs": np.abs, "neg": np.negative, "relu": lambda z: np.maximum(z, 0)}[op](iv)
        return wrap(v, dt)


@pytest.mark.parametrize("op,dt", cases(nm.UNARY_OPS))
def test_unary(op: str, dt: np.dtype, rng) -> None:
    a = rand_tile(rng, dt, SHAPE)
    if op in ("log", "sqrt", "rsqrt"):
        a = np.where(rng.random(SHAPE) < 0.85, np.abs(f64(a)), f64(a)).astype(dt)
    base_a, va = embed(a)
    base_d, vd = embed(np.zeros(SHAPE, dt))
    assert nm.unary(op, vd, va) is None
    assert_same(vd, ref_unary(op, dt, a), msg=f"{op} {dname(dt)}")
    check_border(base_d, *SHAPE)
    assert_same(va, a)
    nm.unary(op, va, va)  # aliasing, non-contiguous
    assert_same(va, ref_unary(op, dt, a))
    check_border(base_a, *SHAPE)


@pytest.mark.parametrize("dt", [F16, BF16], ids=dname)
@pytest.mark.parametrize("op", ["exp", "log", "sqrt", "rsqrt", "recip", "abs", "neg", "relu"])
def test_unary_exhaustive_16bit(op: str, dt: np.dtype) -> None:
    """All 65536 fp16 / bf16 bit patterns vs the reference, and vs torch."""
    a = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(dt).reshape(256, 256)
    d = np.empty_like(a)
    nm.unary(op, d, a)
    assert_same(d, ref_unary(op, dt, a), msg=f"{op} {dname(dt)}")
    tfn = {"exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
           "recip": torch.reciprocal, "abs": torch.abs, "neg": torch.neg, "relu": torch.relu}[op]
    want = from_torch(tfn(to_torch(a)), dt)
    if op in ("sqrt", "recip", "abs", "neg"):
        assert_same(d, want, msg=f"{op} {dname(dt)} vs torch")
    elif op == "relu":
        assert_same(d, want, zero_sign=False, msg="relu vs torch")
    else:  # torch uses an fp32 approximation; allow 1 ulp
        assert int(ulp_diff(d, want).max()) <= 1


def test_unary_fp32_vs_torch(rng) -> None:
    a = np.abs(rng.standard_normal((128, 256)).astype(F32)) * np.float32(30)
    # torch's vectorised fp32 sqrt is not always correctly rounded (AVX512 path), so 1 ulp;
    # exactness of our sqrt is checked against the float64 reference in test_unary.
    for op, tfn, tol in [("sqrt", torch.sqrt, 1), ("recip", torch.reciprocal, 0), ("exp", torch.exp, 1),
                         ("log", torch.log, 1), ("rsqrt", torch.rsqrt, 1)]:
        d = np.empty_like(a)
        nm.unary(op, d, a)
        want = from_torch(tfn(to_torch(a)), F32)
        assert int(ulp_diff(d, want).max()) <= tol, op


def test_unary_special_values() -> None:
    def run(op, dt, vals):
        a = np.array([vals], dt)
        d = np.empty_like(a)
        nm.unary(op, d, a)
        return f64(d)[0]

    for dt in FLOATS:
        assert run("exp", dt, [np.inf, -np.inf, 0.0]).tolist() == [np.inf, 0.0, 1.0]
        assert np.isnan(run("exp", dt, [np.nan])).all()
        r = run("log", dt, [0.0, -0.0, -1.0, np.inf, 1.0])
        assert r[0] == -np.inf and r[1] == -np.inf and np.isnan(r[2]) and r[3] == np.inf and r[4] == 0
        r = run("sqrt", dt, [-0.0, -1.0, np.inf])
        assert r[0] == 0 and np.signbit(r[0]) and np.isnan(r[1]) and r[2] == np.inf
        r = run("rsqrt", dt, [0.0, -0.0, np.inf, -4.0, 4.0])
        assert r.tolist()[:3] == [np.inf, -np.inf, 0.0] and np.isnan(r[3]) and r[4] == 0.5
        r = run("recip", dt, [0.0, -0.0, np.inf, -np.inf])
        assert r.tolist() == [np.inf, -np.inf, 0.0, -0.0] and np.signbit(r[3])
        r = run("relu", dt, [-0.0, -np.inf, np.nan, 3.0, -3.0])
        assert r[0] == 0 and not np.signbit(r[0]) and r[1] == 0 and np.isnan(r[2]) and r[3] == 3 and r[4] == 0
        assert np.signbit(run("neg", dt, [0.0])[0])
    assert run("exp", F16, [12.0])[0] == np.inf  # overflows fp16
    assert run("abs", I16, [-32768])[0] == -32768  # wraps
    assert run("neg", I32, [-(2**31)])[0] == -(2**31)
