"""The ``vlds`` distributions that move bits within a row: one load (``ops/vf/memory.py``'s ``_sim_vlds``)
and its batched form for the batched VF plans (``backends/sim/vf/batch.py``) run the same code."""
from __future__ import annotations

import numpy as np

from pypto_pro.backends.sim.vf.batch import MemRows, Spec
from pypto_pro.backends.sim.vf.regfile import VL

UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}

# a generic dist -> its explicit form for registers of 1 / 2 / 4 / 8-byte elements (load_align.md: the
# register's dtype picks the B8 / B16 / B32 variant; the real backend spells b32 US / DS as _B16 and
# every wider one as the last variant)
_GENERIC = {"BRC": ("BRC_B8", "BRC_B16", "BRC_B32", "BRC_B32"), "US": ("US_B8", "US_B16", "US_B16", "US_B16"),
            "DS": ("DS_B8", "DS_B16", "DS_B16", "DS_B16"), "UNPK": ("UNPK_B8", "UNPK_B16", "UNPK_B32", "UNPK_B32"),
            "E2B": ("E2B_B32", "E2B_B16", "E2B_B32", "E2B_B32")}


def explicit_dist(dist: str, w: int) -> str:
    """The explicit LoadDist a generic one (BRC, US, DS, UNPK, E2B) is for a ``w``-byte register."""
    return _GENERIC[dist][{1: 0, 2: 1, 4: 2}.get(w, 3)] if dist in _GENERIC else dist


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
