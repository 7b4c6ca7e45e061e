"""``vf.astype`` to and from the 8- and 4-bit float types (a5): the path table and its numerics.

Paths (astype.md table 1/3; the rules of each, checked at the call, follow the real C++ backend
``backend_cce_vf_ops.cpp`` EmitVFCast, which rejects what its vcvt overloads lack):

==================  ======  =====================================  ==========================
path                layout  round_mode                             saturate
==================  ======  =====================================  ==========================
FP32 -> E4M3/E5M2   0..3    CAST_RINT only                         ON only (the default)
FP32 -> HF8         0..3    CAST_ROUND (default) / CAST_HYBRID     ON only (the default)
FP16 -> HF8         0, 1    CAST_ROUND (default) / CAST_HYBRID     OFF (default) / ON
BF16 -> FP4         0..3    RINT / ROUND / FLOOR / CEIL / TRUNC    not applicable (saturates)
FP16 -> INT4        0..3    RINT / ROUND / FLOOR / CEIL / TRUNC    OFF (default) / ON
E4M3/E5M2 -> FP32   0..3    --                                     OFF
HF8 -> FP32 / FP16  0..3/1  --                                     OFF
FP4 -> BF16         0..3    --                                     OFF
INT4 -> FP16 / BF16 / INT16  0..3  --                                OFF
INT16 -> INT4       0..3    --                                     OFF (default) / ON
FP8E8M0 -> BF16     0, 1    (the five accepted, no effect)         OFF / ON (no effect)
BF16 -> FP8E8M0     0, 1    (the five accepted, no effect)         OFF / ON (no effect)
==================  ======  =====================================  ==========================

Lane placement: the narrow results sit in byte ``k * ratio + part`` (``part`` = the layout), the
other bytes are 0; widening reads those bytes. FP4 and INT4 move in pairs (PTO-ISA a5 ``TCvt.hpp``
castBf16toFp4 / castFp4toBf16, PART_P0..P3): bf16 lanes ``2j, 2j+1`` are one packed byte (low
nibble first) at byte ``4j + part``; narrowing takes the pair's predicate from its even lane. PTO-ISA
has no a5 INT4 conversion; FP16 -> INT4 (vcvt_f162s4, PART_P0..P3) is taken to pack like BF16 -> FP4.

Numerics: FP8 codes and FP4 codes come from ``backends/sim/mx.encode`` (the tile ``pl.cast`` MX
conversion: nearest-even, saturating to the largest finite value, inf to it too), HF8 bytes from
``backends/sim/hf8.encode`` (nearest, ties away from zero). Saturated mode sends NaN to 0 (the
page: the default CTRL[50] = 0); FP16 -> HF8 unsaturated keeps NaN (0x80) and +-inf, and a value
that rounds past the largest finite HF8 (2**15: at or beyond 1.25 * 2**15) becomes +-inf. BF16 ->
FP4 sends +-inf / overflow to +-max and NaN to 0. CAST_HYBRID is the chip's stochastic rounding
for HiFloat8 (AscendC RoundMode: "随机舍入"); the random source is undocumented and PTO-ISA's CPU model
has no ROUND_H, so no model can reproduce the chip's bytes: a located CompileError.
FP16 -> INT4 rounds by ``round_mode`` and, as every float -> int of astype.md table 6, sends NaN to 0;
saturated it clamps to -8..7, unsaturated +-inf give -8 / 7 and other values keep their low 4 bits.
INT4 widens exactly (sign-extended). INT16 -> INT4 is astype.md table 6's integer narrowing: unsaturated the
low 4 bits, saturated clamped to -8..7 (packed in pairs as FP16 -> INT4).
E8M0 follows AscendC's dav_3510 ``Reg::Cast`` (which builds both directions from shifts and integer
part-casts) and its data-type page ("the E8M0 bits are BF16's with the sign and mantissa dropped"):
BF16 -> FP8E8M0 is the BF16 exponent field (no rounding: 1.99 -> 2**0), zero and subnormals -> 0x00,
NaN -> 0xFF and +-inf -> 0xFE (the page; AscendC's shift sequence would give 0xFF for inf).
FP8E8M0 -> BF16 is ``2**(code - 127)`` with code 0xFF -> NaN and code 0x00 -> +0.0 (the shift
sequence gives bf16 0x0000; OCP MX reads 2**-127 there, which AscendC's antiquant selects by hand).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pypto_pro.backends.sim import hf8, mx
from pypto_pro.backends.sim.numerics import _round_to_int
from pypto_pro.language import dtypes as D

FP4 = (D.DT_FP4E2M1, D.DT_FP4E1M2)
NIBBLE = FP4 + (D.DT_INT4,)  # 4-bit types: two a byte, converted in pairs
FP8 = (D.DT_FP8E4M3FN, D.DT_FP8E5M2)
_ALL5 = ("CAST_RINT", "CAST_ROUND", "CAST_FLOOR", "CAST_CEIL", "CAST_TRUNC")


@dataclass(frozen=True)
class Path:
    parts: int                 # layouts accepted: 2 (ZERO / ONE) or 4 (ZERO .. THREE)
    rounds: tuple[str, ...]    # round_mode names accepted (empty: none may be given)
    round_default: str
    sat: tuple[str, ...]       # saturate names accepted (empty: none may be given)
    sat_default: str


_NARROW_FP8 = Path(4, ("CAST_RINT",), "CAST_RINT", ("ON",), "ON")
_WIDEN4 = Path(4, (), "", ("OFF",), "OFF")
# E8M0 <-> BF16: the page marks round_mode and saturate UNKNOWN; the real backend lowers both through its
# generic 7-operand vcvt, which takes RINT / ROUND / FLOOR / CEIL / TRUNC and OFF / ON. Accepted, no effect.
_E8M0 = Path(2, _ALL5, "CAST_RINT", ("OFF", "ON"), "OFF")
PATHS: dict[tuple, Path] = {
    (D.DT_FP32, D.DT_FP8E4M3FN): _NARROW_FP8,
    (D.DT_FP32, D.DT_FP8E5M2): _NARROW_FP8,
    (D.DT_FP32, D.DT_HF8): Path(4, ("CAST_ROUND", "CAST_HYBRID"), "CAST_ROUND", ("ON",), "ON"),
    (D.DT_FP16, D.DT_HF8): Path(2, ("CAST_ROUND", "CAST_HYBRID"), "CAST_ROUND", ("OFF", "ON"), "OFF"),
    (D.DT_BF16, D.DT_FP4E2M1): Path(4, _ALL5, "CAST_RINT", (), ""),
    (D.DT_BF16, D.DT_FP4E1M2): Path(4, _ALL5, "CAST_RINT", (), ""),
    (D.DT_FP8E4M3FN, D.DT_FP32): _WIDEN4,
    (D.DT_FP8E5M2, D.DT_FP32): _WIDEN4,
    (D.DT_HF8, D.DT_FP32): _WIDEN4,
    (D.DT_HF8, D.DT_FP16): Path(2, (), "", ("OFF",), "OFF"),
    (D.DT_FP4E2M1, D.DT_BF16): _WIDEN4,
    (D.DT_FP4E1M2, D.DT_BF16): _WIDEN4,
    (D.DT_FP16, D.DT_INT4): Path(4, _ALL5, "CAST_RINT", ("OFF", "ON"), "OFF"),
    (D.DT_INT4, D.DT_FP16): _WIDEN4,
    (D.DT_INT4, D.DT_BF16): _WIDEN4,
    (D.DT_INT4, D.DT_INT16): _WIDEN4,
    (D.DT_INT16, D.DT_INT4): Path(4, (), "", ("OFF", "ON"), "OFF"),
    (D.DT_FP8E8M0, D.DT_BF16): _E8M0,
    (D.DT_BF16, D.DT_FP8E8M0): _E8M0,
}
LOW = tuple(sorted({t for pair in PATHS for t in pair if t not in (D.DT_FP32, D.DT_FP16, D.DT_BF16, D.DT_INT16)},
                   key=lambda d: d.name))
_MODE = {"CAST_RINT": "rint", "CAST_ROUND": "round", "CAST_FLOOR": "floor", "CAST_CEIL": "ceil",
         "CAST_TRUNC": "trunc"}

_HF8_MAX_CODE = int(np.flatnonzero(hf8.VALUES == np.nanmax(hf8.VALUES[np.isfinite(hf8.VALUES)]))[0])
_HF8_MAX = float(hf8.VALUES[_HF8_MAX_CODE])


def targets(src: D.DataType) -> tuple[D.DataType, ...]:
    return tuple(d for (s, d) in PATHS if s is src)


def check(p, a, node, src: D.DataType, dst: D.DataType, layout: str, round_given, sat_given) -> tuple[str, bool]:
    """Validate one low-precision path's keywords at their own positions; (round mode name, saturate)."""
    path = PATHS[(src, dst)]
    what = f"vf.astype(): {src.name} -> {dst.name}"
    if {"ZERO": 0, "ONE": 1, "TWO": 2, "THREE": 3}[layout] >= path.parts:
        p.fail(a.node("layout"), f"{what} takes layout ZERO or ONE, not {layout}")
    rm = path.round_default
    if round_given is not None:
        if not path.rounds and round_given.name != "CAST_RINT":
            p.fail(a.node("round_mode"), f"{what} is exact: round_mode does not apply (leave it out)")
        if path.rounds:
            if round_given.name not in path.rounds:
                p.fail(a.node("round_mode"), f"{what} takes round_mode {' or '.join(path.rounds)}, "
                                             f"not {round_given.name}")
            rm = round_given.name
    if rm == "CAST_HYBRID":
        p.fail(a.node("round_mode"), f"{what}: CAST_HYBRID is the chip's stochastic rounding for HF8, whose random "
                                     "source is not documented, so the simulator cannot give the chip's bytes; "
                                     "use CAST_ROUND (round half away from zero)")
    sat = path.sat_default
    if sat_given is not None:
        if not path.sat:
            if sat_given.name != "OFF":
                p.fail(a.node("saturate"), f"{what}: saturate does not apply (the conversion always saturates)")
        elif sat_given.name not in path.sat:
            why = " (astype.md lists OFF, but the real backend refuses it: 'requires saturate=ON')" \
                if path.sat == ("ON",) else ""
            p.fail(a.node("saturate"), f"{what} takes saturate={' or '.join(path.sat)} only, not {sat_given.name}{why}")
        else:
            sat = sat_given.name
    return _MODE.get(rm, "rint"), sat == "ON"


# ---- numerics --------------------------------------------------------------------------------------


def encode(x: np.ndarray, dst: D.DataType, mode: str, saturate: bool) -> np.ndarray:
    """uint8 codes of float64 values ``x`` in an FP8 / HF8 / FP4 type (FP4: one code per value, 0..15)."""
    x = np.asarray(x, np.float64)
    nan = np.isnan(x)
    if dst is D.DT_INT4:
        r = _round_to_int(np.where(nan, 0.0, x), mode)
        if saturate:
            v = np.clip(r, -8, 7)
        else:
            big = np.clip(r, -2.0 ** 62, 2.0 ** 62)  # +-inf -> the extremes below; finite: the low 4 bits
            v = np.where(np.isinf(r), np.where(r > 0, 7, -8), big.astype(np.int64) & 0xF)
        return (v.astype(np.int64) & 0xF).astype(np.uint8)
    if dst is D.DT_FP8E8M0:
        return e8m0_encode(x)
    if dst is D.DT_HF8:
        if saturate:
            codes = hf8.encode(np.clip(np.where(nan, 0.0, x), -_HF8_MAX, _HF8_MAX))
        else:
            codes = hf8.encode(np.where(np.abs(x) >= 1.25 * _HF8_MAX, np.copysign(np.inf, x), x))
        return codes
    codes = mx.encode(x, dst.name, mode)
    return np.where(nan, np.uint8(0), codes).astype(np.uint8)  # saturated paths (FP8, FP4): NaN -> 0


def decode(codes: np.ndarray, src: D.DataType) -> np.ndarray:
    """float64 values of uint8 codes of an FP8 / HF8 type or of FP4 / INT4 nibbles."""
    if src is D.DT_INT4:
        c = np.asarray(codes, np.int64) & 0xF
        return np.where(c >= 8, c - 16, c).astype(np.float64)
    if src in FP4:
        return mx.decode_fp4(np.asarray(codes, np.uint8), src.name)
    if src is D.DT_HF8:
        return hf8.decode(codes)
    if src is D.DT_FP8E8M0:
        c = np.asarray(codes, np.int64)
        return np.where(c == 0xFF, np.nan, np.where(c == 0, 0.0, np.exp2(c - 127.0)))
    return np.asarray(codes, np.uint8).view(src.np_dtype).astype(np.float64)


def narrow_4bit(x: np.ndarray, act: np.ndarray, dst: D.DataType, mode: str, saturate: bool) -> np.ndarray:
    """Packed FP4 / INT4 bytes of 16-bit lanes taken in pairs (low nibble = the even lane); a pair whose
    even lane is inactive is 0."""
    codes = encode(x.astype(np.float64), dst, mode, saturate)
    packed = (codes[0::2] & 0xF) | ((codes[1::2] & 0xF) << 4)
    return np.where(act[0::2], packed, 0).astype(np.uint8)


def widen_4bit(packed: np.ndarray, act: np.ndarray, src: D.DataType) -> np.ndarray:
    """16-bit-lane values (float64) of packed FP4 / INT4 bytes: lanes 2j, 2j+1 from byte j; inactive bytes give 0."""
    lo, hi = decode(packed & 0xF, src), decode(packed >> 4, src)
    vals = np.stack([lo, hi], axis=1).reshape(-1)
    return np.where(np.repeat(act, 2), vals, 0.0)


def e8m0_encode(x: np.ndarray) -> np.ndarray:
    """E8M0 codes of float64 values of BF16 lanes: the BF16 exponent field (sign and mantissa dropped, no
    rounding); zero and BF16 subnormals -> 0x00, +-inf -> 0xFE (the page), NaN -> 0xFF."""
    x = np.asarray(x, np.float64)
    finite = np.isfinite(x)
    _, e = np.frexp(np.where(finite, x, 1.0))  # |x| = m * 2**e, m in [0.5, 1)
    field = np.where(x == 0, 0, np.clip(e + 126, 0, 0xFE))
    return np.where(np.isnan(x), 0xFF, np.where(finite, field, 0xFE)).astype(np.uint8)
