"""The rules' memo of dispatched records (``backends/sim/prep_memo.py``) must be invisible.

Each case runs a kernel with the memo on and off (``prep_memo.ENABLED``) and compares outputs (NaN
payloads, signed zeros, subnormals and infinities in the inputs and in scalar operands), every report
field and the trace files byte for byte; the bug catalogue's broken kernels must fault with the same
located messages. Unit tests pin the memo's keys (scalars by type and bytes, valid shapes, extra
state), its cap, and when it is emptied (batched-replay lanes changed, a launch's tensors bound or
released, a recompiled kernel).
"""
from __future__ import annotations

import gc
import math
import struct
import weakref
from pathlib import Path

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.backends.sim import batch_replay, prep_memo
from pypto_pro.backends.sim.kit import GMBinding
from example_modules import load_example
from kernels import add_fn
from launch_compare import assert_same, capture, specials


@pytest.fixture(autouse=True)
def _no_launch_memo(monkeypatch):
    monkeypatch.setenv("PYPTO_PRO_SIM_MEMO", "0")  # every launch simulates


def _launch(kernel, args: list, blocks: int, on: bool, trace: Path | None, monkeypatch, check: str = "raise"):
    monkeypatch.setattr(prep_memo, "ENABLED", on)
    return capture(kernel, args, blocks, trace, check, catch=True)  # a located fault: its message must be the same


def _same(kernel, args, blocks, tmp_path, monkeypatch, check="raise", trace=True):
    on = _launch(kernel, args, blocks, True, tmp_path / "on" if trace else None, monkeypatch, check)
    off = _launch(kernel, args, blocks, False, tmp_path / "off" if trace else None, monkeypatch, check)
    return assert_same(on, off, "on", "off")


# ---- on vs off -----------------------------------------------------------------------------------


@pytest.mark.parametrize("arch", ["a5", "a2a3"])
@pytest.mark.parametrize("causal,preload", [(True, 1), (False, 2), (False, 0)])
def test_flash_attention_memo_on_vs_off(arch, causal, preload, tmp_path, monkeypatch):
    fa = load_example("flash_attention")
    rng = np.random.default_rng(11)
    q, k, v = (specials((1, 2, 256, 64), rng) for _ in range(3))
    args = [q, k, v, np.zeros_like(q), fa.causal_mask(), *fa.workspaces(3, 64, preload)]
    rep = _same(fa.make_flash_attention(arch, 64, causal, preload), args, 3, tmp_path, monkeypatch)
    assert isinstance(rep, dict) and rep["cycles"] > 0


@pytest.mark.parametrize("check", ["raise", "warn", "off"])
def test_add_tail_tiles_memo_on_vs_off(check, tmp_path, monkeypatch):
    rng = np.random.default_rng(12)
    x, y = specials((1000, 300), rng), specials((1000, 300), rng)
    _same(pl.jit(add_fn, arch="a5"), [x, y, np.zeros_like(x)], 3, tmp_path, monkeypatch, check)


def test_matmul_memo_on_vs_off(tmp_path, monkeypatch):
    mm = load_example("matmul")
    rng = np.random.default_rng(13)
    a = specials((256, 256), rng)
    b = specials((256, 256), rng)
    _same(mm.make_matmul("a2a3"), [a, b, np.zeros((256, 256), np.float32)], 4, tmp_path, monkeypatch)


@pl.jit
def _signed_scalars(x: pl.Tensor[[512, 64], pl.DT_FP32], z: pl.Tensor[[512, 64], pl.DT_FP32], s: pl.DT_FP32):
    """Each tile times ``s * (i % 3 - 1)``: with ``s = 0.0`` the scalar is ``-0.0``, ``0.0``, ``0.0``, ..."""
    g = pl.make_tile_group(type=pl.TileType([16, 64], pl.DT_FP32, pl.MemorySpace.Vec), addrs=0, mutex_ids=[0, 1])
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), 32, pl.get_block_num()):
            t = g.next()
            pl.load_tile(t, x, [i, 0])
            pl.muls(t, t, s * (i % 3 - 1))
            pl.store_tile(z, t, [i, 0])


@pytest.mark.parametrize("s", [0.0, -0.0, math.inf, struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000123))[0],
                               5e-324, 1.5])
def test_scalar_operands_are_told_apart(s, tmp_path, monkeypatch):
    rng = np.random.default_rng(14)
    x = specials((512, 64), rng, np.float32)
    x[::2] = 1.0  # rows whose product is the scalar's sign and value
    _same(_signed_scalars, [x, np.zeros_like(x), s], 2, tmp_path, monkeypatch)
    if s == 0.0:  # a signed zero per tile, by the scalar's sign: a memo hit across the two would lose it
        monkeypatch.setattr(prep_memo, "ENABLED", True)
        z = np.zeros_like(x)
        _signed_scalars[None, 2](x, z, s)
        want = np.array([(i % 3 == 0) != (math.copysign(1.0, s) < 0) for i in range(32)])
        assert (np.signbit(z[::16, 0]) == want).all()


def _catalogue_cases() -> list:
    import test_bug_catalogue as cat  # the broken kernels of the bug catalogue (same directory)
    return [pytest.param(cat, bug, fn, arch, id=f"{bug.kind}-{'bug' if fn is bug.fn else 'fixed'}-{arch}")
            for bug in cat.CATALOGUE for arch in bug.archs for fn in (bug.fn, bug.fixed)]


@pytest.mark.parametrize("cat,bug,fn,arch", _catalogue_cases())
def test_bug_catalogue_memo_on_vs_off(cat, bug, fn, arch, tmp_path, monkeypatch):
    """Faults (races, out-of-bounds, valid-shape faults, deadlocks) come at the same source lines."""
    kern = cat.kernel(fn, arch)
    assert _launch(kern, bug.args(), bug.blocks, True, None, monkeypatch, "warn") == \
        _launch(kern, bug.args(), bug.blocks, False, None, monkeypatch, "warn")


def test_located_fault_raised_again_after_hits(monkeypatch):
    """A tail block whose store leaves the tensor faults at its line with the memo holding earlier hits."""
    monkeypatch.setattr(prep_memo, "ENABLED", True)
    kern = pl.jit(add_fn)
    x = np.ones((640, 128), np.float16)
    z = np.zeros((512, 128), np.float16)  # the fifth row of tiles is past z's end
    msgs = []
    for on in (True, False):
        monkeypatch.setattr(prep_memo, "ENABLED", on)
        with pytest.raises(Exception) as err:
            kern[None, 2](x, x, z.copy())
        msgs.append(str(err.value))
    assert msgs[0] == msgs[1] and "kernels.py:" in msgs[0]


# ---- invalidation --------------------------------------------------------------------------------


def test_relaunch_with_other_tensors_and_shapes(monkeypatch):
    """A load's records view the launch's tensors: the next launch (other tensors, other shapes of a
    dynamic-shape kernel: other tail tiles) must not get them."""
    monkeypatch.setattr(prep_memo, "ENABLED", True)
    kern = pl.jit(add_fn)
    rng = np.random.default_rng(15)
    for shape in [(256, 256), (256, 256), (300, 200), (130, 257), (256, 256)]:
        x = rng.standard_normal(shape).astype(np.float16)
        y = rng.standard_normal(shape).astype(np.float16)
        z = np.zeros_like(x)
        kern[None, 3](x, y, z)
        assert np.array_equal(z, x + y)
        runners = [r for e in kern._cache.values() for r in e.executable.runners]
        assert all(not m for r in runners for m in r.gm.memos)  # emptied when the launch released its tensors


def test_memo_does_not_keep_the_launch_tensors(monkeypatch):
    monkeypatch.setattr(prep_memo, "ENABLED", True)
    kern = pl.jit(add_fn)
    x = np.ones((256, 128), np.float16)
    y = np.full_like(x, 2)
    z = np.zeros_like(x)
    kern[None, 2](x, y, z)
    refs = [weakref.ref(a) for a in (x, y, z)]
    was = gc.isenabled()
    gc.disable()  # freed by reference counting alone: no cycle holds them
    try:
        del x, y, z
        assert all(r() is None for r in refs)
    finally:
        if was:
            gc.enable()


def test_recompiled_kernel_starts_with_empty_memos(monkeypatch):
    """Other constexprs (here the head dim and the causal flag) give another program with its own rules."""
    monkeypatch.setattr(prep_memo, "ENABLED", True)
    fa = load_example("flash_attention")
    rng = np.random.default_rng(16)
    outs = []
    for d, causal in [(64, False), (128, False), (64, True)]:
        q, k, v = (rng.standard_normal((1, 1, 128, d)).astype(np.float16) for _ in range(3))
        o = np.zeros_like(q)
        fa.make_flash_attention("a5", d, causal, 1)[None, 2](q, k, v, o, fa.causal_mask(), *fa.workspaces(2, d, 1))
        monkeypatch.setattr(prep_memo, "ENABLED", False)
        o2 = np.zeros_like(q)
        fa.make_flash_attention("a5", d, causal, 1)[None, 2](q, k, v, o2, fa.causal_mask(), *fa.workspaces(2, d, 1))
        monkeypatch.setattr(prep_memo, "ENABLED", True)
        assert o.tobytes() == o2.tobytes()
        outs.append(o)
    assert outs[0].shape != outs[1].shape


# ---- the memo itself -----------------------------------------------------------------------------


class _Rec:
    """A stand-in record (what a dispatch returns)."""

    def __init__(self, args, shape):
        self.args, self.shape = args, shape


def _counting(valid: list):
    calls = []

    def dispatch(*args):
        calls.append(args)
        if args[0] < 0:
            raise ValueError(f"bad slot {args[0]}")
        return _Rec(args, tuple(valid[args[0]]))
    return dispatch, calls


def test_keys_tell_scalars_apart_by_type_and_bytes(monkeypatch):
    monkeypatch.setattr(prep_memo, "ENABLED", True)
    valid = [[16, 64]]
    dispatch, calls = _counting(valid)
    memo = prep_memo.memoized(dispatch, [(0, valid)], scalars_from=1)
    nan1 = struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000001))[0]
    nan2 = struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000002))[0]
    values = [0.0, -0.0, 1, 1.0, True, np.float32(1.0), np.float16(1.0), nan1, nan2, math.inf]
    recs = [memo(0, v) for v in values]
    assert len(calls) == len(values)  # no two of them share a record
    assert all(r.args[1] is v for r, v in zip(recs, values))  # each record made from its own scalar
    again = [memo(0, v) for v in (0.0, -0.0, True, nan1)]
    assert len(calls) == len(values)  # hits: the same bytes and type (a NaN payload included)
    assert again[1] is recs[1] and again[2] is recs[4] and again[3] is recs[7]


def test_keys_hold_the_valid_shapes_and_the_state(monkeypatch):
    monkeypatch.setattr(prep_memo, "ENABLED", True)
    valid = [[16, 64], [16, 64]]
    state = {"stride": None}
    dispatch, calls = _counting(valid)
    memo = prep_memo.memoized(dispatch, [(0, valid), (1, valid)], state=lambda: state["stride"])
    a = memo(0, 1)
    assert memo(0, 1) is a and len(calls) == 1
    valid[1][0] = 8  # pl.set_validshape of the second operand's slot
    b = memo(0, 1)
    assert b is not a and len(calls) == 2
    valid[1][0] = 16
    assert memo(0, 1) is a  # back to the first shape: its record again
    state["stride"] = (1, 64)
    assert memo(0, 1) is not a and len(calls) == 3
    assert memo(np.int64(0), 1) is not a  # an argument of another type is another key


def test_faults_are_not_kept_and_cap_and_lanes(monkeypatch):
    monkeypatch.setattr(prep_memo, "ENABLED", True)
    valid = [[1, 1]] * 8
    dispatch, calls = _counting(valid)
    memo = prep_memo.memoized(dispatch, [(0, valid)], scalars_from=1, cap=3)
    for _ in range(2):
        with pytest.raises(ValueError):
            memo(-1, 0.5)
    assert len(calls) == 2 and not memo.memo
    for s in range(5):
        memo(0, float(s))
    assert len(memo.memo) == 3  # capped: later keys dispatch afresh every call
    memo(0, 4.0)
    assert len(calls) == 2 + 5 + 1
    monkeypatch.setattr(batch_replay, "LANES", batch_replay.LANES + 7)  # Prepared.batch depends on the lanes
    memo(0, 0.0)
    assert len(memo.memo) == 1 and len(calls) == 2 + 5 + 1 + 1


def test_off_dispatches_every_call(monkeypatch):
    monkeypatch.setattr(prep_memo, "ENABLED", False)
    valid = [[1, 1]]
    dispatch, calls = _counting(valid)
    memo = prep_memo.memoized(dispatch, [(0, valid)])
    assert memo(0) is not memo(0) and len(calls) == 2 and not memo.memo


def test_keep_and_the_gm_binding(monkeypatch):
    monkeypatch.setattr(prep_memo, "ENABLED", True)
    valid = [[1, 1]]
    dispatch, _ = _counting(valid)
    gm = GMBinding(1)
    ok = [False]
    memo = prep_memo.memoized(dispatch, [(0, valid)], gm=gm, keep=lambda: ok[0])
    memo(0)
    assert not memo.memo  # keep() said no (a strided load read GM at dispatch)
    ok[0] = True
    memo(0)
    assert memo.memo and memo.memo in gm.memos
    gm.bind([np.zeros(4)])
    assert not memo.memo
    memo(0)
    gm.release()
    assert not memo.memo


def test_a_site_that_rarely_hits_stops_keying(monkeypatch):
    monkeypatch.setattr(prep_memo, "ENABLED", True)
    monkeypatch.setattr(prep_memo, "TRIAL", 16)
    valid = [[1, 1]]
    dispatch, calls = _counting(valid)
    memo = prep_memo.memoized(dispatch, [(0, valid)], scalars_from=1)
    for s in range(15):  # every call another scalar: no hit
        memo(0, float(s))
    assert len(memo.memo) == 15 and not memo.counts[2]
    assert memo(0, 1.0) is memo(0, 1.0)  # two hits, then a miss after TRIAL calls with 2 hits in 18
    memo(0, 99.0)
    assert memo.counts[2] and not memo.memo
    n = len(calls)
    assert memo(0, 1.0) is not memo(0, 1.0) and len(calls) == n + 2  # every call dispatched afresh
    # a site that hits stays on
    dispatch, calls = _counting(valid)
    memo = prep_memo.memoized(dispatch, [(0, valid)], scalars_from=1)
    for i in range(64):
        memo(0, float(i % 4))
    assert not memo.counts[2] and len(calls) == 4
