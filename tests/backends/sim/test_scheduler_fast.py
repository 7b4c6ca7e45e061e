"""The scheduler's ready heap and narrow invalidation (``CoreScheduler.fast``) must be invisible.

With ``fast`` the heads that can start sit in a heap and only the heads that wait for cross-core
signals are recomputed when such signals arrive or are consumed; without it every queue is scanned at
each step and every head of the receiving core recomputed. Each case runs a kernel both ways with
every block scheduled from scratch (schedule replay off) and compares outputs (NaN payloads, signed
zeros, subnormals and infinities in the inputs), every report field and the trace files byte for byte;
``verify_cache`` checks every cached start time against a fresh computation at each step.
"""
from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.backends.sim import executor, scheduler
from example_modules import load_example
from kernels import add_fn
from launch_compare import assert_same, capture, specials


def _launch(kernel, args: list[np.ndarray], blocks: int, fast: bool, trace: Path, monkeypatch,
            check: str) -> tuple:
    monkeypatch.setattr(scheduler.CoreScheduler, "fast", fast)
    monkeypatch.setattr(scheduler.CoreScheduler, "verify_cache", True)
    monkeypatch.setattr(executor.SimExecutable, "reuse_schedules", False)
    return capture(kernel, args, blocks, trace, check)


def _same(kernel, args, blocks, tmp_path, monkeypatch, check="raise") -> dict:
    a = _launch(kernel, args, blocks, True, tmp_path / "fast", monkeypatch, check)
    b = _launch(kernel, args, blocks, False, tmp_path / "scan", monkeypatch, check)
    return assert_same(a, b, "fast", "scan", need_files=True)


@pytest.mark.parametrize("arch", ["a5", "a2a3"])
@pytest.mark.parametrize("causal,preload", [(True, 1), (False, 2), (True, 0)])
def test_flash_attention_fast_vs_scan(arch, causal, preload, tmp_path, monkeypatch):
    fa = load_example("flash_attention")
    rng = np.random.default_rng(7)
    q, k, v = (specials((1, 2, 256, 64), rng) for _ in range(3))
    args = [q, k, v, np.zeros_like(q), fa.causal_mask(), *fa.workspaces(3, 64, preload)]
    rep = _same(fa.make_flash_attention(arch, 64, causal, preload), args, 3, tmp_path, monkeypatch)
    assert rep["cycles"] > 0


@pytest.mark.parametrize("check", ["raise", "warn", "off"])
def test_add_fast_vs_scan(check, tmp_path, monkeypatch):
    rng = np.random.default_rng(8)
    x = specials((1000, 300), rng)
    _same(pl.jit(add_fn, arch="a5"), [x, x, np.zeros_like(x)], 3, tmp_path, monkeypatch, check)


def _catalogue_cases() -> list:
    import test_bug_catalogue as cat  # the broken kernels of the bug catalogue (same directory)
    return [pytest.param(cat, bug, fn, arch, id=f"{bug.kind}-{'bug' if fn is bug.fn else 'fixed'}-{arch}")
            for bug in cat.CATALOGUE for arch in bug.archs for fn in (bug.fn, bug.fixed)]


def _outcome(kern, args, blocks, fast: bool, monkeypatch) -> tuple:
    monkeypatch.setattr(scheduler.CoreScheduler, "fast", fast)
    monkeypatch.setattr(scheduler.CoreScheduler, "verify_cache", True)
    monkeypatch.setattr(executor.SimExecutable, "reuse_schedules", False)
    args = [a.copy() for a in args]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            report = kern.options(check="warn")[None, blocks](*args)
        got = {k: v for k, v in dataclasses.asdict(report).items() if k != "trace_files"}
    except Exception as exc:  # a deadlock raises even under check='warn': its message must match too
        got = f"{type(exc).__name__}: {exc}"
    return [a.tobytes() for a in args], got


@pytest.mark.parametrize("cat,bug,fn,arch", _catalogue_cases())
def test_bug_catalogue_fast_vs_scan(cat, bug, fn, arch, monkeypatch):
    kern = cat.kernel(fn, arch)
    args = bug.args()
    assert _outcome(kern, args, bug.blocks, True, monkeypatch) == _outcome(kern, args, bug.blocks, False, monkeypatch)


@pytest.mark.parametrize("arch", ["a5", "a2a3"])
@pytest.mark.parametrize("check", ["raise", "warn"])
def test_sync_all_fast_vs_scan(arch, check, tmp_path, monkeypatch):
    """Every block in one scheduler (sync_all): buffer ids, barrier signals to every core."""
    import test_sync_all as sa  # same directory
    x = specials((4 * 16, 64), np.random.default_rng(9), np.float32)
    kern = pl.jit(sa.neighbour_fn(True), arch=arch)
    _same(kern, [x, np.zeros_like(x), np.zeros_like(x)], 4, tmp_path, monkeypatch, check)


@pytest.mark.parametrize("arch", ["a5", "a2a3"])
def test_live_block_fast_vs_scan(arch, tmp_path, monkeypatch):
    """A live block (``run_until`` between scalar reads, records added as they are dispatched); on a5
    the read races with the Cube's store and both ways must raise the same RaceError."""
    import test_su_cross_core_wait as su  # same directory
    rng = np.random.default_rng(4)
    args = [specials((su.R, su.K), rng), specials((su.K, su.N), rng), np.full((su.R, su.N), np.nan, np.float32),
            np.zeros(2, np.float32)]
    kern = pl.jit(su.LIVE, arch=arch)
    runs = []
    for fast, name in ((True, "fast"), (False, "scan")):
        monkeypatch.setattr(scheduler.CoreScheduler, "fast", fast)
        monkeypatch.setattr(scheduler.CoreScheduler, "verify_cache", True)
        runs.append(capture(kern, args, 1, None if arch == "a5" else tmp_path / name, catch=True))
    assert_same(runs[0], runs[1], "fast", "scan", need_files=arch == "a2a3")
    assert isinstance(runs[0][1], str) == (arch == "a5")
