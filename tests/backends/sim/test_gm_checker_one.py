"""The GM checker's one-window fast path (``gm_checker.FAST_ONE``, ``access_one``) against the per-row
loop it skips: the same faults in the same order, the same notes and the same cell entries, on random
2-D windows that overlap, nest, cross cell edges, come from several blocks / queues / cores, add
atomically, are replayed (the same instruction again) and write the same or different bytes; with
strided view accesses of another tensor in between."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from pypto_pro.backends.sim import gm_checker
from pypto_pro.backends.sim.gm_checker import GM_CELL_COLS, GM_CELL_ROWS, GlobalChecker
from pypto_pro.backends.sim.inst import ATOMIC, NPIPES, Inst
from pypto_pro.backends.sim.scheduler import Reporter

from gm_sequences import make_inst, sequence_inst

ROWS, COLS = 2 * GM_CELL_ROWS, 2 * GM_CELL_COLS  # four cells: windows meet often and cross edges


def _rect(r0, h, c0, w):
    return ((r0, min(ROWS, r0 + h)), (c0, min(COLS, c0 + w)))


# row / column starts near the cell edges and tile multiples, so windows share cells, nest and cross edges
rects = st.builds(_rect, st.sampled_from([0, 16, 63, 100, 127, 128, 200]), st.sampled_from([1, 8, 17, 64, 128]),
                  st.sampled_from([0, 64, 127, 128, 256, 383, 511, 512, 640]), st.sampled_from([1, 16, 65, 128, 256]))
pipes = st.sampled_from([0, 1, 2, NPIPES + 1, 2 * NPIPES + 1])  # queues of the cube and the two vector cores
access = st.tuples(
    rects, st.sampled_from([False, True, ATOMIC]), st.integers(0, 2), pipes,
    st.lists(st.integers(0, 3), min_size=3, max_size=3), st.integers(0, 3),  # block, pipe, clocks, drained
    st.integers(0, 4), st.booleans(), st.booleans(), st.integers(-1, 3))  # start, a view access, bytes, reuse


def _run(seq, fast: bool, shared: bool, in_flight: bool, with_region: bool):
    mem = np.zeros((ROWS, COLS), np.uint8)
    flat = np.zeros(4096, np.uint8)
    reporter = Reporter("warn")

    def region(pidx, span):
        if pidx == 1:
            return flat[span[0][0]:span[0][1]]
        return mem[span[0][0]:span[0][1], span[1][0]:span[1][1]]
    gm = GlobalChecker(reporter, shared_clock=shared, region=region if with_region else None, in_flight=in_flight)
    old = gm_checker.FAST_ONE
    gm_checker.FAST_ONE = fast
    made: list[Inst] = []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for k, (rect, write, block, pipe, clocks, drained, start, view, change, reuse) in enumerate(seq):
                inst = sequence_inst(made, k, pipe, clocks, drained, start, reuse)
                if view:  # a strided view access of another tensor in between (its own index)
                    (r0, r1), (c0, c1) = rect
                    gm.access_rows(inst, block, 6, "v", (c0, max(1, (r1 - r0) // 32), 1024, c1 - c0), write, 1)
                else:
                    gm.access_one(inst, block, 5, "t", rect, write, 0)
                    if write and change:
                        (r0, r1), (c0, c1) = rect
                        mem[r0:r1, c0:c1] = (k + 1) & 0xFF
                for i in list(gm.pending):
                    gm.landed(i)
    finally:
        gm_checker.FAST_ONE = old
    cells = {key: tuple([(e[0], e[1], e[2], e[3], e[4].name, e[5], e[6]) for e in grp] for grp in lists)
             for key, lists in gm.cell_entries().items()}
    return [str(f) for f in reporter.faults], gm.notes(), cells, gm.seq


@settings(max_examples=400, deadline=None)
@given(st.lists(access, min_size=1, max_size=16), st.booleans(), st.booleans(), st.booleans())
def test_one_window_path_reports_what_the_loop_reports(seq, shared, in_flight, with_region):
    want = _run(seq, False, shared, in_flight, with_region)
    assert _run(seq, True, shared, in_flight, with_region) == want


@pytest.mark.parametrize("shared", [False, True])
def test_conflicts_still_reach_the_loop(shared):
    """Hand-made windows that do conflict (another block's write, a same-queue rewrite, a covering write
    that retires, an atomic pair): the fast path must give way, and the run must report."""
    seq = [(_rect(0, 128, 0, 128), True, 0, 0, [1, 0, 0], 0, 0, False, False, -1),
           (_rect(0, 128, 128, 128), True, 0, 0, [2, 0, 0], 0, 0, False, False, -1),   # disjoint: appended
           (_rect(64, 16, 64, 128), False, 1, 1, [0, 0, 0], 0, 0, False, False, -1),   # another block reads both
           (_rect(0, 128, 0, 256), True, 0, 0, [3, 3, 0], 0, 0, False, False, -1),     # covers: retires
           (_rect(0, 16, 0, 16), ATOMIC, 2, 1, [0, 0, 0], 0, 0, False, False, -1),
           (_rect(0, 16, 0, 16), ATOMIC, 1, 1, [0, 0, 0], 0, 0, False, False, -1)]
    want = _run(seq, False, shared, False, False)
    assert want[0] and _run(seq, True, shared, False, False) == want


def test_disjoint_windows_take_the_fast_path(monkeypatch):
    """The seed Add's pattern (tiles of one cell, none meeting) never enters the per-row loop."""
    calls = []
    real = GlobalChecker._per_row
    monkeypatch.setattr(GlobalChecker, "_per_row", lambda self, *a: calls.append(a) or real(self, *a))
    reporter = Reporter("warn")
    gm = GlobalChecker(reporter)
    inst = make_inst("i", 0, [1], 0, 0, 1)
    for j in range(0, COLS, 128):
        gm.access_one(inst, 0, 5, "t", _rect(0, 128, j, 128), False, 0)
        gm.access_one(inst, 0, 7, "z", _rect(0, 128, j, 128), True, 2)
    assert not calls and gm.seq == 2 * COLS // 128
    assert not reporter.faults
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gm.access_one(inst, 1, 7, "z", _rect(0, 128, 0, 128), False, 2)  # another block reads a written window
    assert len(calls) == 1 and len(reporter.faults) == 1
