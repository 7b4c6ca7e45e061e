"""Hardware-faithful NumPy numerics for the Vector-engine tile ops of the CPU simulator.

Every function here implements one family of PTO-ISA vector instructions (TADD, TADDS,
TEXP, TCVT, TROWSUM, TROWEXPANDADD, TEXPANDS, ...) on 2-D NumPy arrays.  The simulator
calls them once per tile, so they are vectorised (no per-element Python) and write
their result *in place* into ``dst``, which may be a non-contiguous view and may alias
any source operand.

Why a dedicated module: a plain ``numpy`` expression does not model the accelerator.
NumPy has no native bfloat16 arithmetic, rounds ``float64 -> bfloat16`` twice (via
float32), picks its own summation order, and casts float->int with undefined behaviour
on overflow.  Here every choice is explicit and deterministic:

* each op rounds its result to the tile dtype exactly once (round to nearest even);
  fp16/bf16 arithmetic is evaluated in fp32 first, which for ``+ - * / sqrt`` equals
  the correctly rounded result (fp32 has >= 2p+2 bits for p = 11 and p = 8);
* ``exp``/``log``/``rsqrt`` use an ideal fp32 unit (correctly rounded fp32 value,
  evaluated in float64) and then round that fp32 value to the tile dtype;
* integer arithmetic wraps (two's complement), integer casts saturate;
* reductions fold the row/column in halves (power-of-two padded binary tree) and
  round to the tile dtype after every level;
* float->int casts round per mode, saturate, and map NaN to 0.

See ``docs/numerics.md`` for the per-op tables and the hardware rationale.
"""

from __future__ import annotations

import contextlib
import math
import threading
from typing import Final, Iterator, Union

import ml_dtypes
import numpy as np

from pypto_pro.backends.sim import torch_cast, torch_engine

__all__ = [
    "BINARY_OPS",
    "SCALAR_OPS",
    "UNARY_OPS",
    "REDUCE_OPS",
    "EXPAND_OPS",
    "CAST_MODES",
    "SUPPORTED_DTYPES",
    "binary",
    "binary_scalar",
    "unary",
    "cast",
    "reduce",
    "expand",
    "fill",
]

Scalar = Union[int, float, np.integer, np.floating]

# --------------------------------------------------------------------------- dtypes

FP16: Final = np.dtype(np.float16)
BF16: Final = np.dtype(ml_dtypes.bfloat16)
FP32: Final = np.dtype(np.float32)
I8: Final = np.dtype(np.int8)
U8: Final = np.dtype(np.uint8)
I16: Final = np.dtype(np.int16)
U16: Final = np.dtype(np.uint16)
I32: Final = np.dtype(np.int32)
U32: Final = np.dtype(np.uint32)
I64: Final = np.dtype(np.int64)
U64: Final = np.dtype(np.uint64)
_F64: Final = np.dtype(np.float64)
_I64: Final = np.dtype(np.int64)

_FLOATS: Final = (FP16, BF16, FP32)
# every integer dtype a scalar register may hold for some instruction (bitwise, compare, select);
# the tables below list what the arithmetic families take
_INTS: Final = (I8, U8, I16, U16, I32, U32, I64, U64)
_ALL: Final = (FP16, BF16, FP32, I8, U8, I16, I32)
_ARITH: Final = (FP16, BF16, FP32, I16, I32)

# Unsigned views used for bit manipulation of float payloads.
_UINT_OF: Final = {FP16: np.dtype(np.uint16), BF16: np.dtype(np.uint16), FP32: np.dtype(np.uint32)}
_SIGN_BIT: Final = {FP16: 0x8000, BF16: 0x8000, FP32: 0x80000000}
_NEG_INF_BITS: Final = {FP16: 0xFC00, BF16: 0xFF80, FP32: 0xFF800000}

# --------------------------------------------------------------------------- op tables

BINARY_OPS: Final = ("add", "sub", "mul", "div", "maximum", "minimum")
SCALAR_OPS: Final = ("adds", "subs", "muls", "divs", "maxs", "mins")
UNARY_OPS: Final = ("exp", "log", "sqrt", "rsqrt", "recip", "abs", "neg", "relu")
REDUCE_OPS: Final = ("sum", "max", "min")
EXPAND_OPS: Final = (
    "expand_add",
    "expand_sub",
    "expand_mul",
    "expand_div",
    "expand_max",
    "expand_min",
)
CAST_MODES: Final = ("rint", "round", "floor", "ceil", "trunc")
ODD: Final = "odd"  # round to odd: cast() takes it for FP32 -> FP16 only (the a5 TCVT's one such pair)

_FLOAT_ONLY: Final = frozenset(
    {"div", "divs", "exp", "log", "sqrt", "rsqrt", "recip", "expand_div"}
)

# TDIV / TDIVS also divide 16 / 32 / 64-bit integers (a5 TDivCheck; real div.md), truncating toward zero
_DIV_DTYPES: Final = _FLOATS + (I16, U16, I32, U32, I64, U64)

SUPPORTED_DTYPES: Final[dict[str, tuple[np.dtype, ...]]] = {
    **{op: (_FLOATS if op in _FLOAT_ONLY else _ARITH) for op in BINARY_OPS},
    **{op: (_FLOATS if op in _FLOAT_ONLY else _ARITH) for op in SCALAR_OPS},
    **{op: (_FLOATS if op in _FLOAT_ONLY else _ARITH) for op in UNARY_OPS},
    **{op: _ARITH for op in REDUCE_OPS},
    **{op: (_FLOATS if op in _FLOAT_ONLY else _ARITH) for op in EXPAND_OPS},
    "div": _DIV_DTYPES,
    "divs": _DIV_DTYPES,
    "cast": _ALL,
    "fill": _ALL + (np.dtype(np.uint16), np.dtype(np.uint32)),  # TEXPANDS also fills u16 / u32 (a5)
}

# TADD / TSUB / TMAX / TMIN and their scalar forms take every 8 to 64-bit integer, TMUL / TMULS every
# 16 to 64-bit one (a5 static_asserts; real add.md, sub.md, mul.md, maximum.md, minimum.md)
_ADD_DTYPES: Final = _FLOATS + _INTS
_MUL_DTYPES: Final = _FLOATS + (I16, U16, I32, U32, I64, U64)
SUPPORTED_DTYPES.update({op: _ADD_DTYPES for op in ("add", "sub", "maximum", "minimum", "adds", "subs", "maxs", "mins")})
SUPPORTED_DTYPES.update({op: _MUL_DTYPES for op in ("mul", "muls")})

_UFUNC: Final[dict[str, np.ufunc]] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "maximum": np.maximum,
    "minimum": np.minimum,
}
_SCALAR_UFUNC: Final = {
    "adds": np.add,
    "subs": np.subtract,
    "muls": np.multiply,
    "divs": np.divide,
    "maxs": np.maximum,
    "mins": np.minimum,
}
_EXPAND_UFUNC: Final = {
    "expand_add": np.add,
    "expand_sub": np.subtract,
    "expand_mul": np.multiply,
    "expand_div": np.divide,
    "expand_max": np.maximum,
    "expand_min": np.minimum,
}
_REDUCE_UFUNC: Final = {"sum": np.add, "max": np.maximum, "min": np.minimum}

# --------------------------------------------------------------------------- floating-point state

_state = threading.local()  # ``quiet``: this thread runs a launch under np.errstate(all="ignore")
_NO_OP: Final = contextlib.nullcontext()


def _ignore() -> contextlib.AbstractContextManager:
    """``np.errstate(all="ignore")`` for one op's body, or nothing when this thread is inside
    :func:`launch_errstate` (which already ignores): entering an errstate costs more than many
    of the tile ops it guards. Floating-point results never depend on it (only warnings do)."""
    return _NO_OP if getattr(_state, "quiet", False) else np.errstate(all="ignore")


@contextlib.contextmanager
def launch_errstate() -> Iterator[None]:
    """Run a whole launch under ``np.errstate(all="ignore")``, so the ops need not each enter it."""
    outer = getattr(_state, "quiet", False)
    with np.errstate(all="ignore"):
        _state.quiet = True
        try:
            yield
        finally:
            _state.quiet = outer


# --------------------------------------------------------------------------- validation


def _name(dt: np.dtype) -> str:
    return "bf16" if dt == BF16 else dt.name


def _check_array(role: str, x: object) -> np.ndarray:
    if not isinstance(x, np.ndarray):
        raise ValueError(f"{role} must be a numpy.ndarray, got {type(x).__name__}")
    if x.ndim != 2 and x.ndim != 3:  # 3-D: a leading block axis (batch_replay), computed element by element
        raise ValueError(f"{role} must be 2-D, got shape {x.shape}")
    return x


def _check_op(kind: str, op: str, table: tuple[str, ...]) -> None:
    if op not in table:
        raise ValueError(f"unknown {kind} op {op!r}; expected one of {table}")


_DTYPE_SETS: dict[str, tuple[tuple, frozenset]] = {}  # op -> (its SUPPORTED_DTYPES entry, that as a set)


def _check_dtype(op: str, dt: np.dtype) -> None:
    allowed = SUPPORTED_DTYPES[op]
    got = _DTYPE_SETS.get(op)
    if got is None or got[0] is not allowed:  # a set is one hash; the tuple compares dtype by dtype
        got = _DTYPE_SETS[op] = (allowed, frozenset(allowed))
    if dt not in got[1]:
        allowed = ", ".join(_name(d) for d in SUPPORTED_DTYPES[op])
        raise ValueError(f"op {op!r} does not support dtype {_name(dt)} (supported: {allowed})")


def _check_same(op: str, dst: np.ndarray, *srcs: np.ndarray) -> None:
    for s in srcs:
        if s.dtype is not dst.dtype and s.dtype != dst.dtype:  # the same dtype object: equal, cheaply
            raise ValueError(
                f"op {op!r}: operand dtype {_name(s.dtype)} differs from dst dtype {_name(dst.dtype)}"
            )


def _check_shape(op: str, dst: np.ndarray, src: np.ndarray) -> None:
    if src.shape != dst.shape:
        raise ValueError(f"op {op!r}: operand shape {src.shape} differs from dst shape {dst.shape}")


# --------------------------------------------------------------------------- rounding helpers


def _f64_to_f32_round_to_odd(x: np.ndarray) -> np.ndarray:
    """float64 -> float32 with round-to-odd (truncate, then OR the sticky bit into the lsb).

    Rounding this intermediate to any format with <= 22 significand bits (bf16) by
    round-to-nearest-even gives the correctly rounded result, avoiding the double
    rounding of a plain ``float64 -> float32 -> bfloat16`` chain.
    """
    f = x.astype(FP32)
    err = f.astype(_F64)
    np.subtract(err, x, out=err)  # rounding error: 0 if exact, +-inf on overflow, nan for inf/nan x
    bits = f.view(np.uint32)
    # Undo a rounding step that moved away from zero (also maps overflow inf -> max).
    away = np.where(x > 0, err > 0, err < 0)
    np.subtract(bits, away, out=bits, casting="unsafe")
    inexact = (err != 0) & ~np.isnan(err)
    np.bitwise_or(bits, inexact, out=bits, casting="unsafe")  # sticky bit
    return f


def _rne(x: np.ndarray, dt: np.dtype) -> np.ndarray:
    """Round a float32/float64 array to float dtype ``dt``, nearest-even, single rounding."""
    if dt == BF16 and x.dtype == _F64:
        return _f64_to_f32_round_to_odd(x).astype(BF16)
    # numpy float64->float16 and float32->float16 round directly (no double rounding);
    # ml_dtypes float32->bfloat16 is round-to-nearest-even.
    return x.astype(dt)


def _apply_mode(y: np.ndarray, x: np.ndarray, mode: str) -> np.ndarray:
    """Turn ``y = rne(x)`` (a fresh float array) into ``x`` rounded by ``mode``.

    ``x`` is float64 and holds the exact source values.  Works on the sign-magnitude bit
    pattern: +1/-1 on the magnitude bits steps to the next/previous representable value,
    including subnormals, max-finite <-> inf, and +-0 -> +-min-subnormal.
    """
    if mode == "rint":
        return y
    yv = y.astype(_F64)
    bits = y.view(_UINT_OF[y.dtype])
    if mode == "trunc":
        np.subtract(bits, np.abs(yv) > np.abs(x), out=bits, casting="unsafe")
        return y
    negative = (bits & _SIGN_BIT[y.dtype]) != 0
    if mode == "floor":
        move = yv > x
        grow = move & negative
        shrink = move & ~negative
    elif mode == "ceil":
        move = yv < x
        grow = move & ~negative
        shrink = move & negative
    else:  # "round": ties away from zero; rne only differs on ties it broke toward zero
        ax = np.abs(x)
        ay = np.abs(yv)
        cand = ax > ay
        z = (bits + np.array(1, bits.dtype)).view(y.dtype).astype(_F64)
        grow = cand & ((ax - ay) == (np.abs(z) - ax))
        shrink = None
    np.add(bits, grow, out=bits, casting="unsafe")
    if shrink is not None:
        np.subtract(bits, shrink, out=bits, casting="unsafe")
    return y


def _round_to_int(x: np.ndarray, mode: str) -> np.ndarray:
    """Round float64 values to integral float64 values in place according to ``mode``."""
    if mode == "rint":
        np.rint(x, out=x)
    elif mode == "floor":
        np.floor(x, out=x)
    elif mode == "ceil":
        np.ceil(x, out=x)
    elif mode == "trunc":
        np.trunc(x, out=x)
    else:  # round half away from zero; x - trunc(x) is exact
        t = np.trunc(x)
        half = np.abs(x - t) >= 0.5
        np.add(t, np.copysign(half, x), out=x)
    return x


def _int_to_f64_round_to_odd(v: int) -> float:
    """Python int -> float64, exact when possible, otherwise rounded to odd (sticky lsb)."""
    a = abs(v)
    n = a.bit_length()
    if n <= 53:
        return float(v)
    if n > 1024:
        return math.copysign(math.inf, v)
    shift = n - 53
    m = a >> shift
    if a & ((1 << shift) - 1):
        m |= 1
    return math.copysign(math.ldexp(float(m), shift), v)


_SCALARS: dict[tuple, np.generic] = {}  # (dtype, value[, sign]) -> _convert_scalar's result


def _scalar(dt: np.dtype, s: Scalar) -> np.generic:
    """Convert a Python/NumPy scalar to ``dt`` the way the scalar register holds it.

    Integer dtypes: the int is wrapped (two's complement) to the dtype width; a float scalar
    converts as C++ does for the instruction's scalar parameter (truncation toward zero; NaN gives
    0).  Float dtypes: the value is rounded once, to nearest even.

    Memoized for Python ints and non-NaN floats (a kernel passes the same few constants to
    thousands of tile ops); the key holds a float's sign so ``-0.0`` and ``0.0`` stay apart.
    """
    t = type(s)
    if t is float and s == s:
        key: tuple | None = (dt, s, math.copysign(1.0, s))
    elif t is int:
        key = (dt, s)
    else:
        return _convert_scalar(dt, s)
    got = _SCALARS.get(key)
    if got is None:
        if len(_SCALARS) > 4096:
            _SCALARS.clear()
        got = _SCALARS[key] = _convert_scalar(dt, s)
    return got


def _convert_scalar(dt: np.dtype, s: Scalar) -> np.generic:
    """:func:`_scalar` without the memo."""
    if isinstance(s, (bool, np.bool_)):
        s = int(s)
    if dt in _INTS:
        if isinstance(s, (float, np.floating)):
            s = 0 if math.isnan(s) else int(math.trunc(s)) if math.isfinite(s) else (
                int(np.iinfo(dt).max) if s > 0 else int(np.iinfo(dt).min))
        if not isinstance(s, (int, np.integer)):
            raise TypeError(f"scalar must be int or float, got {type(s).__name__}")
        width = dt.itemsize * 8
        v = int(s) & ((1 << width) - 1)
        if dt.kind == "i" and v >= 1 << (width - 1):
            v -= 1 << width
        return dt.type(v)
    if isinstance(s, (int, np.integer)):
        x = _int_to_f64_round_to_odd(int(s))
    elif isinstance(s, (float, np.floating)):
        x = float(s)
    else:
        raise TypeError(f"scalar must be int or float, got {type(s).__name__}")
    with _ignore():
        return _rne(np.array([x], dtype=_F64), dt)[0]


# --------------------------------------------------------------------------- elementwise core


def _elementwise2(ufunc: np.ufunc, dst: np.ndarray, a: np.ndarray, b: np.ndarray | np.generic) -> None:
    """dst = ufunc(a, b) with one rounding to dst.dtype; ``b`` may broadcast or be a scalar."""
    if dst.dtype == BF16:
        # fp32 compute (bf16 -> fp32 is exact), one RNE rounding back to bf16.
        t = a.astype(FP32)
        if isinstance(b, np.ndarray):
            # Mixed bf16 operand is cast inside the ufunc; a small broadcast vector is
            # cheaper to convert up front.
            bb = b if b.shape == a.shape else b.astype(FP32)
        else:
            bb = np.float32(b)
        ufunc(t, bb, out=t, dtype=FP32)
        dst[...] = t
    else:
        # fp32: native IEEE op.  fp16: NumPy's half loops compute in float32 and round
        # to nearest even once -- correctly rounded for + - * /.  ints: wrap-around.
        # Large fp16 tiles of the ops where torch gives the same bytes go to torch (torch_engine).
        if dst.dtype != FP16 or not torch_engine.binary_fp16(ufunc, dst, a, b):
            ufunc(a, b, out=dst)


def _int_div(dst: np.ndarray, a: np.ndarray, b: np.ndarray | np.generic) -> None:
    """C integer division (the chip's vdiv on integers): the quotient truncated toward zero; a zero
    divisor has no defined result on the chip (div.md), so it is an error here."""
    if np.any(b == 0):
        raise ZeroDivisionError("integer division by zero (the chip's result is undefined)")
    q = np.floor_divide(a, b)
    if dst.dtype.kind == "i":
        q += ((np.remainder(a, b) != 0) & ((a < 0) != (b < 0))).astype(q.dtype)
    dst[...] = q


def binary(op: str, dst: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
    """Tile-tile elementwise op (TADD/TSUB/TMUL/TDIV/TMAX/TMIN): ``dst = a (op) b``."""
    _check_op("binary", op, BINARY_OPS)
    _check_array("dst", dst)
    _check_array("a", a)
    _check_array("b", b)
    _check_dtype(op, dst.dtype)
    _check_same(op, dst, a, b)
    _check_shape(op, dst, a)
    _check_shape(op, dst, b)
    with _ignore():
        if op == "div" and dst.dtype.kind in "iu":
            _int_div(dst, a, b)
            return
        _elementwise2(_UFUNC[op], dst, a, b)


def binary_scalar(op: str, dst: np.ndarray, a: np.ndarray, scalar: Scalar) -> None:
    """Tile-scalar elementwise op (TADDS/TSUBS/TMULS/TDIVS/TMAXS/TMINS): ``dst = a (op) s``.

    The scalar is first converted to the tile dtype (wrap for ints, RNE for floats).
    """
    _check_op("scalar", op, SCALAR_OPS)
    _check_array("dst", dst)
    _check_array("a", a)
    _check_dtype(op, dst.dtype)
    _check_same(op, dst, a)
    _check_shape(op, dst, a)
    s = _scalar(dst.dtype, scalar)
    with _ignore():
        if op == "divs" and dst.dtype.kind in "iu":
            _int_div(dst, a, s)
            return
        _elementwise2(_SCALAR_UFUNC[op], dst, a, s)


def _relu_bits(dst: np.ndarray, a: np.ndarray) -> None:
    """Float ReLU on the bit pattern: zero every negative non-NaN value (incl. -0, -inf).

    Deterministic (+0 for -0), NaN-propagating, and much faster than a float16
    ``maximum``.  ``0x8000 <= bits <= 0xFC00`` (fp16) is tested as one wrapped compare.
    """
    ut = _UINT_OF[a.dtype]
    bits = a.view(ut)
    shifted = np.subtract(bits, ut.type(_SIGN_BIT[a.dtype]), dtype=ut)
    keep = shifted > (_NEG_INF_BITS[a.dtype] - _SIGN_BIT[a.dtype])
    np.multiply(bits, keep, out=dst.view(ut), casting="unsafe")


def _transcendental(op: str, dst: np.ndarray, a: np.ndarray) -> None:
    """exp/log/rsqrt: correctly rounded fp32 value (via float64), then round to dst dtype."""
    x = a.astype(_F64)
    if op == "exp":
        np.exp(x, out=x)
    elif op == "log":
        np.log(x, out=x)
    else:  # rsqrt
        np.sqrt(x, out=x)
        np.divide(1.0, x, out=x)
    if dst.dtype == FP32:
        dst[...] = x
    else:
        dst[...] = x.astype(FP32)


def unary(op: str, dst: np.ndarray, a: np.ndarray) -> None:
    """Elementwise unary op (TEXP/TLOG/TSQRT/TRSQRT/TRECIP/TABS/TNEG/TRELU)."""
    _check_op("unary", op, UNARY_OPS)
    _check_array("dst", dst)
    _check_array("a", a)
    dt = dst.dtype
    _check_dtype(op, dt)
    _check_same(op, dst, a)
    _check_shape(op, dst, a)
    with _ignore():
        if op in ("exp", "log", "rsqrt"):
            _transcendental(op, dst, a)
        elif op == "sqrt":
            if dt == BF16:
                t = a.astype(FP32)
                np.sqrt(t, out=t)
                dst[...] = t
            else:
                np.sqrt(a, out=dst)  # fp16 half loop: float32 sqrt, one RNE rounding
        elif op == "recip":
            if dt == BF16:
                t = a.astype(FP32)
                np.divide(np.float32(1.0), t, out=t)
                dst[...] = t
            else:
                np.divide(dt.type(1), a, out=dst)
        elif op == "abs":
            if dt == BF16:
                np.bitwise_and(a.view(np.uint16), np.uint16(0x7FFF), out=dst.view(np.uint16))
            else:
                np.abs(a, out=dst)  # ints wrap: abs(INT_MIN) == INT_MIN
        elif op == "neg":
            if dt == BF16:
                np.bitwise_xor(a.view(np.uint16), np.uint16(0x8000), out=dst.view(np.uint16))
            elif a.flags.c_contiguous:
                np.negative(a, out=dst)
            else:
                # NumPy 2.4's negative loop of 32-bit types reads a strided column ([n, 1] of a wider
                # tile) as if it were contiguous; negation is exact, so a contiguous copy changes nothing else
                np.negative(np.ascontiguousarray(a), out=dst)
        else:  # relu
            if dt in _FLOATS:
                _relu_bits(dst, a)
            else:
                np.maximum(a, dt.type(0), out=dst)


# --------------------------------------------------------------------------- cast


def _int_range(dt: np.dtype) -> tuple[int, int]:
    info = np.iinfo(dt)
    return int(info.min), int(info.max)


def cast(dst: np.ndarray, src: np.ndarray, mode: str = "rint") -> None:
    """Type conversion (TCVT) from ``src.dtype`` to ``dst.dtype`` with rounding ``mode``.

    * float -> float: single rounding by ``mode`` (IEEE semantics, including overflow to
      inf or to max-finite for directed modes); widening is exact.
    * float -> int: round to integral by ``mode``, saturate to the int range, NaN -> 0.
    * int -> float: round by ``mode``.  int -> int: saturate.
    * same dtype: exact copy (``mode`` is irrelevant).
    """
    if mode not in CAST_MODES and mode != ODD:
        raise ValueError(f"unknown cast mode {mode!r}; expected one of {CAST_MODES}")
    _check_array("dst", dst)
    _check_array("src", src)
    _check_dtype("cast", dst.dtype)
    _check_dtype("cast", src.dtype)
    _check_shape("cast", dst, src)
    sd, dd = src.dtype, dst.dtype
    with _ignore():
        if sd == dd:
            np.copyto(dst, src)
        elif dd in _FLOATS:
            _cast_to_float(dst, src, mode)
        elif sd in _FLOATS:
            x = src.astype(_F64)
            _round_to_int(x, mode)
            lo, hi = _int_range(dd)
            np.clip(x, lo, hi, out=x)
            np.copyto(x, 0.0, where=np.isnan(x))
            dst[...] = x
        else:
            lo, hi = _int_range(dd)
            slo, shi = _int_range(sd)
            if lo <= slo and shi <= hi:
                np.copyto(dst, src, casting="unsafe")
            else:
                x = src.astype(_I64)
                np.clip(x, lo, hi, out=x)
                dst[...] = x


_TORCH_CAST_MIN = 4096  # fp32 -> fp16 tile casts of at least this many elements go through torch_cast


def _cast_to_float(dst: np.ndarray, src: np.ndarray, mode: str) -> None:
    sd, dd = src.dtype, dst.dtype
    # Exact conversions: any mode gives the same result.
    exact = (dd == FP32 and sd in (FP16, BF16, I8, U8, I16)) or (sd in (I8, U8))
    if exact:
        np.copyto(dst, src, casting="unsafe")
        return
    if mode == ODD:
        if not (sd == FP32 and dd == FP16):
            raise ValueError("round-to-odd casts FP32 -> FP16 only (PTO-ISA a5 TCVT)")
        x64 = src.astype(_F64)
        y = _apply_mode(src.astype(FP16), x64, "trunc")
        inexact = (y.astype(_F64) != x64) & np.isfinite(y)
        bits = y.view(np.uint16)
        np.bitwise_or(bits, inexact.astype(np.uint16), out=bits)
        dst[...] = y
        return
    if mode == "rint" and sd == FP32:
        # numpy f32->f16 and ml_dtypes f32->bf16 are single RNE roundings. NumPy converts to fp16 in software
        # (~2.6 ns an element); torch's copy gives the same bytes (torch_cast.cast_into) for ~6-10 us a call
        # whatever the size, so it pays from ~4k elements (128 x 128: ~40 -> ~9 us). For bf16, and for the
        # widening casts, NumPy is as fast or faster, so they stay NumPy's.
        if dd != FP16 or src.size < _TORCH_CAST_MIN or not torch_cast.cast_into(dst, src):
            dst[...] = src
        return
    if sd in _FLOATS or sd == I16:
        # Every fp16/bf16/int16 value is exact in fp32, so one RNE rounding from fp32.
        x32 = src.astype(FP32)
        y = x32.astype(dd)
        if mode != "rint":
            y = _apply_mode(y, x32.astype(_F64), mode)
    else:
        # int32 -> float: exact in float64, then one rounding (no double rounding).
        x64 = src.astype(_F64)
        y = _rne(x64, dd)
        if mode != "rint":
            y = _apply_mode(y, x64, mode)
    dst[...] = y


# reduce / expand / fill live in numerics_reduce.py (imported last: they use the helpers above)
from pypto_pro.backends.sim.numerics_reduce import expand, fill, reduce  # noqa: E402,F401
