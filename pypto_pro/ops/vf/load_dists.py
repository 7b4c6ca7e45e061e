"""The ``vlds`` distributions that move bits within a row: one load (``ops/vf/memory.py``'s ``_sim_vlds``)
and its batched form for the batched VF plans (``backends/sim/vf/batch.py``) run the same code."""
from __future__ import annotations

import numpy as np

from pypto_pro.backends.sim.vf.batch import MemRows, Spec
from pypto_pro.backends.sim.vf.regfile import VL

UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def move_bits(raw: np.ndarray, dist: str, dw: int, outs: list) -> None:
    """The registers ``outs`` (uint8, the second only for DINTLV) a ``vlds`` of distribution ``dist``
    (US, DS, UNPK*, BLK, E2B, DINTLV; element width ``dw``) makes of its UB bytes ``raw``, along the
    last axis: one load (``[nbytes]``) or a stack of them (``[N, nbytes]``)."""
    ut, out = UINT[dw], outs[0]
    if dist.startswith("US"):
        out.view(ut)[...] = np.repeat(raw.view(ut), 2, axis=-1)
    elif dist.startswith("DS"):
        out.view(ut)[...] = raw.view(ut)[..., ::2]
    elif dist == "UNPK4":  # each u8 into a b32 lane, zero-extended
        out.view(np.uint32)[...] = raw.astype(np.uint32)
    elif dist == "BLK":  # one 32-byte block repeated
        out[...] = np.tile(raw, (1,) * (raw.ndim - 1) + (VL // 32,))
    elif dist.startswith("E2B"):  # each element repeated over a 32-byte block
        out.view(ut)[...] = np.repeat(raw.view(ut), 32 // dw, axis=-1)
    elif dist.startswith("UNPK"):
        wide = UINT.get(2 * dw)
        out.view(wide)[...] = raw.view(ut).astype(wide)
    else:  # DINTLV: even elements -> first register, odd -> second
        src = raw.view(ut)
        out.view(ut)[...] = src[..., 0::2]
        outs[1].view(ut)[...] = src[..., 1::2]


def batched_dist(tile: int, dist: str, nbytes: int, dw: int) -> Spec:
    """N loads of one of those distributions: one copy of their ``[N, nbytes]`` UB rows, then
    :func:`move_bits` along each row (the plan checked every address's alignment). Every one writes its
    whole destination(s)."""
    def make(bases, scs, size):
        rows = MemRows([bases[tile] + sc[0] for sc in scs], nbytes, size)

        def kernel(ins, outs, mem):
            raw = rows.view(mem)
            move_bits(raw if raw is not None else mem[rows.idx], dist, dw, outs)
        return kernel
    return Spec(("vlds", tile, dist, nbytes, dw), make, shared=False)
