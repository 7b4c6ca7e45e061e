"""The simulator's fast paths compute the slow paths' bytes (issue 15; a difference is a bug).

* torch as the fp16 engine (backends/sim/torch_engine.py): large fp16 tile ``+`` and ``/`` go to
  torch when it is imported. Compared with NumPy on every fp16 value as the first operand (all NaN
  payloads, signed zeros, subnormals, infinities) against a spread of second operands, in place and
  on strided tile windows, and through whole launches. (``benchmarks/fp16_torch_exact.py`` checks
  all 2^32 pairs.)
* Memoized access records and region views (kit.TileAccess): the same values as computing afresh.
* Boxed tiles through strided box views (fractal.Region.boxes): reads and writes of every window
  shape give the bytes the gather / scatter through the offset map gives.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.backends.sim import fractal, kit, numerics, torch_engine
from pypto_pro.language.enums import NN, NZ, ZN, ZZ
from pypto_pro.backends.sim.tile_state import SlotState
from kernels import add_fn

torch = pytest.importorskip("torch")

EVERY_FP16 = np.arange(1 << 16, dtype=np.uint16).view(np.float16)


def _bits(x: np.ndarray) -> bytes:
    return np.ascontiguousarray(x).tobytes()


def _both(op: str, a: np.ndarray, b: np.ndarray, out_of=None) -> tuple[bytes, bytes]:
    """(torch engine, NumPy) results of ``numerics.binary(op)``; ``out_of(a, b)`` picks the destination
    (default: a fresh array), so in-place forms can be compared."""
    results = []
    for use in (True, False):
        aa, bb = a.copy(), b.copy()
        dst = np.empty_like(aa) if out_of is None else out_of(aa, bb)
        torch_engine.enabled = use
        try:
            numerics.binary(op, dst, aa, bb)
        finally:
            torch_engine.enabled = True
        results.append(_bits(dst))
    return results[0], results[1]


@pytest.fixture
def counted(monkeypatch):
    """Counts the binary ops torch really computed (so a test fails if the fast path never runs)."""
    calls = []
    real = torch_engine.binary_fp16

    def counting(*args):
        done = real(*args)
        calls.append(done)
        return done
    monkeypatch.setattr(torch_engine, "binary_fp16", counting)
    return calls


@pytest.mark.parametrize("op", ["add", "div"])
def test_every_fp16_value_against_a_spread_of_operands(op, counted):
    rng = np.random.default_rng(1)
    others = np.concatenate([rng.integers(0, 1 << 16, 8, dtype=np.uint16),
                             np.array([0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00,
                                       0x7E00, 0xFE00, 0x7C01, 0x7FFF, 0xFFFF, 0x3C00, 0xBC00], np.uint16)])
    for o in others.view(np.float16):
        for a in EVERY_FP16.reshape(4, 128, 128):  # tiles torch_engine takes (MIN/MAX_ELEMENTS)
            b = np.full_like(a, o)
            fast, slow = _both(op, a, b)
            assert fast == slow, f"{op} with second operand 0x{o.view(np.uint16):04x}"
            fast, slow = _both(op, b, a)
            assert fast == slow, f"{op} with first operand 0x{o.view(np.uint16):04x}"
    assert counted and all(counted[i] for i in range(0, len(counted), 2))  # every torch-enabled call used torch


@pytest.mark.parametrize("op", ["add", "div"])
def test_in_place_and_strided_windows(op, counted):
    rng = np.random.default_rng(2)
    mem = rng.integers(0, 1 << 16, (2, 128, 256), dtype=np.uint16).view(np.float16)
    a, b = mem[0, :64, :100], mem[1, :64, :100]  # tile windows: strided rows
    assert _both(op, a, b, out_of=lambda aa, bb: aa)[0] == _both(op, a, b, out_of=lambda aa, bb: aa)[1]
    fast, slow = _both(op, a, b, out_of=lambda aa, bb: bb)
    assert fast == slow
    assert any(counted)


def test_partial_overlap_and_small_tiles_stay_on_numpy(counted):
    buf = np.arange(4096 + 64, dtype=np.float16)
    a, dst = buf[:4096].reshape(64, 64), buf[64:].reshape(64, 64)  # dst overlaps a by all but one row
    want = dst.copy()
    np.add(a, a.copy(), out=want)
    numerics.binary("add", dst, a, a.copy())
    assert _bits(dst) == _bits(want)
    small = np.ones((8, 8), np.float16)
    numerics.binary("add", small, small.copy(), small.copy())
    big = np.arange(4096, dtype=np.float16).reshape(64, 64)
    out = np.empty_like(big)
    numerics.binary("add", out, big, big[::-1])  # a negative stride: torch cannot wrap it
    assert _bits(out) == _bits(np.add(big, big[::-1]))
    assert counted == [False, False, False]


def test_only_ops_proven_exact_go_to_torch(counted):
    a = np.ones((64, 64), np.float16)
    for op in ("sub", "mul", "maximum", "minimum"):  # NaN choice differs from NumPy's (fp16_torch_exact.py)
        numerics.binary(op, np.empty_like(a), a, a.copy())
    assert counted == [False] * 4


def test_a_launch_is_the_same_with_and_without_the_torch_engine(monkeypatch):
    """Whole launches: outputs and every report field, fp16 inputs full of specials."""
    rng = np.random.default_rng(3)
    x = rng.integers(0, 1 << 16, (300, 260), dtype=np.uint16).view(np.float16)  # tail tiles too
    y = rng.integers(0, 1 << 16, (300, 260), dtype=np.uint16).view(np.float16)
    kern = pl.jit(add_fn)
    got = []
    for use in (True, False):
        monkeypatch.setattr(torch_engine, "enabled", use)
        z = np.zeros_like(x)
        report = kern[None, 3](x, y, z)
        got.append((_bits(z), {k: v for k, v in dataclasses.asdict(report).items() if k != "trace_files"}))
    assert got[0] == got[1]


def test_memoized_access_records_equal_fresh_ones():
    for layout, space in ((pl.TensorLayout.ND, pl.MemorySpace.Vec), (pl.TensorLayout.NZ, pl.MemorySpace.Mat)):
        tt = pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=space)
        buf = _buffer(tt)
        raw = np.zeros(2 * 64 * 128 * 2, np.uint8)
        from pypto_pro.backends.sim.fractal import tile_view
        views = [tile_view(raw[i * 16384:], tt, layout) for i in range(2)]
        t = kit.TileAccess(SlotState.create(buf, views, 1, layout))
        for slot, r, c, w in ((0, 64, 128, False), (1, 17, 33, True), (0, 1, 1, True)):
            fresh = (t.keys[slot], w, t.labels[slot], *t._rows(r, c))
            assert t.access(slot, r, c, w) == fresh and t.access(slot, r, c, w) == fresh
            assert t.window(slot, 3, r - 1 if r > 1 else 0, c, w) == (t.keys[slot], w, t.labels[slot],
                                                                      *t._rows(3 + (r - 1 if r > 1 else 0), c))
            assert t.written(slot, r, c) == ((1, space), t.addrs[slot], *t._rows(r, c))
            reg = t.region(slot, r, c)
            assert reg is t.region(slot, r, c)
            want = views[slot][:r, :c]
            assert reg.shape == want.shape
            if isinstance(want, np.ndarray):
                assert np.shares_memory(reg, want)
            else:
                assert np.array_equal(reg.idx, want.idx) and reg.flat is want.flat


def _buffer(tt):
    """A two-slot buffer of ``tt`` (what the frontend's placement makes)."""
    from pypto_pro.ir.nodes import Buffer
    return Buffer("t", tt, (0, 16384), None, True, None)


@pytest.mark.parametrize("dtype", [pl.DT_FP16, pl.DT_FP32, pl.DT_INT8, pl.DT_BF16, pl.DT_FP8E4M3FN])
def test_boxed_windows_read_and_write_the_offset_maps_bytes(dtype):
    rng = np.random.default_rng(4)
    served = 0
    for layout in (NZ, ZN, ZZ, NN):
        for shape, space, fr in (((64, 128), pl.MemorySpace.Mat, None), ((32, 64), pl.MemorySpace.Mat, None),
                                 ((32, 32), pl.MemorySpace.Acc, 1024)):
            try:
                tt = pl.TileType(shape=list(shape), dtype=dtype, target_memory=space, **({"fractal": fr} if fr else {}))
            except Exception:  # a combination the TileType rejects
                continue
            raw = rng.integers(0, 256, 70000, dtype=np.uint8)
            whole = fractal.tile_view(raw, tt, layout)
            served += whole.boxes is not None
            for r, c in (shape, (shape[0] // 2, shape[1]), (16, 32), (5, 7), (1, shape[1]), (0, 3), (999, 999)):
                fast, slow = whole[:r, :c], fractal.Region(whole.flat, whole.idx[:r, :c])
                got, want = fast.read(), slow.read()
                assert got.shape == want.shape and got.tobytes() == want.tobytes() and got.flags.c_contiguous
                assert not np.shares_memory(got, raw)  # a read is a copy: later writes must not show in it
                for wide in (np.float64, np.float32):
                    with np.errstate(all="ignore"):
                        assert fast.astype(wide).tobytes() == slow.astype(wide).tobytes()
                val = rng.integers(0, 256, want.nbytes, dtype=np.uint8).view(want.dtype).reshape(want.shape)
                with np.errstate(all="ignore"):
                    wide = val.astype(np.float64) if val.dtype.kind == "f" else val
                for v in (val, wide):
                    outs = []
                    for boxed in (True, False):
                        mem = raw.copy()
                        t = fractal.tile_view(mem, tt, layout)
                        window = t[:r, :c] if boxed else fractal.Region(t.flat, t.idx[:r, :c])
                        with np.errstate(all="ignore"):
                            window[...] = v
                        outs.append(mem.tobytes())
                    assert outs[0] == outs[1], (layout, shape, r, c)
    assert served  # the fast path ran


def test_a_torch_that_fails_the_probe_is_not_used(monkeypatch, counted):
    assert torch_engine._probe(torch)  # this machine's torch: the bytes agree
    monkeypatch.setattr(torch_engine, "_trusted", None)
    real_add = torch.add
    monkeypatch.setattr(torch, "add", lambda x, y, out=None: real_add(y, x, out=out))  # other NaN choice
    a = np.ones((64, 64), np.float16)
    numerics.binary("add", np.empty_like(a), a, a.copy())
    assert torch_engine._trusted is False and counted == [False]
    monkeypatch.setattr(torch_engine, "_trusted", None)
