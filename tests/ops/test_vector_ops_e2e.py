"""Every elementwise, unary, reduction, broadcast, cast, fill and Vec-move op declared in
``pypto_pro/ops`` (the tables of ``ops.elementwise``, ``ops.reduction``, ``ops.conversion``), in every
dtype it supports, through the whole DSL pipeline: a small kernel (set_validshape -> load -> op ->
store) is built per case by a factory, compiled with ``pl.jit`` and run on the simulator, and its
output is compared with an independent reference.

References are written here from scratch, without ``pypto_pro.backends.sim.numerics``:

* values are computed in float64 (or Python ints / ``decimal``) and rounded to the tile dtype by
  ``ref_round``: fp16/bf16 by a search in the sorted table of all 65 536 bit patterns, fp32 by
  NumPy's float64->float32 conversion plus ``nextafter``; every ``cast`` mode (rint = nearest even,
  round = nearest away from zero, floor, ceil, trunc) is a choice between the two neighbours.
  float64 has >= 2p+2 significand bits for p = 24, 11, 8, so "float64 then round" is the correctly
  rounded result of + - * / sqrt (double rounding is innocuous);
* integer arithmetic wraps (two's complement) and casts saturate, float->int NaN -> 0
  (docs/numerics.md).

Exact comparisons (value, NaN position and sign of zero) for add/sub/mul/div/sqrt, max/min,
abs/neg/relu, fill, move, every cast mode, expand ops and max/min reductions; 1 ulp for
exp/log/rsqrt/recip (the simulator models an ideal fp32 unit, hardware is approximate); a
rounding-error bound for float sums (the accumulation order is the simulator's, see test).

Tiles are [16, 32] (the smallest 32-byte-aligned rows for every dtype); tensors are 13 x 27 and
every tile's valid shape is set to 13 x 27 (``pl.set_validshape``) so every op runs on a partial
valid region, and outputs are larger than the region and pre-filled with a sentinel that must survive
outside it.
"""

import numpy as np
import pytest
from vec_op_refs import (
    F64,
    FLOAT_SPECIALS_A,
    FLOAT_SPECIALS_B,
    REGION,
    assert_exact,
    assert_within,
    cases,
    check_border,
    k_binary,
    k_scalar_param,
    k_unary,
    rand,
    ref_arith,
    ref_literal,
    ref_round,
    sentinel,
    ulp_tol,
    wrap,
)

import pypto_pro.language as pl
from pypto_pro.errors import CompileError

# ---- binary: tile (op) tile ------------------------------------------------------------------------


def binary_inputs(dt, name: str):
    if dt.is_float():
        a = rand(dt, seed=1, specials=FLOAT_SPECIALS_A)
        b = rand(dt, seed=2, specials=FLOAT_SPECIALS_B)
        if name == "div":
            b.flat[20:24] = ref_round([0.0, -0.0, 3.0, -7.0], dt.np_dtype)
        return a, b
    a, b = rand(dt, seed=1), rand(dt, seed=2)
    if name == "div":  # integer TDIV: a zero divisor is an error (tests/ops/test_int_div.py)
        b[b == 0] = 1
    return a, b


@pytest.mark.parametrize("name,dt", cases("binary"))
def test_binary(name, dt):
    a, b = binary_inputs(dt, name)
    c = sentinel(dt)
    k_binary(name, dt)(a, b, c)
    # maximum/minimum(+0, -0) may return either zero (docs/numerics.md): no sign-of-zero check
    assert_exact(c[:13, :27], ref_arith(name, a, b, dt.np_dtype), signed_zero=name not in ("maximum", "minimum"))
    check_border(c, *REGION)


@pytest.mark.parametrize("name,dt", [c for c in cases("binary") if c.values[1] in (pl.DT_FP16, pl.DT_INT32)])
def test_binary_a2a3_inplace(name, dt):
    """dst aliasing src0, compiled for a2a3 (event-pair sync instead of buffer locks)."""
    a, b = binary_inputs(dt, name)
    c = sentinel(dt)
    kernel = k_binary(name, dt, arch="a2a3", inplace=True)
    report = kernel(a, b, c)
    assert report.arch == "a2a3"
    assert_exact(c[:13, :27], ref_arith(name, a, b, dt.np_dtype), signed_zero=name not in ("maximum", "minimum"))


# ---- tile (op) scalar -------------------------------------------------------------------------------

FLOAT_SCALARS = (0.3, -3, 1e-9)      # 0.3 rounds to the tile dtype; 1e-9 is written "0.000000f" (ref_literal)
INT_SCALARS = (-7, 40000)            # 40000 wraps to -25536 in an int16 tile


@pytest.mark.parametrize("name,dt", cases("scalar"))
def test_scalar_compile_time(name, dt):
    a = rand(dt, seed=3, specials=FLOAT_SPECIALS_A if dt.is_float() else ())
    npdt = dt.np_dtype
    for s in (FLOAT_SCALARS if dt.is_float() else INT_SCALARS):
        c = sentinel(dt)
        k_unary(name, dt, scalar=s)(a, c)
        assert_exact(c[:13, :27], ref_arith(name, a, ref_literal(s, npdt), npdt),
                     signed_zero=name not in ("maxs", "mins"))
        check_border(c, *REGION)


@pytest.mark.parametrize("scalar_type", [int, float])
@pytest.mark.parametrize("name,dt", cases("scalar"))
def test_scalar_runtime_param(name, dt, scalar_type):
    """The scalar is a run-time ``int``/``float`` kernel parameter: one compile, several values."""
    if scalar_type is float and not dt.is_float():
        with pytest.raises(CompileError, match="float scalar cannot be applied"):
            k_scalar_param(name, dt, float)(rand(dt), sentinel(dt), 1.5)
        return
    kernel = k_scalar_param(name, dt, scalar_type)
    a = rand(dt, seed=4)
    npdt = dt.np_dtype
    values = (0.3, -2.75, 1e5) if scalar_type is float else ((-7, 40000) if not dt.is_float() else (-3, 5, 100001))
    for s in values:
        c = sentinel(dt)
        kernel(a, c, s)
        assert_exact(c[:13, :27], ref_arith(name, a, ref_literal(s, npdt), npdt),
                     signed_zero=name not in ("maxs", "mins"))
        check_border(c, *REGION)


# ---- unary --------------------------------------------------------------------------------------------

EXACT_UNARY = {"sqrt", "abs", "neg", "relu"}


def unary_input(name: str, dt):
    if not dt.is_float():
        return rand(dt, seed=5)
    if name == "exp":
        return rand(dt, seed=5, scale=3.0, specials=(0.0, -0.0, np.inf, -np.inf, 20.0, -120.0))
    if name in ("log", "sqrt", "rsqrt"):
        return rand(dt, seed=5, positive=True, specials=(0.0, -0.0, np.inf, 1.0, 4.0, 1e-5))
    if name == "recip":
        return rand(dt, seed=5, specials=(0.0, -0.0, np.inf, -np.inf, 2.0, -0.5, 1e-5))
    return rand(dt, seed=5, specials=(0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30))


def ref_unary(name: str, x: np.ndarray) -> np.ndarray:
    """float64 value of the op (exact for int ops: wrap afterwards)."""
    if x.dtype.kind == "i":
        v = x.astype(np.int64)
        return {"abs": np.abs, "neg": np.negative, "relu": lambda t: np.maximum(t, 0)}[name](v)
    v = x.astype(F64)
    with np.errstate(all="ignore"):
        return {"exp": np.exp, "log": np.log, "sqrt": np.sqrt, "rsqrt": lambda t: 1.0 / np.sqrt(t),
                "recip": lambda t: 1.0 / t, "abs": np.abs, "neg": np.negative,
                "relu": lambda t: np.where(np.isnan(t), t, np.where(t > 0, t, 0.0))}[name](v)


@pytest.mark.parametrize("name,dt", cases("unary"))
def test_unary(name, dt):
    a = unary_input(name, dt)
    c = sentinel(dt)
    k_unary(name, dt)(a, c)
    out = c[:13, :27]
    ref64 = ref_unary(name, a)
    if not dt.is_float():
        assert_exact(out, wrap(ref64, dt.np_dtype))          # abs/neg(INT_MIN) wrap to INT_MIN
    elif name in EXACT_UNARY:
        assert_exact(out, ref_round(ref64, dt.np_dtype))     # also relu(-0) = +0, neg(+0) = -0
    else:
        # exp/log/rsqrt/recip: within 1 ulp of the exact value (ideal fp32 unit, then one rounding)
        assert_within(out, ref64, ulp_tol(ref64, dt.np_dtype))
    check_border(c, *REGION)
