"""On-chip memory checkers fed by the scheduler: data races (vector-clock happens-before, FastTrack-style
epochs per tile slot) and reads of on-chip bytes never written in this block or left stale by an
earlier tile. Global-memory conflicts: gm_checker.py."""
from __future__ import annotations

import numpy as np

from pypto_pro.arch.pipes import unordered_pipes
from pypto_pro.backends.sim.inst import NPIPES, PIPE_INDEX, PIPES, Inst
from pypto_pro.backends.sim.same_writes import SameWrites
from pypto_pro.backends.sim.scheduler import Reporter
from pypto_pro.backends.sim.stale import StaleBytes
from pypto_pro.backends.sim import undefined
from pypto_pro.errors_sim import RaceError, UninitializedReadError
from pypto_pro.language.enums import PipeType

FAST = True  # False: the reference paths of access / committed (tests/backends/sim/test_onchip_fast.py)



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
        """Check one access of ``inst`` (an entry of ``inst.accesses``) against the earlier ones."""
        if not FAST:
            return self.access_reference(inst, access)
        key, write, label, rows, row_bytes, used = access
        others = self.overlaps.get(key)
        if others is None:
            others = self._key_overlaps(key)
        vc = inst.vc
        p = inst.pipe
        slots = self.slots
        st = slots.get(key)
        if st is None:
            st = slots[key] = _Slot()
        fp = (key[1], rows, row_bytes, used)
        # the full :meth:`_conflicts` (which has no effect but reports) only where one may be reported:
        # an earlier access not ordered before this one (the same tests, without the footprints)
        unordered = p % NPIPES in self.unordered
        w = st.w  # (the test of :meth:`_may_conflict`, inline for this tile's own slot)
        if w is not None and (w[1] > vc[w[0]] if w[0] != p else unordered and w[1] > inst.drained and
                              w[2] is not inst) or write and st.r and self._may_conflict(st, write, vc, p, inst,
                                                                                          unordered):
            self._conflicts(st, key, write, label, vc, p, inst)
        for k in others:  # tiles sharing these bytes (declared views, reused addresses): the bytes each touched
            other = slots.get(k)
            if other is not None and self._may_conflict(other, write, vc, p, inst, unordered):
                self._conflicts(other, key, write, label, vc, p, inst, fp)
        self._record(inst, st, key, write, label, rows, row_bytes, used, fp, True)

    def _may_conflict(self, st: _Slot, write: bool, vc: tuple, p: int, inst: Inst, unordered: bool) -> bool:
        """Whether :meth:`_conflicts` on ``st`` may report anything (True when an earlier access is not
        ordered before this one: the footprint test, :func:`_meets`, is left to it)."""
        w = st.w
        if w is not None:
            q = w[0]
            if q != p:
                if w[1] > vc[q]:
                    return True
            elif unordered and w[1] > inst.drained and w[2] is not inst:
                return True
        if write:
            for q, read in st.r.items():
                if q != p:
                    if read[0] > vc[q]:
                        return True
                elif unordered and read[0] > inst.drained and read[1] is not inst and p % NPIPES in self.war:
                    return True
        return False

    def access_reference(self, inst: Inst, access: tuple) -> None:
        """:meth:`access` as it was: every slot through :meth:`_conflicts` (``FAST = False``)."""
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
        self._record(inst, st, key, write, label, rows, row_bytes, used, fp, False)

    def _record(self, inst: Inst, st: _Slot, key: tuple, write: bool, label: str, rows: int, row_bytes: int,
                used: int, fp: tuple, known: bool) -> None:
        """Keep this access in its slot; a read is also checked for stale and never-written bytes
        (``known``: skip the never-written check of a region already known written, the fast path)."""
        p, vc = inst.pipe, inst.vc
        if write:
            st.w = (p, vc[p], inst, fp)
            st.r.clear()
            return
        st.r[p] = (vc[p], inst, fp)
        space, lo, _, core = key
        mem = (core, space)
        if self.stale.marks:
            carry = next((w[5] for w in inst.commits if len(w) > 5), None) if inst.commits else None
            entry = (lambda text: self._enter(inst, text)) if carry is not None and carry.entry else None
            self.stale.check(inst, mem, lo, rows, row_bytes, used, label, self.reporter, entry)
        if not known or (mem, lo, rows, used) not in self.known_written:
            self._check_written(inst, mem, lo, rows, row_bytes, used, label)

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
        w = st.w
        space, lo, hi, _ = key
        where = lambda: f"{space.name} bytes 0x{lo:x}-0x{hi:x} ({label})"  # noqa: E731  (built only to report)
        if w is not None and w[0] == p and w[1] > inst.drained and w[2] is not inst and (fp is None or _meets(fp, w[3])):
            self.reporter.report(_hazard("write / write" if write else "write / read (RAW)", where(), w[2], inst,
                                         PIPES[p % NPIPES].name))
        if write and p % NPIPES in self.war:
            read = st.r.get(p)
            if read is not None and read[0] > inst.drained and read[1] is not inst and (fp is None or _meets(fp, read[2])):
                self.reporter.report(_hazard("read / write (WAR)", where(), read[1], inst, PIPES[p % NPIPES].name))

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
