"""SIMT launches compute what each thread's C++ computes, for every thread at once.

References are written with NumPy per thread index, independently of the interpreter.
"""
import numpy as np
import pytest
import torch

import pypto_pro.language as pl

N = 64
F_ROW = pl.TileType(shape=[1, N], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
I_ROW = pl.TileType(shape=[1, N], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec)
U_ROW = pl.TileType(shape=[1, N], dtype=pl.DT_UINT32, target_memory=pl.MemorySpace.Vec)


def _v_to_mte3():
    pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
    pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)


def _mte2_to_v():
    pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=1)
    pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=1)


# ---- thread context --------------------------------------------------------------------------------


@pl.simt.function(max_threads=N)
def _context(dst: pl.Tile[[1, N], pl.DT_UINT32]):
    t = pl.simt.thread_idx()
    d = pl.simt.block_dim()
    g = pl.simt.grid_dim()
    lin = pl.simt.linear_thread_idx()
    dst[0, lin] = t.x + t.y * 10 + t.z * 100 + d.x * 1000 + d.y * 10000 + d.z * 100000 + \
        pl.simt.block_idx().x * 1000000 + g.x * 10000000 + pl.simt.warp_size() * 0


@pl.jit(arch="a5")
def context_kernel(out: pl.Tensor[[4, N], pl.DT_UINT32]):
    dst = pl.make_tile(U_ROW, addr=0x0000, size=N * 4)
    with pl.section_vector():
        pl.simt.launch(_context, threads=(4, 2, 8), args=(dst,))
        _v_to_mte3()
        pl.store(out, dst, [pl.get_block_idx(), 0])


def test_thread_context_is_x_major_and_blocks_see_their_index():
    out = torch.zeros((4, N), dtype=torch.int32).to(torch.uint32)
    context_kernel[None, 4](out)
    lin = np.arange(N)
    x, y, z = lin % 4, (lin // 4) % 2, lin // 8
    base = x + y * 10 + z * 100 + 4 * 1000 + 2 * 10000 + 8 * 100000 + 4 * 10000000
    want = np.stack([base + b * 1000000 for b in range(4)])
    np.testing.assert_array_equal(out.to(torch.int64).numpy(), want)


# ---- C++ arithmetic per thread ---------------------------------------------------------------------


@pl.simt.function(max_threads=N)
def _int_math(dst: pl.Tile[[1, N], pl.DT_INT32], src: pl.Tile[[1, N], pl.DT_INT32], d: pl.DT_INT32):
    tid = pl.simt.linear_thread_idx()
    v = src[0, tid]
    dst[0, tid] = v // d + (v % d) * 1000 + max(v, -5) * 100000 + min(v, d) * 10000000


@pl.jit(arch="a5")
def int_math_kernel(x: pl.Tensor[[1, N], pl.DT_INT32], out: pl.Tensor[[1, N], pl.DT_INT32], d: pl.DT_INT32):
    src = pl.make_tile(I_ROW, addr=0x0000, size=N * 4)
    dst = pl.make_tile(I_ROW, addr=0x0100, size=N * 4)
    with pl.section_vector():
        pl.load(src, x, [0, 0])
        _mte2_to_v()
        pl.simt.launch(_int_math, threads=N, args=(dst, src, d))
        _v_to_mte3()
        pl.store(out, dst, [0, 0])


@pytest.mark.parametrize("d", [3, -3, 7])
def test_integer_division_truncates_toward_zero_and_builtin_min_max(d):
    x = torch.arange(-N // 2, N // 2, dtype=torch.int32).reshape(1, N)
    out = torch.zeros_like(x)
    int_math_kernel(x, out, d)
    v = x.numpy().astype(np.int64)
    q = np.trunc(v / d).astype(np.int64)
    np.testing.assert_array_equal(out.numpy(), q + (v - d * q) * 1000 + np.maximum(v, -5) * 100000
                                  + np.minimum(v, d) * 10000000)


@pl.simt.function(max_threads=N)
def _uint_wrap(dst: pl.Tile[[1, N], pl.DT_UINT32]):
    tid = pl.simt.linear_thread_idx()
    dst[0, tid] = tid - 3  # UINT32 arithmetic: wraps below zero


@pl.jit(arch="a5")
def uint_wrap_kernel(out: pl.Tensor[[1, N], pl.DT_UINT32]):
    dst = pl.make_tile(U_ROW, addr=0x0000, size=N * 4)
    with pl.section_vector():
        pl.simt.launch(_uint_wrap, threads=N, args=(dst,))
        _v_to_mte3()
        pl.store(out, dst, [0, 0])


def test_unsigned_thread_index_arithmetic_wraps():
    out = torch.zeros((1, N), dtype=torch.int32).to(torch.uint32)
    uint_wrap_kernel(out)
    want = (np.arange(N, dtype=np.int64) - 3) % 2 ** 32
    np.testing.assert_array_equal(out.to(torch.int64).numpy()[0], want)


# ---- divergent control flow ------------------------------------------------------------------------


@pl.simt.function(max_threads=N)
def _loops(dst: pl.Tile[[1, N], pl.DT_FP32], src: pl.Tile[[1, N], pl.DT_FP32]):
    tid = pl.simt.linear_thread_idx()
    acc = 0.0
    for i in pl.range(tid % 5):          # a trip count per thread
        if i == 3:
            break
        acc = acc + src[0, tid] * 2.0
    k = tid
    while k > 40:                        # a while loop only some threads enter
        k = k - 7
        if k % 2 == 0:
            continue
        acc = acc + 1.0
    if src[0, tid] < 10.0:               # a condition on loaded data
        acc = -acc
    dst[0, tid] = acc


@pl.jit(arch="a5")
def loops_kernel(x: pl.Tensor[[1, N], pl.DT_FP32], out: pl.Tensor[[1, N], pl.DT_FP32]):
    src = pl.make_tile(F_ROW, addr=0x0000, size=N * 4)
    dst = pl.make_tile(F_ROW, addr=0x0100, size=N * 4)
    with pl.section_vector():
        pl.load(src, x, [0, 0])
        _mte2_to_v()
        pl.simt.launch(_loops, threads=N, args=(dst, src))
        _v_to_mte3()
        pl.store(out, dst, [0, 0])


def _loops_reference(x: np.ndarray) -> np.ndarray:
    out = np.zeros(N, np.float32)
    for tid in range(N):
        acc = np.float32(0.0)
        for i in range(tid % 5):
            if i == 3:
                break
            acc = np.float32(acc + np.float32(x[tid] * np.float32(2.0)))
        k = tid
        while k > 40:
            k -= 7
            if k % 2 == 0:
                continue
            acc = np.float32(acc + np.float32(1.0))
        if x[tid] < 10.0:
            acc = -acc
        out[tid] = acc
    return out


def test_divergent_loops_break_continue_and_data_dependent_branches():
    x = (torch.arange(N, dtype=torch.float32) * 0.37 - 3.0).reshape(1, N)
    out = torch.zeros_like(x)
    loops_kernel(x, out)
    np.testing.assert_array_equal(out.numpy()[0], _loops_reference(x.numpy()[0]))


# ---- GM tensors, valid shapes, callees --------------------------------------------------------------


@pl.simt.function(max_threads=256)
def _gm_scatter(dst: pl.Tensor[[16, 16], pl.DT_FP32], src: pl.Tensor[[16, 16], pl.DT_FP32], n: pl.DT_INT32):
    tid = pl.simt.linear_thread_idx()
    r = tid // 16
    c = tid % 16
    if r < n and c >= r:
        dst[c, r] = src[r, c] * 3.0   # a transposed, triangular write


@pl.jit(arch="a5")
def gm_kernel(x: pl.Tensor[[16, 16], pl.DT_FP32], out: pl.Tensor[[16, 16], pl.DT_FP32], n: pl.DT_INT32):
    with pl.section_vector():
        pl.simt.launch(_gm_scatter, threads=(16, 16), args=(out, x, n))


@pytest.mark.parametrize("n", [0, 5, 16])
def test_gm_tensor_element_access(n):
    x = torch.randn(16, 16, generator=torch.Generator().manual_seed(1))
    out = torch.full((16, 16), -1.0)
    gm_kernel(x, out, n)
    want = np.full((16, 16), -1.0, np.float32)
    for r in range(min(n, 16)):
        for c in range(r, 16):
            want[c, r] = np.float32(x[r, c].item()) * np.float32(3.0)
    np.testing.assert_array_equal(out.numpy(), want)


@pl.simt.function
def _clamp(v: pl.DT_FP32, lo: pl.DT_FP32) -> pl.DT_FP32:
    if v < lo:
        return lo
    return v


@pl.simt.function(max_threads=256)
def _valid_region(dst: pl.Tile[[8, 32], pl.DT_FP32], src: pl.Tile[[8, 32], pl.DT_FP32]):
    tid = pl.simt.linear_thread_idx()
    rows = src.valid_shape[0]
    cols = src.valid_shape[1]
    if tid < rows * cols:
        dst[tid // cols, tid % cols] = _clamp(src[tid // cols, tid % cols], 0.5)


@pl.jit(arch="a5")
def valid_kernel(x: pl.Tensor[[5, 19], pl.DT_FP32], out: pl.Tensor[[5, 19], pl.DT_FP32],
                 rows: pl.DT_UINT32, cols: pl.DT_UINT32):
    tt = pl.TileType(shape=[8, 32], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec, valid_shape=[-1, -1])
    src = pl.make_tile(tt, addr=0x0000, size=8 * 32 * 4)
    dst = pl.make_tile(tt, addr=0x0400, size=8 * 32 * 4)
    with pl.section_vector():
        pl.set_validshape(src, [rows, cols])
        pl.set_validshape(dst, [rows, cols])
        pl.load(src, x, [0, 0])
        _mte2_to_v()
        pl.simt.launch(_valid_region, threads=256, args=(dst, src))
        _v_to_mte3()
        pl.store(out, dst, [0, 0])


def test_valid_shape_and_a_scalar_callee_with_early_return():
    x = torch.linspace(-1.0, 2.0, 95).reshape(5, 19)
    out = torch.zeros_like(x)
    valid_kernel(x, out, 5, 19)
    np.testing.assert_array_equal(out.numpy(), np.maximum(x.numpy(), np.float32(0.5)))


# ---- short-circuit, conditional expressions, half precision ---------------------------------------


@pl.simt.function(max_threads=N)
def _guarded(dst: pl.Tile[[1, N], pl.DT_FP16], src: pl.Tensor[[1, 40], pl.DT_FP16], n: pl.DT_INT32):
    tid = pl.simt.linear_thread_idx()
    if tid < n and src[0, tid] > 0.0:     # threads >= n never read src (it has 40 elements)
        dst[0, tid] = src[0, tid] * 3.0 + 1.0
    else:
        dst[0, tid] = 2.0 if tid % 3 == 0 else -2.0


@pl.jit(arch="a5")
def guarded_kernel(x: pl.Tensor[[1, 40], pl.DT_FP16], out: pl.Tensor[[1, N], pl.DT_FP16], n: pl.DT_INT32):
    tt = pl.TileType(shape=[1, N], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    dst = pl.make_tile(tt, addr=0x0000, size=N * 2)
    with pl.section_vector():
        pl.simt.launch(_guarded, threads=N, args=(dst, x, n))
        _v_to_mte3()
        pl.store(out, dst, [0, 0])


def test_and_short_circuits_per_thread_and_half_precision_rounds_per_operation():
    x = (torch.arange(40, dtype=torch.float32) * 0.3 - 4.0).to(torch.float16).reshape(1, 40)
    out = torch.zeros((1, N), dtype=torch.float16)
    guarded_kernel(x, out, 40)
    xs = x.numpy()[0]
    want = np.where(np.arange(N) % 3 == 0, np.float16(2.0), np.float16(-2.0))
    for tid in range(40):
        if xs[tid] > 0:  # FP16 * FP32 literal computes in FP32 (the real promotion), stored as FP16
            want[tid] = np.float16(np.float32(np.float32(xs[tid]) * np.float32(3.0)) + np.float32(1.0))
    np.testing.assert_array_equal(out.numpy()[0], want)


# ---- one tile passed twice ---------------------------------------------------------------------------


@pl.simt.function(max_threads=N)
def _through_alias(dst: pl.Tile[[1, N], pl.DT_FP32], src: pl.Tile[[1, N], pl.DT_FP32]):
    tid = pl.simt.linear_thread_idx()
    dst[0, tid] = 5.0
    dst[0, tid] = src[0, tid] + 1.0      # src is dst: the thread reads its own write


@pl.jit(arch="a5")
def alias_kernel(out: pl.Tensor[[1, N], pl.DT_FP32]):
    t = pl.make_tile(F_ROW, addr=0x0000, size=N * 4)
    with pl.section_vector():
        pl.simt.launch(_through_alias, threads=N, args=(t, t))
        _v_to_mte3()
        pl.store(out, t, [0, 0])


def test_a_tile_passed_as_two_parameters_is_one_memory():
    out = torch.zeros(1, N)
    alias_kernel(out)
    assert torch.equal(out, torch.full((1, N), 6.0))


@pl.simt.function(max_threads=N)
def _accumulate(dst: pl.Tile[[1, N], pl.DT_FP32]):
    tid = pl.simt.linear_thread_idx()
    dst[0, tid] = 0.0                    # initialised by the thread itself, then read back
    for i in pl.range(4):
        dst[0, tid] = dst[0, tid] + tid * 1.0 + i


@pl.jit(arch="a5")
def accumulate_kernel(out: pl.Tensor[[1, N], pl.DT_FP32]):
    t = pl.make_tile(F_ROW, addr=0x0000, size=N * 4)
    with pl.section_vector():
        pl.simt.launch(_accumulate, threads=N, args=(t,))
        _v_to_mte3()
        pl.store(out, t, [0, 0])


def test_a_thread_reading_back_its_own_initialisation_reads_no_uninitialised_memory():
    out = torch.zeros(1, N)
    accumulate_kernel(out)
    assert torch.equal(out[0], torch.arange(N, dtype=torch.float32) * 4 + 6)


# ---- in a loop over a ring of tiles (auto mutex) ---------------------------------------------------


@pl.simt.function(max_threads=N)
def _scale_row(data: pl.Tile[[1, N], pl.DT_FP32], k: pl.DT_INT32):
    tid = pl.simt.linear_thread_idx()
    data[0, tid] = data[0, tid] * k + tid


@pl.jit(arch="a5")
def ring_kernel(x: pl.Tensor[[6, N], pl.DT_FP32], out: pl.Tensor[[6, N], pl.DT_FP32]):
    ring = pl.make_tile_group(type=F_ROW, addrs=[0x0000, 0x0100], mutex_ids=[0, 1])
    with pl.section_vector():
        for i in pl.range(6):
            t = ring.next()
            pl.load(t, x, [i, 0])
            pl.simt.launch(_scale_row, threads=N, args=(t, i))
            pl.store(out, t, [i, 0])


def test_launches_on_a_ring_of_tiles_in_a_loop():
    x = torch.randn(6, N, generator=torch.Generator().manual_seed(3))
    out = torch.zeros_like(x)
    ring_kernel(x, out)
    want = x.numpy() * np.arange(6, dtype=np.float32)[:, None] + np.arange(N, dtype=np.float32)[None, :]
    np.testing.assert_array_equal(out.numpy(), want)
