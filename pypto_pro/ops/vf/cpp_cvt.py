"""C++ spelling of ``vf.astype``: ``vcvt(dst, src, mask, [ROUND], [RS], [PART])``.

Which operands a pair takes follows PTO-ISA's a5 ``TCvt.hpp`` classes (EXPAND: PART; ROUND; ROUND_SAT;
ROUND_PART; ROUND_SAT_PART; SAT_PART; SAT_ROUND for bf16 -> fp16). The 8- and 4-bit pairs are spelled
only where the real backend's ``EmitVFCast`` (hicann/pypto ``backend_cce_vf_ops.cpp``) and a ``TCvt.hpp``
cast agree on the operands (:data:`NARROW_FORMS`, each naming the ``TCvt.hpp`` function); a 4x change
places its byte with ``PART_P0`` .. ``PART_P3`` (as ``TCvt.hpp`` / ``TQuant.hpp`` and EmitVFCast's
``part_pp``), a 2x one with ``PART_EVEN`` / ``PART_ODD``. Every other 8- / 4-bit pair is a located error
saying what the two sides write. Like ``TCvt.hpp`` the line has no trailing MODE operand (EmitVFCast
appends ``MODE_ZEROING``, the only mode vcvt has)."""
from __future__ import annotations

from pypto_pro.language import dtypes as D
from pypto_pro.ops.cpp import NoCpp
from pypto_pro.ops.vf.cpp import PART, ROUND, SAT, _names, named

QUARTER = {k: f"PART_P{k}" for k in range(4)}   # the byte of a 4x change (PART_PP in EmitVFCast)
_names(*QUARTER.values())

_FP8 = (D.DT_FP8E4M3FN, D.DT_FP8E5M2)
_FP4 = (D.DT_FP4E2M1, D.DT_FP4E1M2)
# (src, dst) -> (operands, the TCvt.hpp cast that writes them); "round" / "sat" / "part" (EVEN / ODD) /
# "quarter" (PART_P0..P3). EmitVFCast writes the same operands (then MODE_ZEROING) for each of these.
NARROW_FORMS: dict[tuple, tuple[tuple[str, ...], str]] = {
    **{(s, d): (("part",), "cast8to16 (EXPAND)") for s, d in (
        (D.DT_INT8, D.DT_INT16), (D.DT_UINT8, D.DT_UINT16), (D.DT_INT8, D.DT_FP16), (D.DT_UINT8, D.DT_FP16))},
    (D.DT_FP16, D.DT_INT8): (("round", "sat", "part"), "cast16to8 (ROUND_SAT_PART)"),
    (D.DT_FP16, D.DT_UINT8): (("round", "sat", "part"), "cast16to8 (ROUND_SAT_PART)"),
    (D.DT_INT16, D.DT_UINT8): (("sat", "part"), "cast16to8 (SAT_PART)"),
    (D.DT_FP16, D.DT_HF8): (("round", "sat", "part"), "cast16toH8"),
    **{(D.DT_FP32, d): (("round", "sat", "quarter"), "cast32to8 (ROUND_SAT_PART)") for d in _FP8},
    (D.DT_FP32, D.DT_HF8): (("round", "sat", "quarter"), "cast32toH8"),
    **{(D.DT_BF16, d): (("round", "quarter"), "castBf16toFp4") for d in _FP4},
    **{(s, D.DT_FP32): (("quarter",), "cast8to32") for s in (*_FP8, D.DT_HF8)},
    **{(s, D.DT_BF16): (("quarter",), "castFp4toBf16") for s in _FP4},
}

_INT4 = ("the real EmitVFCast writes it with its own INT4 intrinsics (vcvt_s42f16 / vcvt_s42bf16 / vcvt_s42s16 "
         "/ vcvt_f162s4 on vector_s4x2 registers), and PTO-ISA has no INT4 conversion (TCvt.hpp) to agree with")
_E8M0 = ("PTO-ISA's TCvt.hpp has no FP8E8M0 conversion, and the real EmitVFCast has no form of its own for it "
         "(it falls to its generic vcvt(dst, src, mask, ROUND, RS, PART, MODE_ZEROING))")
REFUSED: dict[tuple, str] = {
    (D.DT_HF8, D.DT_FP16): "PTO-ISA's TCvt.hpp has no HF8 -> FP16 conversion to check the real EmitVFCast's "
                           "vcvt(dst, src, mask, PART_EVEN / PART_ODD, MODE_ZEROING) against",
    (D.DT_INT4, D.DT_FP16): _INT4, (D.DT_INT4, D.DT_BF16): _INT4, (D.DT_INT4, D.DT_INT16): _INT4,
    (D.DT_FP16, D.DT_INT4): _INT4,
    (D.DT_INT16, D.DT_INT4): "the real EmitVFCast has no INT16 -> INT4 form (it falls to its generic 7-operand "
                             "vcvt with PART_EVEN ..) and PTO-ISA's TCvt.hpp has none either",
    (D.DT_FP8E8M0, D.DT_BF16): _E8M0, (D.DT_BF16, D.DT_FP8E8M0): _E8M0,
}


def _real_operands(s, d) -> str:
    """The operands EmitVFCast writes for an 8-bit integer pair it has no special form for."""
    if s.is_int() and d.is_int() and s.bits > d.bits:
        return "RS, PART_EVEN / ODD / TWO / THREE" if s.bits == 4 * d.bits else "RS, PART"
    return "ROUND, RS, PART"


def _refusal(s, d, ratio: int) -> str:
    what = f"astype {s.name} -> {d.name}"
    if (s, d) in REFUSED:
        return f"{what}: {REFUSED[(s, d)]}"
    if ratio == 4 and s.is_int() and d is D.DT_UINT8:
        return (f"{what}: PTO-ISA's TCvt.hpp (cast32to8, SAT_PART) writes RS, PART_P0 where the real EmitVFCast "
                "writes RS, PART_EVEN / PART_ODD / PART_TWO / PART_THREE: the two disagree on the byte enumerator")
    if (s, d) == (D.DT_INT8, D.DT_INT32):
        return (f"{what}: PTO-ISA's TCvt.hpp (cast8to32) interleaves the bytes with zeros (vintlv) and converts "
                "with PART_P0, while the real EmitVFCast writes one generic vcvt(dst, src, mask, ROUND, RS, PART, "
                "MODE_ZEROING): the two disagree")
    return (f"{what}: PTO-ISA's TCvt.hpp has no {s.name} -> {d.name} vcvt to agree with the real EmitVFCast's "
            f"vcvt(dst, src, mask, {_real_operands(s, d)}, MODE_ZEROING)")


def _narrow_ops(i) -> list[str]:
    at = i.attrs
    s, d = at["src"], at["dtype"]
    form = NARROW_FORMS.get((s, d))
    if form is None:
        raise NoCpp(_refusal(s, d, at.get("ratio", 1)))
    k = int(at.get("part", 0))
    spell = {"round": ROUND[at["round"]], "sat": SAT[bool(at.get("saturate"))], "part": PART.get(k),
             "quarter": QUARTER[k]}
    return [spell[o] for o in form[0]]


def _wide_ops(i) -> list[str]:
    """The operands of a pair of 16-bit-or-wider types, by PTO-ISA's TCvt.hpp classes."""
    at = i.attrs
    src_dt, dst_dt = at["src"], at["dtype"]
    sb, db = src_dt.bits, dst_dt.bits
    r, rs, part = ROUND[at["round"]], SAT[bool(at.get("saturate"))], PART[int(at.get("part", 0))]
    fs, fd = src_dt.is_float(), dst_dt.is_float()
    if fs and fd:
        if sb < db:
            return [part]
        if sb > db:
            return [r, rs, part]
        return [rs, r]  # bf16 -> fp16 (SAT_ROUND, reversed)
    if fs:  # float -> int
        if sb < db and sb == 32:  # fp32 -> int64 (ROUND_SAT_PART, TCvt)
            return [r, rs, part]
        return [r, rs] if sb == db else [r, part] if sb < db else [r, rs, part]
    if fd:  # int -> float
        return [r] if sb == db else [part] if sb < db else [r, part]
    return [part] if sb < db else [rs, part]  # int -> int


def _vcvt(i, e):
    at = i.attrs
    src_dt, dst_dt = at["src"], at["dtype"]
    narrow = src_dt.bits < 16 or dst_dt.bits < 16
    ops = _narrow_ops(i) if narrow else _wide_ops(i)
    return [f"vcvt({e.dst(0)}, {e.reg(i.args[0], src_dt)}, {e.reg(i.args[1])}, {', '.join(ops)});"]


vcvt = named("vcvt", _vcvt)
