"""Strided entries of the GM checker (``gm_checker.STRIDED``, ``access_rows``) against the per-row
reference (one entry per view row): the same faults in the same order, the same notes, the same cell
entries, on random strided row sets that overlap, interleave, cover each other, come from several
blocks / queues / cores, add atomically and write the same or different bytes (same_writes.py)."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from pypto_pro.backends.sim import gm_checker, gm_rows, gm_views
from pypto_pro.backends.sim.gm_checker import GlobalChecker
from pypto_pro.backends.sim.inst import ATOMIC, NPIPES, Inst
from pypto_pro.backends.sim.scheduler import Reporter

from gm_sequences import sequence_inst

MEM = 6000  # bytes of the memory the accesses live in (small: they meet often)


def _bytes(geom):
    a, n, s, w = geom
    return {a + i * s + k for i in range(n) for k in range(w)}


geoms = st.builds(lambda a, n, w, extra: (a, n, w + extra, w), st.integers(0, 3000), st.integers(1, 6),
                  st.integers(1, 300), st.integers(0, 700))


@settings(max_examples=400, deadline=None)
@given(geoms, geoms)
def test_rows_meet_and_rows_inside_are_exact(g1, g2):
    b1, b2 = _bytes(g1), _bytes(g2)
    assert gm_rows.rows_meet(g1, g2) == bool(b1 & b2)
    a, n, s, w = g1
    assert gm_rows.row_meets(a, a + w, g2) == bool(_bytes((a, 1, w, w)) & b2)
    rows2 = [set(range(r[0][0], r[0][1])) for r in gm_rows.row_ranges(g2)]
    inside = sum(any(set(range(r[0][0], r[0][1])) <= o for o in rows2) for r in gm_rows.row_ranges(g1))
    assert gm_rows.rows_inside(g1, g2) == inside


def test_rows_meet_of_interleaved_heads():
    """BSND tiles of two heads: the same stride, bytes interleaved, never shared."""
    h0, h1 = (0, 128, 2048, 256), (256, 128, 2048, 256)
    assert not gm_rows.rows_meet(h0, h1) and gm_rows.rows_meet(h0, (255, 2, 2048, 2))


def test_view_records_carry_their_geometry():
    base = np.zeros((1, 64, 8, 128), np.float16)
    g = base[0, :, 3, :]
    rects = gm_views.row_rects(g, base, (slice(8, 24), slice(0, 128)))
    recs = gm_views.records(4, "q", rects, False)
    assert recs.geom == (8 * 2048 + 3 * 256, 16, 2048, 256)
    assert [r[2] for r in recs] == gm_rows.row_ranges(recs.geom) == list(rects)
    # rows that overlap each other (stride below the width) are not strided entries
    assert getattr(gm_views.records(4, "q", gm_views._row_ranges(0, 8, 3, 16), False), "geom", None) is None


# ---- random access sequences: strided against per-row --------------------------------------------

pipes = st.sampled_from([0, 1, 2, NPIPES + 1, 2 * NPIPES + 1])  # queues of the cube and the two vector cores
access = st.tuples(
    st.one_of(geoms, st.sampled_from([(0, 4, 1024, 256), (256, 4, 1024, 256), (0, 4, 1024, 512), (512, 2, 2048, 512)])),
    st.sampled_from([False, True, ATOMIC]), st.integers(0, 2), pipes,
    st.lists(st.integers(0, 3), min_size=3, max_size=3), st.integers(0, 3),  # block, pipe, clocks, drained
    st.integers(0, 4), st.booleans(), st.booleans(), st.integers(-1, 3))  # start, plain rects, change bytes, reuse


def _run(seq, strided: bool, shared: bool, in_flight: bool, with_region: bool):
    mem = np.zeros(MEM, np.uint8)
    reporter = Reporter("warn")
    region = (lambda pidx, span: mem[span[0][0]:span[0][1]]) if with_region else None
    gm = GlobalChecker(reporter, shared_clock=shared, region=region, in_flight=in_flight)
    old = gm_checker.STRIDED
    gm_checker.STRIDED = strided
    made: list[Inst] = []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for k, (geom, write, block, pipe, clocks, drained, start, plain, change, reuse) in enumerate(seq):
                inst = sequence_inst(made, k, pipe, clocks, drained, start, reuse)
                if plain:  # the rows one by one through access_rects (setval / getval, strided loads)
                    gm.access_rects(inst, block, 5, "v", gm_rows.row_ranges(geom), write, 0)
                else:
                    gm.access_rows(inst, block, 5, "v", geom, write, 0)
                if write and change:
                    for (x0, x1), in gm_rows.row_ranges(geom):
                        mem[x0:x1] = (k + 1) & 0xFF
                for i in list(gm.pending):
                    gm.landed(i)
    finally:
        gm_checker.STRIDED = old
    cells = {key: tuple([(e[0], e[1], e[2], e[3], e[4].name, e[5], e[6]) for e in grp] for grp in lists)
             for key, lists in gm.cell_entries().items()}
    return [str(f) for f in reporter.faults], gm.notes(), cells


@settings(max_examples=300, deadline=None)
@given(st.lists(access, min_size=1, max_size=14), st.booleans(), st.booleans(), st.booleans())
def test_strided_entries_report_what_rows_report(seq, shared, in_flight, with_region):
    want = _run(seq, False, shared, in_flight, with_region)
    assert _run(seq, True, shared, in_flight, with_region) == want


@pytest.mark.parametrize("shared", [False, True])
def test_conflicts_are_found_and_expanded_in_order(shared):
    """A hand-made run that does conflict: a cross-block write over interleaved rows, a covering
    rewrite that retires strided rows, a partial cover, an unordered read (the fast path must give way)."""
    seq = [((0, 4, 1024, 256), True, 0, 0, [1, 0, 0], 0, 0, False, False, -1),
           ((256, 4, 1024, 256), True, 0, 1, [0, 1, 0], 0, 0, False, False, -1),     # interleaved: disjoint
           ((0, 4, 1024, 512), True, 0, 0, [2, 2, 0], 0, 0, False, False, -1),       # covers both: retires
           ((100, 3, 1024, 50), False, 1, 1, [0, 0, 0], 0, 0, False, False, -1),     # another block reads
           ((0, 2, 2048, 512), True, 0, 0, [3, 3, 0], 0, 0, False, False, -1),       # partial cover
           ((0, 4, 1024, 512), False, 0, 1, [1, 3, 0], 0, 0, False, False, -1)]      # unordered read
    want = _run(seq, False, shared, False, False)
    assert want[0] and _run(seq, True, shared, False, False) == want
