"""Strided row sets of the global-memory checker: one access through a ``pl.make_tensor`` view is
``rows`` byte ranges of ``width`` bytes, ``stride`` apart from ``start`` (``geom`` = (start, rows, stride,
width), ``stride >= width > 0``: the rows are disjoint and ascending). The checker holds such an access as
one entry and asks these exact questions of it: does it share a byte with a range / another row set,
and which of its rows lie inside the rows of another set."""
from __future__ import annotations

from pypto_pro.backends.sim.checks import _strided_disjoint

Geom = tuple  # (start, rows, stride, width) in bytes


def row_meets(x0: int, x1: int, geom: Geom) -> bool:
    """Whether the byte range ``[x0, x1)`` shares a byte with a row of ``geom``."""
    a, n, s, w = geom
    first = (x0 - a - w) // s + 1  # row i meets iff x0 - w < a + i * s < x1
    last = (x1 - 1 - a) // s
    return max(first, 0) <= min(last, n - 1)


def rows_meet(g1: Geom, g2: Geom) -> bool:
    """Whether a row of ``g1`` shares a byte with a row of ``g2`` (exact)."""
    a1, n1, s1, w1 = g1
    a2, n2, s2, w2 = g2
    if a1 >= a2 + (n2 - 1) * s2 + w2 or a2 >= a1 + (n1 - 1) * s1 + w1:
        return False
    if n1 == 1:
        return row_meets(a1, a1 + w1, g2)
    if n2 == 1:
        return row_meets(a2, a2 + w2, g1)
    if s1 == s2:  # row r1 of g1 meets row r2 of g2 iff -d - w2 < (r2 - r1) * s < w1 - d
        d = a2 - a1
        return max((-d - w2) // s1 + 1, 1 - n1) <= min(-((d - w1) // s1) - 1, n2 - 1)
    return not _strided_disjoint(a1, (n1, s1, w1), a2, (n2, s2, w2))


def rows_inside(inner: Geom, outer: Geom) -> int:
    """How many rows of ``inner`` each lie inside one row of ``outer``."""
    if inner == outer:
        return inner[1]
    a, n, s, w = outer
    b, m, t, u = inner
    if u > w:
        return 0
    count = 0
    for j in range(m):
        r0 = b + j * t
        i = (r0 - a) // s  # the only row of outer that can hold it (a + i * s <= r0)
        if 0 <= i < n and r0 + u <= a + i * s + w:
            count += 1
    return count


def row_ranges(geom: Geom) -> list[tuple]:
    """The checker's per-row rects of ``geom`` (what ``gm_views.row_rects`` reports one by one)."""
    a, n, s, w = geom
    return [((a + i * s, a + i * s + w),) for i in range(n)]
