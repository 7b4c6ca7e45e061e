"""A catalogue of deliberately broken kernels that the simulator must catch, each with its fix.

Every entry is a small manual-sync kernel (``auto_mutex=False``; fp32 [16, 64] tiles, a few
blocks, NumPy inputs) with one real bug. The tests check that the simulator raises the right
``SimulationError`` subclass and that the message names the source line(s) of the instructions
involved: both accesses of a race, the blocked instruction of a deadlock, the set of an unpaired
flag... Expected lines are found through marker comments (``# <- name``) in the kernel source,
never hard-coded; the unmarked set/wait pairs are the inlined helpers ``hand_off`` and
``store_out``. Then, for each bug: ``check="warn"`` returns normally with the fault text in
``report.faults``; ``check="off"`` reports nothing. Finally the fixed variants, the examples and
the shared kernels of ``tests/kernels.py`` run clean under ``check="raise"`` on both archs.

Hardware semantics the kernels are written against (what the simulator models): each pipe runs
its queue in order; ``set_flag(src, dst, ev)`` (``pl.system.sync_src``) sits in ``src``'s queue
and fires when ``src`` reaches it, i.e. after every earlier ``src`` instruction; ``wait_flag``
(``pl.system.sync_dst``) sits in ``dst``'s queue, blocks ``dst`` until the flag is set and then
consumes it. The flag is one bit: a set of a flag that is still set stalls ``src`` until the wait
that clears it (so a set that runs ahead of its wait is not lost; a set no wait ever clears hangs
the core: a deadlock naming both sets). A flag still set at kernel end is a note; a pipe locking
an a5 buffer id it already holds is a fault.

Deadlocks and out-of-bounds GM accesses cannot be run past, so they raise in every check mode
(``Bug.stops``).
"""
from __future__ import annotations

import warnings
from typing import Callable

import numpy as np
import pytest
from bug_catalogue import (
    CATALOGUE,
    Bug,
    _check_colsum,
    add_ok,
    colsum_ok,
    kernel,
    mutex_ok,
    ring_ok,
    scale_ok,
    workspace_ok,
)
from located import line_of


@pytest.fixture(autouse=True)
def _no_check_override(monkeypatch):
    monkeypatch.delenv("PYPTO_PRO_CHECK", raising=False)
    monkeypatch.delenv("PYPTO_PRO_TRACE", raising=False)


def _cases(select: Callable[[Bug], bool] = lambda b: True, mark: Callable[[Bug], list] = lambda b: []):
    return [pytest.param(b, arch, id=f"{b.kind}-{arch}", marks=mark(b))
            for b in CATALOGUE if select(b) for arch in b.archs]


def _norm(text: str) -> str:
    return " ".join(text.split())


def _has(text: str, needle: str) -> bool:
    """``needle`` in ``text``, ignoring how whitespace is laid out (column padding may change)."""
    return _norm(needle) in _norm(text)


def _check_text(bug: Bug, text: str) -> None:
    for needle in bug.needles:
        assert _has(text, needle), f"{needle!r} not in:\n{text}"
    for marker in bug.lines:
        where = line_of(bug.fn, marker)
        assert where in text, f"line of '# <- {marker}' ({where}) not in:\n{text}"


@pytest.mark.parametrize("bug,arch", _cases())
def test_bug_is_caught_with_its_lines(bug: Bug, arch: str):
    with pytest.raises(bug.exc) as err:
        kernel(bug.fn, arch).options(check="raise")[None, bug.blocks](*bug.args())
    _check_text(bug, str(err.value))


@pytest.mark.parametrize("bug,arch", _cases(
    lambda b: b.sync_lines,
    lambda b: []))
def test_sync_fault_names_the_sync_instructions_line(bug: Bug, arch: str):
    """Faults about a sync instruction (a deadlocked wait, a set never waited for or set twice, a
    lock taken twice) should name that instruction's own line, and for a deadlock also the
    set_flag left pending."""
    with pytest.raises(bug.exc) as err:
        kernel(bug.fn, arch).options(check="raise")[None, bug.blocks](*bug.args())
    text = str(err.value)
    for marker in bug.sync_lines:
        where = line_of(bug.fn, marker)
        assert where in text, f"line of '# <- {marker}' ({where}) not in:\n{text}"


def _stops_the_kernel(bug: Bug):
    """Deadlocks and out-of-bounds GM accesses cannot be continued past: they raise in every check
    mode (a deadlock lists the faults reported before it). Returns the exception class, or None."""
    return bug.stops


@pytest.mark.parametrize("bug,arch", _cases())
def test_warn_mode_records_the_fault_and_returns(bug: Bug, arch: str):
    stops = _stops_the_kernel(bug)
    if stops is not None:
        with pytest.raises(stops) as err:
            kernel(bug.fn, arch).options(check="warn")[None, bug.blocks](*bug.args())
        _check_text(bug, str(err.value))
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = kernel(bug.fn, arch).options(check="warn")[None, bug.blocks](*bug.args())
    assert report.faults, "check='warn' must record the fault"
    assert all(isinstance(f, str) for f in report.faults)
    matching = [f for f in report.faults if all(_has(f, n) for n in bug.needles)]
    assert matching, "no recorded fault carries the expected text:\n" + "\n".join(report.faults)
    _check_text(bug, "\n".join(matching))
    warned = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert matching[0] in warned, "each recorded fault is also issued as a RuntimeWarning"


@pytest.mark.parametrize("bug,arch", _cases())
def test_off_mode_reports_nothing(bug: Bug, arch: str):
    stops = _stops_the_kernel(bug)
    if stops is not None:
        with pytest.raises(stops):
            kernel(bug.fn, arch).options(check="off")[None, bug.blocks](*bug.args())
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        report = kernel(bug.fn, arch).options(check="off")[None, bug.blocks](*bug.args())
    assert report.faults == []


@pytest.mark.parametrize("bug,arch", [pytest.param(b, a, id=f"{b.kind}-fixed-{a}")
                                      for b in CATALOGUE for a in b.archs])
def test_fixed_variant_runs_clean(bug: Bug, arch: str):
    """The fixed variant of each bug: no fault under check='raise', and the right numbers."""
    args = bug.args()
    report = kernel(bug.fixed, arch).options(check="raise")[None, bug.blocks](*args)
    assert report.faults == [] and report.cycles > 0
    x = args[0]
    if bug.fixed in (scale_ok, mutex_ok, ring_ok):
        np.testing.assert_array_equal(args[-1], 2 * x)
    elif bug.fixed is add_ok:
        np.testing.assert_array_equal(args[-1], x + args[1])
    elif bug.fixed is workspace_ok:
        np.testing.assert_array_equal(args[1], 2 * x)
        np.testing.assert_array_equal(args[2], 2 * x + np.float32(1))
    elif bug.fixed is colsum_ok:
        _check_colsum(x, args[1])
    else:  # pragma: no cover
        raise AssertionError(bug.fixed)
