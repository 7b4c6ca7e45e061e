"""Byte-addressed model of a core's on-chip memories: one ``uint8`` NumPy array per space.

A tile is a view of its byte range in its layout's arrangement (``fractal.tile_view``: zero-copy
for ND and DN, gathered through the fractal offsets for boxed layouts), so tiles at overlapping
addresses really share bytes, as on the chip.
"""
from __future__ import annotations

import numpy as np

from pypto_pro.arch.model import ArchModel
from pypto_pro.backends.sim import fractal
from pypto_pro.ir.nodes import Buffer
from pypto_pro.language.enums import MemorySpace


class CoreMemory:
    def __init__(self, arch: ArchModel, spaces: tuple[MemorySpace, ...] = tuple(MemorySpace)):
        self.arch_name = arch.name
        self.arrays: dict[MemorySpace, np.ndarray] = {
            s: np.zeros(arch.memory(s).capacity, dtype=np.uint8) for s in spaces}

    def tile_view(self, buf: Buffer, slot: int) -> np.ndarray | fractal.Region:
        tt = buf.tile_type
        return fractal.tile_view(self.arrays[buf.space][buf.addrs[slot]:], tt, tt.effective_layout(self.arch_name))

    def slot_views(self, buf: Buffer) -> list:
        return [self.tile_view(buf, i) for i in range(buf.depth)]
