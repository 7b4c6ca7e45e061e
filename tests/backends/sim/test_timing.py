"""The simulator's timing model and launch reports.

* Cost model against PTO-ISA: TADD fp32 64x64 (measured 132 cycles on A2/A3) and TLOAD fp32
  128x128 (measured 776 cycles) within 20%; the TMATMUL formula exactly.
* What a launch reports: cycles, per-block timings, pipe busy time, bytes per data path (equal to
  the bytes the kernel really moves, edge tiles included), a roofline with its limiter, a one-line
  summary.
* Double buffering pays off in modeled time (vs the same Add with depth-1 groups), and the trace
  shows why: the load of tile i+1 runs while tile i is being added.
"""
from __future__ import annotations

import importlib.util
import json
import math

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.arch import get_arch
from pypto_pro.backends.sim.cost_model import CostModel
from pypto_pro.ops import INSTRUCTIONS
from example_modules import load_example
from kernels import add_fn

add_tiled = load_example("add_tiled")

ARCHS = ("a5", "a2a3")


@pytest.fixture(autouse=True)
def _no_env_override(monkeypatch):
    monkeypatch.delenv("PYPTO_PRO_CHECK", raising=False)
    monkeypatch.delenv("PYPTO_PRO_TRACE", raising=False)


@pytest.fixture(scope="module")
def a2a3_cost() -> CostModel:
    return CostModel(get_arch("a2a3"))


# ---- cost model vs PTO-ISA ------------------------------------------------------------------------

PTO_TADD_FP32_64x64 = 132    # cycles, PTO-ISA measured on A2/A3
PTO_TLOAD_FP32_128x128 = 776


def test_tadd_fp32_64x64_within_20_percent_of_pto_isa(a2a3_cost):
    cycles = a2a3_cost.vector(INSTRUCTIONS["add"].cost, 64, 64, 4, True)
    assert abs(cycles - PTO_TADD_FP32_64x64) <= 0.2 * PTO_TADD_FP32_64x64, cycles


def test_tload_fp32_128x128_within_20_percent_of_pto_isa(a2a3_cost):
    cycles = a2a3_cost.path("GM->Vec", 128 * 128 * 4)
    assert abs(cycles - PTO_TLOAD_FP32_128x128) <= 0.2 * PTO_TLOAD_FP32_128x128, cycles


def test_cube_formula_exact(a2a3_cost):
    # cube(m, n, k, itemsize, is_float) = 6 + slope * ceil(m/16) * ceil(k/(32/itemsize)) * ceil(n/16)
    assert a2a3_cost.cube(40, 60, 50, 2, True) == 54      # fp16 m=40, k=50, n=60: 6 + 3*4*4
    assert a2a3_cost.cube(120, 50, 110, 4, True) == 902   # fp32 m=120, k=110, n=50: 6 + 2*8*14*4
    # the argument order matters for fp32 (k is divided by 8, n by 16): swapping n and k changes it
    assert a2a3_cost.cube(120, 110, 50, 4, True) != 902


def test_vector_cost_grows_with_repeats(a2a3_cost):
    small = a2a3_cost.vector(INSTRUCTIONS["add"].cost, 16, 64, 4, True)
    big = a2a3_cost.vector(INSTRUCTIONS["add"].cost, 128, 64, 4, True)
    assert 0 < small < big


def _one_tile_kernel(rows: int, cols: int):
    tt = pl.TileType(shape=[rows, cols], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)

    def one_add(x: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32],
                y: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32],
                z: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32]):
        a = pl.make_tile_group(type=tt, addrs=[0x0], mutex_ids=[0])
        b = pl.make_tile_group(type=tt, addrs=[0x10000], mutex_ids=[1])
        c = pl.make_tile_group(type=tt, addrs=[0x20000], mutex_ids=[2])
        with pl.section_vector():
            ta, tb, tc = a[0], b[0], c[0]
            pl.load_tile(ta, x, [0, 0])
            pl.load_tile(tb, y, [0, 0])
            pl.add(tc, ta, tb)
            pl.store_tile(z, tc, [0, 0])

    one_add.__name__ = f"one_add_{rows}x{cols}"
    return one_add


def test_launched_tadd_and_tload_costs_match_the_model(a2a3_cost):
    """One fp32 add of 64x64 and loads of 128x128 in a real launch: the V and MTE2 busy times are
    the cost-model numbers plus a few cycles of fused sync."""
    rng = np.random.default_rng(0)
    x, y = rng.random((64, 64), np.float32), rng.random((64, 64), np.float32)
    report = pl.jit(_one_tile_kernel(64, 64), arch="a2a3")[None, 1](x, y, np.zeros_like(x))
    tadd = a2a3_cost.vector(INSTRUCTIONS["add"].cost, 64, 64, 4, True)
    assert tadd <= report.pipe_busy["V"] <= tadd + 8
    assert abs(report.pipe_busy["V"] - PTO_TADD_FP32_64x64) <= 0.2 * PTO_TADD_FP32_64x64

    x, y = rng.random((128, 128), np.float32), rng.random((128, 128), np.float32)
    report = pl.jit(_one_tile_kernel(128, 128), arch="a2a3")[None, 1](x, y, np.zeros_like(x))
    tload = a2a3_cost.path("GM->Vec", 128 * 128 * 4)
    per_load = report.pipe_busy["MTE2"] / 2
    assert tload <= per_load <= tload + 8
    assert abs(per_load - PTO_TLOAD_FP32_128x128) <= 0.2 * PTO_TLOAD_FP32_128x128


# ---- the launch report -----------------------------------------------------------------------------


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("m,n,blocks", [(300, 200, 3), (129, 1056, 7), (1000, 300, 20)])
def test_launch_report_contents(arch, m, n, blocks):
    rng = np.random.default_rng(m)
    x, y = rng.random((m, n)).astype(np.float16), rng.random((m, n)).astype(np.float16)
    z = np.zeros_like(x)
    k = pl.jit(add_fn, arch=arch)
    report = k[None, blocks](x, y, z)
    assert np.array_equal(z, x + y)
    assert report is k.last_report and report.timed and report.faults == []
    assert report.kernel == "add_fn" and report.arch == arch and report.block_num == blocks

    # cycles and per-block timings
    assert report.cycles > 0
    assert math.isclose(report.us, report.cycles / report.clock_mhz)
    assert [b.block for b in report.blocks] == list(range(blocks))
    row_tiles = -(-m // 128)
    for b in report.blocks:
        assert 0 <= b.start <= b.end <= report.cycles
        assert 0 <= b.core < report.physical_cores
        assert max(b.busy.values(), default=0.0) <= b.end - b.start + 1e-9  # busy at most the block's span
        if b.block < row_tiles:   # blocks with work (the others may have none at all)
            assert b.start < b.end
            assert set(b.busy) == {"MTE2", "V", "MTE3"} and all(v > 0 for v in b.busy.values())
    assert math.isclose(report.cycles, max(b.end for b in report.blocks))

    # pipe busy = the sum over blocks
    assert set(report.pipe_busy) == {"MTE2", "V", "MTE3"}
    for pipe, busy in report.pipe_busy.items():
        assert math.isclose(busy, sum(b.busy.get(pipe, 0.0) for b in report.blocks))
    util = report.utilisation()
    assert all(0 < u <= 1 for u in util.values()) and report.bottleneck in util

    # bytes per path: exactly the tensors (edge tiles move only their in-bounds part)
    assert report.path_bytes == {"GM->Vec": x.nbytes + y.nbytes, "Vec->GM": z.nbytes}
    assert report.flops == m * n

    # roofline
    roof = report.roofline
    assert roof is not None and roof.bounds_us and all(v > 0 for v in roof.bounds_us.values())
    assert roof.limiter in roof.bounds_us and roof.bound_us == max(roof.bounds_us.values())
    assert 0 < report.roofline_fraction <= 1.0 + 1e-9   # modeled time is never below the bound

    # one line
    summary = report.summary()
    assert "\n" not in summary and summary.strip() == summary
    assert "add_fn" in summary and arch in summary and f"{blocks} blocks" in summary
    assert report.roofline.limiter in summary


def test_untimed_launch_reports_no_cycles():
    x = np.ones((128, 128), np.float16)
    z = np.zeros_like(x)
    report = pl.jit(add_fn).options(timing=False)[None, 2](x, x, z)
    assert not report.timed and report.cycles == 0 and report.blocks == []
    assert "\n" not in report.summary() and "untimed" in report.summary()
    assert np.array_equal(z, x + x)


# ---- double vs single buffering -------------------------------------------------------------------


def add_with_depth(arch: str, depth: int, **options):
    """The seed Add with ``depth``-slot rings (2: double, 1: single buffering): examples/add_tiled.py."""
    kernel = pl.jit(add_tiled.add_tiled.fn, arch=arch, tiling_key=add_tiled.AddKey).options(**options)
    return lambda blocks, *args: kernel[None, blocks, {"TILE_M": 128, "DEPTH": depth}](*args)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("m,n,blocks", [(128, 1024, 1), (512, 1024, 4), (300, 700, 3)])
def test_double_buffering_is_faster(arch, m, n, blocks):
    rng = np.random.default_rng(1)
    x, y = rng.random((m, n)).astype(np.float16), rng.random((m, n)).astype(np.float16)
    cycles = {}
    for depth in (1, 2):
        z = np.zeros_like(x)
        report = add_with_depth(arch, depth, check="raise")(blocks, x, y, z)
        assert np.array_equal(z, x + y) and report.faults == []
        assert report.path_bytes == {"GM->Vec": 2 * x.nbytes, "Vec->GM": z.nbytes}  # same traffic
        cycles[depth] = report.cycles
    assert cycles[2] <= 0.9 * cycles[1], f"double {cycles[2]:.0f} vs single {cycles[1]:.0f} cycles"


# ---- the trace: load of tile i+1 overlaps the add of tile i -------------------------------------

HAS_TRACE = importlib.util.find_spec("pypto_pro.backends.sim.trace") is not None


def _trace_slices(tmp_path, depth: int, arch: str, tiles: int):
    launch = add_with_depth(arch, depth, trace=str(tmp_path / f"d{depth}"))
    rng = np.random.default_rng(2)
    x = rng.random((128, 128 * tiles)).astype(np.float16)
    y = rng.random((128, 128 * tiles)).astype(np.float16)
    z = np.zeros_like(x)
    report = launch(1, x, y, z)
    assert np.array_equal(z, x + y)
    path = next(f for f in report.trace_files if f.endswith(".trace.json"))
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    sl = [e for e in events if e["ph"] == "X" and e["args"].get("block") == 0]
    loads = sorted((e for e in sl if e["name"] == "load"), key=lambda e: e["ts"])
    adds = sorted((e for e in sl if e["name"] == "add"), key=lambda e: e["ts"])
    assert len(loads) == 2 * tiles and len(adds) == tiles
    return loads, adds


def _overlap(a: dict, b: dict) -> bool:
    return a["ts"] < b["ts"] + b["dur"] and b["ts"] < a["ts"] + a["dur"]


@pytest.mark.skipif(not HAS_TRACE, reason="no trace writer (pypto_pro/backends/sim/trace.py) in this tree")
@pytest.mark.parametrize("arch", ARCHS)
def test_trace_load_of_next_tile_overlaps_add(tmp_path, arch):
    tiles = 6
    loads, adds = _trace_slices(tmp_path, 2, arch, tiles)
    # MTE2 is in order: loads 2i (x) and 2i+1 (y) belong to tile i; V's adds are tile 0, 1, ...
    for i in range(tiles - 1):
        nxt = loads[2 * i + 2: 2 * i + 4]
        assert any(_overlap(ld, adds[i]) for ld in nxt), f"no load of tile {i + 1} overlaps the add of tile {i}"
        assert adds[i]["ts"] >= loads[2 * i + 1]["ts"] + loads[2 * i + 1]["dur"] - 1e-6, "add before its loads"
    # single buffering: the next load into the one slot waits for the add that reads it
    loads1, adds1 = _trace_slices(tmp_path, 1, arch, tiles)
    for i in range(tiles - 1):
        assert not any(_overlap(ld, adds1[i]) for ld in loads1[2 * i + 2: 2 * i + 4])


# ---- L2: reads reuse, rewrites are absorbed (write-back) ---------------------------------------

@pl.jit(arch="a2a3")
def _rewrite_kernel(x: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16],
                    z: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16], same: pl.Constexpr):
    tt = pl.TileType(shape=[64, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    ring = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0, 1])
    with pl.section_vector():
        for i in pl.range(0, x.shape[0] // 64, 1):
            t = ring.next()
            pl.load_tile(t, x, [i, 0])
            if same:
                pl.store_tile(z, t, [0, 0])   # a workspace slot: the same window every time
            else:
                pl.store_tile(z, t, [i, 0])   # an output: every window once


def test_rewrites_of_one_window_are_absorbed_by_l2():
    x = np.random.default_rng(0).random((64 * 16, 128)).astype(np.float16)
    reports = {}
    for same in (True, False):
        z = np.zeros((64 * 16, 128), np.float16)
        reports[same] = _rewrite_kernel(x, z, same)
    assert reports[False].l2_hit_bytes == 0           # each read and each write once: all HBM
    rewritten = 15 / 16 * 64 * 128 * 2 * 16           # 16 writes of one window: one reaches HBM
    assert math.isclose(reports[True].l2_hit_bytes, rewritten)
    assert reports[True].roofline.bounds_us["GM bandwidth"] < reports[False].roofline.bounds_us["GM bandwidth"]
    assert reports[True].cycles < reports[False].cycles
