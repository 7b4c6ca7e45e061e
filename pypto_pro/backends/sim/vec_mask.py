"""The vector-mask special registers of one core: {MASK1, MASK0} and the mask mode.

``pl.set_vec_mask(mask_high, mask_low)`` writes MASK1 / MASK0, ``pl.reset_mask()`` sets every bit,
``pl.set_mask_norm()`` / ``pl.set_mask_count()`` choose how the bits are read (a bit per element,
or a count of leading elements). The scalar unit writes them in program order, so the simulator
updates this state when the instruction is dispatched (program order) and a VF call takes a
snapshot of it at its own dispatch: what ``vf.get_mask_spr`` reads (``ops/vf/special.py``).
PTO-ISA's a5 tile instructions build their own predicates, so tile ops (``pl.add`` ...) never read it.
"""
from __future__ import annotations

import numpy as np

_ALL = (1 << 64) - 1


class VecMaskSPR:
    """One core's {MASK1, MASK0} and mode; at kernel start every bit is set, in norm mode."""

    __slots__ = ("high", "low", "count", "ar")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.high, self.low, self.count = _ALL, _ALL, False
        self.ar = 0  # the AR special register (vf.squeeze STORE_REG; pl.get_spr reads it: ops/vf/spr.py)

    def snapshot(self) -> tuple[int, int, bool]:
        return self.high, self.low, self.count


def element_mask(snap: tuple[int, int, bool], n: int) -> np.ndarray:
    """Which of ``n`` elements the snapshot selects: bit ``i`` of the 128-bit {MASK1, MASK0} in norm
    mode (``n`` = 64 reads MASK0 only), the first ``MASK0`` elements in count mode."""
    high, low, count = snap
    if count:
        return np.arange(n) < low
    bits = (high << 64) | low
    return np.array([(bits >> i) & 1 for i in range(n)], np.bool_)
