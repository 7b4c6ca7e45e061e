"""Byte-addressed model of a core's on-chip memories: one ``uint8`` NumPy array per space.

A tile is a zero-copy ``view(dtype).reshape(rows, cols)`` of its byte range, so tiles at
overlapping addresses really share bytes, as on the chip.
"""
from __future__ import annotations

import numpy as np

from pypto_pro.arch.model import ArchModel
from pypto_pro.ir.nodes import Buffer
from pypto_pro.language.enums import MemorySpace


class CoreMemory:
    def __init__(self, arch: ArchModel, spaces: tuple[MemorySpace, ...] = tuple(MemorySpace)):
        self.arrays: dict[MemorySpace, np.ndarray] = {
            s: np.zeros(arch.memory(s).capacity, dtype=np.uint8) for s in spaces}

    def tile_view(self, buf: Buffer, slot: int) -> np.ndarray:
        tt = buf.tile_type
        addr = buf.addrs[slot]
        raw = self.arrays[buf.space][addr:addr + tt.nbytes]
        return raw.view(tt.dtype.np_dtype).reshape(tt.rows, tt.cols)

    def slot_views(self, buf: Buffer) -> list[np.ndarray]:
        return [self.tile_view(buf, i) for i in range(buf.depth)]
