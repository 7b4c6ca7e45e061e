"""The simulator's numerics (``backends/sim/numerics.py``), part two: casts in every mode and pair,
reductions, broadcasts (expand), fill and the cross-family checks; references in ``numerics_refs.py``."""
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
    F64,
    FLOATS,
    I8,
    I16,
    I32,
    SHAPE,
    TORCH,
    U8,
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
    ref_round_int,
    ref_scalar,
    to_torch,
    wide,
    wrap,
)

from pypto_pro.backends.sim import numerics as nm

# ----------------------------------------------------------------------------- cast


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


def ref_cast(src: np.ndarray, dd: np.dtype, mode: str) -> np.ndarray:
    sd = src.dtype
    if sd == dd:
        return src.copy()
    x = f64(src) if sd in FLOATS else src.astype(np.int64).astype(F64)
    if dd in FLOATS:
        return ref_round(x, dd, mode)
    info = np.iinfo(dd)
    if sd in FLOATS:
        with np.errstate(all="ignore"):
            r = ref_round_int(x, mode)
        r = np.where(np.isnan(r), 0.0, np.clip(r, int(info.min), int(info.max)))
        return r.astype(dd)
    return np.clip(src.astype(np.int64), int(info.min), int(info.max)).astype(dd)


def cast_source(rng, sd: np.dtype) -> np.ndarray:
    a = rand_tile(rng, sd, (9, 40))
    if sd in FLOATS:
        # values near integers and halves, and around int/fp16 range limits
        extra = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 127.5, 128.0, -128.5, -129.0, 255.5, 256.0,
                          32767.5, -32768.5, 65519.0, 65520.0, 2.0**31, -(2.0**31), 2.0**31 - 128,
                          3e9, -3e9, 0.49999997, -0.49999997, 1e-8, -1e-8, 2049.0, 2051.0, 3.0e38])
        with np.errstate(all="ignore"):
            a.flat[: len(extra)] = extra.astype(sd)
    return a


CAST_PAIRS = [pytest.param(s, d, id=f"{dname(s)}->{dname(d)}") for s in ALL for d in ALL]


@pytest.mark.parametrize("sd,dd", CAST_PAIRS)
def test_cast_all_pairs_all_modes(sd: np.dtype, dd: np.dtype, rng) -> None:
    src = cast_source(rng, sd)
    base_s, vs = embed(src)
    for mode in nm.CAST_MODES:
        base_d, vd = embed(np.zeros(src.shape, dd))
        assert nm.cast(vd, vs, mode) is None
        assert_same(vd, ref_cast(src, dd, mode), msg=f"{dname(sd)}->{dname(dd)} {mode}")
        check_border(base_d, *src.shape)
    assert_same(vs, src)


@pytest.mark.parametrize("sd", [F16, BF16], ids=dname)
def test_cast_exhaustive_16bit_sources(sd: np.dtype) -> None:
    src = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(sd).reshape(128, 512)
    for dd in ALL:
        for mode in nm.CAST_MODES if dd != F32 else ("rint",):
            d = np.empty(src.shape, dd)
            nm.cast(d, src, mode)
            assert_same(d, ref_cast(src, dd, mode), msg=f"{dname(sd)}->{dname(dd)} {mode}")


def test_cast_vs_torch(rng) -> None:
    x = (rng.standard_normal(1 << 15) * 10.0 ** rng.uniform(-8, 6, 1 << 15)).astype(F32).reshape(128, 256)
    for dd in (F16, BF16):
        d = np.empty(x.shape, dd)
        nm.cast(d, x)
        assert_same(d, from_torch(to_torch(x).to(TORCH[dd]), dd), msg=f"f32->{dname(dd)}")
    i32 = rng.integers(-(2**31), 2**31, x.shape, dtype=np.int64).astype(I32)
    d32 = np.empty(x.shape, F32)
    nm.cast(d32, i32)
    assert_same(d32, to_torch(i32).to(torch.float32).numpy())
    i16 = rng.integers(-(2**15), 2**15, x.shape, dtype=np.int64).astype(I16)
    d16 = np.empty(x.shape, F16)
    nm.cast(d16, i16)
    assert_same(d16, to_torch(i16).to(torch.float16).numpy())
    small = np.clip(x, -1e4, 1e4)
    di = np.empty(x.shape, I16)
    nm.cast(di, small, "trunc")  # torch float->int truncates (in range)
    assert_same(di, to_torch(small).to(torch.int16).numpy())


def test_cast_edge_cases() -> None:
    x = np.array([[np.nan, np.inf, -np.inf, 1e10, -1e10, 2.5, -2.5, 0.5, -0.5, 3.5]], F32)
    d = np.empty(x.shape, I32)
    nm.cast(d, x)
    assert d.tolist() == [[0, 2**31 - 1, -(2**31), 2**31 - 1, -(2**31), 2, -2, 0, 0, 4]]
    nm.cast(d, x, "round")
    assert d.tolist()[0][5:] == [3, -3, 1, -1, 4]
    u = np.empty(x.shape, U8)
    nm.cast(u, x, "floor")
    assert u.tolist() == [[0, 255, 0, 255, 0, 2, 0, 0, 0, 3]]
    # int -> int saturates
    i = np.array([[-200, 200, 70000, -70000]], I32)
    i8 = np.empty(i.shape, I8)
    nm.cast(i8, i)
    assert i8.tolist() == [[-128, 127, 127, -128]]
    # fp32 -> fp16 directed modes at overflow
    big = np.array([[70000.0, -70000.0, 65519.0, 65520.0]], F32)
    h = np.empty(big.shape, F16)
    nm.cast(h, big, "trunc")
    assert f64(h).tolist() == [[65504.0, -65504.0, 65504.0, 65504.0]]
    nm.cast(h, big, "rint")
    assert f64(h).tolist() == [[np.inf, -np.inf, 65504.0, np.inf]]
    # int32 -> bf16 without double rounding: 2^24 + 2^16 + 1 -> 2^24 + 2^17
    b = np.empty((1, 1), BF16)
    nm.cast(b, np.array([[2**24 + 2**16 + 1]], I32))
    assert float(b[0, 0]) == 2**24 + 2**17
    # same-dtype cast is an exact copy (including NaN payload)
    p = np.array([[0x7E01, 0xFC00]], np.uint16).view(F16)
    q = np.empty_like(p)
    nm.cast(q, p, "floor")
    assert q.view(np.uint16).tolist() == [[0x7E01, 0xFC00]]


@settings(max_examples=40, deadline=None)
@given(bits=hnp.arrays(np.uint32, (4, 16)), dd=st.sampled_from([F16, BF16]))
def test_cast_mode_properties(bits: np.ndarray, dd: np.dtype) -> None:
    """For every fp32 x: floor <= x <= ceil are adjacent; trunc/rint/round pick one of them."""
    x = bits.view(F32)
    res = {}
    for mode in nm.CAST_MODES:
        d = np.empty(x.shape, dd)
        nm.cast(d, x, mode)
        res[mode] = f64(d)
        assert_same(d, ref_round(f64(x), dd, mode), msg=mode)
    xv = f64(x)
    fin = np.isfinite(xv)
    lo, hi = res["floor"][fin], res["ceil"][fin]
    v = xv[fin]
    assert (lo <= v).all() and (v <= hi).all()
    for mode in ("rint", "round", "trunc"):
        r = res[mode][fin]
        assert ((r == lo) | (r == hi)).all()
    assert (np.abs(res["trunc"][fin]) <= np.abs(v)).all()
    assert (np.abs(res["rint"][fin] - v) <= np.abs(res["round"][fin] - v)).all()


@settings(max_examples=40, deadline=None)
@given(
    mant=hnp.arrays(np.int64, (3, 8), elements=st.integers(-(2**9), 2**9)),
    shift=st.integers(0, 22),
    jitter=hnp.arrays(np.int64, (3, 8), elements=st.integers(-2, 2)),
    dd=st.sampled_from([F16, BF16, F32]),
)
def test_cast_int32_to_float_near_ties(mant, shift, jitter, dd) -> None:
    """int32 values at and next to rounding ties of the target format, every mode."""
    v = np.clip((mant << shift) + jitter, -(2**31), 2**31 - 1).astype(I32)
    for mode in nm.CAST_MODES:
        d = np.empty(v.shape, dd)
        nm.cast(d, v, mode)
        assert_same(d, ref_round(v.astype(F64), dd, mode), msg=f"int32->{dname(dd)} {mode}")


# ----------------------------------------------------------------------------- reduce


def ref_reduce(op: str, src: np.ndarray, dim: int) -> np.ndarray:
    """Pairwise fold in halves, padded to a power of two, rounding at every level."""
    dt = src.dtype
    cols = [c for c in (src.T if dim == 1 else src)]  # the reduced axis, as a Python list
    vals = [f64(c) if dt in FLOATS else c.astype(np.int64) for c in cols]
    n = len(vals)
    p = 1 << (n - 1).bit_length()
    if dt in FLOATS:
        ident = {"sum": -0.0, "max": -np.inf, "min": np.inf}[op]
    else:
        info = np.iinfo(dt)
        ident = {"sum": 0, "max": int(info.min), "min": int(info.max)}[op]
    vals += [np.full_like(vals[0], ident) for _ in range(p - n)]
    fn = {"sum": np.add, "max": np.maximum, "min": np.minimum}[op]
    with np.errstate(all="ignore"):
        while len(vals) > 1:
            h = len(vals) // 2
            vals = [fn(vals[i], vals[i + h]) for i in range(h)]
            vals = [f64(ref_round(v, dt)) if dt in FLOATS else wrap(v, dt).astype(np.int64) for v in vals]
    out = vals[0].astype(dt) if dt in FLOATS else vals[0].astype(dt)
    return out.reshape(-1, 1) if dim == 1 else out.reshape(1, -1)


@pytest.mark.parametrize("op,dt", cases(nm.REDUCE_OPS))
@pytest.mark.parametrize("dim", [0, 1])
def test_reduce(op: str, dt: np.dtype, dim: int, rng) -> None:
    for shape in [(5, 37), (8, 64), (1, 1), (3, 1), (1, 5), (16, 129), (33, 8)]:
        src = rand_tile(rng, dt, shape, special=shape[0] * shape[1] > 40)
        if dt in FLOATS and op == "sum":
            src = rand_tile(rng, dt, shape, special=False)
        base_s, vs = embed(src)
        out_shape = (shape[0], 1) if dim == 1 else (1, shape[1])
        base_d, vd = embed(np.zeros(out_shape, dt))
        assert nm.reduce(op, vd, vs, dim) is None
        assert_same(vd, ref_reduce(op, src, dim), zero_sign=op == "sum", msg=f"{op} {dname(dt)} {shape} dim={dim}")
        check_border(base_d, *out_shape)
        assert_same(vs, src)
        if dt in FLOATS and op != "sum":
            want = (np.max if op == "max" else np.min)(f64(src), axis=dim, keepdims=True)
            assert_same(vd, want.astype(dt), zero_sign=False)


def test_reduce_sum_accuracy_and_specials(rng) -> None:
    x = rng.standard_normal((16, 512)).astype(F32)
    d = np.empty((16, 1), F32)
    nm.reduce("sum", d, x, 1)
    np.testing.assert_allclose(f64(d)[:, 0], f64(x).sum(axis=1), rtol=1e-5, atol=1e-4)
    y = np.array([[1.0, np.inf, -np.inf], [1.0, np.nan, 2.0], [-0.0, -0.0, -0.0]], F32)
    e = np.empty((3, 1), F32)
    nm.reduce("sum", e, y, 1)
    assert np.isnan(e[0, 0]) and np.isnan(e[1, 0]) and e[2, 0] == 0 and np.signbit(e[2, 0])
    nm.reduce("max", e, y, 1)
    assert np.isnan(e[1, 0]) and e[0, 0] == np.inf


def test_reduce_rounds_at_every_level() -> None:
    # bf16: [1, 2^-8, 2^-8, 0] -> level 1: [1 + 2^-8 -> 1 (tie to even), 2^-8]; level 2: 1 + 2^-8 -> 1.
    # An fp32 accumulator rounded once would give 1 + 2^-7.
    x = np.array([[1.0, 2.0**-8, 2.0**-8, 0.0]], BF16)
    d = np.empty((1, 1), BF16)
    nm.reduce("sum", d, x, 1)
    assert float(d[0, 0]) == 1.0
    col = np.ascontiguousarray(x.T)
    dc = np.empty((1, 1), BF16)
    nm.reduce("sum", dc, col, 0)
    assert float(dc[0, 0]) == 1.0
    # int16 sums wrap in the tile dtype
    i = np.array([[30000, 30000, 10, -5]], I16)
    di = np.empty((1, 1), I16)
    nm.reduce("sum", di, i, 1)
    assert int(di[0, 0]) == int(wrap(60005, I16))


def test_reduce_dst_aliases_src(rng) -> None:
    x = rng.standard_normal((6, 20)).astype(F16)
    want_r = ref_reduce("sum", x, 1)
    want_c = ref_reduce("max", x, 0)
    a = x.copy()
    nm.reduce("sum", a[:, :1], a, 1)  # result lands in column 0 of the source
    assert_same(a[:, :1], want_r)
    b = x.copy()
    nm.reduce("max", b[:1, :], b, 0)
    assert_same(b[:1, :], want_c)


# ----------------------------------------------------------------------------- expand


@pytest.mark.parametrize("op,dt", cases(nm.EXPAND_OPS))
@pytest.mark.parametrize("dim", [0, 1])
def test_expand(op: str, dt: np.dtype, dim: int, rng) -> None:
    src = rand_tile(rng, dt, SHAPE)
    vshape = (SHAPE[0], 1) if dim == 1 else (1, SHAPE[1])
    vec = rand_tile(rng, dt, vshape)
    base_s, vs = embed(src)
    base_v, vv = embed(vec)
    base_d, vd = embed(np.zeros(SHAPE, dt))
    fn = BIN_REF[{"expand_add": "add", "expand_sub": "sub", "expand_mul": "mul", "expand_div": "div",
                  "expand_max": "maximum", "expand_min": "minimum"}[op]]
    with np.errstate(all="ignore"):
        want = ref_result(dt, fn(wide(src), wide(vec)))
    assert nm.expand(op, vd, vs, vv, dim) is None
    zs = op not in ("expand_max", "expand_min")
    assert_same(vd, want, zero_sign=zs, msg=f"{op} {dname(dt)} dim={dim}")
    check_border(base_d, *SHAPE)
    assert_same(vv, vec)
    nm.expand(op, vs, vs, vv, dim)  # dst aliases src (non-contiguous)
    assert_same(vs, want, zero_sign=zs)
    check_border(base_s, *SHAPE)


def test_expand_torch_bf16_fp16(rng) -> None:
    for dt in (F16, BF16):
        src = rng.standard_normal((64, 128)).astype(dt)
        vec = rng.standard_normal((64, 1)).astype(dt)
        d = np.empty_like(src)
        nm.expand("expand_div", d, src, vec, 1)
        assert_same(d, from_torch(to_torch(src) / to_torch(vec), dt))
        row = rng.standard_normal((1, 128)).astype(dt)
        nm.expand("expand_mul", d, src, row, 0)
        assert_same(d, from_torch(to_torch(src) * to_torch(row), dt))


# ----------------------------------------------------------------------------- fill


@pytest.mark.parametrize("dt", ALL, ids=dname)
def test_fill(dt: np.dtype) -> None:
    base, v = embed(np.zeros((4, 9), dt))
    values = [3, -1, 300, 2**40 + 5] + ([0.1, 1e6, 1 + 2.0**-8 + 2.0**-40, -np.inf] if dt in FLOATS else [])
    for s in values:
        assert nm.fill(v, s) is None
        if dt in FLOATS:
            want = ref_scalar(dt, s)
            assert_same(v, np.full(v.shape, want, F64).astype(dt), msg=f"fill {s!r}")
        else:
            assert (v == wrap(s, dt)).all(), s
        check_border(base, 4, 9)


@settings(max_examples=60, deadline=None)
@given(s=st.floats(allow_nan=False, width=64), dt=st.sampled_from(FLOATS))
def test_fill_float_scalar_property(s: float, dt: np.dtype) -> None:
    d = np.empty((1, 3), dt)
    nm.fill(d, s)
    assert_same(d, np.full((1, 3), ref_scalar(dt, s), F64).astype(dt))


@settings(max_examples=60, deadline=None)
@given(s=st.integers(min_value=-(2**70), max_value=2**70), dt=st.sampled_from([I8, U8, I16, I32]))
def test_fill_int_scalar_wraps(s: int, dt: np.dtype) -> None:
    d = np.empty((2, 2), dt)
    nm.fill(d, s)
    bits = dt.itemsize * 8
    want = s % (1 << bits)
    if dt.kind == "i" and want >= 1 << (bits - 1):
        want -= 1 << bits
    assert (d == want).all()


# ----------------------------------------------------------------------------- misc


def test_large_tile_all_families_smoke(rng) -> None:
    """A 128x512 tile through every family, in the dtypes the simulator uses most."""
    for dt in (F16, F32, BF16):
        a = rng.standard_normal((128, 512)).astype(dt)
        b = rng.standard_normal((128, 512)).astype(dt)
        d = np.empty_like(a)
        for op in nm.BINARY_OPS:
            nm.binary(op, d, a, b)
        for op in nm.UNARY_OPS:
            nm.unary(op, d, a)
        r = np.empty((128, 1), dt)
        c = np.empty((1, 512), dt)
        for op in nm.REDUCE_OPS:
            nm.reduce(op, r, a, 1)
            nm.reduce(op, c, a, 0)
        nm.expand("expand_sub", d, a, r, 1)
        assert np.isfinite(f64(d)).all()
        for other in ALL:
            o = np.empty(a.shape, other)
            nm.cast(o, a)


@pytest.mark.parametrize("dt", ARITH, ids=dname)
def test_sign_zero_relu_and_int_relu(dt: np.dtype) -> None:
    vals = [-0.0, 0.0, -5.0, 5.0] if dt in FLOATS else [0, -5, 5, int(np.iinfo(dt).min)]
    a = np.array([vals], dt)
    d = np.empty_like(a)
    nm.unary("relu", d, a)
    if dt in FLOATS:
        assert f64(d).tolist() == [[0.0, 0.0, 0.0, 5.0]]
        assert not np.signbit(f64(d)).any()
    else:
        assert d.tolist() == [[0, 0, 5, 0]]


def test_all_functions_exported() -> None:
    for name in ("binary", "binary_scalar", "unary", "cast", "reduce", "expand", "fill",
                 "BINARY_OPS", "SCALAR_OPS", "UNARY_OPS", "REDUCE_OPS", "EXPAND_OPS", "CAST_MODES",
                 "SUPPORTED_DTYPES"):
        assert name in nm.__all__ and hasattr(nm, name)
    assert nm.BINARY_OPS == ("add", "sub", "mul", "div", "maximum", "minimum")


def test_float_scalar_on_an_int_tile_converts_as_cpp():
    """The instruction's scalar parameter has the tile's C type: a float converts by truncation."""
    i16 = np.array([[1, -1, 100]], np.int16)
    out = np.zeros_like(i16)
    nm.binary_scalar("adds", out, i16, 1.9)
    np.testing.assert_array_equal(out, [[2, 0, 101]])
    nm.binary_scalar("adds", out, i16, -1.9)
    np.testing.assert_array_equal(out, [[0, -2, 99]])
    i8 = np.zeros((1, 4), np.int8)
    nm.fill(i8, float("nan"))
    np.testing.assert_array_equal(i8, 0)
