"""Scalar expressions of the IR as C++ (the scalar unit's index arithmetic).

Python semantics are kept where C++ differs: ``//`` and ``%`` floor (``pp_floordiv`` / ``pp_mod``,
defined in the kernel preamble), ``/`` is a float division, ``min`` / ``max`` take mixed types.
"""
from __future__ import annotations

import math
import re

from pypto_pro.ir.expr import (BinOp, BoolOp, Compare, Const, Expr, ListIndex, Select, Special, TensorDim,
                               UnaryOp, Var)
from pypto_pro.ir.nodes import TensorParam

CPP_KEYWORDS = frozenset("""alignas alignof and asm auto bool break case catch char class const constexpr continue
decltype default delete do double else enum explicit export extern false float for friend goto if inline int long
mutable namespace new noexcept not nullptr operator or private protected public register return short signed sizeof
static struct switch template this throw true try typedef typeid typename union unsigned using virtual void volatile
while xor half""".split())

SPECIAL_CPP = {
    "block_idx": "block_idx", "block_num": "block_num", "subblock_idx": "subblock_idx", "subblock_num": "subblock_num",
}


def scalar_ctype(ty: str) -> str:
    return {"int": "int64_t", "float": "float", "bool": "bool"}.get(ty, "int64_t")


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
            v = e.value
            if isinstance(v, bool):
                return "true" if v else "false"
            if isinstance(v, float):
                if math.isnan(v):
                    return "std::numeric_limits<float>::quiet_NaN()"
                if math.isinf(v):
                    return ("-" if v < 0 else "") + "std::numeric_limits<float>::infinity()"
                text = repr(v)
                return text + ("f" if ("." in text or "e" in text) else ".0f")
            return str(v)
        if isinstance(e, Var):
            return self.names.var(e)
        if isinstance(e, BinOp):
            a, b = self.expr(e.lhs), self.expr(e.rhs)
            if e.op == "//":
                return f"pp_floordiv({a}, {b})"
            if e.op == "%":
                return f"pp_mod({a}, {b})"
            if e.op == "/":
                return f"(static_cast<float>({a}) / static_cast<float>({b}))"
            if e.op in ("min", "max"):
                return f"pp_{e.op}({a}, {b})"
            return f"({a} {e.op} {b})"
        if isinstance(e, UnaryOp):
            op = "!" if e.op == "not" else e.op
            return f"({op}{self.expr(e.operand)})"
        if isinstance(e, Compare):
            return f"({self.expr(e.lhs)} {e.op} {self.expr(e.rhs)})"
        if isinstance(e, BoolOp):
            op = " && " if e.op == "and" else " || "
            return "(" + op.join(self.expr(v) for v in e.values) + ")"
        if isinstance(e, Select):
            return f"({self.expr(e.cond)} ? {self.expr(e.if_true)} : {self.expr(e.if_false)})"
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
        raise TypeError(f"no C++ form for {type(e).__name__}")
