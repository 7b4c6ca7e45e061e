"""Per-thread scalar arithmetic of SIMT code, vectorised over the thread axis.

Every SIMT value is a NumPy array with one element per thread of the launch (or a 0-d array when
it is the same for all). The arithmetic is the C++ the real PyPTO Pro emits for SIMT code, the
same rules as the simulator's scalar code (``backends/sim/codegen.py``): operands are converted to
the operation's dtype (``ir.expr.promote``), integers narrower than 32 bits compute as ``int``,
integer results wrap at their width, ``//`` / ``%`` truncate toward zero, floats compute in their
own width (NumPy's FP32 / FP16 / BF16 arithmetic is IEEE-rounded per operation).
"""
from __future__ import annotations

import numpy as np

from pypto_pro.backends.sim.codegen import value_dtype
from pypto_pro.errors import SimulationError
from pypto_pro.ir.expr import BinOp, Expr
from pypto_pro.language.dtypes import DataType

Fault = type[SimulationError]


def np_type(dtype: DataType) -> np.dtype:
    """The NumPy dtype a SIMT value of ``dtype`` is held in."""
    return dtype.np_dtype if dtype.np_dtype is not None else dtype.value_dtype


def _active(v: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return v[mask] if v.ndim else (v.reshape(1) if mask.any() else v.reshape(1)[:0])


def convert(v: np.ndarray, src: DataType, dst: DataType, mask: np.ndarray, where: str) -> np.ndarray:
    """``v`` (values of ``src``) converted to ``dst`` as C converts: ints wrap, floats truncate
    toward zero; a NaN or infinity converted to an integer by an active thread is a fault."""
    if src is dst:
        return v
    if dst.is_bool():
        return v != 0
    target = np_type(dst)
    if dst.is_float() or not src.is_float():
        with np.errstate(over="ignore", invalid="ignore"):
            return v.astype(target)
    x = v.astype(np.float64)
    bad = ~np.isfinite(_active(x, mask))
    if bad.any():
        raise SimulationError(f"{where}: converting {_active(x, mask)[bad][0]} to an integer in SIMT code")
    x = np.trunc(np.where(np.isfinite(x), x, 0.0))
    bits = dst.bits
    y = np.fmod(x, 2.0 ** bits)  # exact: the integer modulo 2**bits, which is all a wrap keeps
    if bits < 64:
        return y.astype(np.int64).astype(target)
    big = np.abs(y) >= 2.0 ** 63
    y = np.where(big, y - np.sign(y) * 2.0 ** 64, y)
    return y.astype(np.int64).astype(target)


def _nonzero_divisor(b: np.ndarray, mask: np.ndarray, what: str, where: str) -> np.ndarray:
    if (_active(b, mask) == 0).any():
        raise SimulationError(f"{where}: integer {what} by zero in SIMT code")
    return np.where(b == 0, np.ones((), b.dtype), b)


def binop(e: BinOp, a: np.ndarray, b: np.ndarray, mask: np.ndarray, where: str) -> np.ndarray:
    """``a op b`` on operands already converted to ``e.dtype``, computed as C++ computes it."""
    t = value_dtype(e)
    nt = np_type(t)
    op = e.op
    a, b = a.astype(nt, copy=False), b.astype(nt, copy=False)
    if op == "min":
        return np.where(b < a, b, a)
    if op == "max":
        return np.where(a < b, b, a)
    with np.errstate(all="ignore"):
        if t.is_float():
            if op in ("/", "//"):
                return np.divide(a, b).astype(nt)
            if op == "%":
                return np.fmod(a, b).astype(nt)
            return _ARITH[op](a, b).astype(nt)
        if op in ("//", "%"):
            d = _nonzero_divisor(b, mask, "division" if op == "//" else "remainder", where)
            q = np.abs(a) // np.abs(d)
            q = np.where((a < 0) != (d < 0), -q, q).astype(nt)
            return q if op == "//" else (a - d * q).astype(nt)
        if op in ("<<", ">>"):
            if (_active(b, mask) < 0).any():
                raise SimulationError(f"{where}: shift by a negative count in SIMT code")
            return (np.left_shift if op == "<<" else np.right_shift)(a, b).astype(nt)
        return _ARITH[op](a, b).astype(nt)


_ARITH = {"+": np.add, "-": np.subtract, "*": np.multiply, "&": np.bitwise_and, "|": np.bitwise_or,
          "^": np.bitwise_xor}

_COMPARE = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal, "==": np.equal,
            "!=": np.not_equal}


def compare(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _COMPARE[op](a, b)


def truth(v: np.ndarray, e: Expr) -> np.ndarray:
    """C truth value of ``v``."""
    return v if e.dtype.is_bool() else v != 0
