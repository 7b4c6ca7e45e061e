"""Dtypes of scalar IR expressions: the real PyPTO Pro's promotion rules
(framework/include/ir/scalar_expr_ops.h: PromoteBinaryOperands / NormalizeBoolDtype)."""
import pytest

import pypto_pro.language as pl
from pypto_pro.ir.expr import (BinOp, BoolOp, Cast, Compare, Const, Select, UnaryOp, Var, convert, literal_dtype,
                               promote, wrap_value)


def v(dtype):
    return Var("x", dtype=dtype)


@pytest.mark.parametrize("a, b, op, want", [
    (pl.DT_INT32, pl.DT_INT32, "+", pl.DT_INT32),
    (pl.DT_INT32, pl.DT_INT64, "+", pl.DT_INT64),        # the wider of one category
    (pl.DT_INT8, pl.DT_INT16, "*", pl.DT_INT16),
    (pl.DT_INT32, pl.DT_UINT32, "+", pl.DT_INT32),       # same width: the left one
    (pl.DT_UINT32, pl.DT_INT32, "+", pl.DT_UINT32),
    (pl.DT_FP16, pl.DT_FP32, "+", pl.DT_FP32),
    (pl.DT_INT64, pl.DT_FP16, "+", pl.DT_FP32),          # int meets float: FP32, whatever the float
    (pl.DT_FP16, pl.DT_INT8, "-", pl.DT_FP32),
    (pl.DT_INT32, pl.DT_INT32, "/", pl.DT_FP32),         # true division of ints
    (pl.DT_FP16, pl.DT_FP16, "/", pl.DT_FP16),
    (pl.DT_BOOL, pl.DT_INT32, "+", pl.DT_INT64),         # bool counts as INT64
    (pl.DT_BOOL, pl.DT_BOOL, "&", pl.DT_INT64),
    (pl.DT_INT32, pl.DT_INT32, "//", pl.DT_INT32),
    (pl.DT_FP32, pl.DT_FP32, "//", pl.DT_FP32),
])
def test_binary_promotion(a, b, op, want):
    assert promote(a, b, op) is want
    assert BinOp(op, v(a), v(b)).dtype is want


def test_literals_comparisons_and_logic():
    assert literal_dtype(3) is pl.DT_INT64 and literal_dtype(2.5) is pl.DT_FP32 and literal_dtype(True) is pl.DT_BOOL
    assert Const(3).dtype is pl.DT_INT64 and Const(3, pl.DT_INT8).dtype is pl.DT_INT8
    assert Compare("<", v(pl.DT_INT32), Const(2.5)).dtype is pl.DT_BOOL
    assert Compare("<", v(pl.DT_INT32), Const(2.5)).operand_dtype is pl.DT_FP32
    assert BoolOp("and", (v(pl.DT_INT32), v(pl.DT_FP32))).dtype is pl.DT_BOOL
    assert UnaryOp("-", v(pl.DT_BOOL)).dtype is pl.DT_INT64
    assert UnaryOp("not", v(pl.DT_INT32)).dtype is pl.DT_BOOL
    assert Select(v(pl.DT_BOOL), v(pl.DT_INT16), v(pl.DT_INT32)).dtype is pl.DT_INT32
    assert Var("x").ty == "int" and Var("f", "float").dtype is pl.DT_FP32  # the old spelling still works


def test_convert_and_wrap():
    assert convert(Const(300), pl.DT_INT8).value == 300  # a constant keeps its value; codegen wraps it
    assert isinstance(convert(v(pl.DT_INT32), pl.DT_INT64), Cast)
    assert wrap_value(300, pl.DT_INT8) == 44 and wrap_value(-1, pl.DT_UINT16) == 65535
    assert wrap_value(2 ** 63, pl.DT_INT64) == -2 ** 63
