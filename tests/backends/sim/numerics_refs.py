"""The references, data generators and comparisons shared by ``test_numerics*.py``: float64 / exact
Fraction references rounded to the operand dtype, edge-value tiles, and bit-exact comparisons."""
from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
import torch

from pypto_pro.backends.sim import numerics as nm

F16 = np.dtype(np.float16)
BF16 = np.dtype(ml_dtypes.bfloat16)
F32 = np.dtype(np.float32)
I8 = np.dtype(np.int8)
U8 = np.dtype(np.uint8)
I16 = np.dtype(np.int16)
I32 = np.dtype(np.int32)
F64 = np.dtype(np.float64)

FLOATS = [F16, BF16, F32]
ARITH = [F16, BF16, F32, I16, I32]
ALL = [F16, BF16, F32, I8, U8, I16, I32]
UINT = {F16: np.uint16, BF16: np.uint16, F32: np.uint32}

# (precision p, min normal exponent, max finite) -- the formats, from first principles.
FMT = {
    F16: (11, -14, 65504.0),
    BF16: (8, -126, float.fromhex("0x1.fep127")),
    F32: (24, -126, float.fromhex("0x1.fffffep127")),
}


def dname(dt: np.dtype) -> str:
    return "bf16" if dt == BF16 else dt.name


# ----------------------------------------------------------------------------- references


def ref_round(x, dt: np.dtype, mode: str = "rint") -> np.ndarray:
    """Round float64 ``x`` to float format ``dt`` exactly, by scaling onto its grid."""
    p, emin, fmax = FMT[dt]
    x = np.asarray(x, dtype=F64)
    with np.errstate(all="ignore"):
        _, e = np.frexp(x)
        q = np.ldexp(1.0, np.maximum(e - 1, emin) - (p - 1))  # quantum of x's binade
        s = x / q
        if mode == "rint":
            r = np.rint(s)
        elif mode == "round":
            r = np.copysign(np.floor(np.abs(s) + 0.5), s)
        elif mode == "floor":
            r = np.floor(s)
        elif mode == "ceil":
            r = np.ceil(s)
        else:
            r = np.trunc(s)
        y = r * q
        over = np.isfinite(x) & (np.abs(y) > fmax)
        pos = x > 0
        big = {
            "rint": np.inf,
            "round": np.inf,
            "trunc": fmax,
            "floor": np.where(pos, fmax, np.inf),
            "ceil": np.where(pos, np.inf, fmax),
        }[mode]
        y = np.where(over, np.copysign(big, x), y)
        y = np.where(np.isfinite(x), y, x)
        return y.astype(dt)  # exact: y is on dt's grid (or +-inf / nan)


def wrap(v, dt: np.dtype) -> np.ndarray:
    info = np.iinfo(dt)
    span = int(info.max) - int(info.min) + 1
    v = np.asarray(v, dtype=object)  # exact Python integers: 64-bit values wrap without overflow
    return np.asarray((v - int(info.min)) % span + int(info.min), dtype=object).astype(dt)


def ref_round_int(x64: np.ndarray, mode: str) -> np.ndarray:
    fn = {
        "rint": np.rint,
        "floor": np.floor,
        "ceil": np.ceil,
        "trunc": np.trunc,
        "round": lambda v: np.copysign(np.floor(np.abs(v) + 0.5), v),
    }[mode]
    return fn(x64)


def f64(a: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):  # ml_dtypes raises 'invalid' when widening NaN
        return np.asarray(a).astype(F64)


def wide(a: np.ndarray) -> np.ndarray:
    """Exact wide copy for a reference computation: float64 for floats, Python ints for ints."""
    return f64(a) if a.dtype in FLOATS else a.astype(object)


def ref_result(dt: np.dtype, value64: np.ndarray) -> np.ndarray:
    """Correct single rounding of a float64 result to dt (floats), wrap for ints."""
    if dt in FLOATS:
        return ref_round(value64, dt)
    return wrap(value64, dt)


# ----------------------------------------------------------------------------- torch bridge

TORCH = {F16: torch.float16, BF16: torch.bfloat16, F32: torch.float32, I16: torch.int16, I32: torch.int32}


def to_torch(a: np.ndarray) -> torch.Tensor:
    a = np.ascontiguousarray(a)
    if a.dtype == BF16:
        return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(a.copy())


def from_torch(t: torch.Tensor, dt: np.dtype) -> np.ndarray:
    if dt == BF16:
        return t.contiguous().view(torch.int16).numpy().view(BF16)
    return t.contiguous().numpy()


# ----------------------------------------------------------------------------- comparisons


def assert_same(actual: np.ndarray, expected: np.ndarray, *, zero_sign: bool = True, msg: str = "") -> None:
    """Bit-exact comparison; NaNs compare by position only; optionally ignore the sign of 0."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if actual.dtype in FLOATS:
        an, en = np.isnan(f64(actual)), np.isnan(f64(expected))
        bad = an != en
        ok = ~an & ~en
        if zero_sign:
            u = UINT[actual.dtype]
            bad |= ok & (actual.view(u) != expected.view(u))
        else:
            bad |= ok & (f64(actual) != f64(expected))
    else:
        bad = actual != expected
    if bad.any():
        idx = np.argwhere(bad)[:5]
        detail = [(tuple(i), actual[tuple(i)], expected[tuple(i)]) for i in idx]
        raise AssertionError(f"{msg} {int(bad.sum())} mismatches, e.g. (index, got, want): {detail}")


# ----------------------------------------------------------------------------- data


def specials(dt: np.dtype) -> np.ndarray:
    if dt in FLOATS:
        p, emin, fmax = FMT[dt]
        tiny = 2.0 ** (emin - p + 1)
        vals = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.5, np.inf, -np.inf, np.nan, fmax, -fmax,
                tiny, -tiny, 2.0**emin, 1.5, 1e-3, 100.0]
        return np.array(vals, dtype=F64).astype(dt)
    info = np.iinfo(dt)
    return np.array([0, 1, -1 if info.min < 0 else 2, int(info.min), int(info.max), int(info.min) + 1,
                     int(info.max) - 1, 7], dtype=object).astype(dt)


def rand_tile(rng: np.random.Generator, dt: np.dtype, shape, *, special: bool = True,
              positive: bool = False) -> np.ndarray:
    size = int(np.prod(shape))
    if dt in FLOATS:
        mag = rng.standard_normal(size) * 10.0 ** rng.uniform(-2, 2, size)
        if positive:
            mag = np.abs(mag)
        x = mag.astype(dt)
        if special and dt != F32:  # a slice of uniformly random bit patterns
            k = size // 8
            x[:k] = rng.integers(0, 1 << 16, k, dtype=np.uint64).astype(np.uint16).view(dt)
    else:
        info = np.iinfo(dt)
        x = rng.integers(int(info.min), int(info.max), size, dtype=dt, endpoint=True)
    if special:
        sp = specials(dt)
        pos = rng.choice(size, size=min(size, len(sp)), replace=False)
        x[pos] = sp[: len(pos)]
    return x.reshape(shape)


def sentinel(dt: np.dtype):
    return dt.type(-77) if dt in FLOATS or dt.kind == "i" else dt.type(77)


def embed(x: np.ndarray, pad=(3, 5)) -> tuple[np.ndarray, np.ndarray]:
    """Place x at base[:r, :c] of a larger sentinel-filled array; return (base, view)."""
    r, c = x.shape
    base = np.full((r + pad[0], c + pad[1]), sentinel(x.dtype), dtype=x.dtype)
    view = base[:r, :c]
    view[...] = x
    return base, view


def check_border(base: np.ndarray, r: int, c: int) -> None:
    s = sentinel(base.dtype)
    mask = np.ones(base.shape, dtype=bool)
    mask[:r, :c] = False
    assert (base[mask] == s).all(), "op wrote outside its view"


SHAPE = (7, 45)
BIN_REF = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
    "maximum": np.maximum, "minimum": np.minimum,
}


def supported(op: str) -> list[np.dtype]:
    return list(nm.SUPPORTED_DTYPES[op])


def cases(ops) -> list:
    return [pytest.param(op, dt, id=f"{op}-{dname(dt)}") for op in ops for dt in supported(op)]


def ref_scalar(dt: np.dtype, s) -> float:
    if dt in FLOATS:
        if isinstance(s, float) and (not math.isfinite(s) or s == 0):
            return float(ref_round(s, dt))  # inf, nan, signed zero
        fr = Fraction(int(s)) if isinstance(s, (int, np.integer)) else Fraction(s)
        # exact rational -> pick the correctly rounded neighbour among float64 candidates
        approx = float(fr)
        cand = ref_round(np.array([approx]), dt, "floor")[0], ref_round(np.array([approx]), dt, "ceil")[0]
        lo, hi = sorted(float(c) for c in cand)
        if lo == hi or math.isinf(lo) or math.isinf(hi):
            return float(ref_round(approx, dt))
        dlo, dhi = fr - Fraction(lo), Fraction(hi) - fr
        if dlo < dhi:
            return lo
        if dhi < dlo:
            return hi
        even = lo if int(np.array([lo], F64).astype(dt).view(UINT[dt])[0]) % 2 == 0 else hi
        return even
    return int(wrap(int(s), dt))
