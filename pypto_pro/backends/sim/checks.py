"""Memory checkers fed by the scheduler: data races (vector-clock happens-before, FastTrack-style
epochs per tile slot), reads of on-chip bytes never written in this block or left stale by an
earlier tile, and global-memory conflicts within a block (between pipes) and across blocks
(different cores)."""
from __future__ import annotations

import numpy as np

from pypto_pro.arch.pipes import unordered_pipes
from pypto_pro.backends.sim.inst import NPIPES, PIPE_INDEX, PIPES, Inst
from pypto_pro.backends.sim.scheduler import Reporter
from pypto_pro.backends.sim.stale import StaleBytes
from pypto_pro.errors_sim import RaceError, UninitializedReadError
from pypto_pro.language.enums import PipeType

GM_CELL_ROWS, GM_CELL_COLS = 128, 512  # grid (in elements) that indexes global-memory accesses


class _Slot:
    __slots__ = ("w", "r")

    def __init__(self) -> None:
        self.w: tuple[int, int, Inst] | None = None
        self.r: dict[int, tuple[int, Inst]] = {}


def _race(kind: str, where: str, a: Inst, b: Inst, extra: str = "") -> RaceError:
    return RaceError(
        f"data race on {where}: {kind}\n  earlier: {a.describe()}\n  later:   {b.describe()}\n"
        f"  no set_flag/wait_flag or buffer-id path orders them{extra}")


def _hazard(kind: str, where: str, a: Inst, b: Inst, pipe: str) -> RaceError:
    return RaceError(
        f"same-pipe hazard on {where}: {kind} inside the {pipe} queue\n  earlier: {a.describe()}\n"
        f"  later:   {b.describe()}\n  the {pipe} queue is not in order on this arch: the later instruction may "
        f"start before the earlier one's writes land; put pl.system.barrier(pl.PipeType.{pipe}) between them")


class OnChipChecker:
    """Races, never-written reads and stale reads on one core's on-chip memories. On ``arch``'s
    pipes whose queue is not in order (``arch/pipes.py``), two dependent instructions of one queue
    need a barrier (or a flag / buffer-id round trip) between them: a same-pipe hazard otherwise."""

    def __init__(self, reporter: Reporter, capacities: dict, arch: str = "a5"):
        self.reporter = reporter
        self.unordered = frozenset(PIPE_INDEX[p] for p in unordered_pipes(arch))
        # a later write may overtake an earlier read only in a copy engine's queue (an in-order
        # compute pipeline reads its operands before any later instruction writes)
        self.war = frozenset(PIPE_INDEX[p] for p in (PipeType.MTE1, PipeType.MTE2, PipeType.MTE3)) & self.unordered
        self.slots: dict[tuple, _Slot] = {}
        self.overlaps: dict[tuple, list[tuple]] = {}
        self.written = {key: np.zeros(cap, dtype=np.bool_) for key, cap in capacities.items()}  # (core, space)
        self.known_written: set[tuple] = set()
        self.stale = StaleBytes()

    def reset_block(self) -> None:
        self.slots.clear()
        for bm in self.written.values():
            bm[:] = False
        self.known_written.clear()
        self.stale.reset_block()

    def _key_overlaps(self, key: tuple) -> list[tuple]:
        found = self.overlaps.get(key)
        if found is None:
            space, lo, hi, core = key
            found = [k for k in self.overlaps if k[0] == space and k[3] == core and k != key and k[1] < hi and lo < k[2]]
            for k in found:
                self.overlaps[k].append(key)
            self.overlaps[key] = found
        return found

    def access(self, inst: Inst, access: tuple) -> None:
        key, write, label, rows, row_bytes, used = access
        others = self.overlaps.get(key)
        if others is None:
            others = self._key_overlaps(key)
        vc = inst.vc
        p = inst.pipe
        st = self.slots.get(key)
        if st is None:
            st = self.slots[key] = _Slot()
        self._conflicts(st, key, write, label, vc, p, inst)
        for k in others:  # tiles sharing these bytes (declared views, reused addresses)
            other = self.slots.get(k)
            if other is not None:
                self._conflicts(other, key, write, label, vc, p, inst)
        if write:
            st.w = (p, vc[p], inst)
            st.r.clear()
        else:
            st.r[p] = (vc[p], inst)
            space, lo, _, core = key
            if self.stale.marks:
                self.stale.check(inst, (core, space), lo, rows, row_bytes, used, label, self.reporter)
            self._check_written(inst, (core, space), lo, rows, row_bytes, used, label)

    def _conflicts(self, st: _Slot, key: tuple, write: bool, label: str, vc: tuple, p: int, inst: Inst) -> None:
        """Report the earlier accesses in ``st`` that this one conflicts with and does not follow."""
        w = st.w
        if w is not None and w[0] != p and w[1] > vc[w[0]]:
            space, lo, hi, _ = key
            kind = "write / write" if write else "write / read"
            self.reporter.report(_race(kind, f"{space.name} bytes 0x{lo:x}-0x{hi:x} ({label})", w[2], inst))
        if write:
            for q, (c, other) in st.r.items():
                if q != p and c > vc[q]:
                    space, lo, hi, _ = key
                    self.reporter.report(_race("read / write (WAR)", f"{space.name} bytes 0x{lo:x}-0x{hi:x} "
                                               f"({label})", other, inst))
        if p % NPIPES in self.unordered:  # after the cross-pipe races: those are the root cause
            self._same_pipe(st, key, write, label, p, inst)

    def _same_pipe(self, st: _Slot, key: tuple, write: bool, label: str, p: int, inst: Inst) -> None:
        """Report the earlier accesses of this queue that this one depends on with no barrier between."""
        w, pipe = st.w, PIPES[p % NPIPES].name
        space, lo, hi, _ = key
        where = f"{space.name} bytes 0x{lo:x}-0x{hi:x} ({label})"
        if w is not None and w[0] == p and w[1] > inst.drained and w[2] is not inst:
            self.reporter.report(_hazard("write / write" if write else "write / read (RAW)", where, w[2], inst, pipe))
        if write and p % NPIPES in self.war:
            read = st.r.get(p)
            if read is not None and read[0] > inst.drained and read[1] is not inst:
                self.reporter.report(_hazard("read / write (WAR)", where, read[1], inst, pipe))

    def _check_written(self, inst: Inst, mem: tuple, lo: int, rows: int, row_bytes: int, used: int, label: str) -> None:
        ck = (mem, lo, rows, used)
        if ck in self.known_written:
            return
        region = self.written[mem][lo:lo + rows * row_bytes].reshape(rows, row_bytes)[:, :used]
        if not region.all():
            r, c = np.argwhere(~region)[0]
            self.reporter.report(UninitializedReadError(
                f"{inst.describe()} reads {mem[1].name} bytes of {label} that nothing in this block wrote "
                f"(first at row {r}, byte {c} of the tile: address 0x{lo + r * row_bytes + c:x})"))
        else:
            self.known_written.add(ck)

    def committed(self, inst: Inst, mem: tuple, lo: int, rows: int, row_bytes: int, used: int) -> None:
        """``inst`` has written ``rows`` x ``used`` bytes of the tile at ``lo`` (rows ``row_bytes`` apart)."""
        self.stale.written(inst, mem, lo, rows, row_bytes, used)
        region = (mem, lo, rows, used)
        if region in self.known_written:  # marked before in this block (and bytes never become unwritten)
            return
        self.written[mem][lo:lo + rows * row_bytes].reshape(rows, row_bytes)[:, :used] = True
        self.known_written.add(region)


def _cells(rect: tuple) -> list[tuple]:
    if len(rect) == 2:  # the common 2-D window inside one cell: no generator machinery
        (r0, r1), (c0, c1) = rect
        i, j = r0 // GM_CELL_ROWS, c0 // GM_CELL_COLS
        if (r1 - 1) // GM_CELL_ROWS == i and (c1 - 1) // GM_CELL_COLS == j:
            return [((), i, j)]
    *lead, (r0, r1), (c0, c1) = rect if len(rect) >= 2 else ((0, 1), *rect)
    lead_key = tuple(a for a, _ in lead)
    return [(lead_key, i, j) for i in range(r0 // GM_CELL_ROWS, (r1 - 1) // GM_CELL_ROWS + 1)
            for j in range(c0 // GM_CELL_COLS, (c1 - 1) // GM_CELL_COLS + 1)]


def _overlap(a: tuple, b: tuple) -> bool:
    if len(a) == 2:  # the common 2-D window, without generator machinery
        (a0, a1), (a2, a3) = a
        (b0, b1), (b2, b3) = b
        return a0 < b1 and b0 < a1 and a2 < b3 and b2 < a3
    return all(x0 < y1 and y0 < x1 for (x0, x1), (y0, y1) in zip(a, b))


def _contains(outer: tuple, inner: tuple) -> bool:
    return all(o0 <= i0 and i1 <= o1 for (o0, o1), (i0, i1) in zip(outer, inner))


class GlobalChecker:
    """Global-memory conflicts: between pipes of a block (happens-before), and between blocks
    (different cores never synchronise in this release, so any overlap with a write is a race).

    Accesses are indexed by cells of a coarse grid. A write that every earlier access of its
    block to bytes inside its window happens-before retires those accesses: anything that would
    conflict with them also conflicts with this write, and anything ordered after this write is
    ordered after them. This keeps rewritten windows (workspaces, ring slots) from piling up.
    """

    def __init__(self, reporter: Reporter, shared_clock: bool = False, arch: str = "a5"):
        self.reporter = reporter
        self.shared_clock = shared_clock  # all blocks in one scheduler: vector clocks order them too
        # queues not in order: two writes of one queue to the same bytes need a barrier between them
        self.unordered = frozenset(PIPE_INDEX[p] for p in unordered_pipes(arch))
        self.cells: dict[tuple, tuple[list, list]] = {}

    def access(self, inst: Inst, block: int, obj: int, name: str, rect: tuple, write: bool) -> None:
        vc = inst.vc
        p = inst.pipe
        atomic = write == "atomic"  # an atomic-add store (pl.store(atomic=AtomicAdd)): the memory adds
        entry = (block, p, vc[p], rect, inst, atomic)
        shared = self.shared_clock
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
                    if atomic and other[5]:
                        continue  # atomic adds commute: concurrent atomic writers are allowed, and only they
                    ob, op, oc, orect, _, _ = other
                    if (ob == block or shared) and (oc <= inst.drained if op == p and p % NPIPES in self.unordered
                                                    else op == p or oc <= vc[op]):  # happens before this access
                        if write and _contains(rect, orect):
                            if retired is None:
                                retired = set()
                            retired.add(i)
                    elif op == p and ob == block:
                        hazards.append((other, group is writes))
                    else:
                        races += 1
                        self._conflict(inst, block, name, rect, write, other, group is writes)
                if retired:
                    group[:] = [o for i, o in enumerate(group) if i not in retired]
            (writes if write else reads).append(entry)
        if hazards and not races:
            self._conflict(inst, block, name, rect, write, *hazards[0])

    def _conflict(self, inst: Inst, block: int, name: str, rect: tuple, write: bool,
                  other: tuple, other_writes: bool) -> None:
        """Report an overlapping access (one of them a write) that this one is not ordered after."""
        ob, _, _, orect, oinst, _ = other
        span = ", ".join(f"{max(a0, b0)}:{min(a1, b1)}" for (a0, a1), (b0, b1) in zip(rect, orect))
        if ob != block:
            what = "two blocks write the same bytes" if (write and other_writes) else "one block writes bytes another reads"
            self.reporter.report(RaceError(
                f"global memory conflict on '{name}'[{span}]: {what}\n"
                f"  block {ob}: {oinst.describe()}\n  block {block}: {inst.describe()}\n"
                "  blocks run on different cores with no ordering between them"))
        elif oinst.pipe == inst.pipe:
            self.reporter.report(_hazard("write / write" if other_writes and write else "conflicting access",
                                         f"global '{name}'[{span}]", oinst, inst, PIPES[inst.pipe % NPIPES].name))
        else:
            self.reporter.report(_race("write / write" if other_writes and write else "conflicting access",
                                       f"global '{name}'[{span}]", oinst, inst))
