"""Helpers and scalar helpers, the real PyPTO Pro's way: a plain function called by its bare name is
inlined (``return`` anywhere, defaults, tuples); ``@pl.inline`` changes nothing; ``min`` / ``max``
/ ``pl.min`` / ``pl.max`` are scalar; ``pl.const`` makes typed constants; ``pl.constexpr`` guards
compile-time branches."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import CompileError
from pypto_pro.ir.nodes import While, walk_stmts
from pypto_pro.language.dtypes import DT_FP4
from pypto_pro.language.enums import SectionKind

I1 = pl.TileType(shape=[1, 8], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec)
V32 = pl.TileType(shape=[32, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
T32 = pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32]
OUT = pl.Tensor[[8, 8], pl.DT_INT32]


def put(g, out, row, value):
    t = g[0]
    pl.expands(t, value)
    pl.store(out, t, [row, 0])


# ---- returns under run-time control flow (the real lowering: a once-through loop + break) -----------


def for_if_return(limit):
    for index in pl.range(0, limit, 1):
        if index >= 2:
            return index * 10
    return limit


def if_for_return(flag, limit):
    if flag:
        for index in pl.range(0, limit, 1):
            if index >= 3:
                return index * 100
        return 0
    return limit


def else_only_return(value):
    if value > 4:
        value = value + 1        # the helper's own copy: the caller's variable is unchanged
    else:
        return 0
    return value


def pair(flag, base, step=1):
    if flag:
        return base, base + step
    return base + 10, base + 10 + step


def shapes(out: OUT, flag: pl.DT_BOOL, limit: pl.DT_INT32, value: pl.DT_INT32):
    g = pl.make_tile_group(type=I1, addrs=[0x0], mutex_ids=[0])
    with pl.section_vector():
        a = for_if_return(limit)
        b = if_for_return(flag, limit)
        c = else_only_return(value)
        lo, hi = pair(flag, value)
        put(g, out, 0, a)
        put(g, out, 1, b)
        put(g, out, 2, c)
        put(g, out, 3, value)
        put(g, out, 4, lo)
        put(g, out, 5, hi)
        put(g, out, 6, a + b + c)


def ref_shapes(flag, limit, value):
    a = next((i * 10 for i in range(limit) if i >= 2), limit)
    b = (next((i * 100 for i in range(limit) if i >= 3), 0) if flag else limit)
    c = value + 1 if value > 4 else 0
    lo, hi = (value, value + 1) if flag else (value + 10, value + 11)
    return [a, b, c, value, lo, hi, a + b + c]


@pytest.mark.parametrize("arch", ["a5", "a2a3"])
@pytest.mark.parametrize("flag, limit, value", [(True, 6, 9), (False, 6, 2), (True, 1, 9), (False, 0, 5)])
def test_helper_returns_under_runtime_control_flow(arch, flag, limit, value):
    out = np.zeros((8, 8), np.int32)
    pl.jit(shapes, arch=arch)(out, flag, limit, value)
    assert out[:7, 0].tolist() == ref_shapes(flag, limit, value)


def test_run_time_returns_lower_to_a_once_through_loop():
    prog = pl.jit(shapes).compile().programs[SectionKind.VECTOR]
    assert sum(isinstance(s, While) for s in walk_stmts(prog.body)) >= 4


def pick_slot(flag, g):
    t = g.next()
    if flag:
        return t
    return g.next()


@pl.inline  # deprecated in the real PyPTO Pro; accepted and the same as a plain helper
def scaled(dst, src, k=2.0):
    pl.muls(dst, src, k)


def tile_helpers(x: T32, z: T32, flag: pl.DT_BOOL):
    g = pl.make_tile_group(type=V32, addrs=0x0, mutex_ids=[0, 1])
    h = pl.make_tile_group(type=V32, addrs=0x8000, mutex_ids=[2, 3])
    with pl.section_vector():
        t = pick_slot(flag, g)
        pl.load(t, x, [0, 0])
        u = h.next()
        scaled(u, t)
        pl.store(z, u, [0, 0])


@pytest.mark.parametrize("arch", ["a5", "a2a3"])
@pytest.mark.parametrize("flag", [True, False])
def test_helper_returning_a_tile_of_one_group(arch, flag):
    x, z = np.random.default_rng(1).random((32, 64), dtype=np.float32), np.zeros((32, 64), np.float32)
    pl.jit(tile_helpers, arch=arch)(x, z, flag)
    np.testing.assert_array_equal(z, 2 * x)


# ---- compile-time helpers and the Python fallback -----------------------------------------------------


def squares(n):
    return sum([i * i for i in range(n)])  # not kernel code: runs in Python on compile-time arguments


def alloc():
    return pl.make_tile_group(type=I1, addrs=[0x0], mutex_ids=[0])


def folding(out: OUT, v: pl.DT_INT32):
    g = alloc()
    with pl.section_vector():
        put(g, out, 0, squares(4))
        put(g, out, 1, max(v, 3) + pl.min(v, -3))
        put(g, out, 2, pl.const(200, pl.DT_UINT8) + pl.const(100, pl.DT_UINT8))  # folds: 300
        put(g, out, 3, 7 if pl.constexpr(squares(3) == 5) else 8)
        if pl.constexpr(False):
            put(g, out, 4, 99)
        else:
            put(g, out, 4, min(2, 9))


def test_compile_time_helpers_and_scalar_helpers():
    out = np.zeros((8, 8), np.int32)
    pl.jit(folding)(out, 10)
    assert out[:5, 0].tolist() == [14, 10 + -3, 300, 7, 2]
    out[:] = 0
    pl.jit(folding)(out, -10)
    assert out[1, 0] == 3 + -10


# ---- mistakes -------------------------------------------------------------------------------------------


def three_way_min(out: OUT, v: pl.DT_INT32):
    with pl.section_vector():
        x = min(v, 1, 2)


def tile_max(x: T32, z: T32):
    a = pl.make_tile(V32, addr=0x0)
    with pl.section_vector():
        pl.max(a, a)


def constexpr_of_runtime(out: OUT, v: pl.DT_INT32):
    with pl.section_vector():
        if pl.constexpr(v > 0):
            pass


def constexpr_alone(out: OUT, v: pl.DT_INT32):
    with pl.section_vector():
        c = pl.constexpr(True)


def mixed_ternary(out: OUT, v: pl.DT_INT32):
    with pl.section_vector():
        c = v if v > 0 else 0.5


def annotated_mismatch(out: OUT, v: pl.DT_INT32):
    with pl.section_vector():
        s: pl.DT_FP32 = 0


def float_modulo(out: OUT, f: pl.DT_FP32):
    with pl.section_vector():
        r = f % 2.0


def const_of_runtime(out: OUT, v: pl.DT_INT32):
    with pl.section_vector():
        c = pl.const(v, pl.DT_INT32)


def non_scalar_dtype_param(out: OUT, v: DT_FP4):
    with pl.section_vector():
        pass


@pytest.mark.parametrize("kernel, match", [
    (three_way_min, r"scalar operation 'min' takes exactly 2 arguments, got 3"),
    (tile_max, r"max\(\) takes scalars, got tile 'a' \(for tiles use pl.maximum\)"),
    (constexpr_of_runtime, r"pl.constexpr\(\) can only accept compile-time constants"),
    (constexpr_alone, r"pl.constexpr\(\) can only be used as an 'if' condition or in a conditional expression"),
    (mixed_ternary, r"branches of this conditional expression have mismatched types: int32 and fp32"),
    (annotated_mismatch, r"'s' is annotated pl.DT_FP32 but its value is an integer \(int64\)"),
    (float_modulo, r"operator '%' is not supported on float scalars"),
    (const_of_runtime, r"pl.const\(\) needs a numeric literal"),
    (non_scalar_dtype_param, r"pl.DT_FP4 is not a scalar dtype"),
])
def test_scalar_mistakes_are_located_compile_errors(kernel, match):
    with pytest.raises(CompileError, match=match) as info:
        pl.jit(kernel).compile()
    assert info.value.loc is not None and info.value.loc.path.endswith("test_helpers.py")
