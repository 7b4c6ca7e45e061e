"""Stale on-chip bytes: what an earlier run of a statement left in a tile that its latest run
wrote less of (the previous tile's data), tracked for the on-chip checker."""
from __future__ import annotations

from typing import Callable

import numpy as np

from pypto_pro.backends.sim.inst import Inst
from pypto_pro.backends.sim.scheduler import Reporter
from pypto_pro.errors_sim import UninitializedReadError

FAST = True  # False: look back through the whole write log for each mark (the reference path; tests compare)


class _Mark:
    """Stale bytes of one tile: their addresses (ascending) and range, the write that left them,
    the tile (base, row pitch), and the first stale row and column in it (a region of the same
    tile from row 0 and byte 0 reaches them only past both)."""

    __slots__ = ("addrs", "low", "high", "writer", "lo", "row_bytes", "row0", "col0")

    def __init__(self, addrs: np.ndarray, writer: Inst, lo: int, row_bytes: int):
        self.addrs = addrs
        self.low, self.high = int(addrs[0]), int(addrs[-1])
        self.writer = writer
        self.lo, self.row_bytes = lo, row_bytes
        rr, cc = np.divmod(addrs - lo, row_bytes)
        self.row0, self.col0 = int(rr.min()), int(cc.min())


class StaleBytes:
    """Bytes of a tile that the latest write of a statement into it did not cover, still holding
    what an earlier write of the same statement left (the previous tile's data): reading them is
    reading another tile's data, typically through a valid shape widened past a partial load.
    Bytes that another statement wrote in between (a zero fill for padding) are not stale.

    Every write into a tile region is logged; the rare case, a statement writing less of a tile
    than it did last time, looks back through the log for what was rewritten since and keeps the
    rest as a *mark* (its byte addresses) until later writes cover them.

    The fast path (``FAST``) keeps, per memory, each distinct region written and the index of its
    latest write instead of the log: "written since the earlier run" is "latest write after it", so a
    mark looks at the memory's few distinct regions (those whose range meets the mark's bytes), not at
    every write since (a loop body rewrites the same tiles every iteration)."""

    def __init__(self) -> None:
        self.marks: dict[tuple, list[_Mark]] = {}  # memory -> its marks
        self.log: list[tuple] = []          # (memory, lo, rows, row_bytes, used) of each write (not FAST)
        self.count = 0                      # writes so far in this block (FAST: the log's length)
        self.latest: dict[tuple, dict[tuple, int]] = {}  # FAST: memory -> {(lo, rows, row_bytes, used): index}
        self.last: dict[tuple, tuple] = {}  # (memory, lo, statement) -> (rows, used, log index)

    def reset_block(self) -> None:
        self.marks.clear()
        self.log.clear()
        self.count = 0
        self.latest.clear()
        self.last.clear()

    @staticmethod
    def _may_touch(mark: "_Mark", lo: int, rows: int, row_bytes: int, used: int) -> bool:
        """Whether rows [0, rows) x bytes [0, used) of the tile at ``lo`` may hold marked bytes."""
        if mark.high < lo or mark.low >= lo + rows * row_bytes:
            return False
        if mark.lo == lo and mark.row_bytes == row_bytes:  # the same tile
            return rows > mark.row0 and used > mark.col0
        return True

    @staticmethod
    def _inside(addrs: np.ndarray, lo: int, rows: int, row_bytes: int, used: int) -> np.ndarray:
        off = addrs - lo
        return (off >= 0) & (off // row_bytes < rows) & (off % row_bytes < used)

    def written(self, inst: Inst, mem: tuple, lo: int, rows: int, row_bytes: int, used: int) -> None:
        marks = self.marks.get(mem)
        if marks:  # rewritten bytes are fresh again
            may_touch = self._may_touch
            for i in range(len(marks) - 1, -1, -1):
                mark = marks[i]
                if may_touch(mark, lo, rows, row_bytes, used):
                    left = mark.addrs[~self._inside(mark.addrs, lo, rows, row_bytes, used)]
                    if left.size:
                        marks[i] = _Mark(left, mark.writer, mark.lo, mark.row_bytes)
                    else:
                        del marks[i]
            if not marks:
                del self.marks[mem]
        key = (mem, lo, id(inst.stmt))
        prev = self.last.get(key)
        if FAST:
            index = self.count
            self.count = index + 1
            self.last[key] = (rows, used, index)
            if prev is not None and (prev[0] > rows or prev[1] > used):
                self._mark_fast(inst, mem, lo, row_bytes, prev, rows, used)  # before this write is in ``latest``
            regions = self.latest.get(mem)
            if regions is None:
                regions = self.latest[mem] = {}
            regions[(lo, rows, row_bytes, used)] = index
            return
        self.last[key] = (rows, used, len(self.log))
        self.log.append((mem, lo, rows, row_bytes, used))
        if prev is not None and (prev[0] > rows or prev[1] > used):
            self._mark(inst, mem, lo, row_bytes, prev, rows, used)

    def _mark(self, inst: Inst, mem: tuple, lo: int, row_bytes: int, prev: tuple, rows: int, used: int) -> None:
        prows, pused, since = prev
        r = np.arange(prows)[:, None]
        c = np.arange(pused)[None, :]
        addrs = (lo + r * row_bytes + c)[~((r < rows) & (c < used))]  # the previous write minus this one
        for m2, lo2, rows2, rb2, used2 in self.log[since + 1:-1]:      # minus what was written in between
            if m2 == mem and addrs.size:
                addrs = addrs[~self._inside(addrs, lo2, rows2, rb2, used2)]
        if addrs.size:  # ascending: row-major offsets of one tile
            self.marks.setdefault(mem, []).append(_Mark(addrs, inst, lo, row_bytes))

    def _mark_fast(self, inst: Inst, mem: tuple, lo: int, row_bytes: int, prev: tuple, rows: int,
                   used: int) -> None:
        """:meth:`_mark` from the latest write of each region: a region was written between the
        earlier run (log index ``since``) and this one exactly when its latest write is after ``since``
        (the regions are taken as they stand before this write); removing bytes is order-free."""
        prows, pused, since = prev
        r = np.arange(prows)[:, None]
        c = np.arange(pused)[None, :]
        addrs = (lo + r * row_bytes + c)[~((r < rows) & (c < used))]  # the previous write minus this one
        inside = self._inside
        low, high = (int(addrs.min()), int(addrs.max())) if addrs.size else (0, -1)
        for (lo2, rows2, rb2, used2), index in self.latest.get(mem, {}).items():
            # (a region whose rows end before the marked bytes start, or starts past them, removes none)
            if index > since and addrs.size and (rb2 <= 0 or lo2 <= high and low < lo2 + rows2 * rb2):
                addrs = addrs[~inside(addrs, lo2, rows2, rb2, used2)]
        if addrs.size:  # ascending: row-major offsets of one tile
            self.marks.setdefault(mem, []).append(_Mark(addrs, inst, lo, row_bytes))

    def check(self, inst: Inst, mem: tuple, lo: int, rows: int, row_bytes: int, used: int, label: str,
              reporter: Reporter, entry: Callable[[str], None] | None = None) -> None:
        """Report a read of marked bytes; ``entry``: the reader copies them as they are (a carrier where
        padding may enter, ``undefined.py``): it is told the finding instead."""
        for mark in self.marks.get(mem, ()):
            if not self._may_touch(mark, lo, rows, row_bytes, used):
                continue
            addrs, writer = mark.addrs, mark.writer
            hit = addrs[self._inside(addrs, lo, rows, row_bytes, used)]
            if hit.size:
                addr = int(hit[0])
                r, c = divmod(addr - lo, row_bytes)
                text = (f"{inst.describe()} reads {mem[1].name} bytes of {label} that the latest {writer.name} into "
                        f"this tile ({writer.where()}) did not write: they still hold an earlier {writer.name}'s data, "
                        f"another tile's (first at row {r}, byte {c} of the tile: address 0x{addr:x})")
                if entry is not None:
                    entry(text)
                else:
                    reporter.report(UninitializedReadError(f"{text}; is the valid shape wider than the data written?"))
                return

    def unmarked(self, written: dict) -> "_Unmarked":
        """``written`` (memory -> bitmap) with the marked bytes cleared, looked up lazily."""
        return _Unmarked(written, self.marks)


class _Unmarked:
    """A memory -> written-bitmap mapping in which stale bytes count as not written."""

    def __init__(self, written: dict, marks: dict):
        self.written, self.marks, self.got = written, marks, {}

    def __getitem__(self, mem: tuple) -> np.ndarray:
        bm = self.got.get(mem)
        if bm is None:
            bm = self.written[mem]
            if self.marks.get(mem):
                bm = bm.copy()
                for mark in self.marks[mem]:
                    bm[mark.addrs] = False
            self.got[mem] = bm
        return bm
