"""Global-memory conflicts within a block (between pipes, happens-before) and across blocks (different
cores), indexed by a grid of cells over each tensor; fed by the scheduler like the on-chip checkers."""
from __future__ import annotations

from pypto_pro.arch.pipes import unordered_pipes
from pypto_pro.backends.sim.inst import ATOMIC, NPIPES, PIPE_INDEX, PIPES, Inst
from pypto_pro.backends.sim.same_writes import Region, SameWrites, span_of
from pypto_pro.backends.sim.scheduler import Reporter
from bisect import insort
from itertools import product

from pypto_pro.backends.sim.checks import _hazard, _race
from pypto_pro.backends.sim.gm_rows import Geom, row_meets, row_ranges, rows_inside, rows_meet
from pypto_pro.errors_sim import RaceError

GM_CELL_ROWS, GM_CELL_COLS = 128, 512  # grid (in elements) that indexes global-memory accesses
STRIDED = True  # a view access is one strided entry (access_rows); False: one entry per row, the reference
FAST_ONE = True  # access_one: a 2-D window in one cell that meets nothing there skips the per-row loop
_BUCKET = 20    # strided entries are indexed by the 1 MiB buckets their byte span touches


def _seq(entry: tuple) -> int:
    return entry[6]

def _cells(rect: tuple) -> list[tuple]:
    n = len(rect)
    if n == 2:  # the common 2-D window inside one cell: no generator machinery
        (r0, r1), (c0, c1) = rect
        i, j = r0 // GM_CELL_ROWS, c0 // GM_CELL_COLS
        if (r1 - 1) // GM_CELL_ROWS == i and (c1 - 1) // GM_CELL_COLS == j:
            return [((), i, j)]
    elif n == 1:  # a byte range of a view's row (gm_views.row_rects) inside one cell: row 0 of the grid
        c0, c1 = rect[0]
        j = c0 // GM_CELL_COLS
        if (c1 - 1) // GM_CELL_COLS == j:
            return [((), 0, j)]
    *lead, (r0, r1), (c0, c1) = rect if len(rect) >= 2 else ((0, 1), *rect)
    # Leading axes are bucketed like the rows (GM_CELL_ROWS apart), never keyed by their start: two windows
    # that overlap must share a cell, and [0:128] / [64:192] on a leading axis overlap.
    leads = product(*(range(a // GM_CELL_ROWS, (b - 1) // GM_CELL_ROWS + 1) for a, b in lead)) if lead else ((),)
    return [(lead_key, i, j) for lead_key in leads for i in range(r0 // GM_CELL_ROWS, (r1 - 1) // GM_CELL_ROWS + 1)
            for j in range(c0 // GM_CELL_COLS, (c1 - 1) // GM_CELL_COLS + 1)]


def _overlap(a: tuple, b: tuple) -> bool:
    n = len(a)
    if n == 2:  # the common 2-D window, without generator machinery
        (a0, a1), (a2, a3) = a
        (b0, b1), (b2, b3) = b
        return a0 < b1 and b0 < a1 and a2 < b3 and b2 < a3
    if n == 1:  # byte ranges of views
        (a0, a1), = a
        (b0, b1), = b
        return a0 < b1 and b0 < a1
    return all(x0 < y1 and y0 < x1 for (x0, x1), (y0, y1) in zip(a, b))


def _meets(group: list, rect: tuple, inst: Inst, block: int) -> bool:
    """Whether an entry of ``group`` other than ``inst``'s own (of ``block``) overlaps 2-D ``rect`` (or is
    not 2-D: then the per-row path decides)."""
    (r0, r1), (c0, c1) = rect
    for other in group:
        orect = other[3]
        if len(orect) != 2:
            return True
        (a0, a1), (a2, a3) = orect
        if r0 < a1 and a0 < r1 and c0 < a3 and a2 < c1 and not (other[4] is inst and other[0] == block):
            return True
    return False


def _contains(outer: tuple, inner: tuple) -> bool:
    return all(o0 <= i0 and i1 <= o1 for (o0, o1), (i0, i1) in zip(outer, inner))


class GlobalChecker:
    """Global-memory conflicts: between pipes of a block (happens-before), and between blocks
    (different cores never synchronise in this release, so any overlap with a write is a race).
    Two atomic-add stores never conflict with each other (the hardware adds at the destination, so
    concurrent atomic writers may overlap as long as they are the only writers and nothing reads).

    Accesses are indexed by cells of a coarse grid. A write that every earlier access of its
    block to bytes inside its window happens-before retires those accesses: anything that would
    conflict with them also conflicts with this write, and anything ordered after this write is
    ordered after them. This keeps rewritten windows (workspaces, ring slots) from piling up.

    An access through a view (:meth:`access_rows`: rows of bytes, one stride apart) is held as one
    strided entry while nothing unordered meets it; the moment something would have to be compared row
    by row, the entries it meets are expanded into the cells, in the order the per-row entries would
    hold there (``seq``), and the access runs the per-row path (``STRIDED = False``: always).

    With ``region`` (GM binding index, rect -> those bytes), a write that overlaps another block's
    write is judged by the bytes once it has landed (``same_writes``): identical bytes are a note,
    different bytes a ``RaceError``. The scheduler calls :meth:`landed` for the writes in
    ``pending``. ``in_flight`` (blocks in one scheduler, writes landing at their end): an earlier
    write that has not ended when the later one starts has not left its bytes yet; that overlap
    is reported at once.
    """

    def __init__(self, reporter: Reporter, shared_clock: bool = False, arch: str = "a5",
                 region: Region | None = None, in_flight: bool = False):
        self.reporter = reporter
        self.shared_clock = shared_clock  # all blocks in one scheduler: vector clocks order them too
        # queues not in order: two writes of one queue to the same bytes need a barrier between them
        self.unordered = frozenset(PIPE_INDEX[p] for p in unordered_pipes(arch))
        self.cells: dict[tuple, tuple[list, list]] = {}
        self.same = SameWrites(region) if region is not None else None
        self.pending: dict[Inst, list] = self.same.pending if self.same is not None else {}
        self.in_flight = in_flight
        self.seq = 0  # entries' order (entry[6]); a strided entry's rows take seq .. seq + rows - 1
        self.rows: dict[int, tuple[dict, dict]] = {}  # obj -> strided (writes, reads): bucket -> {seq: entry}
        self.keys: dict[int, set] = {}  # obj -> its cells (for the strided path's look-up)

    def landed(self, inst: Inst) -> None:
        """``inst``'s writes are in memory: compare the cross-block overlaps it was watched for."""
        for found in self.same.landed(inst):  # type: ignore[union-attr]
            if found[0] == "gm":
                _, other, block, name, rect, detail = found
                self._conflict(inst, block, name, rect, True, other, True, detail)
            else:  # an on-chip write / write of two cores (OnChipChecker)
                self.reporter.report(found[1])

    def notes(self) -> list[str]:
        return self.same.texts() if self.same is not None else []

    def access(self, inst: Inst, block: int, obj: int, name: str, rect: tuple, write: bool, pidx: int = -1) -> None:
        """One access of ``inst`` (of block ``block``) to ``rect`` of memory ``obj``."""
        self.access_rects(inst, block, obj, name, (rect,), write, pidx)

    def access_rects(self, inst: Inst, block: int, obj: int, name: str, rects, write: bool, pidx: int = -1) -> None:
        """:meth:`access` of each of ``rects`` in turn (the row ranges of one access through a view)."""
        idx = self.rows.get(obj)
        if idx is not None and (idx[0] or idx[1]):  # strided entries this may meet: into the cells first
            for rect in rects:
                if len(rect) != 1:
                    for g in (0, 1):
                        for e in {e[6]: e for d in idx[g].values() for e in d.values()}.values():
                            self._expand(obj, idx, g, e)
                    break
                (x0, x1), = rect
                if x1 > x0:
                    for g, e in self._row_hits(idx, (x0, 1, x1 - x0, x1 - x0), write, inst, block):
                        self._expand(obj, idx, g, e)
        self._per_row(inst, block, obj, name, rects, write, pidx)

    def access_one(self, inst: Inst, block: int, obj: int, name: str, rect: tuple, write: bool, pidx: int = -1) -> None:
        """:meth:`access` of one rect. The common case of an SPMD launch, a 2-D window inside one cell
        whose entries there (writes; reads too for a write) it does not overlap, is appended at once:
        the per-row loop would compare it with each of them, find nothing to report or retire, and
        append the same entry (``FAST_ONE = False``: always that loop, the reference)."""
        if not (FAST_ONE and len(rect) == 2 and self._append_alone(inst, block, obj, rect, write)):
            self.access_rects(inst, block, obj, name, (rect,), write, pidx)

    def _append_alone(self, inst: Inst, block: int, obj: int, rect: tuple, write: bool) -> bool:
        """Append 2-D ``rect``'s entry when it lies in one cell and meets nothing there (and the tensor has
        no strided view entries); whether it did."""
        idx = self.rows.get(obj)
        if idx is not None and (idx[0] or idx[1]):
            return False
        cells = _cells(rect)
        if len(cells) != 1:
            return False
        lists = self.cells.get((obj, cells[0]))
        if lists is None:
            lists = self._new_cell(obj, cells[0])
        elif _meets(lists[0], rect, inst, block) or (write and _meets(lists[1], rect, inst, block)):
            return False
        p = inst.pipe
        lists[0 if write else 1].append((block, p, inst.vc[p], rect, inst, write, self.seq))
        self.seq += 1
        return True

    def _new_cell(self, obj: int, cell: tuple) -> tuple[list, list]:
        """A new cell's (writes, reads) lists, its key recorded in ``keys`` with them."""
        lists = self.cells[(obj, cell)] = ([], [])
        self.keys.setdefault(obj, set()).add(cell)
        return lists

    def _per_row(self, inst: Inst, block: int, obj: int, name: str, rects, write: bool, pidx: int) -> None:
        vc = inst.vc
        p = inst.pipe
        shared = self.shared_clock
        for rect in rects:
            entry = (block, p, vc[p], rect, inst, write, self.seq)
            self.seq += 1
            hazards: list[tuple] = []  # same-queue conflicts: reported only when no cross-pipe race is
            races = 0
            for cell in _cells(rect):
                lists = self.cells.get((obj, cell))
                if lists is None:
                    lists = self._new_cell(obj, cell)
                writes, reads = lists
                for group in ((writes, reads) if write else (writes,)):
                    retired = None
                    for i, other in enumerate(group):
                        if (other[4] is inst and other[0] == block) or not _overlap(rect, other[3]):
                            continue  # itself (replayed blocks share their recorded block's instructions)
                        ob, op, oc, orect, _, ow, _ = other
                        if write is ATOMIC and ow is ATOMIC:
                            continue  # atomic adds commute at the destination: concurrent ones do not conflict
                        if (ob == block or shared) and (oc <= inst.drained if op == p and p % NPIPES in self.unordered
                                                        else op == p or oc <= vc[op]):  # happens before this access
                            if write and _contains(rect, orect) and (write is not ATOMIC or ow is ATOMIC):
                                # (an atomic add does not retire a plain write: it would hide that write
                                # from another block's atomic add, which may land before it)
                                if retired is None:
                                    retired = set()
                                retired.add(i)
                        elif op == p and ob == block:
                            hazards.append((other, group is writes))
                        elif ob != block and write and group is writes and self.same is not None and \
                                not (self.in_flight and other[4].end > inst.start) and \
                                self.same.watch(inst, pidx, span_of(rect, orect), other, block, name, rect):
                            continue  # judged by the bytes when this write lands
                        elif ob == block and op // NPIPES != p // NPIPES and write and group is writes and \
                                self.same is not None and self.same.watch(inst, pidx, span_of(rect, orect), other, block,
                                                                          name, rect, other[4].end > inst.start):
                            continue  # two cores of the block: judged by the bytes both leave
                        else:
                            races += 1
                            self._conflict(inst, block, name, rect, write, other, group is writes)
                    if retired:
                        group[:] = [o for i, o in enumerate(group) if i not in retired]
                (writes if write else reads).append(entry)
            if hazards and not races:
                self._conflict(inst, block, name, rect, write, *hazards[0])

    def access_rows(self, inst: Inst, block: int, obj: int, name: str, geom: Geom, write: bool, pidx: int = -1) -> None:
        """:meth:`access_rects` of the rows of ``geom`` (start, rows, stride, width: ``stride >= width > 0``),
        one access through a view: one strided entry unless an unordered access (or a partly covered one)
        meets it; then what it meets is expanded into the cells and its rows run one by one."""
        if not STRIDED:
            return self._per_row(inst, block, obj, name, row_ranges(geom), write, pidx)
        idx = self.rows.get(obj)
        if idx is None:
            idx = self.rows[obj] = ({}, {})
        hits = self._row_hits(idx, geom, write, inst, block)
        if not self._cells_meet(obj, geom, write, inst, block):
            drop = self._ordered(hits, inst, block, write, geom)
            if drop is not None:  # nothing to report: retire the covered entries, keep this one strided
                for g, e in drop:
                    self._unindex(idx[g], e)
                entry = (block, inst.pipe, inst.vc[inst.pipe], geom, inst, write, self.seq)
                self.seq += geom[1]
                self._index(idx[0 if write else 1], entry)
                return
        for g, e in hits:
            self._expand(obj, idx, g, e)
        self._per_row(inst, block, obj, name, row_ranges(geom), write, pidx)

    def _ordered(self, hits: list, inst: Inst, block: int, write: bool, geom: Geom) -> list | None:
        """The strided entries ``inst``'s rows retire, when every one it meets happens before it (or is an
        atomic add meeting an atomic add) and each is covered by its rows wholly or not at all; else None."""
        vc = inst.vc
        p = inst.pipe
        shared = self.shared_clock
        drop = []
        for g, e in hits:
            ob, op, oc, og, _, ow, _ = e
            if write is ATOMIC and ow is ATOMIC:
                continue
            if not ((ob == block or shared) and (oc <= inst.drained if op == p and p % NPIPES in self.unordered
                                                  else op == p or oc <= vc[op])):
                return None
            if write and (write is not ATOMIC or ow is ATOMIC):
                inside = rows_inside(og, geom)
                if inside == og[1]:
                    drop.append((g, e))
                elif inside:
                    return None
        return drop

    def _row_hits(self, idx: tuple, geom: Geom, write: bool, inst: Inst, block: int) -> list:
        """(group, entry) of the strided entries (writes; reads too for a write) a row of ``geom`` meets."""
        a, n, s, w = geom
        lo, hi = a >> _BUCKET, (a + (n - 1) * s + w - 1) >> _BUCKET
        out = []
        for g in ((0, 1) if write else (0,)):
            buckets = idx[g]
            if not buckets:
                continue
            seen: set | None = set() if hi > lo else None
            for bk in range(lo, hi + 1):
                d = buckets.get(bk)
                if not d:
                    continue
                for sq, e in d.items():
                    if seen is not None:
                        if sq in seen:
                            continue
                        seen.add(sq)
                    if (e[4] is inst and e[0] == block) or not rows_meet(geom, e[3]):
                        continue
                    out.append((g, e))
        return out

    def _cells_meet(self, obj: int, geom: Geom, write: bool, inst: Inst, block: int) -> bool:
        """Whether an entry of the cells (writes; reads too for a write) meets a row of ``geom``."""
        keys = self.keys.get(obj)
        if not keys:
            return False
        a, n, s, w = geom
        j0, j1 = a // GM_CELL_COLS, (a + (n - 1) * s + w - 1) // GM_CELL_COLS
        groups = (0, 1) if write else (0,)
        if len(keys) > 2 * n:  # many cells: only those of the rows
            keys = keys & {((), 0, j) for i in range(n)
                           for j in range((a + i * s) // GM_CELL_COLS, (a + i * s + w - 1) // GM_CELL_COLS + 1)}
        for cell in keys:
            if len(cell) != 3 or cell[0] != () or cell[1] != 0:
                return True  # not a byte range's cell: let the per-row path decide
            j = cell[2]
            if not j0 <= j <= j1 or not row_meets(j * GM_CELL_COLS, (j + 1) * GM_CELL_COLS, geom):
                continue
            lists = self.cells[(obj, cell)]
            for g in groups:
                for e in lists[g]:
                    r = e[3]
                    if len(r) != 1:
                        return True
                    if not (e[4] is inst and e[0] == block) and r[0][1] > r[0][0] and row_meets(r[0][0], r[0][1], geom):
                        return True
        return False

    @staticmethod
    def _index(buckets: dict, entry: tuple) -> None:
        a, n, s, w = entry[3]
        for bk in range(a >> _BUCKET, ((a + (n - 1) * s + w - 1) >> _BUCKET) + 1):
            d = buckets.get(bk)
            if d is None:
                d = buckets[bk] = {}
            d[entry[6]] = entry

    @staticmethod
    def _unindex(buckets: dict, entry: tuple) -> None:
        a, n, s, w = entry[3]
        for bk in range(a >> _BUCKET, ((a + (n - 1) * s + w - 1) >> _BUCKET) + 1):
            d = buckets[bk]
            del d[entry[6]]
            if not d:
                del buckets[bk]

    def _expand(self, obj: int, idx: tuple, g: int, entry: tuple) -> None:
        """Strided ``entry`` (group ``g``: 0 writes, 1 reads) as the per-row entries, each in its cells at
        its place by ``seq`` (where the per-row path would have put it)."""
        self._unindex(idx[g], entry)
        b, p, c, geom, inst, write, seq = entry
        for i, rect in enumerate(row_ranges(geom)):
            row = (b, p, c, rect, inst, write, seq + i)
            for cell in _cells(rect):
                lists = self.cells.get((obj, cell))
                if lists is None:
                    lists = self._new_cell(obj, cell)
                group = lists[g]
                if not group or group[-1][6] < row[6]:
                    group.append(row)
                else:
                    insort(group, row, key=_seq)

    def cell_entries(self) -> dict:
        """The cells as the per-row path holds them (strided entries expanded, in a copy; empty cells
        left out): what tests compare between ``STRIDED`` on and off."""
        out: dict = {}
        for key, (w, r) in self.cells.items():
            if w or r:
                out[key] = (list(w), list(r))
        for obj, idx in self.rows.items():
            for g in (0, 1):
                for e in {e[6]: e for d in idx[g].values() for e in d.values()}.values():
                    b, p, c, geom, inst, write, seq = e
                    for i, rect in enumerate(row_ranges(geom)):
                        for cell in _cells(rect):
                            lists = out.setdefault((obj, cell), ([], []))
                            lists[g].append((b, p, c, rect, inst, write, seq + i))
        for lists in out.values():
            for group in lists:
                group.sort(key=_seq)
        return out

    def _conflict(self, inst: Inst, block: int, name: str, rect: tuple, write: bool,
                  other: tuple, other_writes: bool, detail: str = "") -> None:
        """Report an overlapping access (one of them a write) that this one is not ordered after."""
        ob, _, _, orect, oinst, _, _ = other
        span = ", ".join(f"{max(a0, b0)}:{min(a1, b1)}" for (a0, a1), (b0, b1) in zip(rect, orect))
        if ob != block:
            what = "two blocks write the same bytes" if (write and other_writes) else "one block writes bytes another reads"
            self.reporter.report(RaceError(
                f"global memory conflict on '{name}'[{span}]: {what}\n"
                f"  block {ob}: {oinst.describe()}\n  block {block}: {inst.describe()}\n"
                f"  blocks run on different cores with no ordering between them{detail}"))
        elif oinst.pipe == inst.pipe:
            self.reporter.report(_hazard("write / write" if other_writes and write else "conflicting access",
                                         f"global '{name}'[{span}]", oinst, inst, PIPES[inst.pipe % NPIPES].name))
        else:
            cores = {oinst.pipe // NPIPES, inst.pipe // NPIPES}
            extra = ("\n  both Vector cores of the block run pl.section_vector() and nothing orders one's access after "
                     "the other's: split the work by pl.get_subblock_idx(), or order them with set_cross_core / "
                     "wait_cross_core(sync_mode=pl.CrossCoreSyncMode.INTER_SUBBLOCK)") if cores == {1, 2} else ""
            kind = "write / write" if other_writes and write else "write / read" if other_writes else \
                "read / write (WAR)"
            self.reporter.report(_race(kind, f"global '{name}'[{span}]", oinst, inst, detail + extra))
