"""Memory checkers fed by the scheduler: data races (vector-clock happens-before, FastTrack-style
epochs per tile slot), reads of on-chip bytes never written in this block or left stale by an
earlier tile, and global-memory conflicts within a block (between pipes) and across blocks
(different cores)."""
from __future__ import annotations

import numpy as np

from pypto_pro.arch.pipes import unordered_pipes
from pypto_pro.backends.sim.inst import ATOMIC, NPIPES, PIPE_INDEX, PIPES, Inst
from pypto_pro.backends.sim.same_writes import Region, SameWrites, span_of
from pypto_pro.backends.sim.scheduler import Reporter
from pypto_pro.backends.sim.stale import StaleBytes
from pypto_pro.backends.sim import undefined
from pypto_pro.errors_sim import RaceError, UninitializedReadError
from pypto_pro.language.enums import PipeType

GM_CELL_ROWS, GM_CELL_COLS = 128, 512  # grid (in elements) that indexes global-memory accesses


def _meets(a: tuple, b: tuple) -> bool:
    """Whether two footprints share a byte: (start, rows, row pitch, bytes used per row) each.
    Exact for one pitch (the rows of one buffer's tiles); the bounding ranges otherwise."""
    lo1, n1, s1, u1 = a
    lo2, n2, s2, u2 = b
    if s1 <= 0 or s2 <= 0 or u1 > s1 or u2 > s2:
        return lo1 < lo2 + (n2 - 1) * s2 + u2 and lo2 < lo1 + (n1 - 1) * s1 + u1
    if s1 != s2:
        return not _strided_disjoint(lo1, (n1, s1, u1), lo2, (n2, s2, u2))
    d = lo2 - lo1  # row r1 of a meets row r2 of b iff -d - u2 < (r2 - r1) * s < u1 - d
    k_lo = max((-d - u2) // s1 + 1, 1 - n1)
    k_hi = min(-((d - u1) // s1) - 1, n2 - 1)
    return k_lo <= k_hi


_DISJOINT: dict[tuple, bool] = {}  # (lo2 - lo1, geometry 1, geometry 2) -> disjoint


def _strided_disjoint(lo1: int, g1: tuple[int, int, int], lo2: int, g2: tuple[int, int, int]) -> bool:
    """True when the rows of ``g1`` = (rows, pitch, bytes used per row) at ``lo1`` and of ``g2`` at
    ``lo2`` share no byte, for two different pitches (a tile over another tile's rows)."""
    key = (lo2 - lo1, g1, g2)
    hit = _DISJOINT.get(key)
    if hit is not None:
        return hit
    (n1, rb1, u1), (n2, rb2, u2) = g1, g2
    if n1 > n2:  # loop over the shorter one
        lo1, n1, rb1, u1, lo2, n2, rb2, u2 = lo2, n2, rb2, u2, lo1, n1, rb1, u1
    result = True
    for r in range(n1):
        s = lo1 + r * rb1
        e = s + u1
        first = max(0, -(-(s - lo2 - u2 + 1) // rb2))
        last = min(n2 - 1, (e - 1 - lo2) // rb2)
        if any(lo2 + q * rb2 < e and s < lo2 + q * rb2 + u2 for q in range(first, last + 1)):
            result = False
            break
    if len(_DISJOINT) < 4096:
        _DISJOINT[key] = result
    return result


class _Slot:
    __slots__ = ("w", "r")

    def __init__(self) -> None:
        self.w: tuple[int, int, Inst] | None = None
        self.r: dict[int, tuple[int, Inst]] = {}


def _on_chip(kind: str, a: Inst, b: Inst, hinted: bool = False) -> str:
    """What the chip does with an unordered pair of accesses, and the flag that orders them: the hardware
    keeps no address dependencies between queues (and the real tool chain inserts none: bisheng runs with
    ``--cce-auto-sync=off``, auto_mutex locks only tile-group slots), so only a flag orders them."""
    (ca, pa), (cb, pb) = divmod(a.pipe, NPIPES), divmod(b.pipe, NPIPES)
    qa, qb = PIPES[pa].name, PIPES[pb].name
    if kind.startswith("write / read"):
        what = (f"the {b.name} may start while the {a.name} is still writing these bytes and read what they held "
                f"before (the result depends on timing)")
    elif kind.startswith("read / write"):
        what = (f"the {b.name} may overwrite these bytes before the {a.name} has read them, so the {a.name} may see "
                f"the new values (the result depends on timing)")
    elif kind.startswith("write / write"):
        what = "the two writes may land in either order: the bytes keep whichever lands last"
    else:
        return ""
    if ca != cb:
        order = "" if hinted else "; order them with pl.system.set_cross_core / wait_cross_core"
    else:
        order = (f"; order them with pl.system.sync_src(set_pipe=pl.PipeType.{qa}, wait_pipe=pl.PipeType.{qb}, "
                 f"event_id=...) after the {a.name} and the matching sync_dst before the {b.name}")
    return f"\n  on the chip {what}{order}"


def _race(kind: str, where: str, a: Inst, b: Inst, extra: str = "") -> RaceError:
    chip = _on_chip(kind, a, b, "wait_cross_core" in extra)
    return RaceError(
        f"data race on {where}: {kind}\n  earlier: {a.describe()}\n  later:   {b.describe()}\n"
        f"  no set_flag/wait_flag or buffer-id path orders them{extra}{chip}")


def _hazard(kind: str, where: str, a: Inst, b: Inst, pipe: str) -> RaceError:
    return RaceError(
        f"same-pipe hazard on {where}: {kind} inside the {pipe} queue\n  earlier: {a.describe()}\n"
        f"  later:   {b.describe()}\n  the {pipe} queue is not in order on this arch: the later instruction may "
        f"start before the earlier one's writes land; put pl.system.barrier(pl.PipeType.{pipe}) between them")


class OnChipChecker:
    """Races, never-written reads and stale reads on one core's on-chip memories. On ``arch``'s
    pipes whose queue is not in order (``arch/pipes.py``), two dependent instructions of one queue
    need a barrier (or a flag / buffer-id round trip) between them: a same-pipe hazard otherwise."""

    def __init__(self, reporter: Reporter, capacities: dict, arch: str = "a5", arrays: dict | None = None,
                 same: SameWrites | None = None, in_place: bool = True):
        self.reporter = reporter
        # two cores writing one memory (the block's L1) unordered: judged by the bytes when the
        # later write lands (same_writes), given the memories (``arrays``: (core, space) -> bytes)
        self.arrays = arrays
        self.same = same if arrays is not None else None
        self.in_place = in_place  # check="raise": writes land at their start
        self.unordered = frozenset(PIPE_INDEX[p] for p in unordered_pipes(arch))
        # a later write may overtake an earlier read only in a copy engine's queue (an in-order
        # compute pipeline reads its operands before any later instruction writes)
        self.war = frozenset(PIPE_INDEX[p] for p in (PipeType.MTE1, PipeType.MTE2, PipeType.MTE3)) & self.unordered
        self.slots: dict[tuple, _Slot] = {}
        self.overlaps: dict[tuple, list[tuple]] = {}
        self.written = {key: np.zeros(cap, dtype=np.bool_) for key, cap in capacities.items()}  # (core, space)
        self.known_written: set[tuple] = set()
        self.stale = StaleBytes()
        # bytes a carrying instruction (undefined.py) derived from never-written ones, and where those entered
        self.tainted: dict[tuple, np.ndarray] = {}
        self.taint_origin: dict[tuple, Inst] = {}
        self._origins: dict[Inst, Inst] = {}  # carrier -> the instruction its undefined inputs entered at
        self._noted: set[int] = set()
        self._entries: dict[Inst, str] = {}  # entry instruction -> what it read that nothing wrote

    def reset_block(self) -> None:
        self.slots.clear()
        for bm in self.written.values():
            bm[:] = False
        self.known_written.clear()
        self.stale.reset_block()
        self.tainted.clear()
        self.taint_origin.clear()
        self._origins.clear()
        self._entries.clear()

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
        fp = (key[1], rows, row_bytes, used)
        self._conflicts(st, key, write, label, vc, p, inst)
        for k in others:  # tiles sharing these bytes (declared views, reused addresses): the bytes each touched
            other = self.slots.get(k)
            if other is not None:
                self._conflicts(other, key, write, label, vc, p, inst, fp)
        if write:
            st.w = (p, vc[p], inst, fp)
            st.r.clear()
        else:
            st.r[p] = (vc[p], inst, fp)
            space, lo, _, core = key
            if self.stale.marks:
                carry = next((w[5] for w in inst.commits if len(w) > 5), None) if inst.commits else None
                entry = (lambda text: self._enter(inst, text)) if carry is not None and carry.entry else None
                self.stale.check(inst, (core, space), lo, rows, row_bytes, used, label, self.reporter, entry)
            self._check_written(inst, (core, space), lo, rows, row_bytes, used, label)

    def _conflicts(self, st: _Slot, key: tuple, write: bool, label: str, vc: tuple, p: int, inst: Inst,
                   fp: tuple | None = None) -> None:
        """Report the earlier accesses in ``st`` that this one conflicts with and does not follow
        (``fp``: for another tile's slot, only those whose bytes meet these, :func:`_meets`)."""
        w = st.w
        if w is not None and w[0] != p and w[1] > vc[w[0]] and (fp is None or _meets(fp, w[3])):
            space, lo, hi, _ = key
            kind = "write / write" if write else "write / read"
            race = _race(kind, f"{space.name} bytes 0x{lo:x}-0x{hi:x} ({label})", w[2], inst)
            if not (write and self.same is not None and w[0] // NPIPES != p // NPIPES and
                    self._watch(inst, key, label, w[2], race)):
                self.reporter.report(race)
        if write:
            for q, (c, other, ofp) in st.r.items():
                if q != p and c > vc[q] and (fp is None or _meets(fp, ofp)):
                    space, lo, hi, _ = key
                    self.reporter.report(_race("read / write (WAR)", f"{space.name} bytes 0x{lo:x}-0x{hi:x} "
                                               f"({label})", other, inst))
        if p % NPIPES in self.unordered:  # after the cross-pipe races: those are the root cause
            self._same_pipe(st, key, write, label, p, inst, fp)

    def _watch(self, inst: Inst, key: tuple, label: str, other: Inst, race: RaceError) -> bool:
        """Two cores' unordered writes to one memory: identical bytes are a note, else ``race``."""
        space, lo, hi, core = key
        mem = self.arrays.get((core, space))  # type: ignore[union-attr]
        if mem is None or mem.ndim != 1 or mem.itemsize != 1:
            return False
        text = (f"two cores write identical bytes to {space.name} bytes 0x{lo:x}-0x{hi:x} ({label}) with nothing "
                f"ordering them: whatever order they land in, the memory holds those bytes (deterministic on the "
                f"chip, not a race)\n  earlier: {other.describe()}\n  later:   {inst.describe()}")
        same = self.same
        on_same = lambda: same.note(("onchip", space, id(other.stmt), id(inst.stmt)), text)  # type: ignore # noqa
        on_differ = lambda v, before: ("onchip", RaceError(f"{race}\n  the two writes store different bytes"))  # noqa
        if self.in_place or other.end <= inst.start:  # the earlier write's bytes are in memory
            same.watch_bytes(inst, ("onchip", key), mem[lo:hi], on_same, on_differ)  # type: ignore[union-attr]
        else:  # both land at their ends: compare what each leaves, in the order they land
            first, second = (other, inst) if other.end <= inst.end else (inst, other)
            same.watch_pair(first, second, ("onchip", key), mem[lo:hi], on_same, on_differ)  # type: ignore
        return True

    def _same_pipe(self, st: _Slot, key: tuple, write: bool, label: str, p: int, inst: Inst,
                   fp: tuple | None = None) -> None:
        """Report the earlier accesses of this queue that this one depends on with no barrier between."""
        w, pipe = st.w, PIPES[p % NPIPES].name
        space, lo, hi, _ = key
        where = f"{space.name} bytes 0x{lo:x}-0x{hi:x} ({label})"
        if w is not None and w[0] == p and w[1] > inst.drained and w[2] is not inst and (fp is None or _meets(fp, w[3])):
            self.reporter.report(_hazard("write / write" if write else "write / read (RAW)", where, w[2], inst, pipe))
        if write and p % NPIPES in self.war:
            read = st.r.get(p)
            if read is not None and read[0] > inst.drained and read[1] is not inst and (fp is None or _meets(fp, read[2])):
                self.reporter.report(_hazard("read / write (WAR)", where, read[1], inst, pipe))

    def _check_written(self, inst: Inst, mem: tuple, lo: int, rows: int, row_bytes: int, used: int, label: str) -> None:
        ck = (mem, lo, rows, used)
        if ck in self.known_written:
            return
        region = self.written[mem][lo:lo + rows * row_bytes].reshape(rows, row_bytes)[:, :used]
        if not region.all():
            r, c = np.argwhere(~region)[0]
            taint = self.tainted.get(mem)
            hit = taint[lo:lo + rows * row_bytes].reshape(rows, row_bytes)[:, :used][~region] if taint is not None \
                else None
            carried = hit is not None and bool(hit.any())
            carry = next((w[5] for w in inst.commits if len(w) > 5), None)
            if carry is not None and (carry.entry or carried and bool(hit.all())):
                # a carrier (undefined.py): its result says what is defined; a matmul carries only what a move
                # carried in (it reading never-written L0 / bias / accumulator bytes directly is still a fault)
                origin = self.taint_origin.get(mem, inst) if carried else inst
                self._origins.setdefault(inst, origin)
                self._arm(inst)
                if not carried:
                    self._enter(inst, f"{inst.describe()} reads {mem[1].name} bytes of {label} that nothing in this "
                                      f"block wrote (first at row {r}, byte {c} of the tile: address "
                                      f"0x{lo + r * row_bytes + c:x})")
                return
            if carried:
                origin = self.taint_origin.get(mem)
                entry = self._entries.get(origin) if origin is not None else None
                raise_text = (f"{inst.describe()} reads {mem[1].name} bytes of {label} computed from padding (bytes "
                              f"nothing in this block wrote, or another tile's) (first at row {r}, byte {c} of the "
                              f"tile: address 0x{lo + r * row_bytes + c:x}); they entered where "
                              f"{entry or 'an earlier copy read them'}")
                self.reporter.report(UninitializedReadError(raise_text))
                return
            text = (f"{inst.describe()} reads {mem[1].name} bytes of {label} that nothing in this block wrote "
                    f"(first at row {r}, byte {c} of the tile: address 0x{lo + r * row_bytes + c:x})")
            if any(g[3] for g in inst.gm):  # a store to GM: the poison lands in the output, where it shows
                self.reporter.notes.append(f"{text}: it stores them to GM as they are (the simulator's poison: "
                                           f"NaN for floats, -1 for integers; on the chip whatever the memory held)")
            else:
                self.reporter.report(UninitializedReadError(text))
        else:
            self.known_written.add(ck)

    def _arm(self, inst: Inst) -> None:
        """A carrier that computes its own definedness as it runs (a VF call: ``undefined.SelfCarry``) is
        told, before it runs, that it reads undefined bytes, and which bytes of the memories are defined."""
        carry = next((w[5] for w in inst.commits if len(w) > 5), None)
        arm = getattr(carry, "arm", None)
        if arm is not None:
            arm(self.stale.unmarked(self.written) if self.stale.marks else self.written)

    def _enter(self, inst: Inst, entry: str) -> None:
        """Padding (never-written or stale bytes, ``entry`` says which) enters at carrier ``inst``: a note."""
        self._origins.setdefault(inst, inst)
        self._arm(inst)
        if inst in self._entries:
            return
        self._entries[inst] = entry
        if id(inst.stmt) not in self._noted:
            self._noted.add(id(inst.stmt))
            self.reporter.notes.append(
                f"{entry}: the chip computes with whatever the memory holds; what is derived from them is left "
                f"undefined, and only a read of that by an instruction that does not carry it on (a store, a scalar "
                f"read) would be a fault (here none was: padding the kernel discards)")

    def committed(self, inst: Inst, mem: tuple, lo: int, rows: int, row_bytes: int, used: int,
                  carry: "undefined.Carry | None" = None) -> None:
        """``inst`` has written ``rows`` x ``used`` bytes of the tile at ``lo`` (rows ``row_bytes`` apart);
        ``carry``: which of its elements are defined, when it read never-written bytes (undefined.py)."""
        self.stale.written(inst, mem, lo, rows, row_bytes, used)
        taint = self.tainted.get(mem)
        if taint is not None:  # rewritten bytes are fresh (a carrier re-taints its undefined ones below)
            taint[lo:lo + rows * row_bytes].reshape(rows, row_bytes)[:, :used] = False
        if carry is not None and inst in self._origins:
            bad = carry.undefined(self.stale.unmarked(self.written) if self.stale.marks else self.written)
            origin = self._origins[inst]  # (kept: a broadcast instruction commits one region per core)
            if bad.size:
                bm = self.written[mem]
                bm[lo:lo + rows * row_bytes].reshape(rows, row_bytes)[:, :used] = True
                bm[bad] = False
                if taint is None:
                    taint = self.tainted[mem] = np.zeros_like(bm)
                taint[bad] = True
                self.taint_origin[mem] = origin
                self.known_written = {k for k in self.known_written if k[0] != mem}  # bytes became undefined
                return
        region = (mem, lo, rows, used)
        if region in self.known_written:  # marked before in this block (and bytes never become unwritten)
            return
        self.written[mem][lo:lo + rows * row_bytes].reshape(rows, row_bytes)[:, :used] = True
        self.known_written.add(region)


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
