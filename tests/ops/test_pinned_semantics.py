"""Pins the tile-API semantics that once differed from the real PyPTO Pro (the parity map's
"diverges" rows: reduction ``dim``, the ``[R, 1]`` DN result, the unused ``tmp``, ``pl.cast``'s
default rounding, the tile-or-scalar right operand, and ``pl.min``/``pl.max`` as scalar functions).
Each test checks numbers the old behaviour would not give; docs/numerics.md "Pinned semantics"
lists them with the real pages."""
import numpy as np
import pytest

import pypto_pro.language as pl

F32, I32, VEC = pl.DT_FP32, pl.DT_INT32, pl.MemorySpace.Vec
P = pl.PipeType


def _tt(shape, dtype=F32, **kw):
    return pl.TileType(shape=list(shape), dtype=dtype, target_memory=VEC, **kw)


def _group(tt, addr: int, mid: int):
    return pl.make_tile_group(type=tt, addrs=addr, mutex_ids=[mid])


# ---- reductions: dim=0 per row into [R, 1] DN, dim=1 per column into [1, C] ------------------------


def _reduce_one_row(op_name: str):
    """``OP(out[1, 64], src[1, 64], tmp, dim=1)``: the parity map's silent case (a row sum on the old
    convention, the row itself on the real one)."""
    OP = getattr(pl, op_name)

    def kernel(a: pl.Tensor[[1, 64], F32], o: pl.Tensor[[1, 64], F32]):
        ga, go, gt = _group(_tt([1, 64]), 0x0, 0), _group(_tt([1, 64]), 0x400, 1), _group(_tt([1, 64]), 0x800, 2)
        with pl.section_vector():
            x, y, t = ga.current(), go.current(), gt.current()
            pl.load(x, a, [0, 0])
            OP(y, x, t, dim=1)
            pl.store(o, y, [0, 0])
    kernel.__name__ = f"pin_{op_name}_one_row_dim1"
    return pl.jit(kernel)


@pytest.mark.parametrize("op_name", ["sum", "maximum", "minimum"])
def test_dim1_of_a_single_row_is_that_row(op_name):
    a = (np.arange(64, dtype=np.float32) - 20.0).reshape(1, 64)
    o = np.full_like(a, -7.0)
    _reduce_one_row(op_name)(a, o)
    assert np.array_equal(o, a)          # per column of one row; a per-row reduce gives [sum, ...]


def _row_reduce_dn(op_name: str, dst_dtype=F32, dim=None):
    """The pages' dim=0 kernels: [64, 128] source, [64, 1] DN result (sum.md, maximum.md, argmax.md);
    ``dim=None`` leaves the default."""
    OP, DIM = getattr(pl, op_name), dim

    def kernel(a: pl.Tensor[[64, 128], F32], o: pl.Tensor[[64, 1], dst_dtype]):
        ga = _group(_tt([64, 128]), 0x0000, 0)
        gt = _group(_tt([64, 128]), 0x8000, 1)
        go = _group(_tt([64, 1], dst_dtype, layout=pl.DN), 0x10000, 2)
        with pl.section_vector():
            x, t, y = ga.current(), gt.current(), go.current()
            pl.load(x, a, [0, 0])
            if DIM is None:
                OP(y, x, t)
            else:
                OP(y, x, t, dim=DIM)
            pl.store(o, y, [0, 0])
    kernel.__name__ = f"pin_{op_name}_dn_{dim}"
    return pl.jit(kernel)


@pytest.mark.parametrize("op_name,dim,ref", [
    ("sum", None, None),
    ("maximum", 0, np.max),
    ("minimum", 0, np.min),
    ("argmax", None, np.argmax),
    ("argmin", None, np.argmin),
])
def test_dim0_reduces_each_row_into_an_r_by_1_dn_tile(op_name, dim, ref):
    a = np.random.default_rng(3).permutation(64 * 128).reshape(64, 128).astype(np.float32) / 8.0
    arg = op_name.startswith("arg")
    o = np.full((64, 1), -5, np.int32 if arg else np.float32)
    _row_reduce_dn(op_name, I32 if arg else F32, dim)(a, o)
    if ref is None:                      # small multiples of 1/8: the fp32 tree sum is exact
        assert np.array_equal(o[:, 0], a.astype(np.float64).sum(axis=1))
    else:
        assert np.array_equal(o[:, 0], ref(a, axis=1))


def test_expand_default_dim_broadcasts_an_r_by_1_dn_tile_along_each_row():
    """expand_sub.md's dim=0 kernel: ``[64, 1]`` DN operand, one value per row."""
    def kernel(a: pl.Tensor[[64, 128], F32], v: pl.Tensor[[64, 1], F32], o: pl.Tensor[[64, 128], F32]):
        ga = _group(_tt([64, 128]), 0x0000, 0)
        gv = _group(_tt([64, 1], layout=pl.DN), 0x8000, 1)
        go = _group(_tt([64, 128]), 0x10000, 2)
        with pl.section_vector():
            x, w, y = ga.current(), gv.current(), go.current()
            pl.load(x, a, [0, 0])
            pl.load(w, v, [0, 0])
            pl.expand_sub(y, x, w)
            pl.store(o, y, [0, 0])
    a = np.arange(64 * 128, dtype=np.float32).reshape(64, 128) / 8.0
    v = (np.arange(64, dtype=np.float32) * 0.25 + 1.25).reshape(64, 1)
    o = np.zeros_like(a)
    pl.jit(kernel)(a, v, o)
    assert np.array_equal(o, a - v)


@pytest.mark.parametrize("op_name,dim", [("sum", 0), ("sum", 1), ("argmax", 0)])
def test_reduce_tmp_in_flight_is_neither_read_nor_written(op_name, dim):
    """sum.md / argmax.md: the required ``tmp`` is not touched by TROWSUM / TCOLSUM / TROWARGMAX, so a
    load still writing it is no race and does not change the result."""
    OP, DIM, ARG = getattr(pl, op_name), dim, op_name == "argmax"
    DT = I32 if ARG else F32
    OUT = [16, 1] if dim == 0 else [1, 64]
    YT = _tt(OUT, DT, layout=pl.DN) if dim == 0 else _tt(OUT, DT)

    def kernel(a: pl.Tensor[[16, 64], F32], b: pl.Tensor[[16, 64], F32], o: pl.Tensor[OUT, DT]):
        x = pl.make_tile(_tt([16, 64]), addr=0x0)
        t = pl.make_tile(_tt([16, 64]), addr=0x1000)
        y = pl.make_tile(YT, addr=0x2000)
        with pl.section_vector():
            pl.load(x, a, [0, 0])
            pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.V, event_id=0)
            pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.V, event_id=0)
            pl.load(t, b, [0, 0])        # still in flight on MTE2 while V names t as tmp
            OP(y, x, t, dim=DIM)
            pl.system.sync_src(set_pipe=P.V, wait_pipe=P.MTE3, event_id=1)
            pl.system.sync_dst(set_pipe=P.V, wait_pipe=P.MTE3, event_id=1)
            pl.store(o, y, [0, 0])
            pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=2)
            pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=2)
    kernel.__name__ = f"pin_tmp_{op_name}_{dim}"
    a = np.random.default_rng(4).permutation(16 * 64).reshape(16, 64).astype(np.float32) / 4.0
    o = np.zeros(OUT, np.int32 if ARG else np.float32)
    pl.jit(kernel, auto_mutex=False).options(check="raise")(a, a * 3.0, o)
    if ARG:
        ref = np.argmax(a, axis=1).reshape(16, 1)
    else:
        ref = a.astype(np.float64).sum(axis=1 - dim).reshape(OUT)
    assert np.array_equal(o, ref)


# ---- pl.cast: the default is RoundMode.CAST_ROUND (ties away from zero) ----------------------------


def _cast(dst_dtype, n: int, mode=None):
    MODE = mode

    def kernel(a: pl.Tensor[[1, n], F32], o: pl.Tensor[[1, n], dst_dtype]):
        ga, go = _group(_tt([1, n]), 0x0, 0), _group(_tt([1, n], dst_dtype), 0x400, 1)
        with pl.section_vector():
            x, y = ga.current(), go.current()
            pl.load(x, a, [0, 0])
            if MODE is None:
                pl.cast(y, x)
            else:
                pl.cast(y, x, mode=MODE)
            pl.store(o, y, [0, 0])
    kernel.__name__ = f"pin_cast_{dst_dtype.name}_{'default' if mode is None else mode.name}"
    return pl.jit(kernel)


TIES = np.array([[0.5, 1.5, 2.5, -2.5, -0.5, 3.5, -3.5, 0.49]], np.float32)


def test_cast_default_rounds_fp32_ties_to_int32_away_from_zero():
    o = np.zeros(TIES.shape, np.int32)
    _cast(I32, TIES.shape[1])(TIES, o)
    assert o.tolist() == [[1, 2, 3, -3, -1, 4, -4, 0]]        # ties-to-even would give [0, 2, 2, -2, ...]
    rint = np.zeros_like(o)
    _cast(I32, TIES.shape[1], pl.RoundMode.CAST_RINT)(TIES, rint)
    assert rint.tolist() == [[0, 2, 2, -2, 0, 4, -4, 0]]       # the explicit mode still rounds to even


def test_cast_default_rounds_fp32_ties_to_fp16_away_from_zero():
    ulp = 2.0 ** -10
    a = np.array([[1 + ulp / 2, -(1 + ulp / 2), 1 + 3 * ulp / 2, 2049.0, 2051.0, 1 + ulp / 4, 0.0, 1.0] * 2],
                 np.float32)
    o = np.zeros(a.shape, np.float16)
    _cast(pl.DT_FP16, a.shape[1])(a, o)        # fp16 ties-to-even would give 1, -1, 1 + 2 ulp, 2048, 2052
    want = np.array([[1 + ulp, -(1 + ulp), 1 + 2 * ulp, 2050.0, 2052.0, 1.0, 0.0, 1.0] * 2], np.float16)
    assert np.array_equal(o.view(np.uint16), want.view(np.uint16))


# ---- pl.add / sub / mul / div / maximum / minimum: a scalar right operand -------------------------

SCALAR_REF = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
              "maximum": np.maximum, "minimum": np.minimum}


def _tile_scalar(op_name: str, runtime: bool):
    OP = getattr(pl, op_name)

    def body(a, o, s):
        ga, go = _group(_tt([4, 64]), 0x0, 0), _group(_tt([4, 64]), 0x1000, 1)
        with pl.section_vector():
            x, y = ga.current(), go.current()
            pl.load(x, a, [0, 0])
            OP(y, x, s)
            pl.store(o, y, [0, 0])

    if runtime:
        def kernel(a: pl.Tensor[[4, 64], F32], o: pl.Tensor[[4, 64], F32], s: pl.DT_FP32):
            body(a, o, s)
    else:
        def kernel(a: pl.Tensor[[4, 64], F32], o: pl.Tensor[[4, 64], F32]):
            body(a, o, -2.5)
    kernel.__name__ = f"pin_{op_name}_scalar_{'param' if runtime else 'literal'}"
    return pl.jit(kernel)


@pytest.mark.parametrize("runtime", [False, True], ids=["literal", "param"])
@pytest.mark.parametrize("op_name", list(SCALAR_REF))
def test_scalar_right_operand_is_the_tile_scalar_form(op_name, runtime):
    """``pl.OP(out, lhs, s)`` computes ``lhs OP s`` element by element (real dispatch to adds/subs/...)."""
    a = (np.arange(4 * 64, dtype=np.float32).reshape(4, 64) - 100.0) / 4.0
    o = np.full_like(a, 99.0)
    k = _tile_scalar(op_name, runtime)
    k(a, o, np.float32(-2.5)) if runtime else k(a, o)
    want = SCALAR_REF[op_name](a, np.float32(-2.5)).astype(np.float32)
    assert np.array_equal(o.view(np.uint32), want.view(np.uint32))


# ---- pl.min / pl.max: scalar functions; mixed int / float promote to FP32 -------------------------


def test_scalar_min_max_of_an_int_and_a_float_promote_to_fp32():
    """Real ``MakeMin``/``MakeMax`` (framework/include/ir/scalar_expr_ops.h) cast both operands to FP32
    when one is an integer and the other a float (the min.md page says this is an error; the source
    accepts it)."""
    def kernel(o: pl.Tensor[[1, 8], F32], n: pl.DT_INT32):
        g = _group(_tt([1, 8]), 0x0, 0)
        with pl.section_vector():
            y = g.current()
            pl.expands(y, pl.min(n, 2.5) * 10.0 + pl.max(n, 0.5))
            pl.store(o, y, [0, 0])
    o = np.zeros((1, 8), np.float32)
    k = pl.jit(kernel)
    k(o, 3)
    assert o[0, 0] == 2.5 * 10.0 + 3.0
    k(o, -1)
    assert o[0, 0] == -1.0 * 10.0 + 0.5
