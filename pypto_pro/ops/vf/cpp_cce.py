"""VF spellings written as the real PyPTO Pro backend writes them (hicann/pypto
``framework/src/interface/pypto_pro/backend/backend_cce_vf_ops.cpp``, the ``EmitVF*`` function each
docstring names): the CCE intrinsics only that backend uses (``cpp.REAL_NAMES``; PTO-ISA's a5 headers do
not use them, but bisheng provides them and the chip runs what the real tool chain emits) and its
sequences of PTO-ISA intrinsics for forms with no instruction of their own (the 64-bit pack / unpack).
Builders and enumerators are ``cpp.py``'s; each op's declaration names its spelling from here."""
from __future__ import annotations

from pypto_pro.language import dtypes as D
from pypto_pro.ops.cpp import NoCpp
from pypto_pro.ops.vf.cpp import PART, _half, named


def _vpack(i, e):
    """The register pack: ``vpack(dst, src, LOWER | HIGHER)``; a 64-bit source as EmitVFPack's sequence:
    a zero ``uint32_t`` register, then ``vdintlv`` of the source's words with it (LOWER: source first, so
    the even words, the low halves, fill the lower half of the destination; HIGHER: zeros first)."""
    if i.args[0].dtype.bits != 64:
        return _half("vpack")(i, e)
    zero, dump = (e.temp("RegTensor<uint32_t>", None) for _ in range(2))
    m = e.temp("MaskReg", "pset_b32(PAT_ALL)")
    d, src = e.reg(i.dsts[0], D.DT_UINT32), e.reg(i.args[0], D.DT_UINT32)
    pair = f"{zero}, {src}" if i.attrs.get("upper") else f"{src}, {zero}"
    return [f"vdup({zero}, 0, {m}, MODE_ZEROING);", f"vdintlv({d}, {dump}, {pair});"]


def _vunpack(i, e):
    """The register unpack: ``vunpack(dst, src, LOWER | HIGHER)`` (EmitVFUnpack); a 64-bit result as its
    sequence: a pad register of the source's type (``vshrs`` by 31 for INT32: the sign words; else 0),
    then ``vintlv`` of source and pad into the destination (LOWER: its first output, HIGHER: its second)."""
    if i.dsts[0].dtype.bits != 64:
        return _half("vunpack")(i, e)
    sdt = i.args[0].dtype
    if sdt.is_float():
        raise NoCpp(f"a {sdt.name} source widened to 64 bits: the real EmitVFUnpack interleaves the float's "
                    "bits with a zero word, while vf.unpack converts the values")
    st = e.ctype(sdt)
    pad, dump = (e.temp(f"RegTensor<{st}>", None) for _ in range(2))
    m = e.temp("MaskReg", "pset_b32(PAT_ALL)")
    src, d = e.reg(i.args[0], sdt), e.reg(i.dsts[0], sdt)
    fill = f"vshrs({pad}, {src}, 31, {m}, MODE_ZEROING);" if sdt is D.DT_INT32 else \
        f"vdup({pad}, 0, {m}, MODE_ZEROING);"
    outs = f"{dump}, {d}" if i.attrs.get("upper") else f"{d}, {dump}"
    return [fill, f"vintlv({outs}, {src}, {pad});"]


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


vpack = named("vpack", _vpack, ("vdintlv", "vdup", "pset_b32"))
vunpack = named("vunpack", _vunpack, ("vintlv", "vshrs", "vdup", "pset_b32"))
vsqrt_hp = named("vsqrt", _vsqrt_hp)
pmov = named("pmov", _pmov)
movemask = named("movp_b32", _movemask, ("movp_b16",))
movvp = named("movvp", _movvp)
vmulscvt = named("vmulscvt", _vmulscvt)
