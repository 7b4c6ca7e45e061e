"""Byte-addressed model of a core's on-chip memories: one ``uint8`` NumPy array per space.

A tile is a view of its byte range in its layout's arrangement (``fractal.tile_view``: zero-copy
for ND and DN, gathered through the fractal offsets for boxed layouts), so tiles at overlapping
addresses really share bytes, as on the chip.

Each space lives in an anonymous memory map, so :meth:`CoreMemory.release` can hand its pages back
to the operating system between launches (the views stay valid; the bytes read as zero until
written again). A compiled kernel keeps its memories for its whole life, and a test suite compiles
thousands of kernels: without the release each would hold its UB / L1 / L0 pages (about 1.5 MiB
for a Cube + Vector block) forever.
"""
from __future__ import annotations

import mmap

import numpy as np

from pypto_pro.arch.model import ArchModel
from pypto_pro.backends.sim import fractal
from pypto_pro.ir.nodes import Buffer
from pypto_pro.language.enums import MemorySpace

_DONTNEED = getattr(mmap, "MADV_DONTNEED", None) if hasattr(mmap, "MAP_PRIVATE") and hasattr(mmap, "MAP_ANONYMOUS") else None


def _zeros(nbytes: int) -> tuple[np.ndarray, mmap.mmap | None]:
    """A zeroed byte array of ``nbytes`` and the map it lives in (None where mapping is not possible)."""
    if nbytes <= 0 or _DONTNEED is None:
        return np.zeros(nbytes, dtype=np.uint8), None
    # private: MADV_DONTNEED frees private anonymous pages (a shared map would keep them in shmem)
    mm = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    return np.frombuffer(mm, dtype=np.uint8), mm


class CoreMemory:
    """``carve(nbytes)``, when given, provides each space's bytes (replay lanes: every lane's memories
    are rows of one buffer, ``backends/sim/batch_replay.py``); the caller then owns their release."""

    def __init__(self, arch: ArchModel, spaces: tuple[MemorySpace, ...] = tuple(MemorySpace), carve=None):
        self.arch_name = arch.name
        self.arrays: dict[MemorySpace, np.ndarray] = {}
        self._maps: list[mmap.mmap] = []
        for s in spaces:
            if carve is not None:
                self.arrays[s] = carve(arch.memory(s).capacity)
                continue
            arr, mm = _zeros(arch.memory(s).capacity)
            self.arrays[s] = arr
            if mm is not None:
                self._maps.append(mm)

    def release(self) -> None:
        """Return the pages to the OS (contents become zero). Only for callers that rewrite every
        byte before the next read: the timed launch poisons each block's memories at its start."""
        for mm in self._maps:
            mm.madvise(_DONTNEED)

    def tile_view(self, buf: Buffer, slot: int) -> np.ndarray | fractal.Region:
        tt = buf.tile_type
        return fractal.tile_view(self.arrays[buf.space][buf.addrs[slot]:], tt, tt.effective_layout(self.arch_name))

    def slot_views(self, buf: Buffer) -> list:
        if buf.view_starts is not None:  # a subview at a run-time start: the window of its tile's slot
            # (its tile's bytes from the start on, with the tile's strides: ir/subview.py)
            base = buf.alias_of
            bases = self.slot_views(base)  # type: ignore[arg-type]
            return [bases[bs][r:, c:] for bs, r, c in buf.view_starts.slots(base)]
        return [self.tile_view(buf, i) for i in range(buf.depth)]
