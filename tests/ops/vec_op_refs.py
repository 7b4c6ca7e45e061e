"""The references, data and kernel factories of ``test_vector_ops_e2e*.py`` (written from scratch,
without ``pypto_pro.backends.sim.numerics``: see ``test_vector_ops_e2e.py``)."""

import decimal
import functools
import math

import ml_dtypes
import numpy as np
import pytest
from vec_op_factories import binary_kernel, jit, tensor_t, unary_kernel

import pypto_pro.language as pl
from pypto_pro.ir.expr import literal_value
from pypto_pro.ops import conversion, elementwise, reduction

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
