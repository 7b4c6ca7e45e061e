"""Batched forms (``backends/sim/vf/batch.py``) of the mask writers ``pset`` / ``plt`` and the scalar
broadcast ``vdup``: a group of N of them writes its ``[N, 256]`` rows in one NumPy call.

Each form computes, per node, exactly what the one-at-a-time rule in ``memory.py`` computes (the same
NumPy expression on the same values); only the copy into the registers is one call for the group:

* ``pset``: one pattern (no operands, no scalars), the same bits in every row;
* ``plt``: per node ``arange(lanes) < (n & 0xFFFFFFFF)`` with its own scalar ``n``, each element's bit
  repeated over its width;
* ``vdup``: per node ``np.full(lanes, value, float64 | object).astype(t)``, computed when the plan is
  built (the values are the trace's scalars), then merged under the predicate rows as ``regfile.merge``
  does for one register (``batch.merge_rows``).
"""
from __future__ import annotations

import numpy as np

from pypto_pro.backends.sim.vf.batch import Spec, merge_rows
from pypto_pro.backends.sim.vf.regfile import active_rows, lanes, np_of, width


def pset(run, act: np.ndarray, dt) -> None:
    """Attach the batched ``pset`` of element predicate ``act`` at ``dt`` granularity to ``run``."""
    w = width(dt)
    bits = act if w == 1 else np.repeat(act, w)

    def make(bases, scs, size):
        def kernel(ins, outs, mem):
            outs[0][...] = bits
        return kernel
    run.batched = Spec(("pset", dt, bits.tobytes()), make)


def plt(run, dt) -> None:
    """Attach the batched ``plt`` (the lowest ``n`` elements of ``dt`` active, per node's scalar)."""
    w = width(dt)
    idx = np.arange(lanes(dt))

    def make(bases, scs, size):
        rows = np.stack([idx < (sc[0] & 0xFFFFFFFF) for sc in scs])
        bits = rows if w == 1 else np.repeat(rows, w, axis=1)

        def kernel(ins, outs, mem):
            outs[0][...] = bits
        return kernel
    run.batched = Spec(("plt", dt), make, shared=False)


def vdup(run, dt, merging: bool, masked: bool) -> None:
    """Attach the batched ``vdup`` of a scalar into the active lanes of ``dt`` registers."""
    t = np_of(dt)
    n = lanes(dt)
    wide = np.float64 if dt.is_float() else object

    def make(bases, scs, size):
        from pypto_pro.ops.vf.memory import dup_value
        res = np.stack([np.full(n, dup_value(sc[0], dt), dtype=wide).astype(t) for sc in scs])

        def kernel(ins, outs, mem):
            out = outs[0].view(t)
            if not masked:
                out[...] = res
            else:
                merge_rows(out, res, active_rows(ins[0], dt), merging)
        return kernel
    run.batched = Spec(("vdup", dt, merging, masked), make, overwrites=not (merging and masked), shared=False)
