"""Cycle-cost table for the a5 (Ascend 950) vector unit, from PTO-ISA's a5 cost model.

Source: PTO-ISA ``include/pto/costmodel/a5/formula_costmodel/formula_params.csv`` at commit
3186c381 (evaluated by ``a5/vf_costmodel.hpp``; fitted there to the measured values in
``tests/costmodel/st_a5_fit``). Each tile op is one vector function (VF) and is priced alone:

- contiguous region (whole tile rows, "1D"): ``param0 * repeats + param1``;
- strided region (valid cols < tile cols, "2D"): ``(param0 * repeats_per_row + param1) * rows + param2``;

with a repeat of 256 bytes (64 fp32 / 128 fp16 elements, ``kElementsPerRepeatB32/B16``). The
intercept is start-up plus drain of the VF, so it is charged on every instruction (``fixed``), never
hidden behind the previous one. PTO-ISA fits fp16 and fp32 separately; 2-byte dtypes use the fp16
row, others the fp32 row. Ops PTO-ISA's a5 model has no row for keep a2a3's cost, marked assumed.
"""
from __future__ import annotations

from pypto_pro.arch.costs import VECTOR_COSTS, LinearCost, StridedCost

_CSV = "PTO-ISA a5 formula_costmodel/formula_params.csv (3186c381)"


def _vf(key: str, d1: tuple[float, float], d2: tuple[float, float, float]) -> LinearCost:
    """A PTO-ISA a5 row pair: ``d1`` = (per repeat, intercept), ``d2`` = (per repeat, per row, fixed)."""
    return LinearCost(0.0, d1[0], 0.0, f"{_CSV} {key}", fixed=d1[1], strided=StridedCost(*d2))


_ADD = ((1.2469671, 55.073657), (1.8749443, 2.8762808, 44.344619))
_DIVS32 = ((1.9081456, 64.516464), (1.8688724, 2.4753589, 62.942563))
_DIVS16 = ((3.5491803, 68.737705), (3.9981682, -0.12080507, 65.159204))

# pypto_pro op -> cost of the PTO-ISA tile op it lowers to (fp32 row, or the only row)
_A5: dict[str, LinearCost] = {
    "add": _vf("TADD fp32/fp16", *_ADD),
    "sub": _vf("TSUB fp32/fp16", *_ADD),
    "mul": _vf("TMUL fp32/fp16", (1.1941075, 56.285962), (1.8708194, 2.9123738, 44.844619)),
    "divs": _vf("TDIVS fp32", *_DIVS32),
    "mins": _vf("TMINS fp32/fp16", (1.0589255, 53.140381), (1.1016757, 4.5314383, 49.627872)),
    "neg": _vf("TNEG fp32/fp16", (1.0589255, 55.140381), (1.0952879, 4.5652633, 51.508464)),
    "exp": _vf("TEXP fp32", (1.9670711, 62.656846), (1.8548854, 2.5442386, 60.598247)),
    "sqrt": _vf("TSQRT fp32", (1.9670711, 63.656846), (1.8548854, 2.5442386, 61.598247)),
    "rsqrt": _vf("TRSQRT fp32", (4.0294627, 75.570191), (4.0, 0.032648126, 76.464329)),
    "recip": _vf("TRECIP fp32 default", *_DIVS32),
    # TCVT is keyed by (src, dst); the model sees the widest dtype only, so every cast takes the
    # fp32 -> fp16/bf16 row (the fp16 -> fp32 1D row has a negative slope and cannot extrapolate)
    "cast": _vf("TCVT fp32->fp16 CAST_RINT", (1.3196721, 52.295082), (2.2580054, 1.0422433, 55.18408)),
}

# (op, element bytes) -> the fp16 row where PTO-ISA fits fp16 differently from fp32
A5_VECTOR_COSTS_BY_WIDTH: dict[tuple[str, int], LinearCost] = {
    ("divs", 2): _vf("TDIVS fp16", *_DIVS16),
    ("exp", 2): _vf("TEXP fp16", (3.7622951, 65.934426), (3.9981682, -0.12080507, 64.159204)),
    ("sqrt", 2): _vf("TSQRT fp16", (3.7622951, 66.934426), (3.9981682, -0.12080507, 65.159204)),
    ("rsqrt", 2): _vf("TRSQRT fp16", (8.1065574, 81.098361), (8.011194, 0.05721393, 80.711443)),
    ("recip", 2): _vf("TRECIP fp16 default", *_DIVS16),
}


def _assumed(op: str, cost: LinearCost) -> LinearCost:
    return LinearCost(cost.head, cost.slope, cost.tail, f"assumed from a2a3 (no PTO-ISA a5 row for {op}): "
                      f"{cost.source}", cost.fixed, cost.strided, assumed=True)


A5_VECTOR_COSTS: dict[str, LinearCost] = {op: _A5.get(op) or _assumed(op, c) for op, c in VECTOR_COSTS.items()}
