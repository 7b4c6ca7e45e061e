"""Cross-block write/write overlaps in global memory, judged by the bytes actually written.

Several blocks (or cores) storing the *same* bytes to the same GM window is common in real
kernels (every block computes the whole result, a block count larger than the work): whatever
order the writes land in, memory ends up with those bytes, so the result is deterministic on the
chip. Such an overlap is a note in ``report.notes``, not a fault. Writes whose bytes differ
remain a ``RaceError``: the result then depends on which block writes last.

How it is exact and cheap. Only an overlap the global-memory checker already found costs
anything: when a write of one block overlaps an earlier write of another block, the bytes the
overlap holds right before the write (what the earlier writers left) are copied; when the write
has landed (at its start under ``check="raise"``, which writes in place, at its commit
otherwise) the overlap is compared byte for byte with that copy. Overlaps with the same window
are compared once per write. Kernels without such overlaps run exactly as before.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from pypto_pro.backends.sim.inst import Inst

Region = Callable[[int, tuple], "np.ndarray | None"]  # (GM binding index, rect) -> a view of those bytes


def span_of(a: tuple, b: tuple) -> tuple:
    """The intersection of two rects (per axis (start, stop))."""
    return tuple((max(a0, b0), min(a1, b1)) for (a0, a1), (b0, b1) in zip(a, b))


def span_str(span: tuple) -> str:
    return ", ".join(f"{a}:{b}" for a, b in span)


def _bytes(view: np.ndarray) -> bytes:
    return np.ascontiguousarray(view).tobytes()


def _first_diff(view: np.ndarray, before: bytes, span: tuple) -> str:
    old = np.frombuffer(before, np.uint8)
    new = np.frombuffer(_bytes(view), np.uint8)
    first = int(np.flatnonzero(old != new)[0]) // max(1, view.itemsize)
    where = np.unravel_index(first, view.shape) if view.ndim else ()
    at = ", ".join(str(s[0] + int(i)) for s, i in zip(span, where))
    return f"\n  the two writes store different bytes (first at element [{at}])"


class SameWrites:
    """Writes waiting to land (the later write of a cross-block overlap) and the notes of the
    overlaps that turned out identical (one per pair of statements, with a count)."""

    def __init__(self, region: Region):
        self.region = region
        # the later write -> [(key, view, bytes before it, on same, on differ)]
        self.pending: dict[Inst, list] = {}
        self.notes: dict[tuple, list] = {}   # (tensor, earlier stmt, later stmt) -> [text, count]

    def watch(self, inst: Inst, pidx: int, span: tuple, other: tuple, block: int, name: str, rect: tuple,
              in_flight: bool = False) -> bool:
        """Compare ``span`` when ``inst`` has landed; False when its bytes cannot be resolved (then
        the overlap is reported at once, as before). ``in_flight``: the earlier write has not landed
        yet (two cores of one block): what each leaves is compared, in the order they land."""
        if pidx < 0:
            return False
        waiting = self.pending.get(inst)
        for w in waiting or ():
            if w[0] == (pidx, span):
                return True  # the same window against another earlier writer: one comparison
        view = self.region(pidx, span)
        if view is None:
            return False
        on_same = lambda: self._note(inst, block, name, span, other)  # noqa: E731
        on_differ = lambda v, before: ("gm", other, block, name, rect, _first_diff(v, before, span))  # noqa: E731
        if in_flight:
            oinst = other[4]
            first, second = (oinst, inst) if oinst.end <= inst.end else (inst, oinst)
            self.watch_pair(first, second, (pidx, span), view, on_same, on_differ)
        else:
            self.watch_bytes(inst, (pidx, span), view, on_same, on_differ)
        return True

    def watch_bytes(self, inst: Inst, key: tuple, view: np.ndarray, same: Callable[[], None],
                    differ: Callable[[np.ndarray, bytes], tuple]) -> None:
        """When ``inst`` lands, call ``same()`` if ``view`` holds the bytes it holds now, else
        hand ``differ(view, bytes before)`` to :meth:`landed`'s caller."""
        self.pending.setdefault(inst, []).append((key, view, _bytes(view), same, differ))

    def watch_pair(self, first: Inst, second: Inst, key: tuple, view: np.ndarray, same: Callable[[], None],
                   differ: Callable[[np.ndarray, bytes], tuple]) -> None:
        """Two writes both still to land (writes landing at their end): what ``view`` holds once
        ``first`` has landed is compared with what it holds once ``second`` has."""
        self.pending.setdefault(first, []).append((key, view, second, same, differ))

    def landed(self, inst: Inst) -> list[tuple]:
        """What ``differ`` made of each watched view of ``inst`` whose bytes changed; the others
        are notes."""
        out = []
        for key, view, before, same, differ in self.pending.pop(inst, ()):
            if isinstance(before, Inst):  # the first of a pair: its bytes are what the second must match
                self.pending.setdefault(before, []).append((key, view, _bytes(view), same, differ))
                continue
            if _bytes(view) == before:
                same()
            else:
                out.append(differ(view, before))
        return out

    def _note(self, inst: Inst, block: int, name: str, span: tuple, other: tuple) -> None:
        ob, oinst = other[0], other[4]
        key = (name, id(oinst.stmt), id(inst.stmt))
        seen = self.notes.get(key)
        if seen is not None:
            seen[1] += 1
            return
        who = f"two cores of block {block}" if ob == block else f"blocks {ob} and {block}"
        self.notes[key] = [f"{who} write identical bytes to '{name}'[{span_str(span)}]: whatever "
                           f"order they land in, memory holds those bytes (deterministic on the chip, not a race)\n"
                           f"  block {ob}: {oinst.describe()}\n  block {block}: {inst.describe()}", 1]

    def note(self, key: tuple, text: str) -> None:
        """A note of its own (``key``: what makes two findings the same one, counted)."""
        seen = self.notes.get(key)
        if seen is not None:
            seen[1] += 1
        else:
            self.notes[key] = [text, 1]

    def texts(self) -> list[str]:
        """One note per pair of statements, saying how many overlapping writes it stands for."""
        out = []
        for text, count in self.notes.values():
            out.append(text + (f"\n  ({count} overlapping writes of these two statements in this launch)"
                               if count > 1 else ""))
        return out
