"""The simulator's two caches must be invisible.

Schedule replay (backends/sim/schedule_cache.py): blocks that time the same replay one recorded
schedule; outputs, reports, traces and faults are exactly what scheduling every block from
scratch gives. Each case runs a kernel both ways, compares everything, and counts how many
blocks the scheduler really ran (so a signature that never matches, or matches too much, shows).

Cached head start times (CoreScheduler.run): with ``verify_cache`` every step recomputes each
head's start time and compares it with the cache.
"""
from __future__ import annotations

import dataclasses
import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.backends.sim import executor, scheduler
from example_modules import load_example
from kernels import add_fn

R, C = 16, 64
TT = pl.TileType(shape=[R, C], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
F32 = pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32]
V, MTE2, MTE3 = pl.PipeType.V, pl.PipeType.MTE2, pl.PipeType.MTE3
_SCHEDULE = scheduler.CoreScheduler.run


def racy_scale(x: F32, z: F32):
    """No MTE2 -> V pair: the multiply may read the tile before its load has written it."""
    a = pl.make_tile(TT, addr=0x0000)
    c = pl.make_tile(TT, addr=0x4000)
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), x.shape[0] // R, pl.get_block_num()):
            pl.load_tile(a, x, [i, 0])
            pl.muls(c, a, 2.0)
            pl.system.sync_src(set_pipe=V, wait_pipe=MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=V, wait_pipe=MTE3, event_id=0)
            pl.store_tile(z, c, [i, 0])
            pl.system.sync_src(set_pipe=MTE3, wait_pipe=V, event_id=0)
            pl.system.sync_dst(set_pipe=MTE3, wait_pipe=V, event_id=0)
            pl.system.sync_src(set_pipe=V, wait_pipe=MTE2, event_id=0)
            pl.system.sync_dst(set_pipe=V, wait_pipe=MTE2, event_id=0)


def _run(kernel, args: list[np.ndarray], blocks: int, reuse: bool, trace_dir: Path, monkeypatch,
         check: str = "raise") -> tuple:
    """Launch once; return (outputs, report fields, trace JSON, blocks the scheduler ran)."""
    monkeypatch.setattr(executor.SimExecutable, "reuse_schedules", reuse)
    scheduled = []

    def counting(self):
        scheduled.append(self.block)
        return _SCHEDULE(self)
    monkeypatch.setattr(scheduler.CoreScheduler, "run", counting)
    args = [a.copy() for a in args]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        report = kernel.options(trace=str(trace_dir), check=check)[None, blocks](*args)
    fields = {k: v for k, v in dataclasses.asdict(report).items() if k != "trace_files"}
    assert fields.pop("blocks_scheduled") == len(scheduled)
    traces = {p.name: json.loads(p.read_text()) for p in sorted(trace_dir.glob("*.trace.json"))}
    return args, fields, traces, scheduled


def _same_both_ways(kernel, args, blocks, tmp_path, monkeypatch, check="raise") -> tuple[list, dict, list]:
    """Run with and without schedule reuse; assert identical; return (blocks scheduled, report
    fields, outputs)."""
    out_a, rep_a, tr_a, ran_a = _run(kernel, args, blocks, True, tmp_path / "reuse", monkeypatch, check)
    out_b, rep_b, tr_b, ran_b = _run(kernel, args, blocks, False, tmp_path / "fresh", monkeypatch, check)
    for a, b in zip(out_a, out_b):
        assert np.array_equal(a, b, equal_nan=True)
    assert rep_a == rep_b
    assert tr_a and tr_a == tr_b
    assert ran_b == list(range(blocks))
    return ran_a, rep_a, out_a


@pytest.mark.parametrize("arch,check", [("a5", "raise"), ("a2a3", "raise"), ("a5", "warn"), ("a2a3", "off")])
def test_uniform_blocks_schedule_once_and_edge_blocks_fresh(arch, check, tmp_path, monkeypatch):
    """Also with deferred writes (warn, off: results committed at each instruction's end)."""
    rng = np.random.default_rng(0)
    m, n, blocks = 128 * 76 + 50, 200, 77  # more blocks than a5's 64 Vector cores: two waves; last block ragged
    x = rng.random((m, n)).astype(np.float16)
    y = rng.random((m, n)).astype(np.float16)
    z = np.zeros_like(x)
    kern = pl.jit(add_fn, arch=arch)
    ran, report, out = _same_both_ways(kern, [x, y, z], blocks, tmp_path, monkeypatch, check)
    assert np.array_equal(out[2], x + y)
    cores = report["physical_cores"]
    # the 128-row blocks of each wave share a schedule (the second wave's cores get a larger share
    # of GM bandwidth, so its costs differ); the 50-row block has its own
    assert ran == [0, cores, blocks - 1]
    assert not report["faults"]


@pytest.mark.parametrize("arch", ["a5", "a2a3"])
def test_mixed_cube_vector_blocks(arch, tmp_path, monkeypatch):
    mm = load_example("matmul")
    rng = np.random.default_rng(1)
    a = rng.standard_normal((256, 520)).astype(np.float16)  # 2 x 2 output tiles, one per block; ragged K
    b = rng.standard_normal((520, 256)).astype(np.float16)
    c = np.zeros((256, 256), np.float32)
    ran, _, out = _same_both_ways(mm.make_matmul(arch), [a, b, c], 4, tmp_path, monkeypatch)
    assert len(ran) < 4
    np.testing.assert_allclose(out[2], a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("check", ["warn", "raise"])
def test_a_faulty_schedule_is_never_replayed(check, tmp_path, monkeypatch):
    """Each block of a racy kernel is scheduled and reports its own race (warn); raise stops at the first."""
    x = np.random.default_rng(2).random((4 * R, C)).astype(np.float32)
    z = np.zeros_like(x)
    kern = pl.jit(racy_scale, arch="a2a3", auto_mutex=False)
    if check == "raise":
        with pytest.raises(Exception, match="data race"):
            _run(kern, [x, z], 4, True, tmp_path / "t", monkeypatch, check)
        return
    ran, report, _ = _same_both_ways(kern, [x, z], 4, tmp_path, monkeypatch, check)
    assert ran == [0, 1, 2, 3]
    assert sum("data race" in f for f in report["faults"]) == 4


@pytest.mark.parametrize("arch,causal", [("a5", False), ("a2a3", True)])
def test_pipelined_flash_attention(arch, causal, tmp_path, monkeypatch):
    """Cross-core flags, preload rings and (a2a3) GM workspaces; causal blocks differ in trip count."""
    fa = load_example("flash_attention")
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((1, 4, 512, 64)).astype(np.float16) for _ in range(3))
    blocks = 4
    args = [q, k, v, np.zeros_like(q), fa.causal_mask(), *fa.workspaces(blocks, 64, 2)]
    ran, report, out = _same_both_ways(fa.make_flash_attention(arch, 64, causal, 2), args, blocks, tmp_path,
                                       monkeypatch)
    assert not report["faults"]
    np.testing.assert_allclose(out[3].astype(np.float32), fa.reference(q, k, v, causal).astype(np.float32), atol=2e-3)
    if not causal:
        assert len(ran) < blocks


def _outcome(kernel, args: tuple, blocks: int, check: str, reuse: bool, monkeypatch) -> tuple:
    """(outputs, faults or the raised error's text) of one launch."""
    monkeypatch.setattr(executor.SimExecutable, "reuse_schedules", reuse)
    args = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            faults = kernel.options(check=check)[None, blocks](*args).faults
        except AssertionError:
            raise  # a failed self-check of the scheduler, not a reported fault
        except Exception as err:  # noqa: BLE001  # the same error must come out both ways
            faults = [f"{type(err).__name__}: {err}"]
    return [a for a in args if isinstance(a, np.ndarray)], faults


def _catalogue_cases() -> list:
    import test_bug_catalogue as cat  # the broken kernels of the bug catalogue (same directory)
    return [pytest.param(cat, bug, fn, arch, id=f"{bug.kind}-{'bug' if fn is bug.fn else 'fixed'}-{arch}")
            for bug in cat.CATALOGUE for arch in bug.archs for fn in (bug.fn, bug.fixed)]


@pytest.mark.parametrize("cat,bug,fn,arch", _catalogue_cases())
def test_bug_catalogue_reports_the_same_with_and_without_reuse(cat, bug, fn, arch, monkeypatch):
    kern = cat.kernel(fn, arch)
    args = bug.args()
    for check in ("warn", "off"):
        out_a, faults_a = _outcome(kern, args, bug.blocks, check, True, monkeypatch)
        out_b, faults_b = _outcome(kern, args, bug.blocks, check, False, monkeypatch)
        assert faults_a == faults_b
        for a, b in zip(out_a, out_b):
            assert np.array_equal(a, b, equal_nan=True)


@pytest.fixture
def verified_scheduler(monkeypatch):
    """Every scheduler step re-derives each head's start time and compares it with the cache."""
    monkeypatch.setattr(scheduler.CoreScheduler, "verify_cache", True)


@pytest.mark.parametrize("arch", ["a5", "a2a3"])
def test_cached_head_start_times_are_never_stale(arch, verified_scheduler, monkeypatch):
    monkeypatch.setattr(executor.SimExecutable, "reuse_schedules", False)
    fa = load_example("flash_attention")
    rng = np.random.default_rng(4)
    q, k, v = (rng.standard_normal((1, 2, 512, 64)).astype(np.float16) for _ in range(3))
    o = np.zeros_like(q)
    fa.make_flash_attention(arch, 64, True, 2)[None, 3](q, k, v, o, fa.causal_mask(), *fa.workspaces(3, 64, 2))
    x = rng.random((1000, 300)).astype(np.float16)
    z = np.zeros_like(x)
    pl.jit(add_fn, arch=arch)[None, 3](x, x, z)
    assert np.array_equal(z, x + x)


@pytest.mark.parametrize("cat,bug,fn,arch", _catalogue_cases())
def test_cached_start_times_in_the_bug_catalogue(cat, bug, fn, arch, verified_scheduler, monkeypatch):
    _outcome(cat.kernel(fn, arch), bug.args(), bug.blocks, "warn", False, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["a5", "a2a3"])
def test_full_size_runs_equal_with_and_without_reuse(arch, tmp_path, monkeypatch):
    """The benchmark sizes: the seed Add (8192 x 4096, 64 blocks, two waves) and flash attention
    (S 1024, 8 heads, 24 blocks, preload 2)."""
    rng = np.random.default_rng(5)
    x = rng.random((8192, 4096)).astype(np.float16)
    ran, _, out = _same_both_ways(pl.jit(add_fn, arch=arch), [x, x, np.zeros_like(x)], 64, tmp_path / "add",
                                  monkeypatch)
    assert np.array_equal(out[2], x + x) and len(ran) == 2
    fa = load_example("flash_attention")
    q, k, v = (rng.standard_normal((1, 8, 1024, 128)).astype(np.float16) for _ in range(3))
    args = [q, k, v, np.zeros_like(q), fa.causal_mask(), *fa.workspaces(24, 128, 2)]
    ran, report, out = _same_both_ways(fa.make_flash_attention(arch, 128, False, 2), args, 24, tmp_path / "fa",
                                       monkeypatch)
    assert not report["faults"] and len(ran) < 24
    np.testing.assert_allclose(out[3].astype(np.float32), fa.reference(q, k, v).astype(np.float32), atol=2e-3)


def test_a_schedule_is_recorded_only_for_later_blocks(tmp_path, monkeypatch):
    """A block's schedule (its steps and records) is kept only while a later block has its signature:
    the ragged last block of the uniform launch is scheduled but never recorded, the first block of
    each wave is recorded once, and the results are those of scheduling every block."""
    recorded = []

    class Counting(executor.RecordedSchedule):
        def __init__(self, insts, *rest):
            recorded.append(len(insts))
            super().__init__(insts, *rest)
    monkeypatch.setattr(executor, "RecordedSchedule", Counting)
    rng = np.random.default_rng(6)
    m, blocks = 128 * 76 + 50, 77  # a5: two waves of 64 and 13 blocks, the last one ragged
    x = rng.random((m, 128)).astype(np.float16)
    ran, report, out = _same_both_ways(pl.jit(add_fn, arch="a5"), [x, x, np.zeros_like(x)], blocks, tmp_path,
                                       monkeypatch)
    assert np.array_equal(out[2], x + x)
    assert ran == [0, report["physical_cores"], blocks - 1]
    assert len(recorded) == 2 and all(recorded)  # the two waves' first blocks (both runs: reuse off records none)
