"""The on-chip checkers' fast paths (``stale.FAST``, ``checks.FAST``) must be invisible.

Each fast path keeps its reference path behind the switch. Two kinds of cases: random write / read
sequences fed straight to the checker objects (marks, messages and their order compared with the
reference), and real kernels (the bug catalogue, its fixed versions, stale-row and padding kernels)
launched both ways with every block scheduled from scratch, comparing outputs, every report field
(faults and notes with their messages, in order) or the raised fault's message.
"""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest

from pypto_pro.backends.sim import checks, executor, stale
from pypto_pro.backends.sim.inst import NPIPES, Inst
from pypto_pro.backends.sim.scheduler import Reporter
from pypto_pro.language.enums import MemorySpace


class _Stmt:
    def __init__(self, i: int):
        self.loc = None
        self.i = i


def _stale_run(seed: int, fast: bool, monkeypatch) -> tuple:
    """A random mix of shrinking / growing writes of a few statements into a few tiles (two pitches,
    overlapping bases) and reads of them, on two memories: every mark and every finding."""
    monkeypatch.setattr(stale, "FAST", fast)
    rng = np.random.default_rng(seed)
    sb = stale.StaleBytes()
    rep = Reporter("warn")
    stmts = [_Stmt(i) for i in range(5)]
    insts = [Inst(i, 0, 0, 1.0, stmts[i % 5], f"op{i % 5}") for i in range(20)]
    mems = [(0, MemorySpace.Vec), (0, MemorySpace.Mat)]
    tiles = [(0, 64), (256, 64), (128, 32), (512, 128), (0, 32)]  # (base, row pitch): some share bytes
    seen = []
    for step in range(400):
        mem = mems[int(rng.integers(2))]
        lo, rb = tiles[int(rng.integers(len(tiles)))]
        rows, used = int(rng.integers(1, 9)), int(rng.integers(1, rb + 1))
        inst = insts[int(rng.integers(len(insts)))]
        if rng.random() < 0.6:
            sb.written(inst, mem, lo, rows, rb, used)
        else:
            sb.check(inst, mem, lo, rows, rb, used, f"t{step}", rep)
        if step % 25 == 0:
            seen.append({m: [(mk.addrs.tobytes(), mk.writer.seq, mk.lo, mk.row_bytes, mk.row0, mk.col0)
                             for mk in marks] for m, marks in sb.marks.items()})
    return seen, [str(f) for f in rep.faults]


@pytest.mark.parametrize("seed", range(12))
def test_stale_marks_fast_vs_log(seed, monkeypatch):
    a = _stale_run(seed, True, monkeypatch)
    b = _stale_run(seed, False, monkeypatch)
    assert a == b
    assert any(a[0]) and a[1]  # the sequences do leave marks and find stale reads


def _outcome(kern, args, blocks: int, fast: bool, monkeypatch, check: str = "warn") -> tuple:
    monkeypatch.setattr(stale, "FAST", fast)
    monkeypatch.setattr(checks, "FAST", fast)
    monkeypatch.setattr(executor.SimExecutable, "reuse_schedules", False)
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            report = kern.options(check=check)[None, blocks](*args)
        got = {k: v for k, v in dataclasses.asdict(report).items() if k != "trace_files"}
    except Exception as exc:  # a raised fault (check='raise', a deadlock): its message must match too
        got = f"{type(exc).__name__}: {exc}"
    return [a.tobytes() for a in args if isinstance(a, np.ndarray)], got


def _catalogue_cases() -> list:
    import test_bug_catalogue as cat  # the broken kernels of the bug catalogue (same directory)
    return [pytest.param(cat, bug, fn, arch, id=f"{bug.kind}-{'bug' if fn is bug.fn else 'fixed'}-{arch}")
            for bug in cat.CATALOGUE for arch in bug.archs for fn in (bug.fn, bug.fixed)]


@pytest.mark.parametrize("check", ["warn", "raise"])
@pytest.mark.parametrize("cat,bug,fn,arch", _catalogue_cases())
def test_bug_catalogue_fast_vs_reference(cat, bug, fn, arch, check, monkeypatch):
    kern = cat.kernel(fn, arch)
    args = bug.args()
    a = _outcome(kern, args, bug.blocks, True, monkeypatch, check)
    assert a == _outcome(kern, args, bug.blocks, False, monkeypatch, check)


def _race_run(seed: int, fast: bool, arch: str, monkeypatch) -> tuple:
    """Random reads and writes of a few tiles (some sharing bytes: declared views, reused addresses) by
    instructions of every pipe of two cores with random vector clocks and drain counts: every finding,
    in order (races, same-pipe hazards, never-written reads)."""
    monkeypatch.setattr(checks, "FAST", fast)
    monkeypatch.setattr(stale, "FAST", fast)
    rng = np.random.default_rng(seed)
    rep = Reporter("warn")
    nq = 2 * NPIPES
    mems = {(c, s): 4096 for c in range(2) for s in (MemorySpace.Vec, MemorySpace.Mat)}
    chk = checks.OnChipChecker(rep, mems, arch)
    tiles = [(0, 64, 4), (256, 64, 4), (128, 32, 8), (0, 512, 1), (1024, 64, 4)]  # (lo, row pitch, rows)
    stmts = [_Stmt(i) for i in range(6)]
    for step in range(300):
        if step % 100 == 99:
            chk.reset_block()
        core = int(rng.integers(2))
        space = (MemorySpace.Vec, MemorySpace.Mat)[int(rng.integers(2))]
        lo, rb, nrows = tiles[int(rng.integers(len(tiles)))]
        key = (space, lo, lo + rb * nrows, core)
        rows, used = int(rng.integers(1, nrows + 1)), int(rng.integers(1, rb + 1))
        pipe = core * NPIPES + int(rng.integers(NPIPES))
        inst = Inst(step, pipe, 0, 1.0, stmts[int(rng.integers(6))], f"op{step}")
        inst.vc = tuple(int(v) for v in rng.integers(0, 4, nq))
        inst.drained = int(rng.integers(0, 4))
        write = bool(rng.random() < 0.5)
        chk.access(inst, (key, write, f"t{step}", rows, rb, used))
        if write and rng.random() < 0.8:
            chk.committed(inst, (core, space), lo, rows, rb, used)
    return [str(f) for f in rep.faults], list(rep.notes)


@pytest.mark.parametrize("arch", ["a5", "a2a3"])
@pytest.mark.parametrize("seed", range(8))
def test_race_findings_fast_vs_reference(seed, arch, monkeypatch):
    a = _race_run(seed, True, arch, monkeypatch)
    assert a == _race_run(seed, False, arch, monkeypatch)
    kinds = " ".join(a[0])
    assert "data race" in kinds and "nothing in this block wrote" in kinds
    assert arch != "a5" or "same-pipe hazard" in kinds
