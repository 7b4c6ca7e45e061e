"""The batched execution of a VF trace (``backends/sim/vf/batch.py``) computes the bytes of the one-by-one run.

Each kernel runs with ``batch.BATCH`` on and off on inputs full of NaN payloads (both signs, several
payloads), signed zeros, subnormals and infinities, under all-lane and partial predicates, MERGING and
ZEROING, with stores the later loads read back (RAW through UB), overlapping stores (WAW), a barrier
instruction (an unaligned store) in the middle, a misaligned address (the same fault) and a tail tile
(the definedness path): outputs, the whole launch report and any error must be the same, and the batched
run must really have run batched plans.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.backends.sim.vf import batch
from pypto_pro.language import Vf as vf

from vf_kernels import ALL, to_mte3, to_v, vf_kernel

F32, F16 = pl.DT_FP32, pl.DT_FP16
MERGING = pl.MergeMode.MERGING
BLOCKS = pl.DataCopyMode.DATA_BLOCK_COPY
_SPECIAL = np.array([0x7FC00000, 0xFFC00001, 0x7F800001, 0x7FBFFFFF, 0x00000000, 0x80000000,
                     0x7F800000, 0xFF800000, 0x00000001, 0x807FFFFF, 0x00400000, 0xFFFFFFFF], np.uint32)


def specials(seed: int, shape: tuple[int, int]) -> torch.Tensor:
    """fp32 bit patterns: random values, a quarter of them NaNs / +-0 / +-inf / subnormals."""
    g = np.random.default_rng(seed)
    n = shape[0] * shape[1]
    x = (g.standard_normal(n) * 4).astype(np.float32)
    bits = x.view(np.uint32)
    at = g.choice(n, size=n // 4, replace=False)
    bits[at] = g.choice(_SPECIAL, size=at.size)
    return torch.from_numpy(bits.view(np.float32).reshape(shape).copy())


def softmax_body(count: int, scale: float):
    """The shape of the FA softmax bodies: loop-carried max / sum accumulators, per-iteration loads,
    muls, exp_sub, casts to fp16, a de-interleave, NORM stores, overlapping DataBlock stores, BRC
    loads, a MERGING add, and a value stored and loaded back by the next iteration."""
    @pl.vector_function
    def body(ta, tb, to):
        full = vf.create_mask(pattern=ALL, dtype=F32)
        m = vf.update_mask(count, dtype=F32)
        h = vf.update_mask(2 * count, dtype=F16)
        mx0 = vf.full(-3.0e38)
        mx1 = vf.full(-3.0e38)
        for i in pl.range(0, 4):
            a = vf.load_align(ta, i * 128)
            b = vf.load_align(ta, i * 128 + 64)
            mx0 = vf.max(mx0, a, full)
            mx1 = vf.max(mx1, b, m)
        mx0 = vf.max(mx0, mx1, full)
        vf.store_align(to, mx0, full, 0)
        s0 = vf.full(0.0, full)
        s1 = vf.full(0.0, full)
        vf.store_align(to, s1, full, 22 * 64)
        for i in pl.range(0, 8):
            x = vf.load_align(ta, i * 64)
            y = vf.load_align(tb, i * 64)
            yb = vf.load_align(tb, i * 3, dist=pl.LoadDist.BRC_B32)
            x = vf.muls(x, scale, m)
            e = vf.exp_sub(x, mx0, m)
            u = vf.add(x, y, m, mode=MERGING)
            u = vf.mul(u, yb, full)
            h0 = vf.astype(e, full, layout=pl.CastLayout.ZERO, dtype=F16)
            h1 = vf.astype(u, full, layout=pl.CastLayout.ZERO, dtype=F16)
            p0, p1 = vf.de_interleave(h0, h1)
            s0 = vf.add(e, s0, full)
            z = vf.load_align(to, 22 * 64)
            z = vf.add(z, u, m)
            vf.store_align(to, z, full, 22 * 64)
            vf.store_align(to, p0, h, 64 + i * 64)
            vf.store_align(to + (9 * 64 + i * 8), p1, m, block_stride=1, data_copy_mode=BLOCKS)
        vf.store_align(to, s0, full, 20 * 64)
        s1 = vf.add(s0, mx0, m, mode=MERGING)
        vf.store_align(to, s1, m, 21 * 64)
    return body


def _run(kernel, args, out, on: bool):
    """(output bytes, report) or (error type, message) with batching on / off; and whether a batched plan ran."""
    ran = []
    real = batch.Plan.run

    def counting(self, *a):
        ran.append(len(self.steps))
        return real(self, *a)
    batch.BATCH = on
    batch.Plan.run = counting
    try:
        report = kernel[None, 1](*args, out)
        rep = {f: v for f, v in dataclasses.asdict(report).items() if f != "trace_files"}
        got = (out.numpy().tobytes(), repr(rep))
    except Exception as exc:  # noqa: BLE001 (the error itself is compared)
        got = (type(exc).__name__, str(exc))
    finally:
        batch.BATCH = True
        batch.Plan.run = real
    return got, ran


@pytest.mark.parametrize("count,scale", [(64, 0.5), (37, -0.0), (1, 2.5), (0, -1.0)])
def test_batched_softmax_gives_the_one_by_one_bytes(count, scale):
    kernel = vf_kernel(softmax_body(count, scale), [(F32, [8, 64]), (F32, [8, 64])], (F32, [24, 64]), dynamic=True)
    args = (specials(1, (8, 64)), specials(2, (8, 64)))
    on, ran = _run(kernel, args, torch.full((24, 64), 7.0), True)
    off, ran_off = _run(kernel, args, torch.full((24, 64), 7.0), False)
    assert ran and not ran_off, "the batched plan did not run"
    assert ran[0] < 120  # of 180 instructions (a partial mask makes the MERGING add a loop-carried chain)
    assert on[0] != "SimulationError" and on == off


def barrier_body():
    """An unaligned store sequence (a barrier: run on the register file in program order) between
    batched loads and lane-wise ops whose registers it reads and whose results follow it."""
    @pl.vector_function
    def body(ta, tb, to):
        full = vf.create_mask(pattern=ALL, dtype=F32)
        acc = vf.full(1.0, full)
        for i in pl.range(0, 4):
            x = vf.load_align(ta, i * 64)
            acc = vf.mul(acc, x, full)
        ge = vf.ge(acc, 0.0, full)
        ureg = vf.unalign_reg_for_store()
        vf.store_unalign(to, ge, ureg)
        vf.store_unalign_post(to, ureg)
        for i in pl.range(0, 4):
            y = vf.load_align(tb, i * 64)
            y = vf.adds(y, -1.5, full)
            vf.store_align(to, y, ge, 64 + i * 64)
        vf.store_align(to, acc, full, 5 * 64)
    return body


def test_barrier_in_the_middle():
    kernel = vf_kernel(barrier_body(), [(F32, [4, 64]), (F32, [4, 64])], (F32, [6, 64]), dynamic=True)
    args = (specials(3, (4, 64)), specials(4, (4, 64)))
    on, ran = _run(kernel, args, torch.full((6, 64), 3.0), True)
    off, _ = _run(kernel, args, torch.full((6, 64), 3.0), False)
    assert ran and on == off


def misaligned_body():
    @pl.vector_function
    def body(ta, tb, to):
        full = vf.create_mask(pattern=ALL, dtype=F32)
        for i in pl.range(0, 6):
            x = vf.load_align(ta, i * 64 + (i // 4) * 3)  # the fifth and sixth loads are 12 bytes off 32
            y = vf.load_align(tb, i * 64)
            z = vf.add(x, y, full)
            vf.store_align(to, z, full, i * 64)
    return body


def test_misaligned_address_faults_at_the_same_instruction():
    kernel = vf_kernel(misaligned_body(), [(F32, [6, 64]), (F32, [6, 64])], (F32, [6, 64]), dynamic=True)
    args = (specials(5, (6, 64)), specials(6, (6, 64)))
    on, _ = _run(kernel, args, torch.full((6, 64), 3.0), True)
    off, _ = _run(kernel, args, torch.full((6, 64), 3.0), False)
    assert on[0] != "ok" and "aligned" in on[1] and on == off


def tail_kernel(leak: bool):
    """A 16-column tail in 64-wide rows: the VF call reads padding, so the definedness run takes it."""
    @pl.vector_function
    def body(src, dst):
        m = vf.update_mask(16, dtype=F32)
        full = vf.create_mask(pattern=ALL, dtype=F32)
        acc = vf.full(0.0, full)
        for i in pl.range(0, 4):
            x = vf.load_align(src, i * 64)
            y = vf.adds(x, 1.0, full if leak else m)
            acc = vf.add(acc, y, m)
            vf.store_align(dst, y, m, i * 64)
        vf.store_align(dst, acc, full if leak else m, 4 * 64)

    tt = pl.TileType(shape=[4, 64], dtype=F32, target_memory=pl.MemorySpace.Vec)
    to_t = pl.TileType(shape=[5, 64], dtype=F32, target_memory=pl.MemorySpace.Vec)

    @pl.jit()
    def k(a: pl.Tensor[[4, 16], F32], out: pl.Tensor[[5, 64], F32]):
        ta = pl.make_tile(tt, addr=0)
        to = pl.make_tile(to_t, addr=1024)
        with pl.section_vector():
            pl.set_validshape(ta, [4, 16])
            pl.load(ta, a, [0, 0])
            pl.set_validshape(ta, [4, 64])
            to_v()
            body(ta, to)
            to_mte3()
            pl.store(out, to, [0, 0])
    return k


@pytest.mark.parametrize("leak", [False, True])
def test_tail_tile_definedness_outcome(leak):
    a = specials(7, (4, 16))
    on, _ = _run(tail_kernel(leak), (a,), torch.full((5, 64), 9.0), True)
    off, _ = _run(tail_kernel(leak), (a,), torch.full((5, 64), 9.0), False)
    assert on == off
    assert (on[0] == "UninitializedReadError") == leak


@pytest.mark.parametrize("addrs,n", [([0, 256, 512], 256), ([64, 96, 128, 160], 256), ([1280, 0, 1024], 256),
                                     ([8], 4), ([0, 4, 8, 12], 4), ([1536, 1792], 256)])
def test_mem_rows_read_and_write_as_row_by_row(addrs, n):
    size = 2048
    g = np.random.default_rng(len(addrs))
    mem = g.integers(0, 256, size + 4096, np.uint8)[:size]  # past the end of a larger buffer: bounded by size
    mem = mem.copy()
    rows = batch.MemRows(addrs, n, size)
    got = np.empty((len(addrs), n), np.uint8)
    rows.read(mem, got)
    assert all((got[i] == mem[a:a + n]).all() for i, a in enumerate(addrs))
    if all(b - a >= n for a, b in zip(sorted(addrs), sorted(addrs)[1:])):  # a group's stores never overlap
        vals = g.integers(0, 256, (len(addrs), n), np.uint8)
        want = mem.copy()
        for i, a in enumerate(addrs):
            want[a:a + n] = vals[i]
        rows.write(mem, vals)
        assert (mem == want).all()


_GRID = [0, 1024, 2048, 3072, 256, 1280, 2304, 3328, 512, 1536, 2560, 3584]  # 3 x 4, outer 256, inner 1024
_RUN = [0, 256, 512, 768]


@pytest.mark.parametrize("addrs,n,mode", [
    (_GRID, 256, "grid"),
    (_GRID, 64, "grid"),
    ([a + 32 for a in _GRID], 32, "grid"),
    (_RUN + [a + 4096 for a in _GRID], 256, "parts"),  # two loops' loads of one tile: a run, then a grid
    ([a + 4096 for a in _GRID] + _RUN, 256, "parts"),
    (_GRID[:-1], 256, "parts"),  # not whole runs: a grid and a shorter run after it
    (_GRID[:8] + [8000] + [a + 4096 for a in _GRID[:8]], 64, "parts"),
    (_GRID[:8] + [512, 1536, 2560, 3580], 4, "parts"),  # the grid breaks in its last run
    ([3072, 2048, 1024, 0, 3328, 2304, 1280, 256], 256, "index"),  # descending inner steps
    ([i * 512 % 4096 + i // 8 * 8 for i in range(80)], 8, "grid"),  # 10 x 8, outer 8, inner 512
    ([64 * (i ^ 1) for i in range(32)], 64, "parts"),  # one row, a 15 x 2 grid (outer 128, inner 192), one row
    ([64 * p for p in (5, 3, 9, 1, 7, 0, 8, 2, 6, 4, 11, 10)], 64, "index"),  # scattered: too many pieces
    ([a + 7168 for a in (0, 256, 512, 768)], 1024, "strided"),  # overlapping rows at one step
])
def test_mem_rows_grid_and_parts_as_row_by_row(addrs, n, mode):
    """Grid and piecewise row sets (``MemRows`` modes ``grid`` / ``parts``) read and write exactly the bytes a
    row-by-row copy does, with and without a per-element ``where``; ``GRID = False`` takes the index array."""
    size = 8192 + 1024
    g = np.random.default_rng(len(addrs) + n)
    base = g.integers(0, 256, size, np.uint8)
    rows = batch.MemRows(addrs, n, size)
    assert rows.mode == mode
    distinct = all(b - a >= n for a, b in zip(sorted(addrs), sorted(addrs)[1:]))
    for where_kind in (None, "row", "per_row"):
        mem = base.copy()
        got = np.empty((len(addrs), n), np.uint8)
        rows.read(mem, got)
        assert all((got[i] == mem[a:a + n]).all() for i, a in enumerate(addrs))
        view = rows.view(mem)
        assert (view is None) == (mode == "index")
        if view is not None:
            assert (view == got).all()
        if not distinct:
            continue
        vals = g.integers(0, 256, (len(addrs), n), np.uint8)
        k = n // 4
        where = None if where_kind is None else g.integers(0, 2, (1 if where_kind == "row" else len(addrs), k)).astype(bool)
        want = mem.copy()
        for i, a in enumerate(addrs):
            if where is None:
                want[a:a + n] = vals[i]
            else:
                w = want[a:a + n].view(np.float32)
                np.copyto(w, vals[i].view(np.float32), where=where[0 if where_kind == "row" else i])
        rows.write(mem, vals, np.dtype(np.float32), where)
        assert (mem == want).all()
    batch.GRID = False
    try:
        assert batch.MemRows(addrs, n, size).mode == ("index" if mode in ("grid", "parts") else mode)
    finally:
        batch.GRID = True


def select_body(dist, dt=F32):
    """Predicate loads (plds, ``dist``) of bits from UB and selects under them, one per iteration: the
    masked-softmax pattern of the FA bodies (both batch as groups of their own)."""
    @pl.vector_function
    def body(ta, tb, to):
        full = vf.create_mask(pattern=ALL, dtype=F32)
        for i in pl.range(0, 4):
            pm = vf.create_mask(pattern=ALL, dtype=dt)
            pm = vf.load_align(tb, 4 * 64 + i * 16, dist=dist)  # bits from tb's last row
            x = vf.load_align(ta, i * 64, dtype=dt)
            y = vf.load_align(tb, i * 64, dtype=dt)
            z = vf.select(x, y, pm)
            vf.store_align(to, z, full, i * 64)
            w = vf.select(y, z, pm)
            vf.store_align(to, w, full, (4 + i) * 64)
    return body


@pytest.mark.parametrize("dist,dt", [(pl.LoadDist.NORM, F32), (pl.LoadDist.US, F32), (pl.LoadDist.DS, F32),
                                     (pl.LoadDist.NORM, F16), (pl.LoadDist.US, pl.DT_INT8)])
def test_batched_predicate_loads_and_selects(dist, dt):
    kernel = vf_kernel(select_body(dist, dt), [(F32, [4, 64]), (F32, [5, 64])], (F32, [8, 64]), dynamic=True)
    args = (specials(8, (4, 64)), specials(9, (5, 64)))
    on, ran = _run(kernel, args, torch.full((8, 64), 5.0), True)
    off, _ = _run(kernel, args, torch.full((8, 64), 5.0), False)
    assert ran and on == off and on[0] != "SimulationError"
    # 33 instructions in 12 steps; without batched plds / vsel forms the trace was not worth batching at all
    assert ran[0] <= 12


def test_mem_rows_grid_stays_inside_the_memory():
    assert batch._grid(_GRID, 256, 3584 + 256) == (3, 4, 256, 1024)
    assert batch._grid(_GRID, 256, 3584 + 255) is None  # the last row would end past the memory
    assert batch._cuts(_RUN + [a + 4096 for a in _GRID], 256, 4096 + 3584 + 255) is None
    assert batch.MemRows(_GRID, 256, 3584 + 255).mode == "index"


def _merge_rows_reference(dst, res, act, merging):
    """The per-element form: the result in active lanes, the old value (merging) or zero elsewhere."""
    if merging:
        np.copyto(dst, res, where=act)
    else:
        np.copyto(dst, res)
        dst[~np.broadcast_to(act, dst.shape)] = 0


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.uint8, np.bool_])
@pytest.mark.parametrize("rows_act", [1, 5])
@pytest.mark.parametrize("density", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("merging", [False, True])
def test_merge_rows_as_per_element(dtype, rows_act, density, merging):
    g = np.random.default_rng(rows_act + int(10 * density))
    raw = g.integers(0, 256, (5, 64 * 4), np.uint8)
    raw[0, :8] = [0, 0, 0x80, 0x80, 0xff, 0x7f, 0x01, 0x7c]  # -0.0, NaN payloads among the results
    res = raw.view(dtype)[:, :32] if dtype is not np.bool_ else raw[:, :32] > 127
    old = g.integers(0, 256, (5, 64 * 4), np.uint8)
    start = old.view(dtype)[:, :32] if dtype is not np.bool_ else old[:, :32] > 127
    act = g.random((rows_act, 32)) < density
    want, got = start.copy(), start.copy()
    _merge_rows_reference(want, res, act, merging)
    batch.merge_rows(got, res, act, merging)
    assert want.tobytes() == got.tobytes()
