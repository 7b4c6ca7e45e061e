"""The batched form of the ``vlds`` distributions that move bits within a row (``ops/vf/memory.py``'s
``_sim_vlds`` ``run``), for the batched VF plans (``backends/sim/vf/batch.py``)."""
from __future__ import annotations

import numpy as np

from pypto_pro.backends.sim.vf.batch import MemRows, Spec
from pypto_pro.backends.sim.vf.regfile import VL

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def batched_dist(tile: int, dist: str, nbytes: int, dw: int) -> Spec:
    """N loads of one of ``_sim_vlds``'s ``run`` distributions (US, DS, UNPK*, BLK, E2B, DINTLV): one copy of their ``[N, nbytes]`` UB rows, then the same bit movement along each row (the plan checked
    every address's alignment). Every one writes its whole destination(s)."""
    ut = _UINT[dw]

    def make(bases, scs, size):
        rows = MemRows([bases[tile] + sc[0] for sc in scs], nbytes, size)

        def kernel(ins, outs, mem):
            raw = rows.view(mem)
            if raw is None:
                raw = mem[rows.idx]
            out = outs[0]
            if dist.startswith("US"):
                out.view(ut)[...] = np.repeat(raw.view(ut), 2, axis=-1)
            elif dist.startswith("DS"):
                out.view(ut)[...] = raw.view(ut)[:, ::2]
            elif dist == "UNPK4":
                out.view(np.uint32)[...] = raw.astype(np.uint32)
            elif dist == "BLK":
                out[...] = np.tile(raw, (1, VL // 32))
            elif dist.startswith("E2B"):
                out.view(ut)[...] = np.repeat(raw.view(ut), 32 // dw, axis=-1)
            elif dist.startswith("UNPK"):
                wide = _UINT[2 * dw]
                out.view(wide)[...] = raw.view(ut).astype(wide)
            else:  # DINTLV
                src = raw.view(ut)
                out.view(ut)[...] = src[:, 0::2]
                outs[1].view(ut)[...] = src[:, 1::2]
        return kernel
    return Spec(("vlds", tile, dist, nbytes, dw), make, shared=False)
