"""Kernels compiled and run for every arch name, and the checks that read the arch tables (capacity,
alignment, event ids, direct Cube <-> Vector paths) using the real 950 numbers."""
from __future__ import annotations

import re

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import CompileError
from pypto_pro.arch import A5_VARIANTS, accepted_names, resolve_arch
from kernels import make_acc_to_vec_split

DYN = pl.DYNAMIC
Vec = pl.MemorySpace.Vec
A5_NAMES = ["a5", *A5_VARIANTS]
A2A3_NAMES = ["a2", "a3", "a2a3"]


def add_exp(x: pl.Tensor[[DYN, DYN], pl.DT_FP32], y: pl.Tensor[[DYN, DYN], pl.DT_FP32],
            z: pl.Tensor[[DYN, DYN], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=Vec)
    a = pl.make_tile_group(type=tt, addrs=[0x0000], mutex_ids=[0])[0]  # groups: auto sync orders their uses
    b = pl.make_tile_group(type=tt, addrs=[0x4000], mutex_ids=[1])[0]
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), x.shape[0] // 64, pl.get_block_num()):
            pl.load(a, x, [i * 64, 0])
            pl.load(b, y, [i * 64, 0])
            pl.add(a, a, b)
            pl.exp(a, a)
            pl.store(z, a, [i * 64, 0])


@pytest.mark.parametrize("name", accepted_names())
def test_a_vector_kernel_runs_for_every_arch_name(name):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((256, 64)).astype(np.float32) * 0.1
    y = rng.standard_normal((256, 64)).astype(np.float32) * 0.1
    z = np.zeros_like(x)
    kernel = pl.jit(add_exp, arch=name)
    report = kernel[None, 4](x, y, z)
    np.testing.assert_allclose(z, np.exp(x + y), rtol=1e-6)
    model = resolve_arch(name)
    assert kernel.arch is model
    assert report.arch == model.name and report.clock_mhz == model.clock_mhz.value
    assert report.cycles > 0 and not report.faults


def test_the_a5_variants_time_the_same_kernel_differently():
    """Same code, different chips: the GM cap (HBM share) and core count come from each config."""
    m = 64 * 256
    x = np.ones((m, 64), np.float32)
    us = {}
    for name in ("950PR_9589", "950DT_9581", "a3"):
        us[name] = pl.jit(add_exp, arch=name)[None, 256](x, x, np.zeros_like(x)).us
    assert us["950DT_9581"] < us["950PR_9589"]  # 4.2 TB/s vs 1.7 TB/s of HBM
    assert len(set(us.values())) == 3


def make_acc_to_vec(arch: str):
    return pl.jit(make_acc_to_vec_split(), arch=arch)  # the direct L0C -> UB path, half the rows into each AIV's UB


@pytest.mark.parametrize("name", A5_NAMES)
def test_the_direct_acc_to_vec_path_runs_on_every_950(name):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((32, 32)).astype(np.float16)
    w = rng.standard_normal((32, 32)).astype(np.float16)
    out = np.full((32, 32), np.nan, np.float32)
    report = make_acc_to_vec(name)[None, 1](x, w, out)
    exact = x.astype(np.float64) @ w.astype(np.float64)
    np.testing.assert_allclose(out, exact, rtol=1e-5, atol=1e-4)
    assert report.path_bytes.get("Acc->Vec", 0) > 0


@pytest.mark.parametrize("name", A2A3_NAMES)
def test_the_direct_acc_to_vec_path_is_refused_on_a2_and_a3(name):
    with pytest.raises(CompileError, match="a2a3 has no Acc -> Vec path"):
        make_acc_to_vec(name).compile()


# ---- capacity, alignment and ids from the new tables ---------------------------------------------------


def _vec_tile(rows: int, cols: int, addr: int):
    def k(x: pl.Tensor[[DYN, DYN], pl.DT_FP32]):
        a = pl.make_tile(pl.TileType(shape=[rows, cols], dtype=pl.DT_FP32, target_memory=Vec), addr=addr)
        with pl.section_vector():
            pl.load(a, x, [0, 0])
    return k


def test_a_tile_that_fit_the_old_assumed_256k_ub_does_not_fit_the_real_248k():
    # [64, 1000] fp32 = 256000 bytes: under 262144 (the 256 KiB assumed before), over 253952 (248 KiB)
    with pytest.raises(CompileError, match=re.escape("tile of 256000 bytes at 0x0 does not fit Vec "
                                                     "(253952 bytes on a5)")):
        pl.jit(_vec_tile(64, 1000, 0), arch="a5").compile()
    pl.jit(_vec_tile(248, 256, 0), arch="950DT_9581").compile()      # exactly 253952 bytes: fits
    with pytest.raises(CompileError, match="does not fit Vec"):
        pl.jit(_vec_tile(248, 256, 32), arch="a5").compile()         # 32 bytes over
    with pytest.raises(CompileError, match=re.escape("(196608 bytes on a2a3)")):
        pl.jit(_vec_tile(248, 256, 0), arch="a3").compile()


def test_vec_alignment_is_32_bytes_on_a5():
    pl.jit(_vec_tile(8, 64, 0x20), arch="a5").compile()
    with pytest.raises(CompileError, match="not aligned to 32 bytes, as Vec requires on a5"):
        pl.jit(_vec_tile(8, 64, 0x10), arch="a5").compile()


def _flag(event_id: int):
    def k(x: pl.Tensor[[DYN, DYN], pl.DT_FP16]):
        with pl.section_vector():
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=event_id)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=event_id)
    return k


def test_event_ids_0_to_15_on_a5_and_0_to_7_on_a2a3():
    pl.jit(_flag(15), arch="a5", auto_mutex=False).compile()
    with pytest.raises(CompileError, match="event id 16 is outside 0-15 on a5"):
        pl.jit(_flag(16), arch="a5", auto_mutex=False).compile()
    with pytest.raises(CompileError, match="event id 8 is outside 0-7 on a2a3"):
        pl.jit(_flag(8), arch="a3", auto_mutex=False).compile()
