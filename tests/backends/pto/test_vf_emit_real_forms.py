"""VF forms spelled as the real PyPTO Pro backend writes them (hicann/pypto ``backend_cce_vf_ops.cpp``, the
``EmitVF*`` function each test names) where PTO-ISA's a5 headers agree or say nothing: the widening
gathers, the 8- / 4-bit ``vcvt`` forms (checked against PTO-ISA's ``TCvt.hpp`` as well), the 64-bit pack /
unpack sequences, ``vdup`` of the highest lane, ``PAT_VL64`` and every ``MemBarMode``; and the located
error of each form still refused. Nothing here compiles the C++ (no bisheng): the lines are checked as text."""
from __future__ import annotations

import pytest

import pypto_pro.language as pl
from pypto_pro.errors import CompileError
from pypto_pro.language import Vf as vf

import vf_cpp_bodies as K

ALL = pl.MaskPattern.ALL
ZERO, ONE, TWO, THREE = pl.CastLayout.ZERO, pl.CastLayout.ONE, pl.CastLayout.TWO, pl.CastLayout.THREE


def _tile(dt, cols: int) -> pl.TileType:
    return pl.TileType(shape=[K.ROWS, cols], dtype=dt, target_memory=pl.MemorySpace.Vec)


U8, U32 = _tile(pl.DT_UINT8, 4 * K.COLS), _tile(pl.DT_UINT32, K.COLS)


def _lines(body, in_type, out_type, *calls: str) -> list[str]:
    text = K.vec_scope(K.kernel_cpp(K.kernel_for(body, in_type, out_type)))
    return [ln.strip() for ln in text.splitlines() if ln.strip().startswith(calls)]


def _refused(body, in_type, out_type, pattern: str) -> None:
    with pytest.raises(CompileError, match=pattern) as err:
        K.kernel_cpp(K.kernel_for(body, in_type, out_type))
    assert "test_vf_emit_real_forms.py:" in str(err.value)  # at the user's line in the VF body


# ---- gathers (EmitVFGather) -----------------------------------------------------------------------


def _gather(idx_dt):
    @pl.vector_function
    def body(src, dst, n: pl.DT_INT64):
        m = vf.create_mask(pattern=ALL, dtype=idx_dt)
        ix = vf.load_align(src, 0, dtype=idx_dt)
        g = vf.gather(src, ix, m)
    return body


@pytest.mark.parametrize("tile_dt,cols,idx_dt,want", [
    # 8-bit data: the bytes zero-extended into 16-bit lanes, through int16 / int8 references
    (pl.DT_UINT8, 512, pl.DT_UINT16, "vgather2((RegTensor<int16_t>&)vf_g, (__ubuf__ int8_t*)vf_tx + 0, vf_ix, vf_m);"),
    (pl.DT_INT8, 512, pl.DT_UINT16, "vgather2(vf_g, vf_tx + 0, vf_ix, vf_m);"),
    # 16-bit data with u16 indices: int16 references
    (pl.DT_FP16, 256, pl.DT_UINT16, "vgather2((RegTensor<int16_t>&)vf_g, (__ubuf__ int16_t*)vf_tx + 0, vf_ix, vf_m);"),
    (pl.DT_UINT16, 256, pl.DT_UINT16, "vgather2((RegTensor<int16_t>&)vf_g, (__ubuf__ int16_t*)vf_tx + 0, vf_ix, vf_m);"),
    # 16-bit data with u32 indices: vgather2_bc (was a plain vgather2, which reads 16-bit lanes)
    (pl.DT_BF16, 256, pl.DT_UINT32, "vgather2_bc((RegTensor<int16_t>&)vf_g, (__ubuf__ int16_t*)vf_tx + 0, vf_ix, vf_m);"),
    (pl.DT_INT16, 256, pl.DT_UINT32, "vgather2_bc(vf_g, vf_tx + 0, vf_ix, vf_m);"),
    # 32-bit data unchanged (PTO-ISA's TGather_b32)
    (pl.DT_FP32, 128, pl.DT_UINT32, "vgather2(vf_g, vf_tx + 0, vf_ix, vf_m);"),
])
def test_gather_is_vgather2_or_vgather2_bc_with_the_real_backends_references(tile_dt, cols, idx_dt, want):
    t = _tile(tile_dt, cols)
    assert _lines(_gather(idx_dt), t, t, "vgather2") == [want]


# ---- vcvt: the 8- / 4-bit forms (EmitVFCast and PTO-ISA's TCvt.hpp) ---------------------------------


def _cast(sdt, ddt, layout):
    @pl.vector_function
    def body(src, dst, n: pl.DT_INT64):
        m = vf.create_mask(pattern=ALL, dtype=sdt)
        x = vf.load_align(src, 0, dtype=sdt)
        y = vf.astype(x, m, dtype=ddt, layout=layout)
    return body


@pytest.mark.parametrize("sdt,ddt,layout,ops", [
    (pl.DT_INT8, pl.DT_INT16, ONE, "PART_ODD"),                            # cast8to16 (EXPAND)
    (pl.DT_UINT8, pl.DT_UINT16, ZERO, "PART_EVEN"),
    (pl.DT_INT8, pl.DT_FP16, ONE, "PART_ODD"),
    (pl.DT_UINT8, pl.DT_FP16, ZERO, "PART_EVEN"),
    (pl.DT_FP16, pl.DT_INT8, ONE, "ROUND_R, RS_DISABLE, PART_ODD"),        # cast16to8 (ROUND_SAT_PART)
    (pl.DT_FP16, pl.DT_UINT8, ZERO, "ROUND_R, RS_DISABLE, PART_EVEN"),
    (pl.DT_INT16, pl.DT_UINT8, ONE, "RS_DISABLE, PART_ODD"),               # cast16to8 (SAT_PART)
    (pl.DT_FP16, pl.DT_HF8, ONE, "ROUND_A, RS_DISABLE, PART_ODD"),         # cast16toH8 (CAST_ROUND default)
    (pl.DT_FP32, pl.DT_FP8E4M3FN, TWO, "ROUND_R, RS_ENABLE, PART_P2"),     # cast32to8 / TQuant (saturated)
    (pl.DT_FP32, pl.DT_FP8E5M2, ZERO, "ROUND_R, RS_ENABLE, PART_P0"),
    (pl.DT_FP32, pl.DT_HF8, THREE, "ROUND_A, RS_ENABLE, PART_P3"),         # cast32toH8
    (pl.DT_BF16, pl.DT_FP4E2M1, ONE, "ROUND_R, PART_P1"),                  # castBf16toFp4
    (pl.DT_BF16, pl.DT_FP4E1M2, THREE, "ROUND_R, PART_P3"),
    (pl.DT_FP8E4M3FN, pl.DT_FP32, ONE, "PART_P1"),                         # cast8to32
    (pl.DT_FP8E5M2, pl.DT_FP32, THREE, "PART_P3"),
    (pl.DT_HF8, pl.DT_FP32, TWO, "PART_P2"),
    (pl.DT_FP4E2M1, pl.DT_BF16, TWO, "PART_P2"),                           # castFp4toBf16
    (pl.DT_FP4E1M2, pl.DT_BF16, ZERO, "PART_P0"),
])
def test_8_and_4_bit_vcvt_takes_the_operands_both_backends_write(sdt, ddt, layout, ops):
    assert _lines(_cast(sdt, ddt, layout), U8, U8, "vcvt(") == [f"vcvt(vf_y, vf_x, vf_m, {ops});"]


def test_a_rounding_mode_and_saturation_reach_the_8_bit_vcvt():
    @pl.vector_function
    def body(src, dst, n: pl.DT_INT64):
        m = vf.create_mask(pattern=ALL, dtype=pl.DT_FP16)
        x = vf.load_align(src, 0, dtype=pl.DT_FP16)
        y = vf.astype(x, m, dtype=pl.DT_INT8, round_mode=pl.VFRoundMode.CAST_FLOOR, saturate=pl.SaturateMode.ON)
    assert _lines(body, U8, U8, "vcvt(") == ["vcvt(vf_y, vf_x, vf_m, ROUND_F, RS_ENABLE, PART_EVEN);"]


@pytest.mark.parametrize("sdt,ddt,why", [
    (pl.DT_HF8, pl.DT_FP16, r"TCvt\.hpp has no HF8 -> FP16 conversion"),
    (pl.DT_FP16, pl.DT_INT4, r"vcvt_f162s4 .*PTO-ISA has no INT4 conversion"),
    (pl.DT_INT16, pl.DT_INT4, r"no INT16 -> INT4 form"),
    (pl.DT_FP8E8M0, pl.DT_BF16, r"no FP8E8M0 conversion"),
    (pl.DT_BF16, pl.DT_FP8E8M0, r"no FP8E8M0 conversion"),
    (pl.DT_INT32, pl.DT_UINT8, r"writes RS, PART_P0 where the real EmitVFCast writes RS, PART_EVEN"),
    (pl.DT_INT8, pl.DT_INT32, r"cast8to32\) interleaves the bytes"),
    (pl.DT_INT16, pl.DT_INT8, (r"no DT_INT16 -> DT_INT8 vcvt to agree with the real EmitVFCast's "
                               r"vcvt\(dst, src, mask, RS, PART, MODE_ZEROING\)")),
    (pl.DT_UINT8, pl.DT_UINT32, r"no DT_UINT8 -> DT_UINT32 vcvt"),
    (pl.DT_INT8, pl.DT_UINT8, r"no DT_INT8 -> DT_UINT8 vcvt"),
])
def test_an_8_or_4_bit_vcvt_the_two_backends_do_not_agree_on_is_a_located_error(sdt, ddt, why):
    _refused(_cast(sdt, ddt, ZERO), U8, U8, r"cannot emit vf\.astype: astype .*" + why)


# ---- 64-bit pack / unpack (EmitVFPack / EmitVFUnpack) -------------------------------------------------


def _pack(name, sdt, ddt, part):
    @pl.vector_function
    def body(src, dst, n: pl.DT_INT64):
        x = vf.load_align(src, 0, dtype=pl.DT_UINT32)
        y = getattr(vf, name)(vf.bit_cast(x, dtype=sdt), part=part, dtype=ddt)
    return body


_SEQ = ("RegTensor<int32_t> vf_u", "RegTensor<uint32_t> vf_u", "MaskReg vf_n", "vdup(", "vshrs(", "vdintlv(",
        "vintlv(", "vpack(", "vunpack(")


@pytest.mark.parametrize("upper,pair", [(False, "vf_x, vf_u"), (True, "vf_u, vf_x")])
def test_a_64_bit_pack_is_vdintlv_with_a_zero_register(upper, pair):
    """EmitVFPack, 64-bit source: zero and dump uint32 registers, an all-lanes b32 mask, vdup of 0, then
    vdintlv of the source's words with the zeros (LOWER: source first; HIGHER: zeros first)."""
    part = pl.PackPart.UPPER if upper else pl.PackPart.LOWER
    got = _lines(_pack("pack", pl.DT_INT64, pl.DT_INT32, part), U32, U32, *_SEQ)
    assert got == ["RegTensor<uint32_t> vf_u;", "RegTensor<uint32_t> vf_u_1;", "MaskReg vf_n = pset_b32(PAT_ALL);",
                   "vdup(vf_u, 0, vf_n, MODE_ZEROING);",
                   f"vdintlv((RegTensor<uint32_t>&)vf_y, vf_u_1, {pair});"], got


def test_a_64_bit_unpack_of_int32_pads_with_the_sign_words():
    """EmitVFUnpack, INT32 -> 64 bits: ``vshrs(pad, src, 31)`` then vintlv of source and pad (LOWER: the
    first output is the destination)."""
    got = _lines(_pack("unpack", pl.DT_INT32, pl.DT_INT64, pl.PackPart.LOWER), U32, U32, *_SEQ)
    assert got == ["RegTensor<int32_t> vf_u;", "RegTensor<int32_t> vf_u_1;", "MaskReg vf_n = pset_b32(PAT_ALL);",
                   "vshrs(vf_u, (RegTensor<int32_t>&)vf_x, 31, vf_n, MODE_ZEROING);",
                   "vintlv((RegTensor<int32_t>&)vf_y, vf_u_1, (RegTensor<int32_t>&)vf_x, vf_u);"], got


def test_a_64_bit_unpack_of_uint32_upper_pads_with_zeros_into_the_second_output():
    got = _lines(_pack("unpack", pl.DT_UINT32, pl.DT_UINT64, pl.PackPart.UPPER), U32, U32, *_SEQ)
    assert got == ["RegTensor<uint32_t> vf_u;", "RegTensor<uint32_t> vf_u_1;", "MaskReg vf_n = pset_b32(PAT_ALL);",
                   "vdup(vf_u, 0, vf_n, MODE_ZEROING);",
                   "vintlv(vf_u_1, (RegTensor<uint32_t>&)vf_y, vf_x, vf_u);"], got


def test_a_float_source_widened_to_64_bits_is_a_located_error():
    """EmitVFUnpack would interleave an FP32's bits with zeros; vf.unpack converts the value."""
    _refused(_pack("unpack", pl.DT_FP32, pl.DT_INT64, pl.PackPart.LOWER), U32, U32,
             r"cannot emit vf\.unpack: a DT_FP32 source widened to 64 bits")


def test_narrower_pack_and_unpack_keep_their_single_instruction():
    assert _lines(_pack("pack", pl.DT_UINT32, pl.DT_UINT16, pl.PackPart.UPPER), U32, U32, *_SEQ) == [
        "vpack(vf_y, vf_x, HIGHER);"]
    assert _lines(_pack("unpack", pl.DT_UINT16, pl.DT_UINT32, pl.PackPart.LOWER), U32, U32, *_SEQ) == [
        "vunpack(vf_y, (RegTensor<uint16_t>&)vf_x, LOWER);"]


# ---- vdup POS_HIGHEST, PAT_VL64, MemBarMode (EmitVFDuplicate / EmitVFCreateMask / EmitVFMemBar) ------


@pl.vector_function
def _highest(src, dst, n: pl.DT_INT64):
    m = vf.create_mask(pattern=pl.MaskPattern.VL64, dtype=pl.DT_FP16)
    x = vf.load_align(src, 0)
    y = vf.full(x, m, pos=pl.DuplicatePos.HIGHEST, mode=pl.MergeMode.MERGING)
    z = vf.full(x, m)


def test_highest_lane_broadcast_is_vdup_pos_highest_and_vl64_is_pat_vl64():
    got = _lines(_highest, K.F32, K.F32, "vf_m =", "vdup(")
    assert got == ["vf_m = pset_b16(PAT_VL64);", "vdup(vf_y, vf_x, vf_m, POS_HIGHEST, MODE_MERGING);",
                   "vdup(vf_z, vf_x, vf_m, POS_LOWEST, MODE_ZEROING);"], got


@pytest.mark.parametrize("mode", list(pl.MemBarMode))
def test_every_mem_bar_mode_is_its_name(mode):
    @pl.vector_function
    def body(src, dst, n: pl.DT_INT64):
        vf.mem_bar(mode=mode)
    assert _lines(body, K.F32, K.F32, "mem_bar(") == [f"mem_bar({mode.name});"]
