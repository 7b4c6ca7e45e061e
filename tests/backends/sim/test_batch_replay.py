"""Batched replay computes the bytes of block-by-block replay (issue 15; a difference is a bug).

Blocks that replay one schedule run each step once over all of them (``batch_replay``): their tiles
are views with a leading block axis over lanes of memory ``stride`` bytes apart. Which NaN NumPy
returns when two meet depends on the inner loop it picks (contiguous SIMD or strided), so every
batched op is fed NaNs of many payloads, signed zeros, subnormals and infinities, on full-width and
strided tiles of odd sizes, and its bytes are compared with the same op run block by block.
"""
from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import pypto_pro.language as pl
from pypto_pro.backends.sim import batch_replay, numerics
from pypto_pro.language import Vf as vf

from vf_kernels import to_mte3, to_v

BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32 = np.dtype(np.float16), np.dtype(np.float32)
_UINT = {2: np.uint16, 4: np.uint32, 1: np.uint8}


def _specials(dt: np.dtype, rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` values of ``dt``: random bit patterns (every NaN payload is as likely as any other pattern),
    with signed zeros, infinities, subnormals and NaNs of both signs and kinds mixed in."""
    u = np.dtype(_UINT[dt.itemsize])
    bits = rng.integers(0, 1 << (8 * dt.itemsize), n, dtype=np.uint64).astype(u)
    if dt.kind in "fV" or dt == BF16:
        width = 8 * dt.itemsize
        sign = 1 << (width - 1)
        exp_bits = {2: 0x7C00 if dt == F16 else 0x7F80, 4: 0x7F800000}[dt.itemsize]
        picks = rng.integers(0, 8, n)
        special = np.array([0, sign, exp_bits, sign | exp_bits, exp_bits | 1, exp_bits | (exp_bits >> 1) | 3, 1,
                            sign | 5], dtype=np.uint64).astype(u)
        use = rng.random(n) < 0.5
        bits[use] = special[picks[use]]
    return bits.view(dt)


class _Lanes:
    """``count`` memories ``stride`` bytes apart in one buffer (as batch_replay.Lanes lays them out)."""

    def __init__(self, count: int, nbytes: int):
        self.count = count
        self.stride = (nbytes + batch_replay._PAD + 4095) // 4096 * 4096
        self.bytes = np.zeros(self.stride * count, np.uint8)

    def tile(self, lane: int, offset: int, dt: np.dtype, rows: int, cols: int, row_elems: int) -> np.ndarray:
        start = lane * self.stride + offset
        flat = self.bytes[start:start + rows * row_elems * dt.itemsize].view(dt)
        return flat.reshape(rows, row_elems)[:, :cols]

    def stack(self, view: np.ndarray) -> np.ndarray:
        return np.lib.stride_tricks.as_strided(view, (self.count, *view.shape), (self.stride, *view.strides),
                                               writeable=True)


def _compare(op, dt_in: np.dtype, dt_out: np.dtype, nsrc: int, rows: int, cols: int, full: bool, seed: int,
             scalars: tuple = (), defer: bool = False, in_place: bool = False) -> None:
    """``op(out, *srcs, *scalars)`` per block and batched over three lanes: the same bytes."""
    count, row_elems = 3, cols if full else cols + 3
    per = rows * row_elems * max(dt_in.itemsize, dt_out.itemsize)
    lanes = _Lanes(count, (nsrc + 1) * per + 64)
    rng = np.random.default_rng(seed)
    srcs = [[lanes.tile(g, i * per, dt_in, rows, cols, row_elems) for i in range(nsrc)] for g in range(count)]
    outs = [srcs[g][0] if in_place else lanes.tile(g, nsrc * per, dt_out, rows, cols, row_elems)
            for g in range(count)]
    for g in range(count):
        for s in srcs[g]:
            s[...] = _specials(dt_in, rng, rows * cols).reshape(rows, cols)
        if not in_place:
            outs[g][...] = _specials(dt_out, rng, rows * cols).reshape(rows, cols)
    before = lanes.bytes.copy()
    with numerics.launch_errstate():
        for g in range(count):  # the block-by-block path: kit.deferred's scratch, then the commit
            if defer:
                scratch = np.empty(outs[g].shape, outs[g].dtype)
                op(scratch, *srcs[g], *scalars)
                outs[g][...] = scratch
            else:
                op(outs[g], *srcs[g], *scalars)
        want = lanes.bytes.copy()
        lanes.bytes[...] = before
        stacked = [lanes.stack(s) for s in srcs[0]]
        commit = batch_replay.deferred(lambda out: op(out, *stacked, *scalars), lanes.stack(outs[0]), defer)
        if commit is not None:
            commit()
    assert np.array_equal(lanes.bytes, want), (rows, cols, full, dt_in, dt_out)


# (rows, cols the batched ops take (batch_replay.exact_width), full width, seed, deferred)
_SHAPES = st.tuples(st.integers(1, 9), st.sampled_from([1, 16, 32, 48, 64, 128]), st.booleans(), st.integers(0, 2**31),
                    st.booleans())


def test_odd_widths_are_not_batched_and_would_differ():
    """The line exact_width draws: a strided 2 x 3 fp32 product whose NaN pairs NumPy resolves one way
    per block and the other way in a batched call (this machine's NumPy), so such regions replay block by
    block."""
    assert not batch_replay.exact_width(3) and batch_replay.exact_width(1) and batch_replay.exact_width(64)
    differs = 0
    for rows, cols, seed in [(r, c, s) for r in (2, 3, 5) for c in (3, 5, 21) for s in range(3)]:
        try:
            _compare(lambda o, a, b: numerics.binary("mul", o, a, b), F32, F32, 2, rows, cols, False, seed,
                     in_place=True)
        except AssertionError:
            differs += 1
    assert differs  # (NumPy 2.4: if another NumPy never differs, exact_width may be too strict, never too loose)


@pytest.mark.parametrize("name", numerics.BINARY_OPS)
@pytest.mark.parametrize("dt", [F16, BF16, F32, np.dtype(np.int16), np.dtype(np.int32)], ids=str)
@settings(max_examples=5, deadline=None)
@given(shape=_SHAPES)
def test_binary_ops_batched_equal_per_block(name, dt, shape):
    if name == "div" and dt.kind == "i":
        return  # an integer division is not batched (a zero divisor stops the launch where it is)
    rows, cols, full, seed, defer = shape
    _compare(lambda o, a, b: numerics.binary(name, o, a, b), dt, dt, 2, rows, cols, full, seed, defer=defer)
    _compare(lambda o, a, b: numerics.binary(name, o, a, b), dt, dt, 2, rows, cols, full, seed, in_place=True)


@pytest.mark.parametrize("name", numerics.SCALAR_OPS)
@pytest.mark.parametrize("dt", [F16, BF16, F32, np.dtype(np.int32)], ids=str)
@settings(max_examples=4, deadline=None)
@given(shape=_SHAPES, scalar=st.sampled_from([0.0, -0.0, 1.5, -3.25, float("inf"), 1e-40, 7]))  # (a NaN scalar: not batched)
def test_scalar_ops_batched_equal_per_block(name, dt, shape, scalar):
    if name == "divs" and dt.kind == "i":
        return
    rows, cols, full, seed, defer = shape
    _compare(lambda o, a, s: numerics.binary_scalar(name, o, a, s), dt, dt, 1, rows, cols, full, seed, (scalar,),
             defer=defer)


@pytest.mark.parametrize("name", numerics.UNARY_OPS)
@pytest.mark.parametrize("dt", [F16, BF16, F32], ids=str)
@settings(max_examples=4, deadline=None)
@given(shape=_SHAPES)
def test_unary_ops_batched_equal_per_block(name, dt, shape):
    rows, cols, full, seed, defer = shape
    _compare(lambda o, a: numerics.unary(name, o, a), dt, dt, 1, rows, cols, full, seed, defer=defer)


@pytest.mark.parametrize("pair", [(F32, F16), (F32, BF16), (F16, F32), (BF16, F32), (F16, BF16), (F32, np.dtype(np.int32)),
                                  (F16, np.dtype(np.int16)), (np.dtype(np.int32), F32), (F32, F32)], ids=str)
@pytest.mark.parametrize("mode", numerics.CAST_MODES)
@settings(max_examples=3, deadline=None)
@given(shape=_SHAPES)
def test_casts_batched_equal_per_block(pair, mode, shape):
    rows, cols, full, seed, defer = shape
    _compare(lambda o, a: numerics.cast(o, a, mode), pair[0], pair[1], 1, rows, cols, full, seed, defer=defer)


def test_gm_windows_stack_as_one_view_only_when_evenly_spaced():
    g = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)
    idx = [(slice(8 * b, 8 * b + 8), slice(0, 16)) for b in range(4)]
    wins = [(g[i], g, i) for i in idx]
    got = batch_replay.gm_stack(wins)
    assert got is not None and np.array_equal(got, np.stack([g[i] for i in idx]))
    got[1, 0, 0] = -1.0  # a view: writes reach the tensor
    assert g[8, 0] == -1.0
    uneven = wins[:2] + [wins[3]]
    assert batch_replay.gm_stack(uneven) is None


def _launch(kernel_fn, blocks: int, args: list, lanes: int, monkeypatch):
    import pypto_pro.language as pl
    from pypto_pro.backends.sim.executor import SimExecutable
    monkeypatch.setattr(batch_replay, "LANES", lanes)
    monkeypatch.setattr(SimExecutable, "_lanes_wanted", True, raising=False)  # lanes from the first launch on
    k = pl.jit(kernel_fn)
    outs = [a.copy() for a in args]
    report = k[None, blocks](*outs)
    return outs, report


def _count_chunks(monkeypatch) -> list[int]:
    """The block count of every chunk replayed in lockstep from now on."""
    sizes: list[int] = []
    orig = batch_replay.replay_chunk

    def counted(schedule, chunk, *rest):
        sizes.append(len(chunk))
        return orig(schedule, chunk, *rest)
    monkeypatch.setattr(batch_replay, "replay_chunk", counted)
    return sizes


def test_add_launch_with_nan_payloads_is_the_same_batched(monkeypatch):
    """The seed Add with NaN payloads, signed zeros, subnormals, infinities in both inputs: outputs and
    the whole report are the same with 8 lanes (blocks in lockstep) and with one (block by block)."""
    from example_modules import load_example
    add = load_example("add")
    rng = np.random.default_rng(3)
    m, n = 1024, 256
    x = _specials(F16, rng, m * n).reshape(m, n)
    y = _specials(F16, rng, m * n).reshape(m, n)
    z = np.zeros((m, n), np.float16)
    chunks = _count_chunks(monkeypatch)
    got, rep = _launch(add.add_kernel.fn, m // 128, [x, y, z], 8, monkeypatch)
    assert chunks and chunks[0] == 7  # blocks 1..7 in lockstep
    want, rep1 = _launch(add.add_kernel.fn, m // 128, [x, y, z], 1, monkeypatch)
    assert got[2].tobytes() == want[2].tobytes()
    assert dataclasses.asdict(rep) == dataclasses.asdict(rep1)
    assert rep.blocks_scheduled == 1  # the other blocks replayed (in lockstep with 8 lanes)


@pytest.mark.parametrize("dt", [F32, np.dtype(np.int32), F16], ids=str)
def test_neg_of_a_strided_column_reads_its_rows(dt):
    """pl.neg of an [n, 1] column of a wider tile (found by the batched-replay comparison): NumPy 2.4's
    negative loop of 32-bit types read such a column as if it were contiguous."""
    x = np.arange(1, 13).reshape(3, 4).astype(dt)
    out = np.zeros((3, 4), dt)
    numerics.unary("neg", out[:, :1], x[:, :1])
    assert out[:, 0].tolist() == [-1, -5, -9] and not out[:, 1:].any()


@pytest.mark.slow
def test_flash_attention_with_specials_is_the_same_batched(monkeypatch):
    """Flash attention (Cube and Vector cores, row reductions, expands, casts, exp) with NaN, infinities
    and signed zeros in its inputs, 4 heads (blocks 1..3 replay in lockstep): outputs and the whole report
    the same as block by block."""
    import warnings

    from example_modules import load_example
    fa = load_example("flash_attention")
    rng = np.random.default_rng(11)
    q, k, v = (rng.standard_normal((1, 4, 128, 64)).astype(np.float16) for _ in range(3))
    q[0, 1, 3, :5] = [np.nan, np.inf, -np.inf, 0.0, -0.0]
    k[0, 2, 7, :3] = [np.nan, -0.0, 6e-8]
    v[0, 3, 9, :2] = [np.inf, np.nan]
    from pypto_pro.backends.sim.executor import SimExecutable
    monkeypatch.setattr(SimExecutable, "_lanes_wanted", True, raising=False)
    chunks = _count_chunks(monkeypatch)
    got = []
    for lanes in (8, 1):
        monkeypatch.setattr(batch_replay, "LANES", lanes)
        kern = fa.make_flash_attention("a5", 64, False, 1, check="warn")
        args = [q, k, v, np.zeros_like(q), fa.causal_mask(), *fa.workspaces(4, 64, 1)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = kern[None, 4](*args)
        got.append(([a.tobytes() for a in args[3:]],
                    {f: v for f, v in dataclasses.asdict(report).items() if f != "trace_files"}))
    assert chunks == [3]
    assert got[0] == got[1]


_ROW = pl.TileType(shape=[1, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
_F32T = pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32]


@pl.vector_function
def _relu_affine(src, dst):
    m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    x = vf.load_align(src, 0)
    y = vf.muls(x, 3.0, m)
    z = vf.adds(y, -1.0, m)
    w = vf.maxs(z, 0.0, m)
    vf.store_align(dst, w, m)


def _vf_rows(a: _F32T, out: _F32T):
    """Each block loads its row of 64 fp32, a VF body maps it (max(x * 3 - 1, 0)) and stores it."""
    ta = pl.make_tile(_ROW, addr=0, size=256)
    to = pl.make_tile(_ROW, addr=256, size=256)
    with pl.section_vector():
        b = pl.get_block_idx()
        pl.load(ta, a, [b, 0])
        to_v()
        _relu_affine(ta, to)
        to_mte3()
        pl.store(out, to, [b, 0])


def test_a_vf_call_in_a_replay_lane_reads_and_writes_that_lanes_ub(monkeypatch):
    """A VF body on a replay lane works on the lane's own UB: a lane's memories are views of one lanes
    buffer, and the body once took that whole buffer for its UB, so lanes 1.. read lane 0's bytes."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((8, 64)).astype(F32)
    want = np.maximum(a * np.float32(3) + np.float32(-1), np.float32(0))
    chunks = _count_chunks(monkeypatch)
    got, _ = _launch(_vf_rows, 8, [a, np.zeros_like(a)], 8, monkeypatch)
    assert chunks == [7]  # blocks 1..7 in lockstep, each on its own lane
    assert got[1].tobytes() == want.tobytes()
    one, _ = _launch(_vf_rows, 8, [a, np.zeros_like(a)], 1, monkeypatch)
    assert got[1].tobytes() == one[1].tobytes()


def test_memory_of_a_lane_view_is_its_carved_memory():
    lanes = batch_replay.Lanes(lambda carve: [carve(4096), carve(1000)], 3, 8192)
    mem = lanes.blocks[2][1]
    assert batch_replay.memory_of(mem[100:200]) is not mem  # a new view of the same bytes
    got = batch_replay.memory_of(mem[100:200].reshape(10, 10)[2:])
    assert got.size == 1000 and got.__array_interface__["data"][0] == mem.__array_interface__["data"][0]
    own = np.zeros(64, np.uint8)
    assert batch_replay.memory_of(own[8:16]) is own
