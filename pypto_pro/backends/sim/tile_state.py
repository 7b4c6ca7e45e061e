"""Run-time state of every tile slot: its views and its valid shape.

The valid shape is tile state, as in PTO-ISA: it starts as the TileType's ``valid_shape`` (the
full shape where that is ``-1``) and changes only through ``pl.set_validshape`` (a run-time
``valid_shape`` in the TileType is lowered to one at the tile's placement). Instructions compute
over the valid shapes of their tiles; they never change them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pypto_pro.ir.nodes import Buffer
from pypto_pro.language.enums import ND, TensorLayout


@dataclass
class SlotState:
    views: list[np.ndarray]
    valid: list[list[int]]
    buffer: Buffer
    core: int = 0  # which core of the block owns the memory these views are in
    initial: tuple[int, int] = (0, 0)
    layout: TensorLayout = ND  # how the slot's bytes are arranged (the tile's layout on the arch)

    @classmethod
    def create(cls, buf: Buffer, views: list, core: int = 0, layout: TensorLayout = ND) -> "SlotState":
        tt = buf.tile_type
        init = tt.static_valid or tt.shape
        return cls(views, [list(init) for _ in views], buf, core, init, layout)

    def reset(self) -> None:
        for v in self.valid:
            v[0], v[1] = self.initial
