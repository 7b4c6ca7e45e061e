"""Scalar expressions of the IR as C++ (the scalar unit's index arithmetic), as the real PyPTO Pro
emits them: each operand is cast to the operation's dtype where it differs (``static_cast``), then
plain C++ operators apply (``//`` is C ``/``, ``%`` is C ``%``), ``min`` / ``max`` are
``pp_min`` / ``pp_max`` of the converted operands. The simulator computes the same
(``backends/sim/codegen.py``).
"""
from __future__ import annotations

import math
import re

from pypto_pro.ir.expr import (BinOp, BoolOp, Cast, Compare, Const, Expr, ListIndex, Select, Special, TensorDim,
                               UnaryOp, Var, convert, int_range, numeric)
from pypto_pro.ir.nodes import TensorParam

CPP_KEYWORDS = frozenset("""alignas alignof and asm auto bool break case catch char class const constexpr continue
decltype default delete do double else enum explicit export extern false float for friend goto if inline int long
mutable namespace new noexcept not nullptr operator or private protected public register return short signed sizeof
static struct switch template this throw true try typedef typeid typename union unsigned using virtual void volatile
while xor half""".split())

SPECIAL_CPP = {
    "block_idx": "block_idx", "block_num": "block_num", "subblock_idx": "subblock_idx", "subblock_num": "subblock_num",
}


SCALAR_CTYPE = {
    "DT_BOOL": "bool", "DT_INT8": "int8_t", "DT_INT16": "int16_t", "DT_INT32": "int32_t", "DT_INT64": "int64_t",
    "DT_UINT8": "uint8_t", "DT_UINT16": "uint16_t", "DT_UINT32": "uint32_t", "DT_UINT64": "uint64_t",
    "DT_FP16": "half", "DT_BF16": "bfloat16_t", "DT_FP32": "float",
}


def scalar_ctype(dtype) -> str:
    """The C++ type of a scalar of ``dtype`` (a ``pl.DT_*``, or the old "int" / "float" / "bool")."""
    if isinstance(dtype, str):
        return {"int": "int64_t", "float": "float", "bool": "bool"}.get(dtype, "int64_t")
    return SCALAR_CTYPE.get(dtype.name, "int64_t")


class Names:
    """C++ identifiers for the program's variables: the DSL name when unique, else ``name_<n>``."""

    def __init__(self, reserved: set[str]):
        self.taken = set(reserved)
        self.by_uid: dict[int, str] = {}

    def fresh(self, base: str) -> str:
        base = re.sub(r"[^0-9A-Za-z_]", "_", base) or "v"
        if base[0].isdigit():
            base = "v_" + base
        if base in CPP_KEYWORDS:
            base += "_"
        name, k = base, 1
        while name in self.taken:
            name = f"{base}_{k}"
            k += 1
        self.taken.add(name)
        return name

    def var(self, v: Var) -> str:
        name = self.by_uid.get(v.uid)
        if name is None:
            name = self.fresh(v.name)
            self.by_uid[v.uid] = name
        return name


def dim_name(param: str, axis: int) -> str:
    return f"{param}_dim{axis}"


class ExprWriter:
    def __init__(self, names: Names, tensors: dict[str, TensorParam]):
        self.names = names
        self.tensors = tensors
        self.storage = None

    def __call__(self, e: Expr) -> str:
        return self.expr(e)

    def expr(self, e: Expr) -> str:
        if isinstance(e, Const):
            return self.const(e)
        if isinstance(e, Var):
            return self.names.var(e)
        if isinstance(e, BinOp):
            a, b = self.operand(e.lhs, e.dtype), self.operand(e.rhs, e.dtype)
            if e.op in ("min", "max"):
                return f"pp_{e.op}({a}, {b})"
            op = {"//": "/"}.get(e.op, e.op)
            return f"({a} {op} {b})"
        if isinstance(e, UnaryOp):
            if e.op == "not":
                return f"(!{self.expr(e.operand)})"
            return f"({e.op}{self.operand(e.operand, numeric(e.operand.dtype))})"
        if isinstance(e, Compare):
            t = e.operand_dtype
            return f"({self.operand(e.lhs, t)} {e.op} {self.operand(e.rhs, t)})"
        if isinstance(e, BoolOp):
            if len(e.values) == 1:  # a lone operand of 'and' / 'or': its truth value
                return f"static_cast<bool>({self.expr(e.values[0])})"
            op = " && " if e.op == "and" else " || "
            return "(" + op.join(self.expr(v) for v in e.values) + ")"
        if isinstance(e, Select):
            return (f"({self.expr(e.cond)} ? {self.operand(e.if_true, e.dtype)} : "
                    f"{self.operand(e.if_false, e.dtype)})")
        if isinstance(e, Cast):
            return f"static_cast<{scalar_ctype(e.dtype)}>({self.expr(e.operand)})"
        if isinstance(e, TensorDim):
            t = self.tensors.get(e.param)
            if t is not None and isinstance(t.type.dims[e.axis], int):
                return str(t.type.dims[e.axis])
            return dim_name(e.param, e.axis)
        if isinstance(e, Special):
            return SPECIAL_CPP[e.name]
        if isinstance(e, ListIndex):
            values = ", ".join(str(v) for v in e.values)
            return f"pp_pick<{values}>({self.expr(e.index)})"
        if self.storage is not None:  # struct and tiling fields (backends/pto/storage.py)
            text = self.storage.expr(e, self.expr)
            if text is not None:
                return text
        if hasattr(e, "cpp_code"):  # an expression an op module declares (ops/getval.py GmRead)
            return e.cpp_code(self.expr)
        raise TypeError(f"no C++ form for {type(e).__name__}")

    def operand(self, e: Expr, dtype) -> str:
        """An operand of an operation on ``dtype``: cast where its dtype differs (the real MaybeCast)."""
        if e.dtype is dtype:
            return self.expr(e)
        if isinstance(e, Const) and not dtype.is_bool() and dtype.is_float() == e.dtype.is_float() and (
                dtype.is_float() or int_range(dtype)[0] <= int(e.value) <= int_range(dtype)[1]):
            return self.const(convert(e, dtype))  # the literal already has the value the cast would give
        return f"static_cast<{scalar_ctype(dtype)}>({self.expr(e)})"

    def const(self, e: Const) -> str:
        """As the real backend writes constants: ``std::to_string`` of the value (floats then ``f``)."""
        v, d = e.value, e.dtype
        if d.is_bool():
            return "true" if v else "false"
        if d.is_float():
            v = float(v)
            if math.isnan(v):
                return "std::numeric_limits<float>::quiet_NaN()"
            if math.isinf(v):
                return ("-" if v < 0 else "") + "std::numeric_limits<float>::infinity()"
            return f"{v:f}f"
        v = int(v)
        if v > 2**63 - 1:
            return f"{v}ULL"
        if not -2**31 <= v < 2**31:
            return f"{v}LL" if v != -2**63 else "(-9223372036854775807LL - 1)"
        return str(v)
