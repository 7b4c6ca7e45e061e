"""pl.range with a float start / stop runs as the real C loop ``for (uint64_t i = start; i < stop; ...)``:
start truncated, i < stop compared as floats (up to ceil(stop)); ``shape / TILE`` (int / int is FP32 in
the real promotion) is the common source. A float step stays a located CompileError."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.errors import CompileError

R, C = 8, 64
TT = pl.TileType(shape=[R, C], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)


def _rows_kernel():
    """Adds 1 to each row block i of the loop, so the output shows which blocks the loop ran."""
    def k(x: pl.Tensor[[pl.STATIC, C], pl.DT_FP32], z: pl.Tensor[[pl.STATIC, C], pl.DT_FP32], stop: pl.DT_FP32,
          start: pl.DT_FP32):
        g = pl.make_tile_group(type=TT, addrs=0, mutex_ids=[0])
        with pl.section_vector():
            t = g.current()
            for i in pl.range(start, stop, 1):
                pl.load(t, x, [i * R, 0])
                pl.add(t, t, 1.0)
                pl.store(z, t, [i * R, 0])
    return pl.jit(k, arch="a5")


def _shape_div_kernel():
    def k(x: pl.Tensor[[pl.STATIC, C], pl.DT_FP32], z: pl.Tensor[[pl.STATIC, C], pl.DT_FP32]):
        g = pl.make_tile_group(type=TT, addrs=0, mutex_ids=[0])
        with pl.section_vector():
            t = g.current()
            n = x.shape[0] / R  # a compile-time FP32, as in the real promotion
            for i in pl.range(0, n, 1):
                pl.load(t, x, [i * R, 0])
                pl.add(t, t, 1.0)
                pl.store(z, t, [i * R, 0])
    return pl.jit(k, arch="a5")


def _want(x, blocks):
    z = np.zeros_like(x)
    for i in blocks:
        z[i * R:(i + 1) * R] = x[i * R:(i + 1) * R] + 1
    return z


def test_shape_true_division_is_a_float_stop():
    x = np.random.default_rng(0).random((4 * R, C), dtype=np.float32)
    z = np.zeros_like(x)
    _shape_div_kernel()(x, z)
    np.testing.assert_array_equal(z, _want(x, range(4)))


@pytest.mark.parametrize("start, stop, blocks", [(0.0, 2.0, [0, 1]), (0.0, 2.5, [0, 1, 2]), (1.9, 3.0, [1, 2]),
                                                 (0.0, 0.0, []), (0.0, 3.000001, [0, 1, 2, 3])])
def test_runtime_float_bounds(start, stop, blocks):
    x = np.random.default_rng(1).random((4 * R, C), dtype=np.float32)
    z = np.zeros_like(x)
    _rows_kernel()(x, z, stop, start)
    np.testing.assert_array_equal(z, _want(x, blocks))


def test_float_step_is_a_located_error():
    def k(x: pl.Tensor[[R, C], pl.DT_FP32]):
        with pl.section_vector():
            for i in pl.range(0, 4, 0.5):
                pass
    with pytest.raises(CompileError, match=r"pl.range step must be an integer scalar") as e:
        pl.jit(k, arch="a5").compile()
    assert "test_range_float_bounds.py" in str(e.value)
