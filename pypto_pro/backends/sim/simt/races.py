"""Cross-thread races inside one SIMT launch.

The real ``pl.simt`` API has no barrier and no atomics: within a launch nothing orders one
thread's accesses against another's. So two different threads writing one element, or one
thread reading an element another thread writes (before or after: either order is possible), is
a race, reported with the source lines of both accesses. A thread reading back what it wrote
itself is ordered (program order) and fine.
"""
from __future__ import annotations

import numpy as np

from pypto_pro.errors_sim import RaceError
from pypto_pro.ir.simt import SimtParam


def _loc(stmt) -> str:
    loc = getattr(stmt, "loc", None)
    if loc is None:
        return "<SIMT code>"
    text = f"{loc.path}:{loc.line}"
    return text + (f" ({loc.source_line.strip()})" if loc.source_line else "")


class RaceLog:
    """Every element access of one launch, by parameter: (offsets, threads, is_write, statement)."""

    def __init__(self) -> None:
        self.params: dict[int, SimtParam] = {}
        self.log: dict[int, list[tuple[np.ndarray, np.ndarray, bool, object]]] = {}

    def record(self, prm: SimtParam, offsets: np.ndarray | None, mask: np.ndarray, write: bool, stmt) -> None:
        if offsets is None:
            return
        self.params[prm.index] = prm
        self.log.setdefault(prm.index, []).append((offsets, np.flatnonzero(mask), write, stmt))

    def check(self, launch_where: str) -> None:
        """Raise a located :class:`RaceError` for the first conflicting pair of accesses."""
        for k, entries in self.log.items():
            writes = [e for e in entries if e[2]]
            if not writes:
                continue
            off = np.concatenate([e[0] for e in writes])
            lane = np.concatenate([e[1] for e in writes])
            which = np.concatenate([np.full(len(e[0]), i) for i, e in enumerate(writes)])
            order = np.lexsort((lane, off))
            off, lane, which = off[order], lane[order], which[order]
            prm = self.params[k]
            # two writes of one element by different threads
            clash = np.flatnonzero((off[1:] == off[:-1]) & (lane[1:] != lane[:-1]))
            if clash.size:
                i = clash[0]
                self._raise(launch_where, prm, int(off[i]), ("writes", int(lane[i]), writes[which[i]][3]),
                            ("writes", int(lane[i + 1]), writes[which[i + 1]][3]))
            # a read of an element some other thread writes
            uniq, first = np.unique(off, return_index=True)
            writer = lane[first]          # the element's one writer (no write-write clash above)
            stmt_of = which[first]
            for r_off, r_lane, _, r_stmt in (e for e in entries if not e[2]):
                pos = np.searchsorted(uniq, r_off)
                pos = np.minimum(pos, len(uniq) - 1)
                hit = (uniq[pos] == r_off) & (writer[pos] != r_lane)
                if hit.any():
                    j = int(np.flatnonzero(hit)[0])
                    p = pos[j]
                    self._raise(launch_where, prm, int(r_off[j]), ("reads", int(r_lane[j]), r_stmt),
                                ("writes", int(writer[p]), writes[stmt_of[p]][3]))

    @staticmethod
    def _raise(launch_where: str, prm: SimtParam, offset: int, a: tuple, b: tuple) -> None:
        index = list(np.unravel_index(offset, prm.shape)) if prm.shape else [offset]
        element = f"{prm.name}[{', '.join(str(int(i)) for i in index)}]"
        raise RaceError(f"{launch_where}: SIMT race on {prm.kind} {element}: thread {a[1]} {a[0]} it at "
                        f"{_loc(a[2])} and thread {b[1]} {b[0]} it at {_loc(b[2])}, with nothing ordering "
                        "the two (pl.simt has no barrier: give each element one thread)")
