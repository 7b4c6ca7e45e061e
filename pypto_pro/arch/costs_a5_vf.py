"""Cycle cost of register-level VF code (``@pl.vector_function``) on a5 (Ascend 950).

A VF call is priced as ``VF_START + sum(cost of each executed VF instruction)``. PTO-ISA ships no
per-micro-instruction table; the figures are derived from its a5 tile-op fits
(``arch/costs_a5.py``: each tile op there is one VF looping ``vlds / op / vsts`` once per 256-byte
repeat), where the slope per repeat is the throughput of the loop's bottleneck (the compute
instruction) and the intercept is the VF's start-up plus drain:

- ``VF_START``: the intercept of TADD fp32 (55.07 cycles);
- a compute instruction: the slope per repeat of the tile op that wraps it (TADD 1.25, TMUL 1.19,
  TEXP 1.97, TDIVS 1.91, TMINS 1.06, TCVT 1.32 cycles);
- loads, stores, masks, broadcasts and scalar moves: estimates (marked ``assumed``), since the fits
  above hide them behind the compute instruction.
"""
from __future__ import annotations

from pypto_pro.arch.model import Sourced

_FIT = "derived from PTO-ISA a5 formula_costmodel/formula_params.csv (3186c381)"
_EST = "estimate (no PTO-ISA per-instruction figure)"

VF_START = Sourced(55.073657, f"{_FIT}: TADD fp32 intercept (VF start-up + drain)")

VF_COSTS: dict[str, Sourced] = {
    "VADD": Sourced(1.2469671, f"{_FIT}: TADD slope per repeat"),
    "VMUL": Sourced(1.1941075, f"{_FIT}: TMUL slope per repeat"),
    "VEXP": Sourced(1.9670711, f"{_FIT}: TEXP fp32 slope per repeat"),
    "VSQRT": Sourced(1.9670711, f"{_FIT}: TSQRT fp32 slope per repeat"),
    "VDIV": Sourced(1.9081456, f"{_FIT}: TDIVS fp32 slope per repeat"),
    "VMIN": Sourced(1.0589255, f"{_FIT}: TMINS slope per repeat"),
    "VCVT": Sourced(1.3196721, f"{_FIT}: TCVT fp32->fp16 slope per repeat"),
    "VREDUCE": Sourced(2.0, f"{_EST}: a cross-lane reduction (EXU0 only), taken as two compute slots", True),
    "VLDS": Sourced(0.5, f"{_EST}: two load/store slots per cycle", True),
    "VSTS": Sourced(0.5, f"{_EST}: two load/store slots per cycle", True),
    "VMASK": Sourced(1.0, f"{_EST}: one predicate instruction per cycle", True),
    "VDUP": Sourced(1.0, f"{_EST}: one broadcast per cycle", True),
    "VNOP": Sourced(0.0, "no work: a barrier or an address-register move", True),
}
