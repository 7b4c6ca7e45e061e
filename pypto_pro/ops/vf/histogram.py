"""``vf.histograms`` (``vf_computation/sorting_and_indexing/histograms.md``): the chistv2 / dhistv2
instructions.

``dst = vf.histograms(src, mask, bin_type=BIN0, hist_type=ACCUMULATE)``: ``src`` is a DT_UINT8
register (the real C++ backend rejects other types: reinterpret with ``vf.bit_cast``), the mask is
read at b8 granularity (an inactive byte is not counted), ``dst`` is the DT_UINT16 register the
assignment's target already names (its 128 counts are incremented; a fresh name is a new, never
initialised register, as on the chip: start it with ``vf.full(0, ...)``). With ``base`` = 0 (BIN0) or
128 (BIN1):

* FREQUENCY (dhistv2): ``dst[n] += #{active i : src[i] == base + n}``;
* ACCUMULATE (chistv2): ``dst[n] += #{active i : src[i] <= base + n}``. For BIN1 this counts from 0,
  not from 128: PTO-ISA's a5 ``THistogram.hpp`` stores the BIN1 chistv2 result as bins 128..255 of
  the cumulative histogram its CPU model (``cpu/THistogram.hpp``) computes over all 256 values.

Counts wrap at 16 bits (the page: "mind accumulation overflow").
"""
from __future__ import annotations

import numpy as np

from pypto_pro.backends.sim.vf.regfile import active, lanes, view
from pypto_pro.language import dtypes as D
from pypto_pro.language.enums import BinType, HistType
from pypto_pro.ops.vf import common as c
from pypto_pro.ops.vf import cpp as vcpp
from pypto_pro.ops.vf.decl import vf_api, vf_instr

FAMILY = "vf_sorting_and_indexing"


def _check(p, node, a):
    src = a["src"]
    if getattr(src, "dtype", None) is not D.DT_UINT8 and not getattr(src, "is_mask", True):
        p.fail(a.node("src"), f"vf.histograms(): 'src' is a register of {src.dtype.name}; it counts DT_UINT8 values "
                              "(reinterpret it with vf.bit_cast(src, dtype=pl.DT_UINT8))")
    r = c.reg(p, a, "src", (D.DT_UINT8,))
    m = c.mask(p, a, "mask")
    high = c.enum_arg(p, a, "bin_type", BinType, BinType.BIN0) is BinType.BIN1
    freq = c.enum_arg(p, a, "hist_type", HistType, HistType.ACCUMULATE) is HistType.FREQUENCY
    d = c.dst(p, c.VREG, D.DT_UINT16)
    c.emit(p, node, "dhistv2" if freq else "chistv2", (d,), (c.read(r), c.read(m), c.read(d)), high=high,
           lanes=lanes(D.DT_UINT8), api="histograms")
    return d


def _build(cumulative: bool):
    def build(instr):
        src, mk, old = instr.args
        base = 128 if instr.attrs["high"] else 0
        uid = instr.dsts[0].uid

        def run(rf, mem, bases):
            vals = view(rf.v[src.reg.uid], D.DT_UINT8)[active(rf.m[mk.reg.uid], D.DT_UINT8)]
            counts = np.bincount(vals, minlength=256)
            counts = np.cumsum(counts) if cumulative else counts
            prev = view(rf.v[old.reg.uid], D.DT_UINT16).astype(np.int64)
            view(rf.v[uid], D.DT_UINT16)[:] = ((prev + counts[base:base + 128]) & 0xFFFF).astype(np.uint16)
        return run
    return build


vf_api(FAMILY, "histograms", "src, mask, bin_type=None, hist_type=None",
       "Add the histogram of the active DT_UINT8 lanes of src (BIN0: values 0..127, BIN1: 128..255; ACCUMULATE: "
       "cumulative counts, FREQUENCY: per value) to the DT_UINT16 destination register.", _check)
vf_instr("chistv2", FAMILY, _build(True), "VREDUCE", cpp=vcpp.chistv2)
vf_instr("dhistv2", FAMILY, _build(False), "VREDUCE", cpp=vcpp.dhistv2)
