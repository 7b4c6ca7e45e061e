"""Cross-core synchronisation of mixed Cube + Vector kernels: broken kernels the simulator must
catch, with the right exception and the source lines of the instructions involved, and the correct
kernels (the fixed variants and the examples) running without a single fault.

Model (recorder.py / scheduler.py / executor.py): a kernel with Cube code runs each block as one
AIC plus two AIVs scheduled together. ``set_cross_core`` in the Cube program signals *every* Vector
core of the block; a Vector core's ``set_cross_core`` signals the Cube, whose ``wait_cross_core``
waits for one signal from *each* Vector core. Signals are counters (pending signals queue up).

The kernels are small (one block, two 32-row tiles, K = 32) and use the usual two-flag hand-off:
READY (Cube -> Vector: "the accumulator is in the workspace / in your UB") and FREE (Vector -> Cube:
"I have read it, you may overwrite it"); the Vector cores pre-signal FREE once and the Cube drains
the last FREE at the end, so no signal is left pending. Each bug is one ``bug=...`` switch of the
kernel factory; the lines the messages must name are found through ``# <- name`` markers.
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import DeadlockError, RaceError, SyncError
from pypto_pro.errors_sim import UninitializedReadError
from example_modules import load_example
from kernels import make_acc_to_vec_split
from located import line_of

DYN = pl.DYNAMIC
Mat, Left, Right, Acc, Vec = (pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right, pl.MemorySpace.Acc,
                              pl.MemorySpace.Vec)
R, K, N = 32, 32, 32    # rows of x per tile (each Vector core takes R/2), depth, columns
HALF = R // 2
TILES = 2
READY, FREE = 1, 0      # cross-core event ids
FIX, MTE2, V = pl.PipeType.FIX, pl.PipeType.MTE2, pl.PipeType.V


def cube_tiles():
    """(inlined, before the sections) the Cube's tile groups: x tiles in Mat (two slots) and Left, w in
    Mat and Right, a two-slot Acc; mutex ids 0-6. Returns ``(a1, b1, a0, b0, acc_g)``."""
    a1 = pl.make_tile_group(type=pl.TileType([R, K], pl.DT_FP16, Mat), addrs=0x0000, mutex_ids=[0, 1])
    b1 = pl.make_tile_group(type=pl.TileType([K, N], pl.DT_FP16, Mat), addrs=[0x4000], mutex_ids=[2])
    a0 = pl.make_tile_group(type=pl.TileType([R, K], pl.DT_FP16, Left), addrs=[0], mutex_ids=[3])
    b0 = pl.make_tile_group(type=pl.TileType([K, N], pl.DT_FP16, Right), addrs=[0], mutex_ids=[4])
    acc_g = pl.make_tile_group(type=pl.TileType([R, N], pl.DT_FP32, Acc), addrs=0, mutex_ids=[5, 6])
    return a1, b1, a0, b0, acc_g


def load_w(cube, w):
    """(inlined, in section_cube) w into Mat and on to Right; returns the Right tile."""
    a1, b1, a0, b0, acc_g = cube
    lb = b1[0]
    xb = b0[0]
    pl.load(lb, w, [0, 0])
    pl.move(xb, lb)
    return xb


def product(cube, x, i, xb):
    """(inlined, in the Cube's tile loop) row tile ``i`` of x @ w into the next Acc slot; returns it."""
    a1, b1, a0, b0, acc_g = cube
    la = a1.next()
    xa = a0[0]
    acc = acc_g.next()
    pl.load_tile(la, x, [i, 0])
    pl.move(xa, la)
    pl.matmul(acc, xa, xb)
    return acc


def inputs(tiles: int = TILES, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((tiles * R, K)).astype(np.float16)
    w = rng.standard_normal((K, N)).astype(np.float16)
    out = np.full((tiles * R, N), np.nan, np.float32)
    return x, w, out


def expected(x, w):
    return 2.0 * (x.astype(np.float64) @ w.astype(np.float64))


def check_result(out, x, w):
    exact = expected(x, w)
    bound = 2e-5 * (np.abs(x.astype(np.float64)) @ np.abs(w.astype(np.float64)))  # see test_cube_examples
    assert np.isfinite(out).all() and (np.abs(out - exact) <= bound).all()


# =================================================================================================
# a2a3: through a global-memory workspace (one slot: the Cube must wait for FREE before reusing it)
# =================================================================================================


def make_ws_kernel(bug: str | None = None):
    def ws_kernel(x: pl.Tensor[[DYN, K], pl.DT_FP16], w: pl.Tensor[[K, N], pl.DT_FP16],
                  ws: pl.Tensor[[DYN, N], pl.DT_FP32], out: pl.Tensor[[DYN, N], pl.DT_FP32]):
        cube = cube_tiles()
        ub_g = pl.make_tile_group(type=pl.TileType([HALF, N], pl.DT_FP32, Vec), addrs=0, mutex_ids=[7, 8])
        tiles = x.shape[0] // R
        with pl.section_cube():
            xb = load_w(cube, w)
            for i in pl.range(0, tiles, 1):
                acc = product(cube, x, i, xb)
                if bug != "cube_reuses_slot":
                    pl.system.wait_cross_core(pipe=FIX, event_id=FREE)  # <- cube_wait_free
                pl.store(ws, acc, [0, 0])  # <- cube_store
                if bug != "cube_never_signals":
                    pl.system.set_cross_core(pipe=FIX, event_id=READY)  # <- cube_set_ready
            if bug != "cube_no_drain" and bug != "cube_reuses_slot":
                pl.system.wait_cross_core(pipe=FIX, event_id=FREE)  # <- cube_drain
        with pl.section_vector():
            sub = pl.get_subblock_idx()
            pl.system.set_cross_core(pipe=MTE2, event_id=FREE)  # <- vec_prefree
            for i in pl.range(0, tiles, 1):
                t = ub_g.next()
                if bug != "vector_no_wait":
                    pl.system.wait_cross_core(pipe=MTE2, event_id=READY)  # <- vec_wait_ready
                pl.load(t, ws, [sub * HALF, 0])  # <- vec_load
                pl.system.set_cross_core(pipe=MTE2, event_id=FREE)  # <- vec_set_free
                pl.muls(t, t, 2.0)
                pl.store(out, t, [i * R + sub * HALF, 0])

    return ws_kernel


_KERNELS: dict = {}


def ws_kernel(bug=None, arch="a2a3", check="raise"):
    key = ("ws", bug, arch)
    if key not in _KERNELS:
        _KERNELS[key] = pl.jit(make_ws_kernel(bug), arch=arch)
    return _KERNELS[key].options(check=check)


def run_ws(bug=None, arch="a2a3", check="raise", tiles=TILES):
    x, w, out = inputs(tiles)
    ws = np.zeros((R, N), np.float32)
    report = ws_kernel(bug, arch, check)[None, 1](x, w, ws, out)
    return report, x, w, out


SRC_WS = make_ws_kernel()


@pytest.mark.parametrize("arch", ["a2a3", "a5"])
def test_ws_kernel_correct_no_faults(arch):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report, x, w, out = run_ws(None, arch, check="warn", tiles=3)
    assert report.faults == []
    check_result(out, x, w)
    assert report.pipe_busy.get("AIC.M", 0) > 0
    assert report.pipe_busy.get("AIV0.MTE2", 0) > 0 and report.pipe_busy.get("AIV1.MTE2", 0) > 0


def test_vector_loads_without_waiting_for_ready():
    """The Vector cores load the workspace without waiting for READY: their loads race with the
    Cube's store of the accumulator (global memory, across cores)."""
    with pytest.raises(RaceError) as info:
        run_ws("vector_no_wait")
    msg = str(info.value)
    assert re.search(r"data race on global 'ws'\[", msg), msg
    # (the Cube's instructions are described without a core prefix: "store on FIX (...)")
    assert re.search(rf"store on (AIC\.)?FIX \({re.escape(line_of(SRC_WS, 'cube_store'))}\)", msg), msg
    assert re.search(rf"load on AIV[01]\.MTE2 \({re.escape(line_of(SRC_WS, 'vec_load'))}\)", msg), msg


@pytest.mark.parametrize("arch", ["a2a3", "a5"])
def test_cube_never_signals_ready_deadlocks(arch):
    """The Cube never sets READY: each Vector core's wait_cross_core waits forever. On a5 the wait is
    part of its pipe's queue (fused into the load); on a2a3 it stalls the scalar unit (``wait_flag_dev``):
    a record of its own on S, and the load (and the rest of the core) is held behind it."""
    with pytest.raises(DeadlockError) as info:
        run_ws("cube_never_signals", arch)
    msg = str(info.value)
    wait = re.escape(line_of(SRC_WS, "vec_wait_ready"))
    free = re.escape(line_of(SRC_WS, "cube_wait_free"))
    if arch == "a5":
        for core in ("AIV0", "AIV1"):
            assert re.search(rf"{core}\.MTE2 +blocked at load \({re.escape(line_of(SRC_WS, 'vec_load'))}.*waiting for "
                             rf"wait_cross_core\(event={READY}\) at {wait}: 0 of 1 signal\(s\) arrived", msg), msg
        # the Cube is blocked too: for the second tile it waits for FREE from both Vector cores (their
        # pre-signalled FREE was used by the first tile), which never come
        assert re.search(rf"AIC\.FIX +blocked at store .* wait_cross_core\(event={FREE}\) at "
                         rf"{free}: 0 of 2 signal\(s\) arrived", msg), msg
        return
    for core in ("AIV0", "AIV1"):
        assert re.search(rf"{core}\.S +blocked at xwait \({wait}.*waiting for "
                         rf"wait_cross_core\(event={READY}\) at {wait}: 0 of 1 signal\(s\) arrived", msg), msg
        assert re.search(rf"{core}\.MTE2(, {core}\.\w+)*: held by the scalar unit, stalled at wait_cross_core at {wait}",
                         msg), msg
    assert re.search(rf"AIC\.S +blocked at xwait \({free}.* wait_cross_core\(event={FREE}\) at "
                     rf"{free}: 0 of 2 signal\(s\) arrived", msg), msg


def test_cube_reuses_workspace_slot_without_waiting_for_free():
    """The Cube stores the next accumulator into the one workspace slot without waiting for FREE:
    the store races with a Vector core's load of the previous tile. (The two FIX stores to one
    window are ordered: auto sync puts a FIX barrier between them, a2a3's FIX queue being out of
    order, so the race is the only fault.)"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report, *_ = run_ws("cube_reuses_slot", check="warn")
    texts = [str(f) for f in report.faults]
    assert not any("same-pipe hazard" in t for t in texts), texts
    msg = next(t for t in texts if "data race on global 'ws'[" in t)
    assert re.search(r"data race on global 'ws'\[", msg), msg
    # (the Cube's instructions are described without a core prefix: "store on FIX (...)")
    assert re.search(rf"store on (AIC\.)?FIX \({re.escape(line_of(SRC_WS, 'cube_store'))}\)", msg), msg
    assert re.search(rf"load on AIV[01]\.MTE2 \({re.escape(line_of(SRC_WS, 'vec_load'))}\)", msg), msg


def test_cross_core_signal_never_waited_for_is_a_note():
    """The Cube does not drain the Vector cores' last FREE: signals pending at kernel end. A
    cross-core flag is a counter (PTO-ISA set-cross-core), so a count left over changes nothing in
    the launch (the real datacopy tail kernels end like this): a note per sending Vector core,
    naming the set line, and no fault."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report, x, w, out = run_ws("cube_no_drain")
    check_result(out, x, w)
    assert report.faults == []
    notes = [n for n in report.notes if "never waited for" in n]
    assert len(notes) == 2, report.notes  # one per Vector core
    for n in notes:
        assert re.search(rf"cross-core event {FREE} to AIC is signalled but never waited for \(1 pending at kernel "
                         rf"end\)", n), n
        assert line_of(SRC_WS, "vec_set_free") in n, n
    assert {"AIV0" in n for n in notes} == {True, False}


def test_signal_notes_in_warn_mode_and_none_when_off():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report, *_ = run_ws("cube_no_drain", check="warn")
    assert report.faults == [] and sum("never waited for" in n for n in report.notes) == 2
    report, *_ = run_ws("vector_no_wait", check="off")
    assert report.faults == []


# =================================================================================================
# a5: direct L0C -> UB moves into each Vector core's UB
# =================================================================================================


def make_direct_kernel(bug: str | None = None):
    def direct_kernel(x: pl.Tensor[[DYN, K], pl.DT_FP16], w: pl.Tensor[[K, N], pl.DT_FP16],
                      out: pl.Tensor[[DYN, N], pl.DT_FP32]):
        cube = cube_tiles()
        ub = pl.make_tile_group(type=pl.TileType([HALF, N], pl.DT_FP32, Vec), addrs=[0], mutex_ids=[7])[0]
        res_g = pl.make_tile_group(type=pl.TileType([HALF, N], pl.DT_FP32, Vec), addrs=0x1000, mutex_ids=[8, 9])
        tiles = x.shape[0] // R
        with pl.section_cube():
            xb = load_w(cube, w)
            for i in pl.range(0, tiles, 1):
                acc = product(cube, x, i, xb)
                pl.system.wait_cross_core(pipe=FIX, event_id=FREE)
                for s in range(2):
                    mode = pl.AccToVecMode.SingleModeVec0 if s == 0 else pl.AccToVecMode.SingleModeVec1
                    pl.move(ub, acc, offset=[s * HALF, 0], acc_to_vec_mode=mode)  # <- cube_move
                pl.system.set_cross_core(pipe=FIX, event_id=READY)
            pl.system.wait_cross_core(pipe=FIX, event_id=FREE)
        with pl.section_vector():
            sub = pl.get_subblock_idx()
            pl.system.set_cross_core(pipe=V, event_id=FREE)
            if bug == "wait_hoisted":
                pl.system.wait_cross_core(pipe=V, event_id=READY)  # waits for the first tile only
            for i in pl.range(0, tiles, 1):
                r = res_g.next()
                if bug is None:
                    pl.system.wait_cross_core(pipe=V, event_id=READY)
                pl.muls(r, ub, 2.0)  # <- vec_read
                pl.system.set_cross_core(pipe=V, event_id=FREE)
                pl.store(out, r, [i * R + sub * HALF, 0])

    return direct_kernel


SRC_DIRECT = make_direct_kernel()


def run_direct(bug=None, check="raise", tiles=TILES):
    key = ("direct", bug)
    if key not in _KERNELS:
        _KERNELS[key] = pl.jit(make_direct_kernel(bug), arch="a5")
    x, w, out = inputs(tiles, seed=1)
    report = _KERNELS[key].options(check=check)[None, 1](x, w, out)
    return report, x, w, out


def test_direct_kernel_correct_no_faults():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report, x, w, out = run_direct(None, check="warn", tiles=3)
    assert report.faults == []
    check_result(out, x, w)
    assert report.path_bytes.get("Acc->Vec", 0) == 3 * R * N * 4


def test_vector_reads_ub_before_the_move_is_signalled():
    """The Vector cores wait for READY once, before the loop: on the second tile they read their UB
    tile while (or before) the Cube's Acc -> Vec move overwrites it: a race across cores on the UB."""
    with pytest.raises(RaceError) as info:
        run_direct("wait_hoisted")
    msg = str(info.value)
    assert re.search(r"data race on Vec bytes 0x0-0x800 \(ub\)", msg), msg
    assert re.search(rf"fixpipe on (AIC\.)?FIX \({re.escape(line_of(SRC_DIRECT, 'cube_move'))}\)", msg), msg
    assert re.search(rf"muls on AIV[01]\.V \({re.escape(line_of(SRC_DIRECT, 'vec_read'))}\)", msg), msg


# =================================================================================================
# Semantics the docs promise (findings: xfail until fixed)
# =================================================================================================


def make_one_sided_free_kernel():
    """AIV0 signals the Cube twice, AIV1 never: the Cube's wait needs one signal from EACH Vector core."""
    def one_sided(x: pl.Tensor[[DYN, DYN], pl.DT_FP16], out: pl.Tensor[[DYN, DYN], pl.DT_FP16]):
        l1 = pl.make_tile_group(type=pl.TileType([16, 32], pl.DT_FP16, Mat), addrs=[0], mutex_ids=[0])[0]
        ub = pl.make_tile_group(type=pl.TileType([16, 32], pl.DT_FP16, Vec), addrs=[0], mutex_ids=[1])[0]
        with pl.section_cube():
            pl.system.wait_cross_core(pipe=MTE2, event_id=3)  # <- cube_wait
            pl.load(l1, x, [0, 0])
        with pl.section_vector():
            pl.load(ub, x, [0, 0])
            if pl.get_subblock_idx() == 0:
                pl.system.set_cross_core(pipe=MTE2, event_id=3)
                pl.system.set_cross_core(pipe=MTE2, event_id=3)
            pl.store(out, ub, [pl.get_subblock_idx() * 16, 0])
    return one_sided


SRC_ONE_SIDED = make_one_sided_free_kernel()


def test_cube_wait_needs_a_signal_from_each_vector_core():
    x = np.ones((16, 32), np.float16)
    out = np.zeros((32, 32), np.float16)
    with pytest.raises(DeadlockError, match=re.escape(line_of(SRC_ONE_SIDED, "cube_wait"))):
        pl.jit(SRC_ONE_SIDED, arch="a5")[None, 1](x, out)


def make_default_mode_move_kernel():
    """pl.move(ub, acc) without acc_to_vec_mode: PTO-ISA's TMOV defaults to SingleModeVec0, so only
    the first Vector core's UB receives the tile."""
    return make_acc_to_vec_split(R, K, N, READY, split=False)


def test_acc_to_vec_move_without_mode_reaches_the_first_vector_core_only():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((R, K)).astype(np.float16)
    w = rng.standard_normal((K, N)).astype(np.float16)
    out = np.zeros((2 * R, N), np.float32)
    # AIV1 stores a UB tile nothing wrote: a note (not a fault), and the poison shows in its rows
    report = pl.jit(make_default_mode_move_kernel(), arch="a5")[None, 1](x, w, out)
    assert report.faults == []
    assert any("store on AIV1.MTE3" in n and "that nothing in this block wrote" in n and "stores them to GM" in n
               for n in report.notes), report.notes
    assert np.isnan(out[R:]).all()
    out[:] = np.nan
    pl.jit(make_default_mode_move_kernel(), arch="a5", check="off")[None, 1](x, w, out)
    exact = x.astype(np.float64) @ w.astype(np.float64)
    np.testing.assert_allclose(out[:R], exact, rtol=1e-5, atol=1e-4)
    assert not np.allclose(out[R:], exact)


def make_signal_only_cube_kernel():
    """The Cube program only signals ("go"); each Vector core waits for it, then copies x."""
    def signal_only(x: pl.Tensor[[DYN, DYN], pl.DT_FP32], out: pl.Tensor[[DYN, DYN], pl.DT_FP32]):
        ub = pl.make_tile_group(type=pl.TileType([16, 32], pl.DT_FP32, Vec), addrs=[0], mutex_ids=[0])[0]
        with pl.section_cube():
            pl.system.set_cross_core(pipe=pl.PipeType.MTE2, event_id=0)
        with pl.section_vector():
            pl.system.wait_cross_core(pipe=MTE2, event_id=0)
            pl.load(ub, x, [0, 0])
            pl.store(out, ub, [pl.get_subblock_idx() * 16, 0])
    return signal_only


def test_cube_program_with_only_sync_is_simulated():
    x = np.arange(16 * 32, dtype=np.float32).reshape(16, 32)
    out = np.zeros((32, 32), np.float32)
    pl.jit(make_signal_only_cube_kernel(), arch="a5")[None, 1](x, out)
    np.testing.assert_array_equal(out, np.concatenate([x, x]))


# =================================================================================================
# The examples run clean
# =================================================================================================


@pytest.mark.parametrize("arch", ["a5", "a2a3"])
def test_examples_have_no_faults(arch):
    mms = load_example("matmul_softmax")
    mm = load_example("matmul")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for rows, k, blocks in ((300, 200, 3), (65, 40, 1)):
            rng = np.random.default_rng(rows + k)
            x = (rng.standard_normal((rows, k)) * 0.1).astype(np.float16)
            w = (rng.standard_normal((k, mms.N)) * 0.1).astype(np.float16)
            ws = np.zeros((blocks * 2 * mms.TM, mms.N), np.float32)
            out = np.zeros((rows, mms.N), np.float16)
            report = mms.make_matmul_softmax(arch).options(check="warn")[None, blocks](x, w, ws, out)
            assert report.faults == []
        a = np.ones((200, 300), np.float16)
        b = np.ones((300, 130), np.float16)
        c = np.zeros((200, 130), np.float32)
        report = mm.make_matmul(arch).options(check="warn")[None, 3](a, b, c)
        assert report.faults == [] and (c == 300).all()


def test_more_cross_core_signals_pending_than_the_counter_holds_is_still_a_fault():
    """The cross-core counter holds 15 (4 bits): a 16th pending signal overflows it."""
    def kernel(x: pl.Tensor[[16, 32], pl.DT_FP16]):
        with pl.section_cube():
            pl.system.wait_cross_core(pipe=pl.PipeType.MTE2, event_id=2)  # only after all 16 below
            for _ in pl.range(0, 16):
                pl.system.wait_cross_core(pipe=pl.PipeType.MTE2, event_id=1)
        with pl.section_vector():
            for _ in pl.range(0, 16):
                pl.system.set_cross_core(pipe=pl.PipeType.MTE3, event_id=1)
            pl.system.set_cross_core(pipe=pl.PipeType.MTE3, event_id=2)
    with pytest.raises(SyncError, match="signalled 16 times without being waited for"):
        pl.jit(kernel, arch="a5")[None, 1](np.zeros((16, 32), np.float16))
