"""The bitwise, compare/select, fused/composite, index-reduction and vector-mask ops
(``pypto_pro/ops/{bitwise,comparison,fused,vector_mask}.py``, argmax/argmin in ``reduction.py``) and
``pl.cast(mode=CAST_ODD)``, each through the whole pipeline (load -> op -> store on the simulator)
against references written here from scratch (NumPy integers, float64 rounded once, bit packing by
hand). Tiles are [16, 64]; most inputs have a partial valid region (13 x 27) so the valid-shape rules
are exercised, and outputs start as a sentinel that must survive outside the region.
"""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.errors import CompileError, PyptoError
from vec_op_factories import binary_kernel, jit, tensor_t as G, unary_kernel

TILE = (16, 64)
REGION = (13, 27)
VEC = pl.MemorySpace.Vec
SENT = 96


def T(dt, shape=TILE):
    return pl.TileType(shape=list(shape), dtype=dt, target_memory=VEC)


def rand(dt, shape=REGION, seed=0, lo=None, hi=None):
    rng = np.random.default_rng(seed)
    npdt = dt.np_dtype
    if dt.is_float():
        return (rng.standard_normal(shape) * 4).astype(npdt)
    info = np.iinfo(npdt)
    return rng.integers(int(info.min) if lo is None else lo, int(info.max) if hi is None else hi, size=shape,
                        endpoint=True, dtype=npdt)


def sentinel(dt, shape=TILE):
    return np.full(shape, SENT, dtype=dt.np_dtype)


def border_ok(out, rows, cols):
    m = np.ones(out.shape, bool)
    m[:rows, :cols] = False
    return bool((out[m].astype(np.float64) == SENT).all())


# ---- kernel factories ----------------------------------------------------------------------------


def k2(name, dt, out_dt=None, region=REGION, target_type=None):
    """``OP(out, a, b[, target_type=])``; the kernel also stores ``a`` back (to see it overwritten)."""
    return binary_kernel(name, f"{name}_{dt.name}", T(dt), T(out_dt or dt), region, 0x2000, target_type=target_type,
                         store_back=True)


def k_scalar(name, dt, scalar):
    return unary_kernel(name, f"{name}_s_{dt.name}", T(dt), T(dt), REGION, 0x4000, "scalar", scalar=scalar)


def k_out3(name, dt):
    """``OP(out, a, b)`` where ``out`` is also an input (mul_add_dst, fused_mul_add, ...)."""
    OP, TA, GA = getattr(pl, name), T(dt), G(dt)

    def kernel(o: GA, a: GA, b: GA, c: GA):
        go = pl.make_tile_group(type=TA, addrs=[0x0000], mutex_ids=[0])
        ga = pl.make_tile_group(type=TA, addrs=[0x2000], mutex_ids=[1])
        gb = pl.make_tile_group(type=TA, addrs=[0x4000], mutex_ids=[2])
        with pl.section_vector():
            to, ta, tb = go[0], ga[0], gb[0]
            pl.set_validshape(to, list(REGION))
            pl.set_validshape(ta, list(REGION))
            pl.set_validshape(tb, list(REGION))
            pl.load(to, o, [0, 0])
            pl.load(ta, a, [0, 0])
            pl.load(tb, b, [0, 0])
            OP(to, ta, tb)
            pl.store(c, to, [0, 0])
    return jit(kernel, f"{name}_{dt.name}")


# ---- bitwise ---------------------------------------------------------------------------------------

INTS = (pl.DT_INT8, pl.DT_UINT8, pl.DT_INT16, pl.DT_UINT16, pl.DT_INT32, pl.DT_UINT32)


@pytest.mark.parametrize("dt", INTS, ids=lambda d: d.name)
def test_and_tile_and_scalar(dt):
    a, b = rand(dt, seed=1), rand(dt, seed=2)
    c, back = sentinel(dt), sentinel(dt)
    k2("and_", dt)(a, b, c, back)
    assert (c[:13, :27] == (a & b)).all() and border_ok(c, *REGION)
    c = sentinel(dt)
    k_scalar("and_", dt, 0x5A)(a, c)
    assert (c[:13, :27] == (a & dt.np_dtype.type(0x5A))).all()


@pytest.mark.parametrize("dt", INTS, ids=lambda d: d.name)
def test_xor_with_tmp(dt):
    TA, GA = T(dt), G(dt)

    def kernel(a: GA, b: GA, c: GA):
        ga = pl.make_tile_group(type=TA, addrs=[0x0000], mutex_ids=[0])
        gb = pl.make_tile_group(type=TA, addrs=[0x2000], mutex_ids=[1])
        gt = pl.make_tile_group(type=TA, addrs=[0x4000], mutex_ids=[2])
        gc = pl.make_tile_group(type=TA, addrs=[0x6000], mutex_ids=[3])
        with pl.section_vector():
            ta, tb, tt, tc = ga[0], gb[0], gt[0], gc[0]
            pl.load(ta, a, [0, 0])
            pl.load(tb, b, [0, 0])
            pl.xor(tc, ta, tb, tt)
            pl.store(c, tc, [0, 0])
    a, b = rand(dt, TILE, 1), rand(dt, TILE, 2)
    c = sentinel(dt)
    jit(kernel, "xor_k")(a, b, c)
    assert (c == (a ^ b)).all()


SHIFT_DTS = INTS + (pl.DT_INT64, pl.DT_UINT64)


@pytest.mark.parametrize("name", ["shl", "shr"])
@pytest.mark.parametrize("dt", SHIFT_DTS, ids=lambda d: d.name)
def test_shifts(name, dt):
    width = dt.np_dtype.itemsize * 8
    a = rand(dt, seed=3)
    n = rand(dt, seed=4, lo=0, hi=width - 1)
    c, back = sentinel(dt), sentinel(dt)
    k2(name, dt)(a, n, c, back)
    # reference on Python ints: wrap on the left, arithmetic (signed) / logical (unsigned) on the right
    mod = 1 << width
    ref = np.empty_like(a)
    for idx in np.ndindex(a.shape):
        x, k = int(a[idx]), int(n[idx])
        v = (x << k) % mod if name == "shl" else ((x % mod) >> k if dt.np_dtype.kind == "u" else x >> k)
        if dt.np_dtype.kind == "i" and v >= mod // 2:
            v -= mod
        ref[idx] = v
    assert (c[:13, :27] == ref).all()


def test_shift_amount_out_of_range_is_a_located_fault():
    dt = pl.DT_INT16
    a, n = rand(dt, seed=3), np.full(REGION, 3, np.int16)
    n[5, 7] = 16
    with pytest.raises(PyptoError, match=r"shift amount 16 is outside 0\.\.15"):
        k2("shl", dt)(a, n, sentinel(dt), sentinel(dt))


def test_bitwise_misuse_is_a_compile_error():
    with pytest.raises(CompileError, match="does not support DT_FP32"):
        k2("and_", pl.DT_FP32)(rand(pl.DT_FP32), rand(pl.DT_FP32), sentinel(pl.DT_FP32), sentinel(pl.DT_FP32))
    TA, GA = T(pl.DT_INT32), G(pl.DT_INT32)

    def kernel(a: GA, c: GA):
        ga = pl.make_tile_group(type=TA, addrs=[0x0000], mutex_ids=[0])
        gc = pl.make_tile_group(type=TA, addrs=[0x4000], mutex_ids=[1])
        with pl.section_vector():
            ta, tc = ga[0], gc[0]
            pl.load(ta, a, [0, 0])
            pl.xor(tc, ta, ta, ta)
            pl.store(c, tc, [0, 0])
    with pytest.raises(CompileError, match="'tmp' must be a separate tile from 'lhs'"):
        jit(kernel, "xor_bad")(rand(pl.DT_INT32, TILE), sentinel(pl.DT_INT32))


# ---- compare / select --------------------------------------------------------------------------------

CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
       "ge": np.greater_equal}


def k_cmp(name, dt, scalar=None):
    """``mask = OP(a, b or scalar)``; stores the raw mask tile ([16, 64] UINT8)."""
    OP, TA, GA, TM, GM, S = getattr(pl, name), T(dt), G(dt), T(pl.DT_UINT8), G(pl.DT_UINT8), scalar

    def kernel(a: GA, b: GA, m: GM):
        ga = pl.make_tile_group(type=TA, addrs=[0x0000], mutex_ids=[0])
        gb = pl.make_tile_group(type=TA, addrs=[0x2000], mutex_ids=[1])
        gm = pl.make_tile_group(type=TM, addrs=[0x4000], mutex_ids=[2])
        with pl.section_vector():
            ta, tb, tm = ga[0], gb[0], gm[0]
            pl.set_validshape(ta, list(REGION))
            pl.set_validshape(tb, list(REGION))
            pl.load(ta, a, [0, 0])
            pl.load(tb, b, [0, 0])
            pl.expands(tm, 0xEE)
            if S is None:
                OP(tm, ta, tb)
            else:
                OP(tm, ta, S)
            pl.store(m, tm, [0, 0])
    return jit(kernel, f"cmp_{name}_{dt.name}")


def packed(bits: np.ndarray, chunk: int) -> np.ndarray:
    """Reference packing: LSB-first bytes per row, whole ``chunk``-byte groups."""
    r, c = bits.shape
    nbytes = -(-c // (chunk * 8)) * chunk
    out = np.zeros((r, nbytes), np.uint8)
    for i in range(r):
        for j in range(c):
            if bits[i, j]:
                out[i, j // 8] |= 1 << (j % 8)
    return out


CMP_CASES = ([(n, d) for n in CMP for d in (pl.DT_FP32, pl.DT_FP16, pl.DT_INT32, pl.DT_INT8)]
             + [(n, d) for n in ("lt", "eq") for d in (pl.DT_UINT8, pl.DT_INT16, pl.DT_UINT16, pl.DT_UINT32,
                                                       pl.DT_INT64, pl.DT_UINT64, pl.DT_BF16)])


@pytest.mark.parametrize("name,dt", CMP_CASES, ids=lambda v: getattr(v, "name", v))
def test_compare_packs_bits(name, dt):
    a = rand(dt, seed=5)
    b = rand(dt, seed=6)
    b[::2, ::3] = a[::2, ::3]  # some equal pairs
    m = np.full(TILE, 0xEE, np.uint8)
    k_cmp(name, dt)(a, b, m)
    chunk = {1: 32, 2: 16, 4: 16, 8: 8}[dt.np_dtype.itemsize]
    ref = packed(CMP[name](a, b), chunk)
    assert (m[:13, :ref.shape[1]] == ref).all()
    assert (m[:13, ref.shape[1]:] == 0xEE).all() and (m[13:] == 0xEE).all()  # bytes past the chunks untouched


@pytest.mark.parametrize("name", ["gt", "le", "eq"])
def test_compare_scalar(name):
    dt = pl.DT_FP16
    a = rand(dt, seed=7)
    a[0, :4] = [0.0, -0.0, 0.5, -0.5]
    m = np.full(TILE, 0xEE, np.uint8)
    k_cmp(name, dt, scalar=0.0)(a, a, m)
    ref = packed(CMP[name](a.astype(np.float32), 0.0), 16)
    assert (m[:13, :16] == ref).all()


def k_select(dt, scalar=None):
    TA, GA, TM, S = T(dt), G(dt), T(pl.DT_UINT8), scalar

    def kernel(a: GA, b: GA, c: GA):
        ga = pl.make_tile_group(type=TA, addrs=[0x0000], mutex_ids=[0])
        gb = pl.make_tile_group(type=TA, addrs=[0x2000], mutex_ids=[1])
        gc = pl.make_tile_group(type=TA, addrs=[0x4000], mutex_ids=[2])
        gt = pl.make_tile_group(type=TA, addrs=[0x6000], mutex_ids=[3])
        gm = pl.make_tile_group(type=TM, addrs=[0x8000], mutex_ids=[4])
        with pl.section_vector():
            ta, tb, tc, tt, tm = ga[0], gb[0], gc[0], gt[0], gm[0]
            pl.set_validshape(ta, list(REGION))
            pl.set_validshape(tb, list(REGION))
            pl.set_validshape(tc, list(REGION))
            pl.load(ta, a, [0, 0])
            pl.load(tb, b, [0, 0])
            pl.gt(tm, ta, tb)
            if S is None:
                pl.select(tc, tm, ta, tb, tt)
            else:
                pl.select(tc, tm, ta, S, tt)
            pl.store(c, tc, [0, 0])
    return jit(kernel, f"select_{dt.name}")


@pytest.mark.parametrize("dt", [pl.DT_FP32, pl.DT_FP16, pl.DT_BF16, pl.DT_INT8, pl.DT_UINT8, pl.DT_INT16,
                                pl.DT_UINT16, pl.DT_INT32, pl.DT_UINT32, pl.DT_INT64, pl.DT_UINT64],
                         ids=lambda d: d.name)
def test_gt_select_is_maximum(dt):
    a, b = rand(dt, seed=8), rand(dt, seed=9)
    c = sentinel(dt)
    k_select(dt)(a, b, c)
    assert (c[:13, :27] == np.where(a > b, a, b)).all() and border_ok(c, *REGION)


def test_select_scalar():
    dt = pl.DT_FP32
    a, b = rand(dt, seed=8), rand(dt, seed=9)
    c = sentinel(dt)
    k_select(dt, scalar=-1.5)(a, b, c)
    assert (c[:13, :27] == np.where(a > b, a, np.float32(-1.5))).all()


def test_compare_misuse():
    with pytest.raises(CompileError, match="does not support DT_FP32 for 'out'"):
        k2("gt", pl.DT_FP32)(rand(pl.DT_FP32), rand(pl.DT_FP32), sentinel(pl.DT_FP32), sentinel(pl.DT_FP32))
    TA, GA, TM = T(pl.DT_FP32), G(pl.DT_FP32), T(pl.DT_UINT8, (8, 64))

    def kernel(a: GA, c: GA):
        ga = pl.make_tile_group(type=TA, addrs=[0x0000], mutex_ids=[0])
        gm = pl.make_tile_group(type=TM, addrs=[0x4000], mutex_ids=[1])
        with pl.section_vector():
            ta, tm = ga[0], gm[0]
            pl.load(ta, a, [0, 0])
            pl.lt(tm, ta, 1.0)
    with pytest.raises(CompileError, match=r"needs at least \[16, 16\] UINT8"):
        jit(kernel, "cmp_small_mask")(rand(pl.DT_FP32, TILE), sentinel(pl.DT_FP32))


# ---- fused sequences -------------------------------------------------------------------------------


@pytest.mark.parametrize("name,dt", [("add_relu", pl.DT_FP32), ("add_relu", pl.DT_INT32), ("sub_relu", pl.DT_FP16)])
def test_binary_relu_overwrites_lhs(name, dt):
    a, b = rand(dt, seed=10), rand(dt, seed=11)
    if dt.is_int():
        a, b = a // 4, b // 4
    c, back = sentinel(dt), sentinel(dt)
    k2(name, dt)(a, b, c, back)
    mid = (a + b) if name == "add_relu" else (a - b)
    assert (back[:13, :27] == mid).all(), "the real backend computes into lhs"
    assert (c[:13, :27] == np.maximum(mid, 0)).all()


@pytest.mark.parametrize("name", ["add_relu_cast", "sub_relu_cast", "mul_cast"])
def test_binary_cast(name):
    a = np.full(REGION, 1.0, np.float32)
    b = np.full(REGION, 0.0, np.float32)
    vals = np.float32([1.0 + 2 ** -11, -3.0, 2.5, 1.0 + 3 * 2 ** -11])  # fp16 ties (and a negative)
    a[0, :4] = vals
    c, back = sentinel(pl.DT_FP16), sentinel(pl.DT_FP32)
    k2(name, pl.DT_FP32, pl.DT_FP16, target_type=pl.DT_FP16)(a, b if name != "mul_cast" else b + 1, c, back)
    relu = name != "mul_cast"
    mid = np.maximum(vals, 0) if relu else vals
    # the default CAST_ROUND breaks fp16 ties away from zero
    away = np.float16([1.0 + 2 ** -10, -3.0, 2.5, 1.0 + 4 * 2 ** -11])
    exp = np.where(mid == 0, np.float16(0), away) if relu else away
    assert (c[0, :4] == exp).all()
    assert (back[0, :4] == mid).all()


def test_cast_target_type_must_match_out():
    with pytest.raises(CompileError, match="target_type is DT_FP32 but 'out' is DT_FP16"):
        k2("mul_cast", pl.DT_FP32, pl.DT_FP16, target_type=pl.DT_FP32)(
            rand(pl.DT_FP32), rand(pl.DT_FP32), sentinel(pl.DT_FP16), sentinel(pl.DT_FP32))


@pytest.mark.parametrize("name", ["mul_add_dst", "fused_mul_add", "fused_mul_add_relu"])
@pytest.mark.parametrize("dt", [pl.DT_FP32, pl.DT_INT16], ids=lambda d: d.name)
def test_mul_add_family(name, dt):
    o, a, b = rand(dt, seed=12), rand(dt, seed=13), rand(dt, seed=14)
    c = sentinel(dt)
    k_out3(name, dt)(o, a, b, c)
    with np.errstate(over="ignore"):
        if dt.is_float():
            # two roundings (TMUL then TADD), both in fp32
            mul = (a.astype(np.float64) * (b if name == "mul_add_dst" else o)).astype(np.float32)
            add = (mul.astype(np.float64) + (o if name == "mul_add_dst" else b)).astype(np.float32)
        else:
            mul = a * (b if name == "mul_add_dst" else o)
            add = mul + (o if name == "mul_add_dst" else b)
    ref = np.maximum(add, 0) if name.endswith("relu") else add
    assert (c[:13, :27] == ref).all()


# ---- single fused instructions -------------------------------------------------------------------


def test_addc_rounds_each_add():
    dt = pl.DT_FP16
    TA, GA = T(dt), G(dt)

    def kernel(a: GA, b: GA, x: GA, c: GA):
        ga = pl.make_tile_group(type=TA, addrs=[0x0000], mutex_ids=[0])
        gb = pl.make_tile_group(type=TA, addrs=[0x2000], mutex_ids=[1])
        gx = pl.make_tile_group(type=TA, addrs=[0x4000], mutex_ids=[2])
        gc = pl.make_tile_group(type=TA, addrs=[0x6000], mutex_ids=[3])
        with pl.section_vector():
            ta, tb, tx, tc = ga[0], gb[0], gx[0], gc[0]
            pl.load(ta, a, [0, 0])
            pl.load(tb, b, [0, 0])
            pl.load(tx, x, [0, 0])
            pl.addc(tc, ta, tb, tx)
            pl.store(c, tc, [0, 0])
    a = np.full(TILE, 2048, np.float16)
    b = np.full(TILE, 1, np.float16)
    x = np.full(TILE, 1, np.float16)
    c = sentinel(dt)
    jit(kernel, "addc_k")(a, b, x, c)
    # (2048 + 1) rounds to 2048 in fp16, + 1 again: 2048; one rounding of 2050 would give 2050
    assert (c == 2048).all()


@pytest.mark.parametrize("src_dt,out_dt", [(pl.DT_FP32, pl.DT_FP32), (pl.DT_FP16, pl.DT_FP32),
                                           (pl.DT_FP16, pl.DT_FP16)])
def test_axpy(src_dt, out_dt):
    TS, TO, GS, GO = T(src_dt), T(out_dt), G(src_dt), G(out_dt)

    def kernel(s: GS, o: GO, c: GO):
        gs = pl.make_tile_group(type=TS, addrs=[0x0000], mutex_ids=[0])
        go = pl.make_tile_group(type=TO, addrs=[0x4000], mutex_ids=[1])
        with pl.section_vector():
            ts, to = gs[0], go[0]
            pl.load(ts, s, [0, 0])
            pl.load(to, o, [0, 0])
            pl.axpy(to, ts, 0.1)
            pl.store(c, to, [0, 0])
    s, o = rand(src_dt, TILE, 15), rand(out_dt, TILE, 16)
    c = sentinel(out_dt)
    jit(kernel, "axpy_k")(s, o, c)
    alpha = np.float64(src_dt.np_dtype.type(0.1))  # alpha held in the source dtype
    prod = (s.astype(np.float64) * alpha).astype(out_dt.np_dtype)
    ref = (prod.astype(np.float64) + o).astype(out_dt.np_dtype)
    assert (c == ref).all()


@pytest.mark.parametrize("name,fn", [("partadd", np.add), ("partmax", np.maximum), ("partmin", np.minimum),
                                     ("partmul", np.multiply)])
def test_part_ops_partial_second_source(name, fn):
    dt = pl.DT_FP32
    TA, GA = T(dt), G(dt)
    OP = getattr(pl, name)

    def kernel(a: GA, b: GA, c: GA):
        ga = pl.make_tile_group(type=TA, addrs=[0x0000], mutex_ids=[0])
        gb = pl.make_tile_group(type=TA, addrs=[0x2000], mutex_ids=[1])
        gc = pl.make_tile_group(type=TA, addrs=[0x4000], mutex_ids=[2])
        with pl.section_vector():
            ta, tb, tc = ga[0], gb[0], gc[0]
            pl.set_validshape(ta, [13, 27])
            pl.set_validshape(tc, [13, 27])
            pl.set_validshape(tb, [5, 9])
            pl.load(ta, a, [0, 0])
            pl.load(tb, b, [0, 0])
            OP(tc, ta, tb)
            pl.store(c, tc, [0, 0])
    a, b = rand(dt, seed=17), rand(dt, (5, 9), 18)
    c = sentinel(dt)
    jit(kernel, name)(a, b, c)
    ref = a.copy()
    ref[:5, :9] = fn(a[:5, :9], b)
    assert (c[:13, :27] == ref).all() and border_ok(c, *REGION)


# ---- argmax / argmin -------------------------------------------------------------------------------


def k_arg(name, dt, dim):
    """``OP(out, a, tmp, dim=dim)``; ``dim=None`` leaves ``dim`` at its default (a per-row [16, 1] result)."""
    OP, TA, GA = getattr(pl, name), T(dt), G(dt)
    TO = T(pl.DT_INT32, (1, 64) if dim == 1 else (16, 1))
    D = dim

    def kernel(a: GA, c: G(pl.DT_INT32)):
        ga = pl.make_tile_group(type=TA, addrs=[0x0000], mutex_ids=[0])
        gt = pl.make_tile_group(type=TA, addrs=[0x2000], mutex_ids=[1])
        gc = pl.make_tile_group(type=TO, addrs=[0x4000], mutex_ids=[2])
        with pl.section_vector():
            ta, tt, tc = ga[0], gt[0], gc[0]
            pl.load(ta, a, [0, 0])
            if D is None:
                OP(tc, ta, tt)
            else:
                OP(tc, ta, tt, dim=D)
            pl.store(c, tc, [0, 0])
    return jit(kernel, f"{name}_{dim}_{dt.name}")


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dim,dt", [(0, pl.DT_FP32), (0, pl.DT_FP16), (1, pl.DT_INT8), (1, pl.DT_UINT8),
                                    (1, pl.DT_INT16), (1, pl.DT_UINT16), (1, pl.DT_INT32), (1, pl.DT_UINT32),
                                    (1, pl.DT_FP16), (1, pl.DT_FP32), (1, pl.DT_BF16)])
def test_argmax_argmin_first_index(name, dim, dt):
    a = rand(dt, TILE, 19)
    if dt.is_float():
        a = (np.round(a.astype(np.float32))).astype(dt.np_dtype)  # many ties
    c = np.full((16, 1) if dim == 0 else (1, 64), -5, np.int32)
    k_arg(name, dt, dim)(a, c)
    ref = (np.argmax if name == "argmax" else np.argmin)(a.astype(np.float64), axis=1 - dim)  # first occurrence
    assert (c.ravel() == ref).all()


def test_argmax_dim0_refuses_int_source():
    with pytest.raises(CompileError, match=r"argmax\(dim=0\) does not support DT_INT8"):
        k_arg("argmax", pl.DT_INT8, 0)(rand(pl.DT_INT8, TILE), np.zeros((16, 1), np.int32))


# ---- cast CAST_ODD ----------------------------------------------------------------------------------


def test_cast_odd_fp32_to_fp16():
    TS, TO, GS, GO = T(pl.DT_FP32), T(pl.DT_FP16), G(pl.DT_FP32), G(pl.DT_FP16)

    def kernel(s: GS, c: GO):
        gs = pl.make_tile_group(type=TS, addrs=[0x0000], mutex_ids=[0])
        go = pl.make_tile_group(type=TO, addrs=[0x4000], mutex_ids=[1])
        with pl.section_vector():
            ts, to = gs[0], go[0]
            pl.load(ts, s, [0, 0])
            pl.cast(to, ts, mode=pl.RoundMode.CAST_ODD)
            pl.store(c, to, [0, 0])
    s = rand(pl.DT_FP32, TILE, 20)
    s[0, :4] = [1.0 + 2 ** -11, 1.0 + 3 * 2 ** -11, 1.0, -(1.0 + 2 ** -12)]
    c = np.zeros(TILE, np.float16)
    jit(kernel, "cast_odd")(s, c)
    # reference: truncate toward zero, then force the last significand bit to 1 when inexact
    t = s.astype(np.float64)
    down = s.astype(np.float16)
    down = np.where(np.abs(down.astype(np.float64)) > np.abs(t),
                    np.nextafter(down, np.float16(0)), down).astype(np.float16)
    bits = down.view(np.uint16) | (down.astype(np.float64) != t).astype(np.uint16)
    assert (c.view(np.uint16) == bits).all()
    assert c[0, 0] == np.float16(1.0 + 2 ** -10) and c[0, 2] == 1.0


# ---- vector masks ------------------------------------------------------------------------------------


def test_vector_mask_ops_leave_tile_ops_unchanged_and_emit():
    TA, GA = T(pl.DT_FP32), G(pl.DT_FP32)

    def kernel(a: GA, b: GA, c: GA):
        ga = pl.make_tile_group(type=TA, addrs=[0x0000], mutex_ids=[0])
        gb = pl.make_tile_group(type=TA, addrs=[0x2000], mutex_ids=[1])
        gc = pl.make_tile_group(type=TA, addrs=[0x4000], mutex_ids=[2])
        with pl.section_vector():
            ta, tb, tc = ga[0], gb[0], gc[0]
            pl.load(ta, a, [0, 0])
            pl.load(tb, b, [0, 0])
            pl.set_mask_count()
            pl.set_vec_mask(0, 64)
            pl.set_mask_norm()
            pl.set_vec_mask(0, 0xFFFFFFFF)
            pl.add(tc, ta, tb)
            pl.reset_mask()
            pl.store(c, tc, [0, 0])
    k = jit(kernel, "masks")
    a, b = rand(pl.DT_FP32, TILE, 21), rand(pl.DT_FP32, TILE, 22)
    c = sentinel(pl.DT_FP32)
    k(a, b, c)
    assert (c == a + b).all()
    text = (k.emit() / "kernel.cpp").read_text()
    for line in ("set_mask_count();", "set_mask_norm();", "set_vector_mask(static_cast<uint64_t>(0), "
                 "static_cast<uint64_t>(64));", "set_vector_mask(static_cast<uint64_t>(-1), static_cast<uint64_t>(-1));"):
        assert line in text


def test_set_vec_mask_needs_64_bit_ints():
    TA, GA = T(pl.DT_FP32), G(pl.DT_FP32)

    def kernel(a: GA):
        with pl.section_vector():
            pl.set_vec_mask(1 << 64, 0)
    with pytest.raises(CompileError, match="does not fit in 64 bits"):
        jit(kernel, "mask_bad")(rand(pl.DT_FP32, TILE))


# ---- the backend's per-axis names (pl.row_sum, pl.col_expand_sub, ...) ------------------------------


def test_per_axis_backend_names_match_the_dim_forms():
    """pl.row_max / pl.row_sum / pl.row_expand_sub / pl.row_expand_div / pl.col_expand_mul are the dim
    forms with the dim fixed (softmax and layernorm of the real system tests use them)."""
    F = pl.DT_FP32
    TA, GA = T(F), G(F)
    TR = pl.TileType(shape=[16, 1], dtype=F, target_memory=VEC, layout=pl.DN)
    TC = T(F, (1, 64))

    def kernel(x: GA, g: GA, y: GA):
        gx = pl.make_tile_group(type=TA, addrs=[0x0000], mutex_ids=[0])
        gy = pl.make_tile_group(type=TA, addrs=[0x2000], mutex_ids=[1])
        gt = pl.make_tile_group(type=TA, addrs=[0x4000], mutex_ids=[2])
        gr = pl.make_tile_group(type=TR, addrs=[0x6000], mutex_ids=[3])
        gg = pl.make_tile_group(type=TC, addrs=[0x6200], mutex_ids=[4])
        with pl.section_vector():
            tx, ty, tt, tr, tg = gx[0], gy[0], gt[0], gr[0], gg[0]
            pl.load(tx, x, [0, 0])
            pl.load(tg, g, [0, 0])
            pl.row_max(tr, tx, tt)
            pl.row_expand_sub(ty, tx, tr)
            pl.exp(ty, ty)
            pl.row_sum(tr, ty, tt)
            pl.row_expand_div(ty, ty, tr)
            pl.col_expand_mul(ty, ty, tg)
            pl.store(y, ty, [0, 0])
    x = rand(F, TILE, 23)
    g = rand(F, (1, 64), 24)
    y = np.zeros(TILE, np.float32)
    jit(kernel, "softmax_names")(x, g, y)
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    assert np.allclose(y, e / e.sum(1, keepdims=True) * g, rtol=1e-5, atol=1e-6)


def test_undeclared_column_tile_is_column_major():
    """A Vec [R, 1] tile without a layout is DN, as the real C++ backend declares every one-column tile
    (the real argmax page's [64, 1] INT32 result has no layout=)."""
    tt = pl.TileType(shape=[16, 1], dtype=pl.DT_INT32, target_memory=VEC)
    assert tt.effective_layout("a5") is pl.DN
    assert pl.TileType(shape=[1, 64], dtype=pl.DT_INT32, target_memory=VEC).effective_layout("a5") is pl.ND
    assert T(pl.DT_INT32, (16, 1)) == tt  # k_arg's dim=None result tile: declared without a layout
    F = pl.DT_FP16
    x = rand(F, TILE, 25)
    z = np.zeros((16, 1), np.int32)
    k_arg("argmax", F, None)(x, z)
    assert (z.ravel() == np.argmax(x.astype(np.float32), axis=1)).all()
