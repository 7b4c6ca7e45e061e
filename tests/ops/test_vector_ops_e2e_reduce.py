"""The end-to-end op tests of ``test_vector_ops_e2e.py``, part two: reductions, broadcasts, casts in
every mode, fill / move, set_validshape and the coverage check that every declared op is tested."""

import math

import numpy as np
import pytest
from vec_op_factories import jit, tensor_t
from vec_op_refs import (
    ALL_DTYPES,
    BF16,
    CAST_MODES,
    F64,
    FLOAT_SPECIALS_A,
    FORMAT,
    OPS,
    REDUCE_API,
    REGION,
    SENTINEL,
    TILE,
    VEC,
    assert_exact,
    assert_within,
    cases,
    check_border,
    dt_id,
    dtypes_of,
    is_float,
    k_expand,
    k_fill,
    k_reduce,
    k_unary,
    ops_of,
    rand,
    ref_arith,
    ref_float_to_int,
    ref_literal,
    ref_round,
    ref_scalar,
    sentinel,
    tile_t,
    wrap,
)

import pypto_pro.language as pl
from pypto_pro.errors import PyptoError

# ---- reductions ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("name,dt", cases("reduce"))
def test_reduce(name, dt, dim):
    a = rand(dt, seed=6)
    out_shape = (TILE[0], 2) if dim == 0 else (2, TILE[1])
    c = sentinel(dt, out_shape)
    k_reduce(name, dt, dim)(a, c)
    r, k = (REGION[0], 1) if dim == 0 else (1, REGION[1])
    out = c[:r, :k]
    check_border(c, r, k)
    axis = 1 if dim == 0 else 0
    if name in ("max", "min"):
        ref = (np.max if name == "max" else np.min)(a, axis=axis, keepdims=True)
        assert_exact(out, ref)
    elif not dt.is_float():
        assert_exact(out, wrap(a.astype(np.int64).sum(axis=axis, keepdims=True), dt.np_dtype))
    else:
        # The accumulator is the tile dtype: each of the ceil(log2 n) levels of the reduction rounds
        # once (relative error 2^-p of a partial sum <= sum |x|), plus the final rounding.
        n = a.shape[axis]
        p = FORMAT[dt.np_dtype][0]
        x = a.astype(F64)
        exact = x.sum(axis=axis, keepdims=True)
        tol = (math.ceil(math.log2(n)) + 1) * 2.0 ** -p * np.abs(x).sum(axis=axis, keepdims=True)
        assert_within(out, exact, tol)


@pytest.mark.parametrize("name", ops_of("reduce"))
def test_reduce_with_tmp_tile(name):
    """A separate scratch tile as ``tmp`` does not change the result."""
    a = rand(pl.DT_FP32, seed=7)
    c = sentinel(pl.DT_FP32, (TILE[0], 2))
    k_reduce(name, pl.DT_FP32, 0, with_tmp=True)(a, c)
    ref = {"sum": np.sum, "max": np.max, "min": np.min}[name](a.astype(F64), axis=1, keepdims=True)
    assert_within(c[:13, :1], ref, 6 * 2.0 ** -24 * np.abs(a.astype(F64)).sum(axis=1, keepdims=True))


# ---- expand (broadcast) ops -------------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("name,dt", cases("expand"))
def test_expand(name, dt, dim):
    a = rand(dt, seed=8, specials=FLOAT_SPECIALS_A if dt.is_float() else ())
    vshape = (REGION[0], 1) if dim == 0 else (1, REGION[1])
    v = rand(dt, vshape, seed=9, specials=(2.0, -0.0, np.inf) if dt.is_float() else ())
    c = sentinel(dt)
    k_expand(name, dt, dim)(a, v, c)
    assert_exact(c[:13, :27], ref_arith(name, a, v, dt.np_dtype),
                 signed_zero=name not in ("expand_max", "expand_min"))
    check_border(c, *REGION)


# ---- cast ----------------------------------------------------------------------------------------------

# Values that exercise ties, overflow, saturation and underflow for every pair (rounded to the source
# dtype first, so some collapse; the reference always uses the actual source values).
CAST_FLOAT_VALUES = (
    0.0, -0.0, np.inf, -np.inf, np.nan, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 127.5, -128.5, 255.5, 256.0, -1.0,
    1 + 2 ** -11, -(1 + 2 ** -11), 1 + 3 * 2 ** -11, 1 + 2 ** -8, -(1 + 2 ** -8), 1 + 3 * 2 ** -8,
    2049.0, 2051.0, 32767.5, -32768.5, 40000.0, -40000.0, 65504.0, 65519.0, 65520.0, 65536.0, 70000.0,
    -70000.0, 2.0 ** 31, -(2.0 ** 31) - 512, 3e9, -3e9, 3.3e38, 1e-8, -1e-8, 3e-5, 1e-40, 0.3, -0.7, 1e30,
)
CAST_INT_VALUES = (0, 1, -1, 2049, -2049, 2051, 127, 128, -128, -129, 255, 256, 32767, -32768, 65504, 65519,
                   65520, 65536, 70000, -70000, 2 ** 24 + 1, 2 ** 24 + 3, 2 ** 24 + 2 ** 16 + 1, 2 ** 31 - 1, -2 ** 31)


def cast_input(dt) -> np.ndarray:
    npdt = dt.np_dtype
    rng = np.random.default_rng(10)
    if dt.is_float():
        x = rng.standard_normal(REGION) * 10.0 ** rng.uniform(-1, 5, REGION)
        x[6:9] = np.round(x[6:9]) + 0.5                        # many exact halves
        x.flat[:len(CAST_FLOAT_VALUES)] = CAST_FLOAT_VALUES
        return ref_round(x, npdt)
    info = np.iinfo(npdt)
    x = rng.integers(int(info.min), int(info.max), size=REGION, endpoint=True)
    x[6:9] = rng.integers(-300, 300, size=(3, REGION[1]))
    vals = [v for v in CAST_INT_VALUES if info.min <= v <= info.max]
    x.flat[:len(vals)] = vals
    return np.clip(x, info.min, info.max).astype(npdt)


def ref_cast(x: np.ndarray, dst: np.dtype, mode: str) -> np.ndarray:
    if is_float(dst):
        return ref_round(x.astype(F64), dst, mode)               # ints and floats are exact in float64
    if is_float(x.dtype):
        return ref_float_to_int(x.astype(F64), dst, mode)
    info = np.iinfo(dst)
    return np.clip(x.astype(np.int64), int(info.min), int(info.max)).astype(dst)


@pytest.mark.parametrize("mode", CAST_MODES)
@pytest.mark.parametrize("dst", ALL_DTYPES, ids=dt_id)
@pytest.mark.parametrize("src", ALL_DTYPES, ids=dt_id)
def test_cast(src, dst, mode):
    a = cast_input(src)
    c = sentinel(dst)
    k_unary("cast", src, dst, mode=mode)(a, c)
    assert_exact(c[:13, :27], ref_cast(a, dst.np_dtype, mode))
    check_border(c, *REGION)


def test_cast_reference_sanity():
    """Spot checks of the reference rounding itself (so the cast tests test the simulator)."""
    f16 = np.dtype(np.float16)
    t = 1 + 2 ** -11                       # halfway between 1 and 1 + 2^-10
    got = {m: float(ref_round(t, f16, m)) for m in CAST_MODES}
    assert got == {"rint": 1.0, "round": 1 + 2 ** -10, "floor": 1.0, "ceil": 1 + 2 ** -10, "trunc": 1.0}
    assert float(ref_round(65520.0, f16)) == np.inf and float(ref_round(65519.0, f16)) == 65504.0
    assert float(ref_round(1e6, f16, "floor")) == 65504.0 and float(ref_round(-1e6, f16, "trunc")) == -65504.0
    assert float(ref_round(2 ** 24 + 2 ** 16 + 1, BF16)) == 2 ** 24 + 2 ** 17
    assert float(ref_round(2 ** 24 + 1, np.dtype(np.float32), "ceil")) == 2 ** 24 + 2
    to_i16 = ref_float_to_int(np.array([2.5, -2.5, np.nan, 1e10]), np.dtype(np.int16), "round")
    assert to_i16.tolist() == [3, -3, 0, 32767]


# ---- fill (expands), move ------------------------------------------------------------------------------


def fill_scalars(dt):
    if dt.is_float():
        return (0.3, -7, 1e6, 1e-30)                 # 1e6 overflows fp16 -> inf, 1e-30 is written as 0
    return (-1, 300, 70000)                          # wrapped to the width: uint8 255, int8 44, int16 4464


@pytest.mark.parametrize("dt", dtypes_of("expands"), ids=dt_id)
def test_fill(dt):
    npdt = dt.np_dtype
    for s in fill_scalars(dt):
        c = sentinel(dt, (20, 40))
        k_fill(dt, scalar=s)(c)
        assert_exact(c[:16, :32], np.full(TILE, ref_literal(s, npdt), npdt))  # the whole declared tile
        check_border(c, *TILE)
    kernel = k_fill(dt, scalar_type=float if dt.is_float() else int)
    for s in fill_scalars(dt) + ((float("-inf"), float("nan")) if dt.is_float() else ()):
        c = sentinel(dt, (20, 40))
        kernel(c, s)
        assert_exact(c[:16, :32], np.full(TILE, ref_scalar(s, npdt), npdt))


@pytest.mark.parametrize("s", [float("-inf"), float("inf"), float("nan")], ids=["-inf", "inf", "nan"])
@pytest.mark.parametrize("dt", [pl.DT_FP16, pl.DT_FP32], ids=dt_id)
def test_nonfinite_compile_time_scalar(dt, s):
    c = sentinel(dt)
    k_fill(dt, scalar=s)(c)
    assert_exact(c, np.full(TILE, s, dt.np_dtype))


@pytest.mark.parametrize("dt", dtypes_of("move"), ids=dt_id)
def test_move(dt):
    a = rand(dt, seed=11, specials=(0.0, -0.0, np.inf, -np.inf, np.nan) if dt.is_float() else ())
    c = sentinel(dt)
    k_unary("move", dt)(a, c)
    assert np.array_equal(c[:13, :27].view(f"u{dt.itemsize}"), a.view(f"u{dt.itemsize}"))  # bit exact
    check_border(c, *REGION)


# ---- set_validshape ------------------------------------------------------------------------------------


def k_validshape(where: str):
    """``where``: "after_load" narrows a loaded tile; "before_load" narrows a group so the load
    moves less; "static" uses TileType(valid_shape=[5, 9]); "reduce" narrows before a row sum."""
    T = tile_t(pl.DT_FP32)
    TS = pl.TileType(shape=list(TILE), dtype=pl.DT_FP32, target_memory=VEC, valid_shape=[5, 9])
    TD = tile_t(pl.DT_FP32, (TILE[0], 8))
    G = tensor_t(pl.DT_FP32)
    WHERE = where

    def kernel(a: G, c: G, rows: int, cols: int):
        ga = pl.make_tile_group(type=TS if WHERE == "static" else T, addrs=[0x0000], mutex_ids=[0])
        gc = pl.make_tile_group(type=TS if WHERE == "static" else T, addrs=[0x1000], mutex_ids=[1])
        gd = pl.make_tile_group(type=TD, addrs=[0x2000], mutex_ids=[2])
        with pl.section_vector():
            ta, tc, td = ga[0], gc[0], gd[0]
            if WHERE == "before_load":
                pl.set_validshape(ga, [rows, cols])        # the whole group, at run time
            pl.load(ta, a, [0, 0])
            if WHERE in ("after_load", "reduce"):
                pl.set_validshape(ta, [rows, cols])
            if WHERE == "reduce":
                pl.set_validshape(td, [rows, 1])
                pl.sum(td, ta, ta, dim=0)
                pl.store(c, td, [0, 0])
            else:
                if WHERE != "static":
                    pl.set_validshape(tc, [rows, cols])
                pl.adds(tc, ta, 1.0)
                pl.store(c, tc, [0, 0])
    return jit(kernel, f"validshape_{where}")


@pytest.mark.parametrize("where", ["after_load", "before_load", "static", "reduce"])
def test_set_validshape(where):
    a = np.arange(TILE[0] * TILE[1], dtype=np.float32).reshape(TILE)   # a full tile is in bounds
    kernel = k_validshape(where)
    for rows, cols in ((5, 9), (16, 32), (1, 1)):
        if where == "static" and (rows, cols) != (5, 9):
            continue
        c = np.full(TILE, SENTINEL, np.float32)
        kernel(a, c, rows, cols)
        if where == "reduce":
            assert_exact(c[:rows, :1], a[:rows, :cols].sum(axis=1, keepdims=True))   # small ints: exact
            check_border(c, rows, 1)
        else:
            assert_exact(c[:rows, :cols], a[:rows, :cols] + 1)
            check_border(c, rows, cols)


def test_set_validshape_out_of_range():
    kernel = k_validshape("after_load")
    a = np.zeros(TILE, np.float32)
    with pytest.raises(PyptoError, match="outside the tile's"):
        kernel(a, np.zeros(TILE, np.float32), 17, 4)


# ---- coverage -------------------------------------------------------------------------------------------


def test_every_table_op_is_covered():
    """The parametrisations above are derived from the declarations' tables by kind; every kind and
    op is exercised, and every op of the table is a declared ``pl`` function."""
    kinds_tested = {"binary", "scalar", "unary", "reduce", "expand"}       # test_<kind> over cases(kind)
    named = {"cast": "test_cast", "expands": "test_fill", "move": "test_move"}
    assert {s[0] for s in OPS.values()} <= kinds_tested | {"cast", "fill", "move"}
    covered = {n for k in kinds_tested for n in ops_of(k)} | set(named)
    assert covered == set(OPS), f"ops without an end-to-end test: {sorted(set(OPS) - covered)}"
    assert all(callable(globals()[t]) for t in named.values())
    assert all(callable(getattr(pl, REDUCE_API.get(n, n))) for n in OPS)
