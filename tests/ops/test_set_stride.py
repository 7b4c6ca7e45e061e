"""pl.set_stride: in-place GM descriptor strides that later loads and stores walk (a5)."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.errors import CompileError
from pypto_pro.errors_sim import OutOfBoundsError

R, C = 64, 32
Vec = pl.MemorySpace.Vec


def _gather(order_before: bool = False, arch: str = "a5"):
    def kernel(x: pl.Tensor[[R, C], pl.DT_FP32], strides: pl.Tensor[[1, 4], pl.DT_INT32],
               out: pl.Tensor[[8, C], pl.DT_FP32]):
        ub = pl.make_tile_group(type=pl.TileType(shape=[2, C], dtype=pl.DT_FP32, target_memory=Vec), addrs=0,
                                mutex_ids=[0, 1])
        with pl.section_vector():
            for i in pl.range(0, 4, 1):
                t = ub.next()
                if order_before:
                    pl.load(t, x, [i, 0])  # issued before the descriptor changes: default strides
                    pl.set_stride(x, [strides[0, i], 1])
                else:
                    pl.set_stride(x, [strides[0, i], 1])
                    pl.load(t, x, [i, 0])
                pl.store(out, t, [2 * i, 0])
    return pl.jit(kernel, auto_mutex=True, arch=arch)


def test_rows_are_gathered_at_the_run_time_stride():
    x = np.arange(R * C, dtype=np.float32).reshape(R, C)
    lines = np.array([[3, 10, 1, 50]], np.int32)
    out = np.zeros((8, C), np.float32)
    report = _gather()(x, lines * C, out)
    assert report.faults == []
    for i in range(4):  # the offset [i, 0] uses the declared shape; the stride only the step between rows
        np.testing.assert_array_equal(out[2 * i], x[i])
        np.testing.assert_array_equal(out[2 * i + 1], x[i + lines[0, i]])


def test_a_load_before_set_stride_uses_the_strides_then_in_force():
    x = np.arange(R * C, dtype=np.float32).reshape(R, C)
    lines = np.array([[3, 10, 1, 50]], np.int32)
    out = np.zeros((8, C), np.float32)
    _gather(order_before=True)(x, lines * C, out)
    np.testing.assert_array_equal(out[0:2], x[0:2])            # first load: the default row stride
    np.testing.assert_array_equal(out[3], x[1 + lines[0, 0]])  # second load: the stride set in iteration 0


def test_column_stride_transposes_the_walk():
    def kernel(x: pl.Tensor[[R, C], pl.DT_FP32], out: pl.Tensor[[C, 8], pl.DT_FP32]):
        t = pl.make_tile_group(type=pl.TileType(shape=[C, 8], dtype=pl.DT_FP32, target_memory=Vec), addrs=0,
                              mutex_ids=[0])[0]
        with pl.section_vector():
            pl.set_stride(x, [1, C])  # tile row i walks x's columns, tile column j its rows
            pl.load(t, x, [0, 0])
            pl.store(out, t, [0, 0])
    x = np.arange(R * C, dtype=np.float32).reshape(R, C)
    out = np.zeros((C, 8), np.float32)
    pl.jit(kernel, auto_mutex=True, arch="a5")(x, out)
    np.testing.assert_array_equal(out, x[:8, :].T)


def test_store_through_strides():
    def kernel(x: pl.Tensor[[2, C], pl.DT_FP32], out: pl.Tensor[[R, C], pl.DT_FP32]):
        t = pl.make_tile_group(type=pl.TileType(shape=[2, C], dtype=pl.DT_FP32, target_memory=Vec), addrs=0,
                              mutex_ids=[0])[0]
        with pl.section_vector():
            pl.load(t, x, [0, 0])
            pl.set_stride(out, [5 * C, 1])
            pl.store(out, t, [1, 0])
    x = np.arange(2 * C, dtype=np.float32).reshape(2, C)
    out = np.zeros((R, C), np.float32)
    pl.jit(kernel, auto_mutex=True, arch="a5")(x, out)
    np.testing.assert_array_equal(out[1], x[0])
    np.testing.assert_array_equal(out[6], x[1])
    assert np.count_nonzero(out[[r for r in range(R) if r not in (1, 6)]]) == 0


def test_a_stride_past_the_tensor_is_a_located_fault():
    x = np.zeros((R, C), np.float32)
    out = np.zeros((8, C), np.float32)
    with pytest.raises(OutOfBoundsError, match="strided window leaves the tensor"):
        _gather()(x, np.array([[R * C, 1, 1, 1]], np.int32), out)


def test_set_stride_is_a5_only_and_checks_its_operands():
    with pytest.raises(CompileError, match="a5"):
        _gather(arch="a2a3").compile()

    def bad(x: pl.Tensor[[R, C], pl.DT_FP32]):
        with pl.section_vector():
            pl.set_stride(x, [C])
    with pytest.raises(CompileError, match=r"\[row_stride, col_stride\]"):
        pl.jit(bad, arch="a5").compile()
