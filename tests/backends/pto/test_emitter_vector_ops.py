"""The C++ of the bitwise, compare/select, fused, index-reduction and mask ops, built and run on
PTO-ISA's CPU model (when PTO_ISA_ROOT is set) and compared with the simulator bit for bit."""
from __future__ import annotations

import numpy as np

import pypto_pro.language as pl
from pypto_pro.backends.pto import emit_kernel

from test_emitter import _run_on_pto_cpu, needs_pto

R, C = 16, 64
VEC = pl.MemorySpace.Vec
I32, F32, U8 = pl.DT_INT32, pl.DT_FP32, pl.DT_UINT8


def _t(dt, shape=(R, C), **kw):
    return pl.TileType(shape=list(shape), dtype=dt, target_memory=VEC, **kw)


@pl.jit(arch="a5")
def int_ops(a: pl.Tensor[[R, C], I32], b: pl.Tensor[[R, C], I32], n: pl.Tensor[[R, C], I32],
            o_and: pl.Tensor[[R, C], I32], o_ands: pl.Tensor[[R, C], I32], o_shl: pl.Tensor[[R, C], I32],
            o_shr: pl.Tensor[[R, C], I32], o_xor: pl.Tensor[[R, C], I32], o_sel: pl.Tensor[[R, C], I32],
            o_addc: pl.Tensor[[R, C], I32]):
    ta = pl.make_tile_group(type=_t(I32), addrs=[0x0000], mutex_ids=[0])
    tb = pl.make_tile_group(type=_t(I32), addrs=[0x1000], mutex_ids=[1])
    tn = pl.make_tile_group(type=_t(I32), addrs=[0x2000], mutex_ids=[2])
    to = pl.make_tile_group(type=_t(I32), addrs=[0x3000], mutex_ids=[3])
    tt = pl.make_tile_group(type=_t(I32), addrs=[0x4000], mutex_ids=[4])
    tm = pl.make_tile_group(type=_t(U8), addrs=[0x5000], mutex_ids=[5])
    with pl.section_vector():
        x, y, k, out, tmp, mask = ta[0], tb[0], tn[0], to[0], tt[0], tm[0]
        pl.load(x, a, [0, 0])
        pl.load(y, b, [0, 0])
        pl.load(k, n, [0, 0])
        pl.set_validshape(mask, [R, C // 8])  # the packed bytes: PTO-ISA's CPU model reads the mask by its valid shape
        pl.set_vec_mask(0, 64)
        pl.reset_mask()
        pl.and_(out, x, y)
        pl.store(o_and, out, [0, 0])
        pl.and_(out, x, 0x0F0F)
        pl.store(o_ands, out, [0, 0])
        pl.shl(out, x, k)
        pl.store(o_shl, out, [0, 0])
        pl.shr(out, x, k)
        pl.store(o_shr, out, [0, 0])
        pl.xor(out, x, y, tmp)
        pl.store(o_xor, out, [0, 0])
        pl.gt(mask, x, y)
        pl.select(out, mask, x, y, tmp)
        pl.store(o_sel, out, [0, 0])
        pl.addc(out, x, y, k)
        pl.store(o_addc, out, [0, 0])


@pl.jit(arch="a5")
def float_ops(a: pl.Tensor[[R, C], F32], b: pl.Tensor[[R, C], F32], o_sels: pl.Tensor[[R, C], F32],
              o_axpy: pl.Tensor[[R, C], F32], o_part: pl.Tensor[[R, C], F32], o_relu: pl.Tensor[[R, C], F32],
              o_amax: pl.Tensor[[R, 1], I32], o_amin: pl.Tensor[[1, C], I32]):
    ta = pl.make_tile_group(type=_t(F32), addrs=[0x0000], mutex_ids=[0])
    tb = pl.make_tile_group(type=_t(F32), addrs=[0x1000], mutex_ids=[1])
    to = pl.make_tile_group(type=_t(F32), addrs=[0x2000], mutex_ids=[2])
    tt = pl.make_tile_group(type=_t(F32), addrs=[0x3000], mutex_ids=[3])
    tm = pl.make_tile_group(type=_t(U8), addrs=[0x4000], mutex_ids=[4])
    tr = pl.make_tile_group(type=_t(I32, (R, 1), layout=pl.DN), addrs=[0x5000], mutex_ids=[5])
    tc = pl.make_tile_group(type=_t(I32, (1, C)), addrs=[0x5100], mutex_ids=[6])
    with pl.section_vector():
        x, y, out, tmp, mask, ri, ci = ta[0], tb[0], to[0], tt[0], tm[0], tr[0], tc[0]
        pl.load(x, a, [0, 0])
        pl.load(y, b, [0, 0])
        pl.set_validshape(mask, [R, C // 8])
        pl.argmax(ri, x, tmp, dim=0)
        pl.store(o_amax, ri, [0, 0])
        pl.argmin(ci, x, tmp, dim=1)
        pl.store(o_amin, ci, [0, 0])
        pl.le(mask, x, 0.5)
        pl.select(out, mask, x, -2.0, tmp)
        pl.store(o_sels, out, [0, 0])
        pl.load(out, b, [0, 0])
        pl.axpy(out, x, 0.75)
        pl.store(o_axpy, out, [0, 0])
        pl.partmax(out, x, y)
        pl.store(o_part, out, [0, 0])
        pl.add_relu(out, x, y)
        pl.store(o_relu, out, [0, 0])


def test_emitted_spellings():
    cp = int_ops.compile()
    src = emit_kernel(cp.programs, int_ops.name, int_ops.arch)["kernel.cpp"]
    for word in ("TAND(", "TANDS(", "TSHL(", "TSHR(", "TXOR(", "TCMP(", "CmpMode::GT", "TSEL(", "TADDC(",
                 "set_vector_mask("):
        assert word in src, word
    cp = float_ops.compile()
    src = emit_kernel(cp.programs, float_ops.name, float_ops.arch)["kernel.cpp"]
    for word in ("TROWARGMAX(", "TCOLARGMIN(", "TCMPS(", "CmpMode::LE", "TSELS(", "TAXPY(", "TPARTMAX(", "TRELU("):
        assert word in src, word


@needs_pto
def test_int_ops_run_on_pto_isa_cpu_model(tmp_path):
    rng = np.random.default_rng(0)
    a = rng.integers(-2 ** 31, 2 ** 31 - 1, (R, C), dtype=np.int32)
    b = rng.integers(-2 ** 31, 2 ** 31 - 1, (R, C), dtype=np.int32)
    n = rng.integers(0, 31, (R, C), dtype=np.int32)
    outs = {f"o_{k}": np.zeros((R, C), np.int32) for k in ("and", "ands", "shl", "shr", "xor", "sel", "addc")}
    got, sim = _run_on_pto_cpu(tmp_path, int_ops, {"a": a, "b": b, "n": n, **outs}, block_dim=1)
    for name in outs:
        assert np.array_equal(got[name], sim[name]), name
    assert np.array_equal(sim["o_sel"], np.maximum(a, b))


@needs_pto
def test_float_ops_run_on_pto_isa_cpu_model(tmp_path):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((R, C)).astype(np.float32)
    b = rng.standard_normal((R, C)).astype(np.float32)
    outs = {f"o_{k}": np.zeros((R, C), np.float32) for k in ("sels", "axpy", "part", "relu")}
    outs["o_amax"] = np.zeros((R, 1), np.int32)
    outs["o_amin"] = np.zeros((1, C), np.int32)
    got, sim = _run_on_pto_cpu(tmp_path, float_ops, {"a": a, "b": b, **outs}, block_dim=1)
    for name in outs:
        assert np.array_equal(got[name], sim[name]), name
