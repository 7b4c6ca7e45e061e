"""The C++ the PTO backend emits for pl.system calls, as the real backend spells them: cross-core
modes (set_intra_block / wait_intra_block on a5 for INTRA_BLOCK and UNICAST_BLOCK, the FFTS
otherwise), bar_* barriers, sync_all (hard: SYNCALL<T>(); soft: SYNCALL<SyncAllMode::Soft, T>(gm counter, cores),
built and run on PTO-ISA's CPU model), and the per-engine block index."""
from __future__ import annotations

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.backends.pto import emit_kernel

import test_emitter as te

P = pl.PipeType
M = pl.CrossCoreSyncMode
MAT = pl.TileType([16, 16], pl.DT_FP16, pl.MemorySpace.Mat)


def _cpp(fn, arch: str) -> str:
    k = pl.jit(fn, arch=arch, auto_mutex=False)
    return emit_kernel(k.compile().programs, k.name, k.arch)["kernel.cpp"]


def cross(mode):
    def kernel(a: pl.Tensor[[16, 16], pl.DT_FP16], out: pl.Tensor[[16, 16], pl.DT_FP16]):
        am = pl.make_tile(MAT, addr=0, size=512)
        with pl.section_cube():
            pl.load(am, a, [0, 0])
            pl.system.set_cross_core(pipe=P.MTE2, event_id=3, sync_mode=mode)
            pl.system.wait_cross_core(pipe=P.MTE2, event_id=4, sync_mode=mode)
        with pl.section_vector():
            pl.system.wait_cross_core(pipe=P.V, event_id=3, sync_mode=mode)
            pl.system.set_cross_core(pipe=P.MTE3, event_id=4, sync_mode=mode)
    return kernel


def test_a5_intra_block_addresses_both_vector_cores_from_the_cube():
    src = _cpp(cross(M.INTRA_BLOCK), "a5")
    assert "set_intra_block(PIPE_MTE2, 3); set_intra_block(PIPE_MTE2, (3) + 16);" in src
    assert "wait_intra_block(PIPE_MTE2, 4); wait_intra_block(PIPE_MTE2, (4) + 16);" in src
    assert "wait_intra_block(PIPE_V, 3);" in src and "set_intra_block(PIPE_MTE3, 4);" in src


def test_a5_unicast_block_is_one_call():
    src = _cpp(cross(M.UNICAST_BLOCK), "a5")
    assert "set_intra_block(PIPE_MTE2, 3);" in src and "(3) + 16" not in src
    assert "wait_intra_block(PIPE_MTE2, 4);" in src and "(4) + 16" not in src


@pytest.mark.parametrize("arch,wait", [("a5", "wait_flag_dev(PIPE_V, 3);"), ("a2a3", "wait_flag_dev(3);")])
def test_group_modes_go_through_the_ffts_with_their_mode(arch, wait):
    def kernel(a: pl.Tensor[[16, 16], pl.DT_FP16]):
        with pl.section_vector():
            pl.system.set_cross_core(pipe=P.MTE3, event_id=3, sync_mode=M.INTER_BLOCK)
            pl.system.wait_cross_core(pipe=P.V, event_id=3, sync_mode=M.INTER_BLOCK)
            pl.system.set_cross_core(pipe=P.MTE3, event_id=5, sync_mode=M.INTER_SUBBLOCK)
            pl.system.wait_cross_core(pipe=P.V, event_id=5, sync_mode=M.INTER_SUBBLOCK)
    src = _cpp(kernel, arch)
    assert "ffts_cross_core_sync(PIPE_MTE3, pp_ffts_msg(0x0, 3));" in src
    assert "ffts_cross_core_sync(PIPE_MTE3, pp_ffts_msg(0x1, 5));" in src
    assert wait in src


def test_a2a3_intra_block_keeps_mode_2():
    src = _cpp(cross(M.INTRA_BLOCK), "a2a3")
    assert "ffts_cross_core_sync(PIPE_MTE2, pp_ffts_msg(0x2, 3));" in src and "wait_flag_dev(3);" in src


@pytest.mark.parametrize("arch", ["a5", "a2a3"])
def test_barriers_and_hard_sync_all(arch):
    def kernel(a: pl.Tensor[[16, 16], pl.DT_FP16]):
        with pl.section_vector():
            pl.system.bar_mte2()
            pl.system.bar_mte3()
            pl.system.bar_all()
            pl.system.sync_all(core_type=pl.SyncCoreType.AIV_ONLY)
    src = _cpp(kernel, arch)
    for line in ("pipe_barrier(PIPE_MTE2);", "pipe_barrier(PIPE_MTE3);", "pipe_barrier(PIPE_ALL);",
                 "SYNCALL<SyncCoreType::AIVOnly>();"):
        assert line in src, line


VEC = pl.TileType([16, 64], pl.DT_FP32, pl.MemorySpace.Vec)


def _soft(x: pl.Tensor[[16, 64], pl.DT_FP32], ws: pl.Tensor[[8], pl.DT_INT32], out: pl.Tensor[[16, 64], pl.DT_FP32]):
    t = pl.make_tile(VEC, addr=0)
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.system.sync_all([ws, t, 4], core_type=pl.SyncCoreType.AIV_ONLY, mode=pl.SyncAllMode.SOFT)
        pl.store(out, t, [0, 0])


@pytest.mark.parametrize("arch", ["a5", "a2a3"])
def test_soft_sync_all_is_ptoisa_gm_counter_barrier(arch):
    src = _cpp(_soft, arch)
    assert ("GlobalTensor<int32_t, pto::Shape<>, pto::Stride<>> pp_sync_ws(reinterpret_cast<__gm__ int32_t*>(ws)); "
            "SYNCALL<SyncAllMode::Soft, SyncCoreType::AIVOnly>(pp_sync_ws, static_cast<int32_t>(4));") in src


@te.needs_pto
def test_soft_sync_all_builds_and_runs_on_the_cpu_model(tmp_path):
    x = np.arange(16 * 64, dtype=np.float32).reshape(16, 64)
    out = np.zeros_like(x)
    got, sim = te._run_on_pto_cpu(tmp_path, pl.jit(_soft, arch="a5", auto_mutex=False),
                                  {"x": x, "ws": np.zeros(8, np.int32), "out": out}, block_dim=1)
    np.testing.assert_array_equal(got["out"], x)
    np.testing.assert_array_equal(sim["out"], x)


def test_block_index_per_engine():
    def kernel(a: pl.Tensor[[64, 16], pl.DT_FP16], ids: pl.Tensor[[8], pl.DT_INT32]):
        am = pl.make_tile(MAT, addr=0, size=512)
        with pl.section_cube():
            pl.load(am, a, [pl.get_block_idx() * 16, 0])
        with pl.section_vector():
            pl.setval(ids, pl.get_block_idx(), pl.get_subblock_num())
    src = _cpp(kernel, "a5")
    cube, vec = src.split("__DAV_VEC__", 1) if src.index("__DAV_CUBE__") < src.index("__DAV_VEC__") else (None, None)
    assert cube is not None
    assert "const int64_t block_idx = get_block_idx();" in cube
    assert "const int64_t block_idx = get_block_idx() * get_subblockdim() + get_subblockid();" in vec
    assert "const int64_t subblock_num = get_subblockdim();" in vec


def dcci_kernel(x: pl.Tensor[[16, 64], pl.DT_FP32], out: pl.Tensor[[16, 64], pl.DT_FP32]):
    t = pl.make_tile_group(type=pl.TileType([16, 64], pl.DT_FP32, pl.MemorySpace.Vec), addrs=0, mutex_ids=[0])[0]
    pl.system.dcci(x, [2, 8], cache_line=pl.CacheLine.SINGLE_CACHE_LINE)
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.system.dcci(t, 4, cache_line=pl.CacheLine.ENTIRE_DATA_CACHE)
        pl.store(out, t, [0, 0])


def test_dcci_is_spelled_as_the_real_backend():
    k = pl.jit(dcci_kernel, arch="a5", auto_mutex=True)
    src = emit_kernel(k.compile().programs, k.name, k.arch)["kernel.cpp"]
    assert "dcci(reinterpret_cast<__gm__ void*>(x + (2) * 64 + (8)), SINGLE_CACHE_LINE, CACHELINE_OUT);" in src
    assert "dcci(reinterpret_cast<__ubuf__ void*>(t[0].data() + 4), ENTIRE_DATA_CACHE, CACHELINE_UB);" in src


def test_dcci_builds_and_runs_on_pto_isa_cpu_model(tmp_path):
    import numpy as np
    from test_emitter import _run_on_pto_cpu, needs_pto  # noqa: F401
    import os
    if not os.environ.get("PTO_ISA_ROOT"):
        pytest.skip("set PTO_ISA_ROOT to build and run the emitted C++ on PTO-ISA's CPU model")
    x = np.arange(16 * 64, dtype=np.float32).reshape(16, 64)
    got, sim = _run_on_pto_cpu(tmp_path, pl.jit(dcci_kernel, arch="a5", auto_mutex=True), {"x": x, "out": np.zeros_like(x)},
                               block_dim=1)
    assert np.array_equal(got["out"], x) and np.array_equal(sim["out"], x)
