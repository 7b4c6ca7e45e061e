"""a2a3: a cross-core wait stalls the whole scalar unit, not only its named pipe.

a2a3 lowers ``pl.system.wait_cross_core`` to ``wait_flag_dev(id)`` (real codegen
``MakeCrossCoreWaitCodegenCCE``), which "blocks the entire SU of the calling core" (PTO-ISA
``wait-flag-dev.md``): no instruction the core dispatches after it, on any pipe, starts before it is
satisfied. On a5 ``wait_intra_block(pipe, id)`` stalls only its pipe (``wait-intra-core.md``).
The simulator models the a2a3 wait as a record of its own on S that every later record of its core
waits for (su_wait.py, scheduler.py ``start_time``); docs/simulator.md.
"""
from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import DeadlockError, RaceError
from located import line_of

Mat, Left, Right, Acc, Vec = (pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right, pl.MemorySpace.Acc,
                              pl.MemorySpace.Vec)
R, K, N = 32, 512, 32
HALF = R // 2
READY, BACK = 1, 2
FIX, V, MTE2 = pl.PipeType.FIX, pl.PipeType.V, pl.PipeType.MTE2


def make_kernel(bug: str | None = None):
    """The Cube computes x @ w into ``prod`` and then signals READY; each Vector core loads its rows of
    y, waits for READY on V, doubles y, then loads its rows of z (an MTE2 load dispatched after the wait
    that needs nothing from the Cube) and stores 2y + z. ``bug="cycle"``: each side waits for the other
    before it signals (the Cube for BACK, which the Vector cores only send after READY).
    ``bug="load_prod"``: the load after the V-pipe wait reads the Cube's ``prod`` instead of z (correct
    on a2a3 only: there the wait orders every later instruction of the core; on a5 it orders V alone)."""
    def su_kernel(x: pl.Tensor[[R, K], pl.DT_FP16], w: pl.Tensor[[K, N], pl.DT_FP16],
                  y: pl.Tensor[[R, N], pl.DT_FP32], z: pl.Tensor[[R, N], pl.DT_FP32],
                  prod: pl.Tensor[[R, N], pl.DT_FP32], out: pl.Tensor[[R, N], pl.DT_FP32]):
        a1 = pl.make_tile_group(type=pl.TileType([R, K], pl.DT_FP16, Mat), addrs=[0x0000], mutex_ids=[0])
        b1 = pl.make_tile_group(type=pl.TileType([K, N], pl.DT_FP16, Mat), addrs=[0x8000], mutex_ids=[1])
        a0 = pl.make_tile_group(type=pl.TileType([R, K], pl.DT_FP16, Left), addrs=[0], mutex_ids=[2])
        b0 = pl.make_tile_group(type=pl.TileType([K, N], pl.DT_FP16, Right), addrs=[0], mutex_ids=[3])
        acc_g = pl.make_tile_group(type=pl.TileType([R, N], pl.DT_FP32, Acc), addrs=[0], mutex_ids=[4])
        ga = pl.make_tile_group(type=pl.TileType([HALF, N], pl.DT_FP32, Vec), addrs=[0x0000], mutex_ids=[5])
        gb = pl.make_tile_group(type=pl.TileType([HALF, N], pl.DT_FP32, Vec), addrs=[0x1000], mutex_ids=[6])
        with pl.section_cube():
            la, lb, xa, xb, acc = a1[0], b1[0], a0[0], b0[0], acc_g[0]
            if bug == "cycle":
                pl.system.wait_cross_core(pipe=MTE2, event_id=BACK)  # <- cube_wait_back
            pl.load(la, x, [0, 0])
            pl.load(lb, w, [0, 0])
            pl.move(xa, la)
            pl.move(xb, lb)
            pl.matmul(acc, xa, xb)
            pl.store(prod, acc, [0, 0])  # <- cube_store
            pl.system.set_cross_core(pipe=FIX, event_id=READY)
        with pl.section_vector():
            sub = pl.get_subblock_idx()
            a, b = ga[0], gb[0]
            pl.load(a, y, [sub * HALF, 0])
            pl.system.wait_cross_core(pipe=V, event_id=READY)  # <- vec_wait
            pl.muls(a, a, 2.0)
            if bug == "load_prod":
                pl.load(b, prod, [sub * HALF, 0])  # <- vec_load_prod
            else:
                pl.load(b, z, [sub * HALF, 0])  # <- vec_load_after
            pl.add(a, a, b)
            pl.store(out, a, [sub * HALF, 0])
            if bug == "cycle":
                pl.system.set_cross_core(pipe=MTE3, event_id=BACK)

    return su_kernel


MTE3 = pl.PipeType.MTE3
SRC = make_kernel()
_JIT: dict = {}


def run(arch: str, tmp_path=None, bug=None, check="raise"):
    key = (arch, bug)
    if key not in _JIT:
        _JIT[key] = pl.jit(make_kernel(bug), arch=arch)
    kern = _JIT[key].options(check=check, **({"trace": str(tmp_path / arch)} if tmp_path is not None else {}))
    rng = np.random.default_rng(3)
    x = rng.standard_normal((R, K)).astype(np.float16)
    w = rng.standard_normal((K, N)).astype(np.float16)
    y = rng.standard_normal((R, N)).astype(np.float32)
    z = rng.standard_normal((R, N)).astype(np.float32)
    prod = np.full((R, N), np.nan, np.float32)
    out = np.full((R, N), np.nan, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report = kern[None, 1](x, w, y, z, prod, out)
    return report, (x, w, y, z), prod, out


def _slices(report) -> list[dict]:
    path = next(f for f in report.trace_files if f.endswith(".trace.json"))
    with open(path) as f:
        data = json.load(f)
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in data["traceEvents"]
             if e["ph"] == "M" and e["name"] == "thread_name"}
    return [dict(e, lane=names.get((e["pid"], e["tid"]), "")) for e in data["traceEvents"] if e["ph"] == "X"]


def _on(sl: list[dict], lane: str, name: str) -> list[dict]:
    return sorted((e for e in sl if e["lane"].endswith(lane) and e["name"] == name), key=lambda e: e["ts"])


@pytest.mark.parametrize("arch", ["a2a3", "a5"])
def test_load_after_a_v_wait_overlaps_it_only_on_a5(arch, tmp_path):
    """On a5 the load of z, dispatched after the V-pipe wait, runs while V waits for the Cube; on a2a3 it
    starts only once the wait is satisfied (the scalar unit stalls at ``wait_flag_dev``). Numerics are
    the same on both."""
    report, (x, w, y, z), prod, out = run(arch, tmp_path)
    assert report.faults == []
    np.testing.assert_array_equal(out, 2.0 * y + z)
    np.testing.assert_allclose(prod, x.astype(np.float32) @ w.astype(np.float32), rtol=1e-5, atol=1e-4)
    sl = _slices(report)
    for core in ("AIV0", "AIV1"):
        loads = [e for e in _on(sl, f"{core}.MTE2", "load")]
        assert len(loads) == 2, [e["lane"] for e in sl]
        after = loads[1]
        muls = _on(sl, f"{core}.V", "muls")[0]
        if arch == "a5":  # the wait is fused into muls (same V queue); the load of z does not wait for it
            assert not _on(sl, f"{core}.S", "sync")
            assert after["ts"] < muls["ts"], (after, muls)
        else:
            wait = _on(sl, f"{core}.S", "sync")
            assert len(wait) == 1, [e["lane"] for e in sl]
            assert after["ts"] >= wait[0]["ts"] + wait[0]["dur"] - 1e-9, (after, wait)
            assert muls["ts"] >= wait[0]["ts"] + wait[0]["dur"] - 1e-9


def test_v_wait_orders_a_later_load_on_a2a3_only():
    """The Vector cores load the Cube's ``prod`` on MTE2 right after their V-pipe wait for READY. On a2a3
    the scalar unit dispatches the load only once the wait is satisfied, so it happens after the Cube's
    store: no fault, exact output. On a5 the wait stalls V alone: the load races with the store (both
    lines named)."""
    report, (x, w, y, z), prod, out = run("a2a3", bug="load_prod")
    assert report.faults == []
    np.testing.assert_array_equal(out, 2.0 * y + prod)
    with pytest.raises(RaceError) as info:
        run("a5", bug="load_prod")
    msg = str(info.value)
    assert "data race on global 'prod'" in msg, msg
    assert line_of(SRC, "cube_store") in msg and line_of(SRC, "vec_load_prod") in msg, msg


@pytest.mark.parametrize("arch", ["a2a3", "a5"])
def test_wait_that_is_never_satisfied_deadlocks_with_both_lines(arch):
    """Each side waits for the other before signalling: a deadlock naming both waits. On a2a3 both are
    records on S (the scalar unit stalls), and the rest of each core is held behind them."""
    with pytest.raises(DeadlockError) as info:
        run(arch, bug="cycle")
    msg = str(info.value)
    cube, vec = re.escape(line_of(SRC, "cube_wait_back")), re.escape(line_of(SRC, "vec_wait"))
    assert re.search(rf"wait_cross_core\(event={BACK}\) at {cube}: 0 of 2 signal\(s\) arrived", msg), msg
    assert re.search(rf"wait_cross_core\(event={READY}\) at {vec}: 0 of 1 signal\(s\) arrived", msg), msg
    if arch == "a2a3":
        assert re.search(rf"AIC\.S +blocked at xwait \({cube}", msg), msg
        assert re.search(rf"AIV0\.S +blocked at xwait \({vec}", msg), msg
        assert re.search(rf"AIV0\.MTE2(, AIV0\.\w+)*: held by the scalar unit, stalled at wait_cross_core at {vec}",
                         msg), msg
    else:
        assert "held by the scalar unit" not in msg


def make_live_kernel():
    """The Vector cores read an element of the Cube's ``prod`` on S right after a V-pipe wait for READY:
    a live block (the scalar read steers nothing here, but the program waits for its value)."""
    def live_kernel(x: pl.Tensor[[R, K], pl.DT_FP16], w: pl.Tensor[[K, N], pl.DT_FP16],
                    prod: pl.Tensor[[R, N], pl.DT_FP32], val: pl.Tensor[[2], pl.DT_FP32]):
        a1 = pl.make_tile_group(type=pl.TileType([R, K], pl.DT_FP16, Mat), addrs=[0x0000], mutex_ids=[0])
        b1 = pl.make_tile_group(type=pl.TileType([K, N], pl.DT_FP16, Mat), addrs=[0x8000], mutex_ids=[1])
        a0 = pl.make_tile_group(type=pl.TileType([R, K], pl.DT_FP16, Left), addrs=[0], mutex_ids=[2])
        b0 = pl.make_tile_group(type=pl.TileType([K, N], pl.DT_FP16, Right), addrs=[0], mutex_ids=[3])
        acc_g = pl.make_tile_group(type=pl.TileType([R, N], pl.DT_FP32, Acc), addrs=[0], mutex_ids=[4])
        with pl.section_cube():
            la, lb, xa, xb, acc = a1[0], b1[0], a0[0], b0[0], acc_g[0]
            pl.load(la, x, [0, 0])
            pl.load(lb, w, [0, 0])
            pl.move(xa, la)
            pl.move(xb, lb)
            pl.matmul(acc, xa, xb)
            pl.store(prod, acc, [0, 0])  # <- live_store
            pl.system.set_cross_core(pipe=FIX, event_id=READY)
        with pl.section_vector():
            sub = pl.get_subblock_idx()
            pl.system.wait_cross_core(pipe=V, event_id=READY)
            val[sub] = prod[0, sub]  # <- live_read

    return live_kernel


LIVE = make_live_kernel()


@pytest.mark.parametrize("arch", ["a2a3", "a5"])
def test_live_read_after_a_v_wait(arch):
    """A live block: on a2a3 the scalar read after the V-pipe wait is dispatched only once the wait is
    satisfied, so it sees the Cube's store; on a5 the wait holds V alone and the read races with it."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((R, K)).astype(np.float16)
    w = rng.standard_normal((K, N)).astype(np.float16)
    prod = np.full((R, N), np.nan, np.float32)
    val = np.zeros(2, np.float32)
    kern = pl.jit(LIVE, arch=arch)
    if arch == "a5":
        with pytest.raises(RaceError) as info:
            kern[None, 1](x, w, prod, val)
        msg = str(info.value)
        assert line_of(LIVE, "live_store") in msg and line_of(LIVE, "live_read") in msg, msg
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report = kern[None, 1](x, w, prod, val)
    assert report.faults == []
    np.testing.assert_array_equal(val, prod[0, :2])
