"""The batched Cube ops, boxed-tile copies and reductions compute the bytes of the per-block path
(``backends/sim/batch_ops.py``; issue 15: a fast path that gives other bytes is a bug).

Each form is fed random bit patterns (every NaN payload as likely as any other pattern) with signed
zeros, subnormals, infinities and NaNs mixed in, and compared byte for byte with the per-block call
on each lane; whole launches (a GEMM with NaN payloads, flash attention in test_batch_replay.py)
compare outputs and every report field with lanes on and off."""
from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np
import pytest

from pypto_pro.backends.sim import batch_ops, batch_replay, fractal, numerics
from pypto_pro.backends.sim.batch_replay import BatchSpec
from pypto_pro.language.dtypes import DT_BF16, DT_FP16, DT_FP32
from pypto_pro.language.enums import NZ, ZN, MemorySpace
from pypto_pro.language.tile_type import TileType

BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32 = np.dtype(np.float16), np.dtype(np.float32)
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32}
COUNT = 8  # lanes of every comparison (a chunk of batch_replay.LANES blocks)


def _specials(dt: np.dtype, rng: np.random.Generator, n: int) -> np.ndarray:
    u = np.dtype(_UINT[dt.itemsize])
    bits = rng.integers(0, 1 << (8 * dt.itemsize), n, dtype=np.uint64).astype(u)
    if dt.kind == "f" or dt == BF16:
        sign = 1 << (8 * dt.itemsize - 1)
        exp = {2: 0x7C00 if dt == F16 else 0x7F80, 4: 0x7F800000}[dt.itemsize]
        special = np.array([0, sign, exp, sign | exp, exp | 1, exp | (exp >> 1) | 3, 1, sign | 5], np.uint64).astype(u)
        use = rng.random(n) < 0.5
        bits[use] = special[rng.integers(0, 8, n)[use]]
    return bits.view(dt)


class _Lanes:
    """``COUNT`` memories ``stride`` bytes apart in one buffer, with the stacker ``batch_replay.Lanes`` gives."""

    def __init__(self, nbytes: int):
        self.stride = (nbytes + batch_replay._PAD + 4095) // 4096 * 4096
        self.bytes = np.zeros(self.stride * COUNT, np.uint8)
        base = self.bytes.__array_interface__["data"][0]

        def raw(view: np.ndarray) -> np.ndarray:
            off = view.__array_interface__["data"][0] - base
            return np.ndarray((COUNT, *view.shape), view.dtype, self.bytes, off, (self.stride, *view.strides))
        self.stack = raw
        self.stack.raw = raw  # type: ignore[attr-defined]

    def raw(self, lane: int, offset: int, nbytes: int) -> np.ndarray:
        start = lane * self.stride + offset
        return self.bytes[start:start + nbytes]

    def fill(self, rng: np.random.Generator) -> None:
        self.bytes[...] = rng.integers(0, 256, self.bytes.size, dtype=np.uint8)


def _boxed(lanes: _Lanes, offset: int, shape, dt, layout, space=MemorySpace.Mat):
    """Every lane's view of one boxed tile (``fractal.tile_view``) at ``offset``."""
    tt = TileType(shape, dt, space)
    return [fractal.tile_view(lanes.raw(g, offset, 1 << 17), tt, layout) for g in range(COUNT)]


def _finite_specials(lanes: _Lanes, views, dt: np.dtype, rng) -> None:
    for v in views:
        v[...] = _specials(dt, rng, v.size).reshape(v.shape)


# ---- reductions ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["sum", "max", "min"])
@pytest.mark.parametrize("dt", [F16, BF16, F32, np.dtype(np.int32)], ids=str)
@pytest.mark.parametrize("dim", [0, 1])
def test_reductions_batched_equal_per_block(op, dt, dim):
    """Row and column reductions over a leading block axis (each block's work buffer laid out as the single
    block's): the bytes of the per-block tree, for odd and power-of-two widths, full-width and strided."""
    rng = np.random.default_rng(hash((op, str(dt), dim)) % 2**32)
    for rows, cols in [(2, 3), (5, 8), (9, 17), (16, 64), (3, 100), (64, 128), (7, 1), (1, 7)]:
        if (rows if dim == 1 else cols) < 2:
            continue  # (one row / column: not batched, templates._reduce)
        for full in (True, False):
            row_elems = cols if full else cols + 5
            per = rows * row_elems * dt.itemsize
            lanes = _Lanes(2 * per + 4096)
            srcs = [lanes.raw(g, 0, per).view(dt).reshape(rows, row_elems)[:, :cols] for g in range(COUNT)]
            oshape = (rows, 1) if dim == 1 else (1, cols)
            outs = [lanes.raw(g, per + 64, per).view(dt)[:oshape[0] * row_elems].reshape(oshape[0], row_elems)
                    [:, :oshape[1]] for g in range(COUNT)]
            lanes.fill(rng)
            for s in srcs:
                s[...] = _specials(dt, rng, rows * cols).reshape(rows, cols)
            before = lanes.bytes.copy()
            with numerics.launch_errstate():
                for defer in (False, True):
                    lanes.bytes[...] = before
                    for g in range(COUNT):
                        if defer:
                            scratch = np.empty(outs[g].shape, dt)
                            numerics.reduce(op, scratch, srcs[g], dim)
                            outs[g][...] = scratch
                        else:
                            numerics.reduce(op, outs[g], srcs[g], dim)
                    want = lanes.bytes.copy()
                    lanes.bytes[...] = before
                    sb = lanes.stack(srcs[0])
                    commit = batch_replay.deferred(lambda o, sb=sb: numerics.reduce(op, o, sb, dim), lanes.stack(outs[0]),
                                                   defer)
                    if commit is not None:
                        commit()
                    assert np.array_equal(lanes.bytes, want), (rows, cols, full, defer)


# ---- boxed tiles ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", [NZ, ZN], ids=str)
@pytest.mark.parametrize("dt", [DT_FP16, DT_BF16, DT_FP32], ids=lambda d: d.name)
def test_boxed_windows_read_astype_write_as_per_block(layout, dt):
    """``Boxes`` (a boxed window of every lane) reads, converts and writes what ``fractal.Region`` does per lane:
    whole boxes and windows that end inside a box, from a box corner and from a later one."""
    rng = np.random.default_rng(7)
    lanes = _Lanes(1 << 18)
    npdt = np.dtype(dt.np_dtype)
    tiles = _boxed(lanes, 0, (64, 128), dt, layout)
    lanes.fill(rng)
    for t in tiles:
        t.flat[...] = _specials(npdt, rng, t.flat.size)
    for key in [(slice(0, 64), slice(0, 128)), (slice(0, 48), slice(0, 96)), (slice(0, 37), slice(0, 70)),
                (slice(16, 64), slice(32, 128)), (slice(0, 64), slice(64, 80))]:
        wins = [t[key] for t in tiles]
        box = batch_ops.boxes(lanes.stack, wins[0])
        assert box is not None
        got = box.read()
        assert got.tobytes() == np.stack([w.read() for w in wins]).tobytes(), key
        conv = box.astype(np.float64)
        assert conv.tobytes() == np.stack([w.astype(np.float64) for w in wins]).tobytes(), key
        if box.exact:
            values = _specials(npdt, rng, got.size).reshape(got.shape)
            before = lanes.bytes.copy()
            for g, w in enumerate(wins):
                w[...] = values[g].copy()
            want = lanes.bytes.copy()
            lanes.bytes[...] = before
            box.write(values)
            assert np.array_equal(lanes.bytes, want), key


def _prep(data):
    class _P:
        batch = BatchSpec(None, None, data)
    return _P()


@pytest.mark.parametrize("transpose", [False, True])
def test_boxed_copies_batched_equal_per_block(transpose):
    """An L1 -> L0 extract (a boxed window into a boxed tile, transposed or not) and a boxed -> ND copy:
    ``copy_many`` writes the bytes the per-block copies write."""
    rng = np.random.default_rng(5)
    lanes = _Lanes(1 << 19)
    src = _boxed(lanes, 0, (128, 128), DT_FP16, NZ)
    dst = _boxed(lanes, 1 << 17, (64, 64), DT_FP16, ZN if not transpose else NZ, MemorySpace.Left)
    nd = [lanes.raw(g, 3 << 17, 64 * 64 * 2).view(np.float16).reshape(64, 64) for g in range(COUNT)]
    lanes.fill(rng)
    for t in src:
        t.flat[...] = _specials(F16, rng, t.flat.size)
    for r0, c0 in [(0, 0), (64, 32), (16, 64)]:
        for target in (dst, nd):
            wins = [s[r0:r0 + 64, c0:c0 + 64] for s in src]
            dws = [d[:64, :64] for d in target]
            for defer in (False, True):
                before = lanes.bytes.copy()
                for w, d in zip(wins, dws):
                    d[...] = np.asarray(w.T if transpose else w)
                want = lanes.bytes.copy()
                lanes.bytes[...] = before
                assert batch_ops.copyable(wins[0], dws[0])
                commit = batch_ops.copy_many([_prep((wins[0], dws[0], transpose))], lanes.stack, defer)
                assert commit is not NotImplemented
                if commit is not None:
                    commit()
                assert np.array_equal(lanes.bytes, want), (r0, c0, defer)


# ---- the Cube's product ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("acc", [False, True])
@pytest.mark.parametrize("shape", [(64, 128, 64), (128, 64, 128), (16, 32, 48), (48, 16, 32)])
def test_matmul_batched_equal_per_block(acc, shape):
    """``matrix._matmul_many`` (one np.matmul over the block axis) against the per-block product of
    each lane, fp16 operands with NaN payloads, infinities, signed zeros and subnormals, into an NZ Acc tile
    (with ``acc``: added to what the Acc holds, ``pl.matmul_acc``)."""
    from pypto_pro.ops import matrix
    m, k, n = shape
    rng = np.random.default_rng(m * 7 + k + n + acc)
    lanes = _Lanes(1 << 19)
    lhs = [t[:m, :k] for t in _boxed(lanes, 0, (m, k), DT_FP16, NZ, MemorySpace.Left)]
    rhs = [t[:k, :n] for t in _boxed(lanes, 1 << 16, (k, n), DT_FP16, ZN, MemorySpace.Right)]
    out = [t[:m, :n] for t in _boxed(lanes, 1 << 17, (m, n), DT_FP32, NZ, MemorySpace.Acc)]
    lanes.fill(rng)
    for views, dt in ((lhs, F16), (rhs, F16), (out, F32)):
        for v in views:
            v[...] = _specials(dt, rng, m * n if dt == F32 else v.size).reshape(v.shape)
    before = lanes.bytes.copy()
    with numerics.launch_errstate():
        for g in range(COUNT):  # the per-block compute of ops/matrix.py (before its cast-on-copy operands)
            prod = np.asarray(lhs[g]).astype(np.float64) @ np.asarray(rhs[g]).astype(np.float64)
            if acc:
                prod = prod + out[g].astype(np.float64)
            scratch = np.empty((m, n), np.float32)
            scratch[...] = prod.astype(np.float32)
            out[g][...] = scratch
        want = lanes.bytes.copy()
        lanes.bytes[...] = before
        commit = matrix._matmul_many([_prep((lhs[0], rhs[0], out[0] if acc else None, out[0], np.float64,
                                             np.dtype(np.float32)))], lanes.stack, False)
    assert commit is None
    assert np.array_equal(lanes.bytes, want)


# ---- whole launches -----------------------------------------------------------------------------------------------


def _count_batched(monkeypatch) -> dict:
    """How many steps each batched form ran from now on (run_many calls that did not fall back)."""
    counts: dict = {}
    orig = batch_replay._run_step

    def step(preps, stack, defer):
        spec = preps[0].batch
        if spec is not None and all(p.batch is not None and p.batch.key == spec.key for p in preps):
            name = getattr(spec.run_many, "__name__", "?")
            counts[name] = counts.get(name, 0) + 1
        return orig(preps, stack, defer)
    monkeypatch.setattr(batch_replay, "_run_step", step)
    return counts


def test_gemm_launch_with_nan_payloads_is_the_same_batched(monkeypatch):
    """The example GEMM (a2a3: L1 -> L0 extracts of NZ / ZN tiles, matmul and matmul_acc into an NZ Acc, the
    fixpipe store) with NaN payloads, infinities and signed zeros in both operands, 8 blocks: outputs and the
    whole report the same with 8 lanes (blocks 1..7 in lockstep, the Cube ops batched) and block by block."""
    from example_modules import load_example

    from pypto_pro.backends.sim.executor import SimExecutable
    monkeypatch.setattr(batch_ops, "BATCH_CUBE", True)
    mm = load_example("matmul")
    rng = np.random.default_rng(2)
    a = rng.standard_normal((512, 256)).astype(np.float16)
    b = rng.standard_normal((256, 512)).astype(np.float16)
    for x in (a, b):
        flat = x.reshape(-1)
        pick = rng.random(flat.size) < 0.01
        flat[pick] = _specials(F16, rng, int(pick.sum()))
    monkeypatch.setattr(SimExecutable, "_lanes_wanted", True, raising=False)
    counts = _count_batched(monkeypatch)
    got = []
    for lanes in (8, 1):
        monkeypatch.setattr(batch_replay, "LANES", lanes)
        kern = mm.make_matmul("a2a3")
        c = np.zeros((512, 512), np.float32)
        report = kern[None, 8](a, b, c)
        got.append((c.tobytes(), dataclasses.asdict(report)))
        if lanes == 8:
            assert counts.get("_matmul_many") and counts.get("copy_many"), counts
    assert got[0] == got[1]


@pytest.mark.parametrize("dt", [DT_FP16, DT_BF16], ids=lambda d: d.name)
@pytest.mark.parametrize("layout", [NZ, ZN], ids=str)
def test_cube_operands_convert_the_same_from_any_layout(dt, layout):
    """Every one of the 65,536 fp16 / bf16 bit patterns (NaN payloads, signalling and quiet, both signs)
    converts to the same float64 bits read out of a boxed tile and converted (the old path) as converted
    while it is copied out of the boxes (``matrix.CAST_ON_COPY``, ``fractal.Region.astype``)."""
    from pypto_pro.ops.matrix import CAST_ON_COPY
    assert dt in CAST_ON_COPY
    npdt = np.dtype(dt.np_dtype)
    raw = np.zeros(1 << 17, np.uint8)
    tile = fractal.tile_view(raw, TileType((256, 256), dt, MemorySpace.Left), layout)
    assert tile.boxes is not None
    tile.flat[...] = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(npdt)
    with np.errstate(all="ignore"):
        for win in (tile, tile[:256, :256], tile[16:256, 32:256], tile[:100, :77]):
            assert win.astype(np.float64).tobytes() == np.asarray(win).astype(np.float64).tobytes()
