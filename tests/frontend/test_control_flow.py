"""while / break / continue / return in kernels, against NumPy references, on a5 and a2a3, with
tile groups and auto sync inside the loops (the simulator's checker raises on any race, deadlock
or pending flag, so a wrong sync would fail these tests too)."""
import numpy as np
import pytest

import pypto_pro.language as pl
from control_flow_kernels import T32, TM, V32, break_continue, early_return, nested_while_add
ARCHS = ["a5", "a2a3"]


def rand(rows, cols=64, seed=0):
    return np.random.default_rng(seed).random((rows, cols), dtype=np.float32)


@pytest.mark.parametrize("arch", ARCHS)
def test_nested_while_with_tile_groups(arch):
    x, y, z = rand(4 * TM, 128), rand(4 * TM, 128, 1), np.zeros((4 * TM, 128), np.float32)
    pl.jit(nested_while_add, arch=arch)(x, y, z)
    np.testing.assert_array_equal(z, x + y)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("stop, skip", [(3, 1), (9, 0), (0, 5), (5, 5)])
def test_break_and_continue(arch, stop, skip):
    x, z = rand(8 * TM), np.zeros((8 * TM, 64), np.float32)
    pl.jit(break_continue, arch=arch)(x, z, stop, skip)
    want = np.zeros_like(x)
    for i in range(8):
        rows = slice(i * TM, (i + 1) * TM)
        if i == skip:
            continue
        if i >= stop:
            want[rows] = -x[rows]
            break
        want[rows] = 2 * x[rows]
    np.testing.assert_array_equal(z, want)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("limit", [0, 3, 5, 100])
def test_early_return_from_nested_loops(arch, limit):
    x, z = rand(3 * TM, 128), np.full((3 * TM, 128), 7.0, np.float32)
    pl.jit(early_return, arch=arch)(x, z, limit)
    want = np.full_like(x, 7.0)
    done = True
    for i in range(3):
        for j in range(2):
            if i * 2 + j >= limit:
                done = False
                break
            want[i * TM:(i + 1) * TM, j * 64:(j + 1) * 64] = x[i * TM:(i + 1) * TM, j * 64:(j + 1) * 64] + 1
        if not done:
            break
    if done:
        want[:TM, :64] = 0.0
    np.testing.assert_array_equal(z, want)


def more(i, n):
    """A plain helper with a run-time return: its statements make the loop condition's own code."""
    if i < n:
        return True
    return False


def condition_with_statements(x: T32, z: T32, n: pl.DT_INT32):
    g = pl.make_tile_group(type=V32, addrs=0x0000, mutex_ids=[0, 1])
    with pl.section_vector():
        i = 0
        while more(i, n) and i < x.shape[0] // TM:
            t = g.next()
            pl.load_tile(t, x, [i, 0])
            pl.adds(t, t, 3.0)
            pl.store_tile(z, t, [i, 0])
            i += 1


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("n", [0, 2, 40])
def test_while_condition_that_runs_statements(arch, n):
    kernel = pl.jit(condition_with_statements, arch=arch)
    x, z = rand(4 * TM), np.zeros((4 * TM, 64), np.float32)
    kernel(x, z, n)
    rows = min(n, 4) * TM
    np.testing.assert_array_equal(z[:rows], x[:rows] + 3)
    assert not z[rows:].any()


def unrolled_break(x: T32, z: T32):
    g = pl.make_tile_group(type=V32, addrs=0x0000, mutex_ids=[0, 1])
    with pl.section_vector():
        for k in range(8):           # a compile-time loop: break / continue act while compiling
            if k == 1:
                continue
            if k == 4:
                break
            t = g.next()
            pl.load_tile(t, x, [k, 0])
            pl.store_tile(z, t, [k, 0])


def test_compile_time_loop_break_and_continue():
    x, z = rand(8 * TM), np.zeros((8 * TM, 64), np.float32)
    kernel = pl.jit(unrolled_break)
    kernel(x, z)
    want = np.zeros_like(x)
    for k in (0, 2, 3):
        want[k * TM:(k + 1) * TM] = x[k * TM:(k + 1) * TM]
    np.testing.assert_array_equal(z, want)


def while_true_with_break(x: T32, z: T32, n: pl.DT_INT32):
    g = pl.make_tile_group(type=V32, addrs=0x0000, mutex_ids=[0, 1])
    with pl.section_vector():
        i: pl.DT_INT64 = 0
        total = 0.0
        while True:
            if i >= n:
                break
            total = total + 0.5
            i = i + 1
        t = g.next()
        pl.expands(t, total)
        pl.store_tile(z, t, [0, 0])


@pytest.mark.parametrize("arch", ARCHS)
def test_while_true_and_float_accumulator(arch):
    z = np.zeros((TM, 64), np.float32)
    pl.jit(while_true_with_break, arch=arch)(z, z, 5)
    assert np.all(z == 2.5)
