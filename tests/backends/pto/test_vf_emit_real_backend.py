"""The VF spellings written as the real PyPTO Pro backend writes them where PTO-ISA's a5 headers have no
use of the intrinsic (``ops/vf/cpp.REAL_NAMES``: hicann/pypto
``framework/src/interface/pypto_pro/backend/backend_cce_vf_ops.cpp``, the function each test names):
the emitted line of each op, operand order, mode and part enumerators included."""
from __future__ import annotations

import pytest

import pypto_pro.language as pl
from pypto_pro.language import Vf as vf

import vf_cpp_bodies as K

ALL = pl.MaskPattern.ALL
U8 = pl.TileType(shape=[K.ROWS, 4 * K.COLS], dtype=pl.DT_UINT8, target_memory=pl.MemorySpace.Vec)
U16 = pl.TileType(shape=[K.ROWS, 2 * K.COLS], dtype=pl.DT_UINT16, target_memory=pl.MemorySpace.Vec)
U32 = pl.TileType(shape=[K.ROWS, K.COLS], dtype=pl.DT_UINT32, target_memory=pl.MemorySpace.Vec)


def _lines(body, in_type=K.F32, out_type=K.F32, *calls: str) -> list[str]:
    """The instruction lines of the body's VEC_SCOPE that start with one of ``calls``."""
    text = K.vec_scope(K.kernel_cpp(K.kernel_for(body, in_type, out_type)))
    return [ln.strip() for ln in text.splitlines() if ln.strip().startswith(calls)]


@pl.vector_function
def _abs_sub(src, dst, n: pl.DT_INT64):
    m = vf.create_mask(pattern=ALL, dtype=pl.DT_FP32)
    x = vf.load_align(src, 0)
    y = vf.load_align(src, 64)
    z = vf.abs_sub(x, y, m)
    vf.store_align(dst, z, m, 0)


def test_abs_sub_is_vabsdif_zeroing():
    """EmitVFAbsSub: ``vabsdif(dst, src0, src1, mask, mode)``, ZEROING only."""
    assert _lines(_abs_sub, K.F32, K.F32, "vabsdif(") == ["vabsdif(vf_z, vf_x, vf_y, vf_m, MODE_ZEROING);"]


@pl.vector_function
def _sqrt_hp(src, dst, n: pl.DT_INT64):
    m = vf.create_mask(pattern=ALL, dtype=pl.DT_FP32)
    x = vf.load_align(src, 0)
    z = vf.sqrt(x, m, precision=True)
    w = vf.sqrt(z, m)
    vf.store_align(dst, w, m, 0)


def test_high_precision_sqrt_takes_the_specific_mode_as_a_template_argument():
    """EmitVFSqrt with precision=True: a ``SqrtSpecificMode {ZEROING, true}`` of static storage, then
    ``vsqrt<float, &mode>(dst, src, mask)``; the plain sqrt keeps its mode operand."""
    got = _lines(_sqrt_hp, K.F32, K.F32, "static constexpr", "vsqrt")
    assert got == ["static constexpr AscendC::Reg::SqrtSpecificMode vf_n = {AscendC::Reg::MaskMergeMode::ZEROING, true};",
                   "vsqrt<float, &vf_n>(vf_z, vf_x, vf_m);",
                   "vsqrt(vf_w, vf_z, vf_m, MODE_ZEROING);"], got


@pl.vector_function
def _mask_moves(src, dst, n: pl.DT_INT64):
    m = vf.create_mask(pattern=ALL, dtype=pl.DT_FP32)
    half = vf.create_mask(pattern=pl.MaskPattern.H, dtype=pl.DT_FP32)
    a = vf.move(m)
    b = vf.move(m, half)
    x = vf.load_align(src, 0)
    y = vf.select(x, x, a)
    vf.store_align(dst, y, b, 0)


def test_mask_move_is_pmov_with_and_without_a_selecting_mask():
    """EmitVFMove's mask form: ``pmov(dst, src)`` and ``pmov(dst, src, mask)``."""
    assert _lines(_mask_moves, K.F32, K.F32, "pmov(") == ["pmov(vf_a, vf_m);", "pmov(vf_b, vf_m, vf_half);"]


@pl.vector_function
def _unpack(src, dst, n: pl.DT_INT64):
    m = vf.create_mask(pattern=ALL, dtype=pl.DT_UINT32)
    x = vf.load_align(src, 0, dtype=pl.DT_UINT16)
    lo = vf.unpack(x, part=pl.PackPart.LOWER, dtype=pl.DT_UINT32)
    hi = vf.unpack(x, part=pl.PackPart.UPPER, dtype=pl.DT_UINT32)
    s = vf.add(lo, hi, m)
    vf.store_align(dst, s, m, 0)


def test_register_unpack_is_vunpack_lower_or_higher():
    """EmitVFUnpack (a result under 64 bits): ``vunpack(dst, src, LOWER | HIGHER)``."""
    assert _lines(_unpack, U16, U32, "vunpack(") == ["vunpack(vf_lo, vf_x, LOWER);", "vunpack(vf_hi, vf_x, HIGHER);"]


@pl.vector_function
def _histograms(src, dst, n: pl.DT_INT64):
    m8 = vf.create_mask(pattern=ALL, dtype=pl.DT_UINT8)
    m16 = vf.create_mask(pattern=ALL, dtype=pl.DT_UINT16)
    x = vf.load_align(src, 0, dtype=pl.DT_UINT8)
    h = vf.full(0, m16, dtype=pl.DT_UINT16)
    h = vf.histograms(x, m8, bin_type=pl.BinType.BIN0, hist_type=pl.HistType.FREQUENCY)
    g = vf.full(0, m16, dtype=pl.DT_UINT16)
    g = vf.histograms(x, m8, bin_type=pl.BinType.BIN1, hist_type=pl.HistType.ACCUMULATE)
    vf.store_align(dst, h, m16, 0)
    vf.store_align(dst, g, m16, 128)


def test_frequency_histograms_are_dhistv2_accumulate_chistv2():
    """EmitVFHistograms: FREQUENCY -> ``dhistv2``, ACCUMULATE -> ``chistv2``, ``(dst, src, mask, Bin_N0 | Bin_N1)``."""
    got = _lines(_histograms, U8, U16, "dhistv2(", "chistv2(")
    assert got == ["dhistv2(vf_h, vf_x, vf_m8, Bin_N0);", "chistv2(vf_g, vf_x, vf_m8, Bin_N1);"], got


@pl.vector_function
def _muls_cast(src, dst, n: pl.DT_INT64):
    m = vf.create_mask(pattern=ALL, dtype=pl.DT_FP32)
    m16 = vf.create_mask(pattern=ALL, dtype=pl.DT_FP16)
    x = vf.load_align(src, 0)
    h = vf.muls_cast(x, 0.5, m, dtype=pl.DT_FP16)
    o = vf.muls_cast(x, 2.0, m, dtype=pl.DT_FP16, layout=pl.CastLayout.ONE)
    vf.store_align(dst, h, m16, 0)
    vf.store_align(dst, o, m16, 128)


def test_muls_cast_is_vmulscvt_with_the_layout_as_part():
    """EmitVFMulsCast: ``vmulscvt(dst, src, scalar, mask, part)``, layout ZERO -> PART_EVEN, ONE -> PART_ODD."""
    got = [ln.replace("0.500000f", "0.5f").replace("2.000000f", "2.0f") for ln in _lines(_muls_cast, K.F32, K.F16, "vmulscvt(")]
    assert got == ["vmulscvt(vf_h, vf_x, static_cast<float>(0.5f), vf_m, PART_EVEN);",
                   "vmulscvt(vf_o, vf_x, static_cast<float>(2.0f), vf_m, PART_ODD);"], got


@pl.vector_function
def _mask_sprs(src, dst, n: pl.DT_INT64):
    a = vf.get_mask_spr(width=pl.MaskWidth.B32)
    b = vf.get_mask_spr(width=pl.MaskWidth.B16)
    x = vf.load_align(src, 0)
    y = vf.load_align(src, 0, dtype=pl.DT_UINT32)
    g = vf.mask_gen_with_reg_tensor(y, offset=3)
    vf.store_align(dst, x, a, 0)
    vf.store_align(dst, x, g, 64)
    z = vf.load_align(src, 0, dtype=pl.DT_FP16)
    vf.store_align(dst, z, b, 128)


def test_mask_spr_reads_are_movp_and_register_bits_movvp():
    """EmitVFGetMaskSpr: ``movp_b32()`` / ``movp_b16()``; EmitVFMaskGenWithRegTensor:
    ``movvp(dst, (RegTensor<uint32_t>&)src, offset)``."""
    got = _lines(_mask_sprs, K.F32, K.F32, "vf_a =", "vf_b =", "movvp(")
    assert got == ["vf_a = movp_b32();", "vf_b = movp_b16();", "movvp(vf_g, (RegTensor<uint32_t>&)vf_y, 3);"], got


I64 = pl.TileType(shape=[K.ROWS, K.COLS // 2], dtype=pl.DT_INT64, target_memory=pl.MemorySpace.Vec)


def _arange_body(dt, order):
    @pl.vector_function
    def body(src, dst, n: pl.DT_INT64):
        r = vf.arange(5, dtype=dt, index_order=order)  # (no store: PTO-ISA has no 64-bit predicate to store with)
    return body


def test_arange_is_vci_with_unsigned_lanes_through_a_signed_reference():
    """EmitVFArange: vci has signed and float forms only, so a uint32 register is passed as int32."""
    assert _lines(_arange_body(pl.DT_UINT32, pl.IndexOrder.INCREASE_ORDER), U32, U32, "vci(") == [
        "vci((RegTensor<int32_t>&)vf_r, static_cast<int32_t>(5), INC_ORDER);"]
    assert _lines(_arange_body(pl.DT_FP32, pl.IndexOrder.DECREASE_ORDER), K.F32, K.F32, "vci(") == [
        "vci(vf_r, static_cast<float>(5.000000f), DEC_ORDER);"]


@pytest.mark.parametrize("order", [pl.IndexOrder.INCREASE_ORDER, pl.IndexOrder.DECREASE_ORDER])
def test_64_bit_arange_is_the_real_backends_int32_ramp_interleaved_then_vadds(order):
    """EmitVFArange for INT64 / UINT64: vci of an int32 ramp (vneg when decreasing), vdup of zero high
    words, vintlv of the two as uint32 lanes into the destination, vadds of the start."""
    got = _lines(_arange_body(pl.DT_INT64, order), I64, I64, "RegTensor<int32_t> vf_u", "MaskReg vf_n", "vci(",
                 "vneg(", "vdup(", "vintlv(", "vadds(")
    want = ["RegTensor<int32_t> vf_u;", "RegTensor<int32_t> vf_u_1;", "RegTensor<int32_t> vf_u_2;",
            "MaskReg vf_n = pset_b32(PAT_ALL);", "vci(vf_u, 0, INC_ORDER);"]
    if order is pl.IndexOrder.DECREASE_ORDER:
        want.append("vneg(vf_u, vf_u, vf_n, MODE_ZEROING);")
    want += ["vdup(vf_u_1, 0, vf_n, MODE_ZEROING);",
             "vintlv((RegTensor<uint32_t>&)vf_r, (RegTensor<uint32_t>&)vf_u_2, (RegTensor<uint32_t>&)vf_u, (RegTensor<uint32_t>&)vf_u_1);",
             "vadds(vf_r, vf_r, static_cast<int64_t>(5), vf_n, MODE_ZEROING);"]
    assert got == want, got


@pl.vector_function
def _store_unalign_u32(src, dst, n: pl.DT_INT64):
    m = vf.create_mask(pattern=ALL, dtype=pl.DT_UINT32)
    x = vf.load_align(src, 0, dtype=pl.DT_UINT32)
    u = vf.unalign_reg_for_store()
    vf.store_unalign(dst + 3, x, u, 5)
    vf.store_unalign_post(dst, u)


def test_unaligned_store_of_unsigned_lanes_goes_through_signed_references():
    """EmitVFStoreUnAlign: a5's vstus takes signed 8- / 16- / 32-bit data, so uint32 lanes and their
    pointer are cast to int32 (the same bytes)."""
    got = _lines(_store_unalign_u32, U32, U32, "__ubuf__ int32_t*", "vstus(", "vstas(")
    assert got == ["__ubuf__ int32_t* vf_n = (__ubuf__ int32_t*)vf_ty + 3;",
                   "vstus(vf_u, 5, (RegTensor<int32_t>&)vf_x, vf_n, POST_UPDATE);",
                   "vstas(vf_u, vf_n, 0, POST_UPDATE);"], got
