"""Unit-flag phases and the fixpipe store options in the emitted C++ (a5): ``TMATMUL<AccPhase::X>`` /
``TMATMUL_ACC<AccPhase::X>``, ``TSTORE<[STPhase,] tile, gm, AtomicType, ReluPreMode>(gm, tile[, deq])``
with a constant, run-time fp32 or run-time bit-pattern per-tensor scale. Built and run on PTO-ISA's
CPU model (when PTO_ISA_ROOT is set) and compared with the simulator; an atomic add over two blocks
accumulates into GM that already holds data."""
from __future__ import annotations

import struct

import numpy as np
import pytest

import pypto_pro.language as pl
from cube_kernels import matmul_from_gm, matmul_tiles
from test_emitter import _emit, _run_on_pto_cpu, needs_pto

T = 64
MS = pl.MemorySpace


def _make(out_dt, *, phase=False, relu=False, atomic=False, scale=None, k_split=True):
    """C = A @ B (K = 2 * T in two chunks, the second accumulating); ``scale``: None, a float, "f32"
    (a run-time fp32 from GM) or "bits" (a run-time int64 word from GM). With ``atomic`` each block
    adds its product into ``out``."""
    relu_v = pl.ReluPreMode.NormalRelu if relu else None
    phase_v = pl.STPhase.Final if phase else None
    atomic_v = pl.AtomicType.AtomicAdd if atomic else pl.AtomicType.AtomicNone
    scale_v = scale if isinstance(scale, float) else None
    def kernel(a: pl.Tensor[[T, 2 * T], pl.DT_FP16], b: pl.Tensor[[2 * T, T], pl.DT_FP16],
               sc: pl.Tensor[[1, 2], pl.DT_FP32], bits: pl.Tensor[[1, 2], pl.DT_INT64],
               out: pl.Tensor[[T, T], out_dt]):
        a1 = pl.make_tile_group(type=pl.TileType([T, T], pl.DT_FP16, MS.Mat), addrs=[0, 0x2000], mutex_ids=[0, 1])
        b1 = pl.make_tile_group(type=pl.TileType([T, T], pl.DT_FP16, MS.Mat), addrs=[0x8000, 0xA000],
                                mutex_ids=[2, 3])
        xa = pl.make_tile_group(type=pl.TileType([T, T], pl.DT_FP16, MS.Left), addrs=[0, 0x2000], mutex_ids=[4, 5])
        xb = pl.make_tile_group(type=pl.TileType([T, T], pl.DT_FP16, MS.Right), addrs=[0, 0x2000], mutex_ids=[6, 7])
        acc = pl.make_tile_group(type=pl.TileType([T, T], pl.DT_FP32, MS.Acc), addrs=0, mutex_ids=[8])[0]
        with pl.section_cube():
            for kc in pl.range(0, 2, 1):
                x, y, xl, yr = a1.next(), b1.next(), xa.next(), xb.next()
                pl.load(x, a, [0, kc * T])
                pl.load(y, b, [kc * T, 0])
                pl.move(xl, x)
                pl.move(yr, y)
                if kc == 0:
                    if phase:
                        pl.matmul(acc, xl, yr, phase=pl.AccPhase.Partial)
                    else:
                        pl.matmul(acc, xl, yr)
                else:
                    if phase:
                        pl.matmul_acc(acc, acc, xl, yr, phase=pl.AccPhase.Final)
                    else:
                        pl.matmul_acc(acc, acc, xl, yr)
            if scale == "f32":
                pl.store(out, acc, [0, 0], relu_pre_mode=relu_v, phase=phase_v, atomic=atomic_v, scale=sc[0, 1])
            elif scale == "bits":
                pl.store(out, acc, [0, 0], relu_pre_mode=relu_v, phase=phase_v, atomic=atomic_v, scale=bits[0, 1])
            else:
                pl.store(out, acc, [0, 0], relu_pre_mode=relu_v, phase=phase_v, atomic=atomic_v, scale=scale_v)
    return pl.jit(kernel, auto_mutex=True, arch="a5")


CASES = {
    "phase": dict(out_dt=pl.DT_FP32, phase=True),
    "relu": dict(out_dt=pl.DT_FP32, relu=True),
    "relu_phase_fp16": dict(out_dt=pl.DT_FP16, relu=True, phase=True),
    "atomic": dict(out_dt=pl.DT_FP32, atomic=True),
    "scale_const_fp16": dict(out_dt=pl.DT_FP16, scale=0.125),
    "scale_f32_int8": dict(out_dt=pl.DT_INT8, scale="f32"),
    "scale_bits_fp16": dict(out_dt=pl.DT_FP16, scale="bits"),
}


def test_options_are_template_arguments():
    src = _emit(_make(**CASES["relu_phase_fp16"]))[2]["kernel.cpp"]
    assert "TMATMUL<AccPhase::Partial>(" in src and "TMATMUL_ACC<AccPhase::Final>(" in src
    assert "TSTORE<STPhase::Final, acc_t, decltype(gm), AtomicType::AtomicNone, ReluPreMode::NormalRelu>(gm, acc[0]);" \
        in src
    src = _emit(_make(**CASES["scale_f32_int8"]))[2]["kernel.cpp"]
    assert "__builtin_bit_cast(uint32_t, static_cast<float>(" in src and "(1ULL << 46)" in src


@needs_pto
@pytest.mark.parametrize("name", sorted(CASES))
def test_fixpipe_store_options_match_the_simulator(tmp_path, name):
    case = CASES[name]
    rng = np.random.default_rng(5)
    a = rng.integers(-3, 4, (T, 2 * T)).astype(np.float16)
    b = rng.integers(-3, 4, (2 * T, T)).astype(np.float16)
    sc = np.array([[0.0, 0.0625]], np.float32)
    bits = np.array([[0, struct.unpack("<I", struct.pack("<f", 0.25))[0]]], np.int64)
    out_np = {pl.DT_FP32: np.float32, pl.DT_FP16: np.float16, pl.DT_INT8: np.int8}[case["out_dt"]]
    out = (rng.integers(-4, 5, (T, T)) if case.get("atomic") else np.zeros((T, T))).astype(out_np)
    blocks = 2 if case.get("atomic") else 1
    got, sim = _run_on_pto_cpu(tmp_path, _make(**case), {"a": a, "b": b, "sc": sc, "bits": bits, "out": out},
                               block_dim=blocks)
    assert np.abs(sim["out"].astype(np.float32)).max() > 1
    np.testing.assert_array_equal(got["out"], sim["out"])


def _acc_to_vec(how: str):
    """An Acc -> Vec fixpipe move (a5, mixed kernel): per-tensor scale, at an offset with a scale / a
    Scaling tile, or with relu."""
    vr = T if how == "scale" else 32
    def kernel(a: pl.Tensor[[T, T], pl.DT_FP16], b: pl.Tensor[[T, T], pl.DT_FP16],
               fp_params: pl.Tensor[[1, T], pl.DT_INT64], sc: pl.Tensor[[1, 2], pl.DT_FP32],
               out: pl.Tensor[[T, T], pl.DT_FP16]):
        vt = pl.make_tile(pl.TileType([vr, vr], pl.DT_FP16, MS.Vec), addr=0)
        tiles = matmul_tiles(T, ids=(0, 1, 3, 4, 5))
        f1 = pl.make_tile_group(type=pl.TileType([1, 32], pl.DT_INT64, MS.Mat, layout=pl.ND), addrs=0x10000,
                                mutex_ids=[2])[0]
        fpt = pl.make_tile_group(type=pl.TileType([1, 32], pl.DT_INT64, MS.Scaling), addrs=0, mutex_ids=[6])[0]
        with pl.section_cube():
            acc = matmul_from_gm(tiles, a, b)
            pl.load(f1, fp_params, [0, 0])
            pl.move(fpt, f1)
            if how == "scale":
                pl.move(vt, acc, scale=0.5, acc_to_vec_mode=pl.AccToVecMode.SingleModeVec0)
            elif how == "offset_scale":
                pl.move(vt, acc, offset=[16, 32], scale=sc[0, 1], acc_to_vec_mode=pl.AccToVecMode.SingleModeVec0)
            elif how == "offset_tile":
                pl.move(vt, acc, offset=[16, 32], scale=fpt, acc_to_vec_mode=pl.AccToVecMode.SingleModeVec0)
            else:
                pl.move(vt, acc, offset=[0, 0], acc_to_vec_mode=pl.AccToVecMode.SingleModeVec0,
                        relu_pre_mode=pl.ReluPreMode.NormalRelu)
            pl.system.set_cross_core(pipe=pl.PipeType.FIX, event_id=0)
        with pl.section_vector():
            pl.system.wait_cross_core(pipe=pl.PipeType.MTE3, event_id=0)
            if pl.get_subblock_idx() == 0:
                pl.store(out, vt, [0, 0])
    return pl.jit(kernel, auto_mutex=True, arch="a5")


@pytest.mark.parametrize("how,expect", [
    ("scale", "ReluPreMode::NoRelu>(vt, acc[0], static_cast<uint64_t>(1056964608ULL));"),
    ("offset_scale", "TEXTRACT<vt_t, acc_t, AccToVecMode::SingleModeVec0, ReluPreMode::NoRelu>(vt, acc[0], "
                     "static_cast<uint64_t>(static_cast<uint64_t>(__builtin_bit_cast(uint32_t, static_cast<float>("),
    ("offset_tile", "TEXTRACT<vt_t, acc_t, fpt_t, AccToVecMode::SingleModeVec0, ReluPreMode::NoRelu>(vt, acc[0], "
                    "fpt[0], 16, 32);"),
    ("relu", "TEXTRACT<vt_t, acc_t, AccToVecMode::SingleModeVec0, ReluPreMode::NormalRelu>(vt, acc[0], 0, 0);"),
])
def test_acc_to_vec_fixpipe_moves_are_spelled_and_build_against_pto_isa(tmp_path, how, expect):
    """A mixed kernel cannot run on the CPU model; its C++ is type-checked against PTO-ISA's headers
    (-fsyntax-only, the CPU-model #error of the kernel entry removed) when PTO_ISA_ROOT is set."""
    import os
    import shutil
    import subprocess
    src = _emit(_acc_to_vec(how))[2]["kernel.cpp"]
    assert expect in src, "\n".join(line for line in src.splitlines() if "TEXTRACT" in line or "TMOV" in line)
    root, cxx = os.environ.get("PTO_ISA_ROOT"), shutil.which("clang++-19") or shutil.which("clang++")
    if not root or not cxx:
        pytest.skip("set PTO_ISA_ROOT (and install clang++) to type-check the C++")
    (tmp_path / "kernel.cpp").write_text("\n".join(line for line in src.splitlines()
                                                   if not line.startswith('#error "mixed Cube + Vector')))
    build = subprocess.run([cxx, "-std=c++20", "-fsyntax-only", "-D__CPU_SIM", f"-I{root}/include",
                            "-Wno-macro-redefined", "-Wno-ignored-attributes", str(tmp_path / "kernel.cpp")],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-3000:]


def _vec_atomic(x: pl.Tensor[[16, 64], pl.DT_FP32], out: pl.Tensor[[16, 64], pl.DT_FP32]):
    t = pl.make_tile_group(type=pl.TileType([16, 64], pl.DT_FP32, MS.Vec), addrs=0, mutex_ids=[0])[0]
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.store(out, t, [0, 0], atomic=pl.AtomicType.AtomicAdd)


def test_vec_atomic_store_has_no_relu_argument():
    src = _emit(pl.jit(_vec_atomic, auto_mutex=True, arch="a5"))[2]["kernel.cpp"]
    assert "TSTORE<t_t, decltype(gm), AtomicType::AtomicAdd>(gm, t[0]);" in src


@needs_pto
def test_vec_atomic_store_over_every_core_matches_the_simulator(tmp_path):
    x = np.arange(16 * 64, dtype=np.float32).reshape(16, 64) / 8
    out = np.full((16, 64), 1.5, np.float32)
    got, sim = _run_on_pto_cpu(tmp_path, pl.jit(_vec_atomic, auto_mutex=True, arch="a5"), {"x": x, "out": out},
                               block_dim=2)
    np.testing.assert_array_equal(sim["out"], 1.5 + 2 * x)  # each of the 2 blocks adds x once
    np.testing.assert_array_equal(got["out"], sim["out"])
