"""C++ scalar arithmetic for the simulator's generated programs (``sim_program.*.py``).

The real PyPTO Pro emits scalar code as C++ on each value's declared dtype, so the simulator
computes the same: integer division and remainder truncate toward zero, shifts and conversions
behave as on a two's-complement machine, float results are rounded to their width (FP32 / FP16 /
BF16) after every operation. Wrapping of integer results is inlined by the code generator
(``wrap_code``); the helpers here are the operations that need more than an expression.
"""
from __future__ import annotations

import math
import warnings

import ml_dtypes
import numpy as np

from pypto_pro.errors import SimulationError
from pypto_pro.language.dtypes import DataType


# a float too large for FP32 / FP16 / BF16 rounds to an infinity, as on the device: no warning needed
warnings.filterwarnings("ignore", "overflow encountered in cast", RuntimeWarning, __name__)


def _fault(what: str, where: str) -> SimulationError:
    return SimulationError(f"{where}: {what}" if where else what)


def idiv(a: int, b: int, where: str = "") -> int:
    """C ``a / b`` on integers: the quotient truncated toward zero."""
    if type(a) is int and type(b) is int and a >= 0 and b > 0:  # (the common case: floor and truncation agree)
        return a // b
    if b == 0:
        raise _fault("integer division by zero in scalar code", where)
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def imod(a: int, b: int, where: str = "") -> int:
    """C ``a % b`` on integers: the remainder takes the sign of ``a``."""
    if type(a) is int and type(b) is int and a >= 0 and b > 0:  # (the common case: Python's and C's remainders agree)
        return a % b
    if b == 0:
        raise _fault("integer remainder by zero in scalar code", where)
    return a - b * idiv(a, b)


def fdiv(a: float, b: float) -> float:
    """IEEE division (``x / 0.0`` is an infinity or NaN, as on the device)."""
    try:
        return a / b
    except ZeroDivisionError:
        if a != a or a == 0:
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)


def fmod(a: float, b: float) -> float:
    """C ``fmod``."""
    try:
        return math.fmod(a, b)
    except ValueError:
        return math.nan


def shl(a: int, n: int, where: str = "") -> int:
    if n < 0:
        raise _fault(f"shift by a negative count ({n}) in scalar code", where)
    return a << n


def shr(a: int, n: int, where: str = "") -> int:
    if n < 0:
        raise _fault(f"shift by a negative count ({n}) in scalar code", where)
    return a >> n


def f2i(x: float, lo: int, hi: int, where: str = "") -> int:
    """C float -> integer conversion: truncation toward zero (out-of-range values wrap)."""
    if x != x or x in (math.inf, -math.inf):
        raise _fault(f"converting {x} to an integer in scalar code", where)
    v = int(x)
    if lo <= v <= hi:
        return v
    span = hi - lo + 1
    return (v - lo) % span + lo


def f32(x: float) -> float:
    if -3.4e38 <= x <= 3.4e38:
        return float(np.float32(x))
    with np.errstate(over="ignore"):  # C semantics: out of range rounds to +-inf, silently
        return float(np.float32(x))


def f16(x: float) -> float:
    if -65504.0 <= x <= 65504.0:
        return float(np.float16(x))
    with np.errstate(over="ignore"):
        return float(np.float16(x))


def bf16(x: float) -> float:
    return float(ml_dtypes.bfloat16(x))


FLOAT_ROUND = {"DT_FP32": "f32", "DT_FP16": "f16", "DT_BF16": "bf16"}  # dtype -> helper name


def round_value(x: float, dtype: DataType) -> float:
    """``x`` rounded to the float ``dtype`` (Python floats are FP64)."""
    fn = FLOAT_ROUND.get(dtype.name)
    return globals()[fn](x) if fn else float(x)


def _wrapper(bits: int, signed: bool):
    mask, half = (1 << bits) - 1, 1 << (bits - 1)
    if signed:
        return lambda v: ((v + half) & mask) - half
    return lambda v: v & mask


# i64(v) / u8(v) / ...: ``v`` reduced to the integer dtype (two's complement for signed types)
WRAPPERS = {f"{'i' if signed else 'u'}{bits}": _wrapper(bits, signed) for bits in (8, 16, 32, 64)
            for signed in (True, False)}
globals().update(WRAPPERS)


def wrap_code(code: str, dtype: DataType) -> str:
    """Python source reducing the integer expression ``code`` to ``dtype``."""
    return f"_{'u' if dtype.is_unsigned_int() else 'i'}{dtype.bits}({code})"


def view_slot(base: int, row: int, col: int, r0: int, c0: int, nr: int, nc: int, rows: int, cols: int, name: str,
              where: str = "") -> int:
    """The slot of a subview taken at ``[row, col]`` of slot ``base`` of a ``rows x cols`` tile
    (``pypto_pro/ir/subview.py``); a start outside the tile is a fault (the chip would address other bytes)."""
    for what, v, n, extent in (("row", row, nr, rows), ("column", col, nc, cols)):
        if n > 1 and not 0 <= v < extent:
            raise _fault(f"this subview of '{name}' starts at {what} {v}, outside the tile's 0..{extent - 1}", where)
    return base * (nr * nc) + (row - r0 if nr > 1 else 0) * nc + (col - c0 if nc > 1 else 0)


HELPERS = ("idiv", "imod", "fdiv", "fmod", "shl", "shr", "f2i", "f32", "f16", "bf16", "view_slot", *WRAPPERS)
