"""Global-memory conflicts within a block (between pipes, happens-before) and across blocks (different
cores), indexed by a grid of cells over each tensor; fed by the scheduler like the on-chip checkers."""
from __future__ import annotations

from pypto_pro.arch.pipes import unordered_pipes
from pypto_pro.backends.sim.inst import ATOMIC, NPIPES, PIPE_INDEX, PIPES, Inst
from pypto_pro.backends.sim.same_writes import Region, SameWrites, span_of
from pypto_pro.backends.sim.scheduler import Reporter
from pypto_pro.backends.sim.checks import _hazard, _race
from pypto_pro.errors_sim import RaceError

GM_CELL_ROWS, GM_CELL_COLS = 128, 512  # grid (in elements) that indexes global-memory accesses

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
    lead_key = tuple(a for a, _ in lead)
    return [(lead_key, i, j) for i in range(r0 // GM_CELL_ROWS, (r1 - 1) // GM_CELL_ROWS + 1)
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
        vc = inst.vc
        p = inst.pipe
        shared = self.shared_clock
        for rect in rects:
            entry = (block, p, vc[p], rect, inst, write)
            hazards: list[tuple] = []  # same-queue conflicts: reported only when no cross-pipe race is
            races = 0
            for cell in _cells(rect):
                lists = self.cells.get((obj, cell))
                if lists is None:
                    lists = self.cells[(obj, cell)] = ([], [])
                writes, reads = lists
                for group in ((writes, reads) if write else (writes,)):
                    retired = None
                    for i, other in enumerate(group):
                        if (other[4] is inst and other[0] == block) or not _overlap(rect, other[3]):
                            continue  # itself (replayed blocks share their recorded block's instructions)
                        ob, op, oc, orect, _, ow = other
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

    def _conflict(self, inst: Inst, block: int, name: str, rect: tuple, write: bool,
                  other: tuple, other_writes: bool, detail: str = "") -> None:
        """Report an overlapping access (one of them a write) that this one is not ordered after."""
        ob, _, _, orect, oinst, _ = other
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
