"""Scalar code computes what the real PyPTO Pro's C++ computes (the simulator runs it as Python).

References are written independently of the code generator: fixed-width wrapping with NumPy,
C division with ``fractions`` (truncation toward zero), FP32 rounding with NumPy.
"""
from fractions import Fraction

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.backends.sim import scalar_math
from pypto_pro.backends.sim.codegen import TypedExprWriter, var_name
from pypto_pro.errors import SimulationError
from pypto_pro.ir.expr import BinOp, Cast, Compare, Const, Select, UnaryOp, Var

I1 = pl.TileType(shape=[1, 8], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec)
F1 = pl.TileType(shape=[1, 8], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)


def c_div(a: int, b: int) -> int:
    return int(Fraction(a, b))  # int() of a Fraction truncates toward zero, like C


def c_mod(a: int, b: int) -> int:
    return a - b * c_div(a, b)


def wrap(v: int, np_type) -> int:
    """``v`` stored in ``np_type``: NumPy's cast keeps the low bits, as two's complement hardware does."""
    return int(np.array(v % 2 ** 64, dtype=np.uint64).astype(np_type))


def run(e, **values):
    """Evaluate the generated Python of ``e`` with the given variable values."""
    code = TypedExprWriter()(e)
    env = {f"_{h}": getattr(scalar_math, h) for h in scalar_math.HELPERS}
    env.update({var_name(v): x for v, x in values.get("vars", {}).items()})
    return eval(code, env)


# ---- the generated expression code --------------------------------------------------------------


@pytest.mark.parametrize("a, b", [(7, 2), (-7, 2), (7, -2), (-7, -2), (-2**31, -1), (2**31 - 1, 3)])
def test_int32_division_truncates_and_wraps(a, b):
    x, y = Var("x", dtype=pl.DT_INT32), Var("y", dtype=pl.DT_INT32)
    env = {"vars": {x: a, y: b}}
    assert run(BinOp("//", x, y), **env) == wrap(c_div(a, b), np.int32)  # INT_MIN // -1 wraps
    assert run(BinOp("%", x, y), **env) == c_mod(a, b)
    assert run(BinOp("/", x, y), **env) == float(np.float32(np.float32(a) / np.float32(b)))


@pytest.mark.parametrize("dtype, np_type, a, b", [
    (pl.DT_INT32, np.int32, 2**31 - 1, 1), (pl.DT_INT32, np.int32, 70000, 70000),
    (pl.DT_INT64, np.int64, 2**62, 2), (pl.DT_UINT32, np.uint32, 1, 2**32 - 1), (pl.DT_UINT64, np.uint64, 3, 2**64 - 2),
])
def test_wrapping_add_and_mul(dtype, np_type, a, b):
    x, y = Var("x", dtype=dtype), Var("y", dtype=dtype)
    env = {"vars": {x: a, y: b}}
    assert run(BinOp("+", x, y), **env) == wrap(a + b, np_type)
    assert run(BinOp("*", x, y), **env) == wrap(a * b, np_type)


def test_narrow_ints_compute_as_int_and_narrow_on_conversion():
    """C++ integer promotions: int8 + int8 is an int; it wraps only when converted back to int8."""
    a, b = Var("a", dtype=pl.DT_INT8), Var("b", dtype=pl.DT_INT8)
    env = {"vars": {a: 100, b: 100}}
    s = BinOp("+", a, b)
    assert s.dtype is pl.DT_INT8
    assert run(BinOp("//", s, Const(2, pl.DT_INT8)), **env) == 100  # (100 + 100) / 2 in int
    assert run(Cast(s, pl.DT_INT8), **env) == -56
    assert run(Compare(">", s, Const(150)), **env) is True  # cast to INT64 from the int value 200


def test_mixed_and_bool_operands():
    i, f, t = Var("i", dtype=pl.DT_INT32), Var("f", dtype=pl.DT_FP32), Var("t", dtype=pl.DT_BOOL)
    env = {"vars": {i: 3, f: float(np.float32(0.1)), t: True}}  # an FP32 register holds FP32 values
    assert run(BinOp("+", i, f), **env) == float(np.float32(np.float32(3) + np.float32(0.1)))
    assert run(BinOp("+", t, Const(7)), **env) == 8
    assert run(BinOp("^", t, Const(3)), **env) == 2
    assert run(UnaryOp("-", t), **env) == -1
    assert run(Compare("==", t, Const(1)), **env) is True
    assert run(BinOp("//", f, Const(0.03)), **env) == float(np.float32(np.float32(0.1) / np.float32(0.03)))  # C '/'
    assert run(Select(t, i, Const(2**40)), **env) == 3
    assert run(Cast(Const(-2.7), pl.DT_INT32)) == -2  # float -> int truncates
    assert run(BinOp("min", i, f), **env) == float(np.float32(0.1))


def test_uint_vs_int_comparison_casts_to_the_left_type():
    u, s = Var("u", dtype=pl.DT_UINT32), Var("s", dtype=pl.DT_INT32)
    env = {"vars": {u: 5, s: -1}}
    assert run(Compare("<", s, u), **env) is True       # INT32 on the left: -1 < 5
    assert run(Compare("<", u, s), **env) is True       # UINT32 on the left: 5 < 4294967295


def test_division_by_zero_and_negative_shift_are_located_faults():
    x = Var("x", dtype=pl.DT_INT32)
    w = TypedExprWriter()
    w.where = "k.py:7"
    code = w(BinOp("//", x, Const(0, pl.DT_INT32)))
    env = {f"_{h}": getattr(scalar_math, h) for h in scalar_math.HELPERS} | {var_name(x): 4}
    with pytest.raises(SimulationError, match="k.py:7: integer division by zero"):
        eval(code, env)
    with pytest.raises(SimulationError, match="negative count"):
        run(BinOp("<<", x, Const(-1, pl.DT_INT32)), vars={x: 1})
    z = Var("z", dtype=pl.DT_FP32)
    assert run(BinOp("/", Const(1.0), z), vars={z: 0.0}) == float("inf")


# ---- whole kernels ------------------------------------------------------------------------------


def put(g, out, row, value):
    t = g[0]
    pl.expands(t, value)
    pl.store(out, t, [row, 0])


def semantics(iout: pl.Tensor[[15, 8], pl.DT_INT32], fout: pl.Tensor[[4, 8], pl.DT_FP32],
              lhs: pl.DT_INT32, rhs: pl.DT_INT32, f: pl.DT_FP32):
    gi = pl.make_tile_group(type=I1, addrs=[0x0], mutex_ids=[0])
    gf = pl.make_tile_group(type=F1, addrs=[0x100], mutex_ids=[1])
    with pl.section_vector():
        flag = lhs > rhs
        put(gf, fout, 0, lhs / rhs)                  # Python-compatible '/': a float
        put(gf, fout, 1, f * 3 + lhs)                # int meets float: FP32
        put(gf, fout, 2, f if flag else 0.5)
        put(gi, iout, 0, flag + 7)                   # bool arithmetic
        put(gi, iout, 1, flag & 3)
        put(gi, iout, 2, flag == 1)
        put(gi, iout, 3, lhs // rhs)                 # C division of the INT32 operands
        put(gi, iout, 4, lhs % rhs)
        put(gi, iout, 5, lhs * rhs)                  # wraps at 32 bits
        put(gi, iout, 6, (lhs * 65536 * 65536) >> 32)  # 65536 is INT64: no wrap at 32 bits
        put(gi, iout, 7, pl.max(lhs, rhs) - min(lhs, rhs))
        put(gi, iout, 8, pl.const(2147483647, pl.DT_INT32) + lhs)  # INT32 + INT32 wraps
        put(gi, iout, 9, -lhs if lhs < 0 else lhs)
        put(gi, iout, 10, lhs in (1, 7, -7))
        put(gi, iout, 11, rhs in pl.range(0, 10, 2))
        put(gi, iout, 12, flag | 2)
        put(gi, iout, 13, flag ^ 3)
        put(gi, iout, 14, flag < 2)


def expected(lhs, rhs, f):
    f32 = np.float32
    flag = lhs > rhs
    ints = [flag + 7, flag & 3, int(flag == 1), c_div(lhs, rhs), c_mod(lhs, rhs), wrap(lhs * rhs, np.int32),
            lhs, max(lhs, rhs) - min(lhs, rhs), wrap(2147483647 + lhs, np.int32), abs(lhs),
            int(lhs in (1, 7, -7)), int(0 <= rhs < 10 and rhs % 2 == 0), flag | 2, flag ^ 3, int(flag < 2)]
    floats = [f32(lhs) / f32(rhs), f32(f32(f) * f32(3)) + f32(lhs), f32(f) if flag else f32(0.5), 0]
    return np.array(ints, np.int32), np.array(floats, np.float32)


@pytest.mark.parametrize("arch", ["a5", "a2a3"])
@pytest.mark.parametrize("lhs, rhs, f", [(7, 2, 1.5), (1, 2, -0.25), (-7, 2, 3.0), (70000, 70000, 0.1), (-9, -4, 2.0)])
def test_kernel_scalar_semantics(arch, lhs, rhs, f):
    kernel = pl.jit(semantics, arch=arch)
    iout, fout = np.zeros((15, 8), np.int32), np.zeros((4, 8), np.float32)
    kernel(iout, fout, lhs, rhs, f)
    want_i, want_f = expected(lhs, rhs, f)
    assert iout[:, 0].tolist() == want_i.tolist()
    assert fout[:3, 0].tolist() == want_f[:3].tolist()


def ints_and_floats(out: pl.Tensor[[4, 8], pl.DT_INT32], n: pl.DT_INT64, x: pl.DT_FP32):
    g = pl.make_tile_group(type=I1, addrs=[0x0], mutex_ids=[0])
    with pl.section_vector():
        big = n * 4                      # INT64 wraps at 64 bits
        put(g, out, 0, big >> 48)
        acc = 0
        for i in pl.range(0, 5, 1):
            acc = acc + x                # a float into an INT64 loop variable: refused (see test below)
        put(g, out, 1, 0)


def test_float_into_int_loop_variable_is_a_compile_error():
    from pypto_pro import CompileError
    with pytest.raises(CompileError, match=r"'acc' holds an integer \(int64\) at run time; cannot assign a float"):
        pl.jit(ints_and_floats).compile()


def int64_wrap(out: pl.Tensor[[2, 8], pl.DT_INT32], n: pl.DT_INT64):
    g = pl.make_tile_group(type=I1, addrs=[0x0], mutex_ids=[0])
    with pl.section_vector():
        big = n * 4
        put(g, out, 0, big >> 48)
        put(g, out, 1, (n + n) // -3 % 1000)


def test_int64_wraps_at_64_bits():
    out = np.zeros((2, 8), np.int32)
    n = 2 ** 62 + 5
    pl.jit(int64_wrap)(out, n)
    assert out[0, 0] == wrap(n * 4, np.int64) >> 48
    assert out[1, 0] == c_mod(c_div(wrap(2 * n, np.int64), -3), 1000)
