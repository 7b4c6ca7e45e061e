"""VF spellings of the CCE intrinsics that only the real PyPTO Pro backend writes (``cpp.REAL_NAMES``):
hicann/pypto ``framework/src/interface/pypto_pro/backend/backend_cce_vf_ops.cpp``, the ``EmitVF*``
function each docstring names. PTO-ISA's a5 headers do not use these intrinsics, but bisheng provides
them and the chip runs what the real tool chain emits, so they are written as that backend writes them.
Builders and enumerators are ``cpp.py``'s; each op's declaration names its spelling from here."""
from __future__ import annotations

from pypto_pro.ops.cpp import NoCpp
from pypto_pro.ops.vf.cpp import PART, _half, named


def _vunpack(i, e):
    """The register unpack: ``vunpack(dst, src, LOWER | HIGHER)`` (EmitVFUnpack); a 64-bit result is a
    vintlv sequence there (as vpack's 64-bit source), not spelled here."""
    if i.dsts[0].dtype.bits == 64:
        raise NoCpp("vunpack has no 64-bit result form (a 64-bit unpack is a vintlv sequence)")
    return _half("vunpack")(i, e)


def _vsqrt_hp(i, e):
    """``sqrt(precision=True)`` on FP32: EmitVFSqrt's ``vsqrt<float, &mode>`` with a ``SqrtSpecificMode``
    of static storage ({ZEROING, true}: the high-precision algorithm) declared before it."""
    src, m = i.args[:2]
    mode = e.temp("static constexpr AscendC::Reg::SqrtSpecificMode", "{AscendC::Reg::MaskMergeMode::ZEROING, true}")
    return [f"vsqrt<float, &{mode}>({e.dst(0)}, {e.reg(src, i.attrs.get('dtype'))}, {e.reg(m)});"]


def _pmov(i, e):
    """A mask register move (EmitVFMove's mask form): the selected bits, the others 0."""
    src, m = i.args[:2]
    return [f"pmov({e.dst(0)}, {e.reg(src)}, {e.reg(m)});" if m is not None else f"pmov({e.dst(0)}, {e.reg(src)});"]


def _movemask(i, e):
    """``vf.get_mask_spr``: ``movp_b16()`` / ``movp_b32()`` (EmitVFGetMaskSpr: B16 / B32 only)."""
    return [f"{e.dst(0)} = movp_{'b16' if i.attrs['dtype'].bits == 16 else 'b32'}();"]


def _movvp(i, e):
    """``vf.mask_gen_with_reg_tensor``: ``movvp(dst, (RegTensor<uint16_t | uint32_t>&)src, block)``
    (EmitVFMaskGenWithRegTensor)."""
    w = i.attrs["width"]
    return [f"movvp({e.dst(0)}, (RegTensor<uint{8 * w}_t>&){e.reg(i.args[0])}, {i.attrs['block']});"]


def _vmulscvt(i, e):
    """``vf.muls_cast``: ``vmulscvt(dst, src, scalar, mask, PART_EVEN | PART_ODD)`` (EmitVFMulsCast:
    layout ZERO -> the even lanes, ONE -> the odd)."""
    from pypto_pro.language import dtypes as D
    src, m, s = i.args[:3]
    part = PART[1 if i.attrs.get("odd") else 0]
    return [f"vmulscvt({e.dst(0)}, {e.reg(src, D.DT_FP32)}, {e.scalar(s, D.DT_FP32)}, {e.reg(m)}, {part});"]


vunpack = named("vunpack", _vunpack)
vsqrt_hp = named("vsqrt", _vsqrt_hp)
pmov = named("pmov", _pmov)
movemask = named("movp_b32", _movemask, ("movp_b16",))
movvp = named("movvp", _movvp)
vmulscvt = named("vmulscvt", _vmulscvt)
