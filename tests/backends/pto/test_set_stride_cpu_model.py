"""pl.set_stride in the emitted C++: a per-program descriptor (flag, row step, column step) that every
later GlobalTensor window of the tensor walks. Built and run on PTO-ISA's CPU model (when
PTO_ISA_ROOT is set) and bit-compared with the simulator: run-time row strides read from GM, a load
issued before the descriptor changes, a column stride that transposes the walk, a strided store, and
the real ST kernel's two-line gather."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import pypto_pro.language as pl
from test_emitter import _emit, _run_on_pto_cpu, needs_pto

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "ops"))
import test_set_stride as ss  # noqa: E402

R, C, Vec = ss.R, ss.C, pl.MemorySpace.Vec


def _transpose_walk(x: pl.Tensor[[R, C], pl.DT_FP32], out: pl.Tensor[[C, 8], pl.DT_FP32]):
    t = pl.make_tile_group(type=pl.TileType(shape=[C, 8], dtype=pl.DT_FP32, target_memory=Vec), addrs=0,
                           mutex_ids=[0])[0]
    with pl.section_vector():
        pl.set_stride(x, [1, C])
        pl.load(t, x, [0, 0])
        pl.store(out, t, [0, 0])


def _strided_store(x: pl.Tensor[[2, C], pl.DT_FP32], out: pl.Tensor[[R, C], pl.DT_FP32]):
    t = pl.make_tile_group(type=pl.TileType(shape=[2, C], dtype=pl.DT_FP32, target_memory=Vec), addrs=0,
                           mutex_ids=[0])[0]
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.set_stride(out, [5 * C, 1])
        pl.store(out, t, [1, 0])


def test_set_stride_is_a_descriptor_the_later_windows_use():
    _, _, out = _emit(ss._gather())
    src = out["kernel.cpp"]
    assert "#error" not in src
    assert "using x_gm_t = GlobalTensor<float, Shape<1, 1, 1, DYNAMIC, DYNAMIC>, Stride<1, 1, 1, DYNAMIC, DYNAMIC>>" in src
    assert "using out_gm_t = GlobalTensor<float, Shape<1, 1, 1, DYNAMIC, DYNAMIC>, Stride<1, 1, 1, DYNAMIC, 1>>" in src
    assert "bool x_strided = false; int64_t x_row_stride = 0, x_col_stride = 0;" in src
    assert "x_strided = true; x_row_stride = static_cast<int64_t>(" in src
    assert "(x_strided ? x_row_stride : static_cast<int64_t>(32))" in src


@needs_pto
@pytest.mark.parametrize("before", [False, True])
def test_run_time_row_strides_match_the_simulator(tmp_path, before):
    x = np.arange(R * C, dtype=np.float32).reshape(R, C)
    lines = np.array([[3, 10, 1, 50]], np.int32) * C
    got, sim = _run_on_pto_cpu(tmp_path, ss._gather(order_before=before),
                               {"x": x, "strides": lines, "out": np.zeros((8, C), np.float32)}, block_dim=1)
    assert np.array_equal(got["out"], sim["out"])
    assert np.array_equal(got["out"][1], x[lines[0, 0] // C] if not before else x[1])


@needs_pto
@pytest.mark.parametrize("fn,shapes", [(_transpose_walk, {"x": (R, C), "out": (C, 8)}),
                                       (_strided_store, {"x": (2, C), "out": (R, C)})])
def test_column_strides_and_strided_stores_match_the_simulator(tmp_path, fn, shapes):
    arrays = {"x": np.arange(np.prod(shapes["x"]), dtype=np.float32).reshape(shapes["x"]) + 1,
              "out": np.zeros(shapes["out"], np.float32)}
    got, sim = _run_on_pto_cpu(tmp_path, pl.jit(fn, auto_mutex=True, arch="a5"), arrays, block_dim=1)
    assert np.array_equal(got["out"], sim["out"])
    assert np.count_nonzero(sim["out"]) > 0
