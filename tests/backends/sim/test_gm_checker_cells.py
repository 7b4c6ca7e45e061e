"""The GM checker's one-dimensional fast paths (byte ranges of ``pl.make_tensor`` views) agree with the
general cell and overlap formulas they shortcut (checks.py)."""
from __future__ import annotations

import itertools

from pypto_pro.backends.sim import checks
from pypto_pro.backends.sim.checks import GM_CELL_COLS, GM_CELL_ROWS


def _general_cells(rect: tuple) -> list[tuple]:
    *lead, (r0, r1), (c0, c1) = rect if len(rect) >= 2 else ((0, 1), *rect)
    lead_key = tuple(a for a, _ in lead)
    return [(lead_key, i, j) for i in range(r0 // GM_CELL_ROWS, (r1 - 1) // GM_CELL_ROWS + 1)
            for j in range(c0 // GM_CELL_COLS, (c1 - 1) // GM_CELL_COLS + 1)]


def _general_overlap(a: tuple, b: tuple) -> bool:
    return all(x0 < y1 and y0 < x1 for (x0, x1), (y0, y1) in zip(a, b))


EDGES = [0, 1, GM_CELL_COLS - 1, GM_CELL_COLS, GM_CELL_COLS + 1, 2 * GM_CELL_COLS, 3 * GM_CELL_COLS + 7]


def test_byte_range_cells_match_the_general_formula():
    for lo, hi in itertools.combinations(EDGES, 2):
        assert checks._cells(((lo, hi),)) == _general_cells(((lo, hi),))
    for rect in (((0, 1), (0, 5)), ((0, GM_CELL_ROWS + 1), (3, GM_CELL_COLS + 2)), ((2, 3), (1, 2), (4, 9))):
        assert checks._cells(rect) == _general_cells(rect)


def test_byte_range_overlap_matches_the_general_formula():
    ranges = list(itertools.combinations(EDGES, 2))
    for a, b in itertools.product(ranges, ranges):
        assert checks._overlap((a,), (b,)) == _general_overlap((a,), (b,))


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
