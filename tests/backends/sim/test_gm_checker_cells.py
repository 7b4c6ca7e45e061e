"""The GM checker's one-dimensional fast paths (byte ranges of ``pl.make_tensor`` views) agree with the
general cell and overlap formulas they shortcut (gm_checker.py)."""
from __future__ import annotations

import itertools

from pypto_pro.backends.sim import gm_checker
from pypto_pro.backends.sim.gm_checker import GM_CELL_COLS, GM_CELL_ROWS


def _general_cells(rect: tuple) -> list[tuple]:
    *lead, (r0, r1), (c0, c1) = rect if len(rect) >= 2 else ((0, 1), *rect)
    leads = itertools.product(*(range(a // GM_CELL_ROWS, (b - 1) // GM_CELL_ROWS + 1) for a, b in lead))
    return [(lead_key, i, j) for lead_key in leads for i in range(r0 // GM_CELL_ROWS, (r1 - 1) // GM_CELL_ROWS + 1)
            for j in range(c0 // GM_CELL_COLS, (c1 - 1) // GM_CELL_COLS + 1)]


def _general_overlap(a: tuple, b: tuple) -> bool:
    return all(x0 < y1 and y0 < x1 for (x0, x1), (y0, y1) in zip(a, b))


EDGES = [0, 1, GM_CELL_COLS - 1, GM_CELL_COLS, GM_CELL_COLS + 1, 2 * GM_CELL_COLS, 3 * GM_CELL_COLS + 7]


def test_byte_range_cells_match_the_general_formula():
    for lo, hi in itertools.combinations(EDGES, 2):
        assert gm_checker._cells(((lo, hi),)) == _general_cells(((lo, hi),))
    for rect in (((0, 1), (0, 5)), ((0, GM_CELL_ROWS + 1), (3, GM_CELL_COLS + 2)), ((2, 3), (1, 2), (4, 9))):
        assert gm_checker._cells(rect) == _general_cells(rect)


def test_byte_range_overlap_matches_the_general_formula():
    ranges = list(itertools.combinations(EDGES, 2))
    for a, b in itertools.product(ranges, ranges):
        assert gm_checker._overlap((a,), (b,)) == _general_overlap((a,), (b,))


def test_view_row_ranges_are_the_rows_of_the_window():
    import numpy as np

    from pypto_pro.backends.sim import gm_views
    base = np.zeros((2, 64, 4, 16), np.float16)
    g = base[1, :, 2, :]
    for _ in range(2):  # the second answer comes from the cache: the same ranges
        got = gm_views.row_rects(g, base, (slice(8, 12), slice(0, 16)))
        start = base.ctypes.data
        want = tuple(((g[i].ctypes.data - start, g[i].ctypes.data - start + 32),) for i in range(8, 12))
        assert got == want


def test_access_rects_is_access_of_each_rect_in_turn():
    """One call for a view's row ranges reports what one call per range reports, in the same order, and
    keeps the same entries (races across blocks, same-queue hazards, retired covered reads)."""
    from pypto_pro.backends.sim.gm_checker import GlobalChecker
    from pypto_pro.backends.sim.inst import NPIPES, OP, Inst
    from pypto_pro.backends.sim.scheduler import Reporter

    def inst(name, pipe, vc):
        i = Inst(0, pipe, OP, 1.0, None, name)
        i.vc = vc + (0,) * (NPIPES - len(vc))
        return i

    rows = [((a, a + 256),) for a in range(0, 8 * 2048, 2048)]
    shifted = [((a + 128, a + 384),) for a in range(0, 8 * 2048, 2048)]
    runs = [(inst("w0", 0, (1, 0)), 0, rows, True), (inst("r1", 1, (0, 1)), 1, shifted, False),
            (inst("w2", 0, (2, 0)), 0, shifted, True), (inst("w3", 0, (1, 0)), 0, rows[2:5], True)]

    def report(one_by_one: bool):
        reporter = Reporter("warn")
        gm = GlobalChecker(reporter)
        for i, block, rects, write in runs:
            if one_by_one:
                for r in rects:
                    gm.access(i, block, 7, "q", r, write)
            else:
                gm.access_rects(i, block, 7, "q", rects, write)
        cells = {k: ([e[4].name for e in w], [e[4].name for e in r]) for k, (w, r) in gm.cells.items()}
        return [str(f) for f in reporter.faults], cells
    assert report(False) == report(True)
    assert report(False)[0]  # the runs do conflict
