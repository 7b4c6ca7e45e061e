"""A VF call on the simulator: one V-pipe instruction whose UB footprint feeds the race and
never-written checkers, whose cost is its body's, and whose mistakes are located errors."""
from __future__ import annotations

import pytest
import torch

import pypto_pro.language as pl
from pypto_pro import CompileError, RaceError, SimulationError, UninitializedReadError
from pypto_pro.language import Vf as vf

from vf_kernels import to_mte3, to_v, vf_kernel

TT = pl.TileType(shape=[1, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
F32 = pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32]


def one_in(body, **jit_options):
    """load a [1, 64] fp32 tile, hand off to V, body(ta, to), hand off to MTE3, store to."""
    return vf_kernel(body, [(pl.DT_FP32, [1, 64])], (pl.DT_FP32, [1, 64]), dynamic=True, **jit_options)


@pl.vector_function
def double(src, dst):
    m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    x = vf.load_align(src, 0)
    y = vf.add(x, x, m)
    vf.store_align(dst, y, m)


def k_missing_sync(a: F32, out: F32):
    ta = pl.make_tile(TT, addr=0, size=256)
    to = pl.make_tile(TT, addr=256, size=256)
    with pl.section_vector():
        pl.load(ta, a, [0, 0])  # MTE2 writes ta ...
        double(ta, to)  # ... while the VF body on V reads it: no MTE2 -> V sync
        to_mte3()
        pl.store(out, to, [0, 0])


def k_unloaded(a: F32, out: F32):
    ta = pl.make_tile(TT, addr=0, size=256)
    to = pl.make_tile(TT, addr=256, size=256)
    with pl.section_vector():
        double(ta, to)  # ta was never loaded
        to_mte3()
        pl.store(out, to, [0, 0])


def line_of(marker: str) -> int:
    """The line of this file holding ``marker`` (so the tests do not hard-code line numbers)."""
    with open(__file__) as fh:
        return next(i for i, text in enumerate(fh, 1) if marker in text and "line_of(" not in text)


def args():
    return torch.randn(1, 64), torch.zeros(1, 64)


def test_synced_kernel_computes_and_prices_the_body():
    a, out = args()
    report = one_in(double).options(check="raise")[None, 1](a, out)
    assert torch.equal(out, a + a)
    assert report is None or getattr(report, "faults", []) == []


def test_missing_sync_between_mte2_load_and_vf_is_a_race_naming_both_lines():
    a, out = args()
    with pytest.raises(RaceError) as exc:
        pl.jit(k_missing_sync).options(check="raise")[None, 1](a, out)
    text = str(exc.value)
    assert "load" in text and "vf_call" in text
    assert f"test_vf_call.py:{line_of('# MTE2 writes ta')}" in text
    assert f"test_vf_call.py:{line_of('# ... while the VF body')}" in text


def test_vf_reading_a_tile_nothing_wrote_is_reported():
    a, out = args()
    with pytest.raises(UninitializedReadError):
        pl.jit(k_unloaded).options(check="raise")[None, 1](a, out)


@pl.vector_function
def past_end(src, dst):
    m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    x = vf.load_align(src, 64 * 1024)  # 256 KiB past the tile: beyond the UB
    vf.store_align(dst, x, m)


def test_access_outside_the_ub_is_a_located_simulation_error():
    a, out = args()
    with pytest.raises(SimulationError) as exc:
        one_in(past_end)[None, 1](a, out)
    assert f"test_vf_call.py:{line_of('# 256 KiB past the tile')}" in str(exc.value)
    assert "vf.load_align" in str(exc.value) and "outside the" in str(exc.value)


@pl.vector_function
def into_next_tile(src, dst):
    m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    x = vf.load_align(src, 0)
    vf.store_align(dst, x, x, m, dist=pl.StoreDist.INTLV)  # 512 bytes: dst and the tile after it


def test_a_store_past_its_tile_writes_the_next_one_as_on_the_chip():
    def k(a: F32, out: F32):
        ta = pl.make_tile(TT, addr=0, size=256)
        t0 = pl.make_tile(TT, addr=256, size=256)
        t1 = pl.make_tile(TT, addr=512, size=256)
        with pl.section_vector():
            pl.load(ta, a, [0, 0])
            to_v()
            into_next_tile(ta, t0)
            to_mte3()
            pl.store(out, t1, [0, 0])
    a, out = args()
    pl.jit(k).options(check="raise")[None, 1](a, out)
    assert torch.equal(out[0], a[0, 32:].repeat_interleave(2))


@pl.vector_function
def misaligned(src, dst):
    m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    x = vf.load_align(src, 0)
    vf.store_align(dst + 1, x, m)  # 4 bytes past a 32-byte boundary


def test_misaligned_store_is_reported():
    TT2 = pl.TileType(shape=[1, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)

    def k(a: F32, out: F32):
        ta = pl.make_tile(TT, addr=0, size=256)
        to = pl.make_tile(TT2, addr=256, size=512)
        with pl.section_vector():
            pl.load(ta, a, [0, 0])
            to_v()
            misaligned(ta, to)
    a, _ = args()
    with pytest.raises(SimulationError) as exc:
        pl.jit(k)[None, 1](a, torch.zeros(1, 128))
    assert "not 32-byte aligned" in str(exc.value)


@pl.vector_function
def result_not_assigned(src, dst):
    m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    x = vf.load_align(src, 0)
    vf.add(x, x, m)  # not assigned


def test_result_op_used_as_a_statement_is_a_located_compile_error():
    with pytest.raises(CompileError) as exc:
        one_in(result_not_assigned)[None, 1](*args())
    assert "assignment form" in str(exc.value)
    assert f"test_vf_call.py:{line_of('# not assigned')}:5" in str(exc.value)


def test_vf_op_outside_a_vector_function_is_a_compile_error():
    def k(a: F32, out: F32):
        ta = pl.make_tile(TT, addr=0, size=256)
        with pl.section_vector():
            m = vf.create_mask()  # noqa: F841
    with pytest.raises(CompileError) as exc:
        pl.jit(k)[None, 1](*args())
    assert "@pl.vector_function" in str(exc.value)


def test_missing_mask_is_a_compile_error():
    @pl.vector_function
    def body(src, dst):
        x = vf.load_align(src, 0)
        vf.store_align(dst, x)

    with pytest.raises(CompileError) as exc:
        one_in(body)[None, 1](*args())
    assert "mask register is required" in str(exc.value)


def test_cpp_backend_writes_the_vector_function_as_a_vec_scope(tmp_path):
    from pypto_pro.runtime.build_cache import BuildCache
    kernel = one_in(double, arch="a5")  # the C++ of VF bodies: tests/backends/pto/test_vf_emit.py
    cpp = (kernel.emit(cache=BuildCache(tmp_path)) / "kernel.cpp").read_text()
    assert "__VEC_SCOPE__ {  // @pl.vector_function double" in cpp and "vadd(" in cpp
