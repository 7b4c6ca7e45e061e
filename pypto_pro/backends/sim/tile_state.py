"""Run-time state of every tile slot: its views and its two valid shapes.

``declared`` is what the author declared (TileType.valid_shape or ``pl.set_validshape``): loads
move at most that much. ``valid`` is the region the last op wrote: the next op computes on it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pypto_pro.ir.nodes import Buffer


@dataclass
class SlotState:
    views: list[np.ndarray]
    declared: list[list[int]]
    valid: list[list[int]]
    buffer: Buffer
    core: int = 0  # which core of the block owns the memory these views are in

    @classmethod
    def create(cls, buf: Buffer, views: list[np.ndarray], core: int = 0) -> "SlotState":
        dv = list(buf.tile_type.valid_shape)
        return cls(views, [list(dv) for _ in views], [list(dv) for _ in views], buf, core)

    def reset(self) -> None:
        dv = self.buffer.tile_type.valid_shape
        for i in range(len(self.views)):
            self.declared[i][:] = dv
            self.valid[i][:] = dv
