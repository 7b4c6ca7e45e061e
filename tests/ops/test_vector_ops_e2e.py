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
import decimal
import functools
import math

import ml_dtypes
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.ir.expr import literal_value
from pypto_pro.errors import CompileError, PyptoError
from pypto_pro.ops import conversion, elementwise, reduction
from vec_op_factories import binary_kernel, jit, tensor_t, unary_kernel

F64 = np.dtype(np.float64)
BF16 = np.dtype(ml_dtypes.bfloat16)
TILE = (16, 32)
REGION = (13, 27)   # valid region of every input: rows and columns both partial
SENTINEL = 96       # exactly representable in every dtype
VEC = pl.MemorySpace.Vec

CAST_MODES = ("rint", "round", "floor", "ceil", "trunc")
ROUND = {"rint": pl.RoundMode.CAST_RINT, "round": pl.RoundMode.CAST_ROUND, "floor": pl.RoundMode.CAST_FLOOR,
         "ceil": pl.RoundMode.CAST_CEIL, "trunc": pl.RoundMode.CAST_TRUNC}
ALL_DTYPES = conversion.CAST_DTYPES

# name -> (kind, dtypes), from the declarations' own tables; reductions by kind ("sum" = pl.sum,
# "max" / "min" = the dim= forms of pl.maximum / pl.minimum)
OPS: dict[str, tuple[str, tuple]] = {}
for _api, (_ti, _si, _tc, _sc, _dts) in elementwise.BINARY.items():
    OPS[_api] = ("binary", _dts)
    OPS[_si] = ("scalar", _dts)
for _name, (_cpp, _dts) in elementwise.UNARY.items():
    OPS[_name] = ("unary", _dts)
for _kind in reduction.KINDS:
    OPS[_kind] = ("reduce", elementwise.ARITH_DTYPES)
for _api, _base in reduction.EXPAND.items():
    OPS[_api] = ("expand", reduction.FLOATS if _base == "div" else elementwise.ARITH_DTYPES)
OPS["cast"] = ("cast", conversion.CAST_DTYPES)
OPS["expands"] = ("fill", elementwise.FILL_DTYPES)
OPS["move"] = ("move", elementwise.FILL_DTYPES)
REDUCE_API = {"sum": "sum", "max": "maximum", "min": "minimum"}

# p (significand bits), emax, smallest subnormal
FORMAT = {np.dtype(np.float16): (11, 15, 2.0 ** -24), BF16: (8, 127, 2.0 ** -133),
          np.dtype(np.float32): (24, 127, 2.0 ** -149)}


def dtypes_of(name: str):
    return OPS[name][1]


def ops_of(kind: str) -> list[str]:
    return [n for n, s in OPS.items() if s[0] == kind]


def dt_id(dt) -> str:
    return dt.name[3:].lower()


def cases(kind: str):
    """(op, dtype) for every op of ``kind`` and every dtype the registry lists for it."""
    return [pytest.param(n, dt, id=f"{n}-{dt_id(dt)}") for n in ops_of(kind) for dt in dtypes_of(n)]


# ---- reference numerics ---------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _grid16(npdt: np.dtype):
    """All finite values of a 16-bit float format, sorted, framed by -inf/+inf, and their lsb."""
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    vals = bits.view(npdt).astype(F64)
    keep = np.isfinite(vals) & ~((vals == 0) & np.signbit(vals))   # one zero
    vals, bits = vals[keep], bits[keep]
    order = np.argsort(vals, kind="stable")
    return (np.concatenate([[-np.inf], vals[order], [np.inf]]),
            np.concatenate([[False], (bits[order] & 1).astype(bool), [False]]))


def _neighbours(x: np.ndarray, npdt: np.dtype):
    """lo <= x <= hi: the adjacent representable values (float64, +-inf included) and their lsb."""
    if npdt.itemsize == 2:
        grid, odd = _grid16(npdt)
        i = np.clip(np.searchsorted(grid, x, side="right") - 1, 0, len(grid) - 1)
        j = np.minimum(i + (grid[i] != x), len(grid) - 1)
        return grid[i], grid[j], odd[i], odd[j]
    y = x.astype(np.float32)                        # IEEE conversion: nearest, ties to even
    y64 = y.astype(F64)
    lo = np.where(y64 <= x, y, np.nextafter(y, np.float32(-np.inf)))
    hi = np.where(y64 >= x, y, np.nextafter(y, np.float32(np.inf)))
    return (lo.astype(F64), hi.astype(F64), (lo.view(np.uint32) & 1).astype(bool),
            (hi.view(np.uint32) & 1).astype(bool))


def ref_round(x, npdt: np.dtype, mode: str = "rint") -> np.ndarray:
    """float64 values rounded once to float dtype ``npdt`` by cast ``mode`` (IEEE semantics:
    nearest modes overflow to inf past max + ulp/2, directed modes stop at max-finite)."""
    x = np.asarray(x, dtype=F64)
    with np.errstate(all="ignore"):
        lo, hi, lo_odd, _ = _neighbours(np.where(np.isnan(x), 0.0, x), npdt)
        big = 2.0 ** (FORMAT[npdt][1] + 1)          # where inf would sit with an unbounded exponent
        vlo = np.where(np.isinf(lo), np.sign(lo) * big, lo)
        vhi = np.where(np.isinf(hi), np.sign(hi) * big, hi)
        if mode == "floor":
            r = lo
        elif mode == "ceil":
            r = hi
        elif mode == "trunc":
            r = np.where(x > 0, lo, hi)
        else:
            dlo, dhi = x - vlo, vhi - x
            tie_up = lo_odd if mode == "rint" else (x > 0)
            r = np.where((dhi < dlo) | ((dhi == dlo) & tie_up), hi, lo)
        r = np.where(lo == hi, lo, r)
        r = np.where(r == 0, np.copysign(0.0, x), r)            # a zero keeps the sign of x
        r = np.where(np.isnan(x), np.nan, r)
    return r.astype(npdt)   # exact: r is representable


_DEC_MODE = {"rint": decimal.ROUND_HALF_EVEN, "round": decimal.ROUND_HALF_UP, "floor": decimal.ROUND_FLOOR,
             "ceil": decimal.ROUND_CEILING, "trunc": decimal.ROUND_DOWN}


def ref_float_to_int(x: np.ndarray, npdt: np.dtype, mode: str) -> np.ndarray:
    info = np.iinfo(npdt)
    out = []
    for v in np.asarray(x, dtype=F64).ravel().tolist():
        if math.isnan(v):
            r = 0
        elif math.isinf(v):
            r = info.max if v > 0 else info.min
        elif v == math.floor(v):
            r = int(v)
        else:   # |v| < 2^52: Decimal(v) is exact, quantize rounds by mode (HALF_UP = ties away from 0)
            r = int(decimal.Decimal(v).quantize(decimal.Decimal(1), rounding=_DEC_MODE[mode]))
        out.append(min(max(r, int(info.min)), int(info.max)))
    return np.array(out, dtype=np.int64).reshape(np.shape(x)).astype(npdt)


def wrap(v, npdt: np.dtype) -> np.ndarray:
    """Python/int64 integers wrapped to the two's complement width of ``npdt``."""
    bits = npdt.itemsize * 8
    v = np.asarray(v, dtype=object)
    return np.vectorize(lambda t: ((int(t) + (1 << (bits - 1))) % (1 << bits)) - (1 << (bits - 1)),
                        otypes=[object])(v).astype(np.int64).astype(npdt)


def ref_scalar(s, npdt: np.dtype):
    """The scalar as the tile dtype holds it: RNE for float tiles, wrapped for int tiles."""
    if npdt.kind == "f" or npdt == BF16:
        return ref_round(float(s), npdt)[()]
    return wrap(s, npdt)[()]


def ref_literal(s, npdt: np.dtype):
    """A compile-time scalar: a float literal reaches the device as the real backend writes it
    (``std::to_string``: six decimals), then as the tile dtype holds it."""
    return ref_scalar(literal_value(s) if isinstance(s, float) else s, npdt)


def is_float(npdt: np.dtype) -> bool:
    return npdt.kind == "f" or npdt == BF16


_F64_FN = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
    "maximum": np.maximum, "minimum": np.minimum,
}


def ref_arith(name: str, a: np.ndarray, b, npdt: np.dtype) -> np.ndarray:
    """Exact reference of a binary op (``b`` may broadcast): float64 then one rounding / int wrap."""
    base = {"adds": "add", "subs": "sub", "muls": "mul", "divs": "div", "maxs": "maximum",
            "mins": "minimum"}.get(name, name)
    base = base[len("expand_"):] if base.startswith("expand_") else base
    base = {"max": "maximum", "min": "minimum"}.get(base, base)
    fn = _F64_FN[base]
    if is_float(npdt):
        with np.errstate(all="ignore"):
            return ref_round(fn(np.asarray(a, F64), np.asarray(b, F64)), npdt)
    if base == "div":  # C integer division: truncated toward zero (exact Python integers: uint64, INT64_MIN)
        x, y = np.asarray(a).astype(object), np.asarray(b).astype(object)
        return wrap(np.sign(x) * np.sign(y) * (np.abs(x) // np.abs(y)), npdt)
    # exact Python integers (an int64 view would reorder uint64 values for maximum / minimum)
    return wrap(fn(np.asarray(a).astype(object), np.asarray(b).astype(object)), npdt)


# ---- comparisons ----------------------------------------------------------------------------


def assert_exact(out: np.ndarray, ref: np.ndarray, signed_zero: bool = True) -> None:
    assert out.dtype == ref.dtype and out.shape == ref.shape
    if not is_float(out.dtype):
        np.testing.assert_array_equal(out, ref)
        return
    o, r = out.astype(F64), ref.astype(F64)
    np.testing.assert_array_equal(o, r)   # NaN positions must match too
    if signed_zero:
        live = ~np.isnan(r)
        bad = np.signbit(o)[live] != np.signbit(r)[live]
        assert not bad.any(), f"sign of zero differs at {np.argwhere(live)[bad][:5].tolist()}"


def assert_within(out: np.ndarray, ref64: np.ndarray, tol) -> None:
    """|out - ref64| <= tol, or out equal to ref64 correctly rounded (which covers overflow to inf)."""
    o = out.astype(F64)
    rounded = ref_round(ref64, out.dtype).astype(F64)
    same = (o == rounded) | (np.isnan(o) & np.isnan(ref64))
    with np.errstate(invalid="ignore"):
        ok = same | (np.abs(o - ref64) <= tol)
    if not ok.all():
        i = tuple(np.argwhere(~ok)[0])
        raise AssertionError(f"{int((~ok).sum())} elements out of tolerance, e.g. at {i}: got {o[i]!r}, "
                             f"want {ref64[i]!r} +- {np.broadcast_to(tol, o.shape)[i]!r}")


def ulp_tol(ref64: np.ndarray, npdt: np.dtype, ulps: float = 1.0):
    """``ulps`` units in the last place of ``npdt`` at ``ref64`` (ulp(v) <= 2^(1-p) |v|)."""
    p, _, tiny = FORMAT[npdt]
    return ulps * (2.0 ** (1 - p) * np.abs(ref64) + tiny)


def check_border(out: np.ndarray, rows: int, cols: int) -> None:
    """Everything outside the stored [rows, cols] region still holds the sentinel."""
    mask = np.ones(out.shape, bool)
    mask[:rows, :cols] = False
    assert (out[mask].astype(F64) == SENTINEL).all(), "the store wrote outside the valid region"


# ---- data -------------------------------------------------------------------------------------


def rand(dt, shape=REGION, seed: int = 0, specials=(), scale: float = 4.0, positive: bool = False):
    """Random values of pl dtype ``dt``: normal * scale for floats (``specials`` first), the full
    range with both extremes for ints."""
    rng = np.random.default_rng(seed)
    npdt = dt.np_dtype
    if dt.is_float():
        x = rng.standard_normal(shape) * scale
        if positive:
            x = np.abs(x) + 0.05
        x.flat[:len(specials)] = specials
        return ref_round(x, npdt)
    info = np.iinfo(npdt)
    x = rng.integers(int(info.min), int(info.max), size=shape, endpoint=True, dtype=npdt)
    x.flat[:3] = [info.min, info.max, 0]
    return x.astype(npdt)


def sentinel(dt, shape=TILE) -> np.ndarray:
    return np.full(shape, SENTINEL, dtype=dt.np_dtype)


FLOAT_SPECIALS_A = (0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -0.0, np.inf, 1e-30)
FLOAT_SPECIALS_B = (-0.0, 0.0, np.inf, np.inf, 1.0, np.nan, -0.0, -np.inf, 1e30)


# ---- kernel factories ---------------------------------------------------------------------------


def tile_t(dt, shape=TILE):
    return pl.TileType(shape=list(shape), dtype=dt, target_memory=VEC)


# Every tile is a one-slot group with a mutex id (see vec_op_factories.py).

def k_binary(name: str, dt, arch: str = "a5", inplace: bool = False):
    return binary_kernel(name, f"{name}_{dt_id(dt)}{'_inplace' if inplace else ''}", tile_t(dt), tile_t(dt), REGION,
                         0x1000, inplace=inplace, arch=arch)


def k_unary(name: str, src_dt, dst_dt=None, mode: str | None = None, scalar=None):
    """dst = op(src) for unary ops, move, cast (with ``mode``) and tile-scalar ops with a
    compile-time ``scalar`` (a closure constant)."""
    dst_dt = dst_dt or src_dt
    return unary_kernel(name, f"{name}_{dt_id(src_dt)}_{dt_id(dst_dt)}{'_' + mode if mode else ''}", tile_t(src_dt),
                        tile_t(dst_dt), REGION, 0x1000, OPS[name][0], ROUND[mode] if mode else None, scalar)


def k_scalar_param(name: str, dt, scalar_type: type):
    """dst = op(src, s) with ``s`` a run-time kernel parameter of type int or float."""
    OP, T, G, STY = getattr(pl, name), tile_t(dt), tensor_t(dt), scalar_type

    def kernel(a: G, c: G, s: STY):
        ga = pl.make_tile_group(type=T, addrs=[0x0000], mutex_ids=[0])
        gc = pl.make_tile_group(type=T, addrs=[0x1000], mutex_ids=[1])
        with pl.section_vector():
            ta, tc = ga[0], gc[0]
            pl.set_validshape(ta, list(REGION))
            pl.set_validshape(tc, list(REGION))
            pl.load(ta, a, [0, 0])
            OP(tc, ta, s)
            pl.store(c, tc, [0, 0])
    return jit(kernel, f"{name}_{dt_id(dt)}_param_{scalar_type.__name__}")


def reduce_dst_shape(dt, dim: int):
    """dim=0 (per row): a [16, 32 B] tile whose column 0 receives the values; dim=1: a [1, 32] row."""
    return (TILE[0], 32 // dt.itemsize) if dim == 0 else (1, TILE[1])


def k_reduce(name: str, dt, dim: int, with_tmp: bool = False):
    """``pl.sum`` / ``pl.maximum(dim=)`` / ``pl.minimum(dim=)`` with the real ``dim`` (0 = per row)."""
    OP, T, TD, G = getattr(pl, REDUCE_API[name]), tile_t(dt), tile_t(dt, reduce_dst_shape(dt, dim)), tensor_t(dt)
    DIM, TMP = dim, with_tmp
    OUT = [REGION[0], 1] if dim == 0 else [1, REGION[1]]

    def kernel(a: G, c: G):
        ga = pl.make_tile_group(type=T, addrs=[0x0000], mutex_ids=[0])
        gc = pl.make_tile_group(type=TD, addrs=[0x1000], mutex_ids=[1])
        scratch = pl.make_tile(T, addr=0x2000)
        with pl.section_vector():
            ta, tc = ga[0], gc[0]
            pl.set_validshape(ta, list(REGION))
            pl.set_validshape(tc, OUT)
            pl.load(ta, a, [0, 0])
            OP(tc, ta, scratch if TMP else ta, dim=DIM)   # tmp: required by the API, unused by TROW*/TCOL*
            pl.store(c, tc, [0, 0])
    return jit(kernel, f"{name}_{dt_id(dt)}_dim{dim}{'_tmp' if with_tmp else ''}")


def k_expand(name: str, dt, dim: int):
    """The real ``dim``: 0 broadcasts one value per row, 1 one value per column."""
    vshape = (TILE[0], 32 // dt.itemsize) if dim == 0 else (1, TILE[1])
    OP, T, TV, G = getattr(pl, name), tile_t(dt), tile_t(dt, vshape), tensor_t(dt)
    DIM = dim
    VEC_VALID = [REGION[0], 1] if dim == 0 else [1, REGION[1]]

    def kernel(a: G, v: G, c: G):
        ga = pl.make_tile_group(type=T, addrs=[0x0000], mutex_ids=[0])
        gv = pl.make_tile_group(type=TV, addrs=[0x1000], mutex_ids=[1])
        gc = pl.make_tile_group(type=T, addrs=[0x2000], mutex_ids=[2])
        with pl.section_vector():
            ta, tv, tc = ga[0], gv[0], gc[0]
            pl.set_validshape(ta, list(REGION))
            pl.set_validshape(tc, list(REGION))
            pl.set_validshape(tv, VEC_VALID)
            pl.load(ta, a, [0, 0])
            pl.load(tv, v, [0, 0])
            OP(tc, ta, tv, dim=DIM)
            pl.store(c, tc, [0, 0])
    return jit(kernel, f"{name}_{dt_id(dt)}_dim{dim}")


def k_fill(dt, scalar=None, scalar_type: type | None = None):
    """pl.expands with a compile-time scalar, or (``scalar_type``) a run-time parameter ``s``."""
    T, G, S = tile_t(dt), tensor_t(dt), scalar
    if scalar_type is None:
        def kernel(c: G):
            gc = pl.make_tile_group(type=T, addrs=[0x0000], mutex_ids=[0])
            with pl.section_vector():
                tc = gc[0]
                pl.expands(tc, S)
                pl.store(c, tc, [0, 0])
        return jit(kernel, f"expands_{dt_id(dt)}")
    STY = scalar_type

    def kernel_p(c: G, s: STY):
        gc = pl.make_tile_group(type=T, addrs=[0x0000], mutex_ids=[0])
        with pl.section_vector():
            tc = gc[0]
            pl.expands(tc, s)
            pl.store(c, tc, [0, 0])
    return jit(kernel_p, f"expands_{dt_id(dt)}_param_{scalar_type.__name__}")


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
