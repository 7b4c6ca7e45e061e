"""Golden tests of the PTO-ISA C++ of VF bodies (``backends/pto/vf.py``): the ``__VEC_SCOPE__`` block
of real-style ``@pl.vector_function`` bodies (``vf_cpp_bodies.py``: a softmax row, fp16 exp_sub, a masked
tail with compare / select, casts, reductions), located CompileErrors per op, and the a2a3 / CPU-model
limits. Where PTO-ISA uses each spelling: ``test_vf_names.CITES`` (e.g. ``vlds(.., NORM)`` /
``vsts(.., NORM_B32, mask)`` / ``plt_b32(n, POST_UPDATE)`` npu/a5/TBinOp.hpp and common.hpp; ``vcmax`` /
``vcadd(.., MODE_ZEROING)`` npu/a5/TRowReduce*.hpp; ``vcvt(.., ROUND_R, RS_DISABLE, PART_EVEN)`` and
``vcvt(.., PART_EVEN)`` npu/a5/TCvt.hpp; ``vexpdif`` docs/isa/vector/ops/sfu-and-dsa-ops/vexpdif.md;
``vcgmax`` npu/a5/TRowReduce / docs reduction-ops.md; ``vdup(.., POS_LOWEST, ..)`` npu/a5 headers)."""
from __future__ import annotations

import pytest

import pypto_pro.language as pl
from pypto_pro.backends.pto import emit_kernel
from pypto_pro.errors import CompileError
from pypto_pro.language import Vf as vf

import vf_cpp_bodies as K

GOLDEN = {
    "softmax_row": """\
__VEC_SCOPE__ {  // @pl.vector_function softmax_row
    MaskReg vf_full;
    RegTensor<float> vf_mx;
    MaskReg vf_m;
    RegTensor<float> vf_x;
    RegTensor<float> vf_top1;
    RegTensor<float> vf_top;
    RegTensor<float> vf_acc;
    RegTensor<float> vf_d;
    RegTensor<float> vf_e;
    RegTensor<float> vf_total1;
    RegTensor<float> vf_total;
    RegTensor<float> vf_y;
    int64_t n_regs = 0;
    vf_full = pset_b32(PAT_ALL);
    n_regs = (((n_cols + 64) - 1) / 64);
    for (uint16_t r = 0; r < 8; ++r) {
        vdup(vf_mx, static_cast<float>(-300000000000000012135895401846682943488.000000f), vf_full, MODE_ZEROING);
        for (uint16_t k = 0; k < (uint16_t)(n_regs); ++k) {
            uint32_t vf_n = static_cast<uint32_t>((n_cols - (k * 64)));
            vf_m = plt_b32(vf_n, POST_UPDATE);
            vlds(vf_x, vf_tx, (0 + ((r * 128) + (k * 64))), NORM);
            vmax(vf_mx, vf_mx, vf_x, vf_m, MODE_MERGING);
        }
        vcmax(vf_top1, vf_mx, vf_full, MODE_ZEROING);
        vdup(vf_top, vf_top1, vf_full, POS_LOWEST, MODE_ZEROING);
        vdup(vf_acc, static_cast<float>(0.000000f), vf_full, MODE_ZEROING);
        for (uint16_t k_1 = 0; k_1 < (uint16_t)(n_regs); ++k_1) {
            uint32_t vf_n_1 = static_cast<uint32_t>((n_cols - (k_1 * 64)));
            vf_m = plt_b32(vf_n_1, POST_UPDATE);
            vlds(vf_x, vf_tx, (0 + ((r * 128) + (k_1 * 64))), NORM);
            vsub(vf_d, vf_x, vf_top, vf_m, MODE_ZEROING);
            vexp(vf_e, vf_d, vf_m, MODE_ZEROING);
            vadd(vf_acc, vf_acc, vf_e, vf_m, MODE_MERGING);
            vsts(vf_e, vf_ty, (0 + ((r * 128) + (k_1 * 64))), NORM_B32, vf_m);
        }
        vcadd(vf_total1, vf_acc, vf_full, MODE_ZEROING);
        vdup(vf_total, vf_total1, vf_full, POS_LOWEST, MODE_ZEROING);
        mem_bar(VST_VLD);
        for (uint16_t k_2 = 0; k_2 < (uint16_t)(n_regs); ++k_2) {
            uint32_t vf_n_2 = static_cast<uint32_t>((n_cols - (k_2 * 64)));
            vf_m = plt_b32(vf_n_2, POST_UPDATE);
            vlds(vf_e, vf_ty, (0 + ((r * 128) + (k_2 * 64))), NORM);
            vdiv(vf_y, vf_e, vf_total, vf_m, MODE_ZEROING);
            vsts(vf_y, vf_ty, (0 + ((r * 128) + (k_2 * 64))), NORM_B32, vf_m);
        }
    }
}
""",
    "exp_sub_fp16": """\
__VEC_SCOPE__ {  // @pl.vector_function exp_sub_fp16
    MaskReg vf_m16;
    MaskReg vf_m32;
    RegTensor<half> vf_mx;
    RegTensor<half> vf_x;
    RegTensor<float> vf_even;
    RegTensor<float> vf_odd;
    vf_m16 = pset_b16(PAT_ALL);
    vf_m32 = pset_b32(PAT_ALL);
    vlds(vf_mx, vf_tx, 0, BRC_B16);
    for (uint16_t r = 0; r < 8; ++r) {
        vlds(vf_x, vf_tx, (0 + ((r * 256) + 0)), NORM);
        vexpdif(vf_even, vf_x, vf_mx, vf_m16, PART_EVEN);
        vexpdif(vf_odd, vf_x, vf_mx, vf_m16, PART_ODD);
        vsts(vf_even, vf_ty, (0 + ((r * 128) + 0)), NORM_B32, vf_m32);
        vsts(vf_odd, vf_ty, (0 + ((r * 128) + 64)), NORM_B32, vf_m32);
    }
}
""",
    "masked_tail": """\
__VEC_SCOPE__ {  // @pl.vector_function masked_tail
    MaskReg vf_m;
    RegTensor<float> vf_x;
    RegTensor<float> vf_y;
    MaskReg vf_pos;
    RegTensor<float> vf_z;
    for (uint16_t r = 0; r < 8; ++r) {
        for (uint16_t k = 0; k < (uint16_t)((((n_cols + 64) - 1) / 64)); ++k) {
            uint32_t vf_n = static_cast<uint32_t>((n_cols - (k * 64)));
            vf_m = plt_b32(vf_n, POST_UPDATE);
            vlds(vf_x, vf_tx, (0 + ((r * 128) + (k * 64))), NORM);
            vmuls(vf_y, vf_x, static_cast<float>(0.500000f), vf_m, MODE_ZEROING);
            vcmps_gt(vf_pos, vf_x, static_cast<float>(0.000000f), vf_m);
            vsel(vf_z, vf_x, vf_y, vf_pos);
            vsts(vf_z, vf_ty, (0 + ((r * 128) + (k * 64))), NORM_B32, vf_m);
        }
    }
}
""",
    "cast_rows": """\
__VEC_SCOPE__ {  // @pl.vector_function cast_rows
    MaskReg vf_m32;
    RegTensor<float> vf_x;
    RegTensor<half> vf_h;
    MaskReg vf_m16;
    RegTensor<float> vf_back;
    vf_m32 = pset_b32(PAT_ALL);
    for (uint16_t r = 0; r < 8; ++r) {
        vlds(vf_x, vf_tx, (0 + ((r * 128) + 0)), NORM);
        vcvt(vf_h, vf_x, vf_m32, ROUND_R, RS_DISABLE, PART_EVEN);
        vf_m16 = pset_b16(PAT_ALL);
        vcvt(vf_back, vf_h, vf_m16, PART_EVEN);
        vsts(vf_back, vf_ty, (0 + ((r * 128) + 0)), NORM_B32, vf_m32);
    }
}
""",
    "reductions": """\
__VEC_SCOPE__ {  // @pl.vector_function reductions
    MaskReg vf_m;
    MaskReg vf_one;
    RegTensor<float> vf_x;
    RegTensor<float> vf_s;
    RegTensor<float> vf_hi;
    RegTensor<float> vf_lo;
    RegTensor<float> vf_blocks;
    vf_m = pset_b32(PAT_ALL);
    vf_one = pset_b32(PAT_VL1);
    for (uint16_t r = 0; r < 8; ++r) {
        vlds(vf_x, vf_tx, (0 + ((r * 128) + 0)), NORM);
        vcadd(vf_s, vf_x, vf_m, MODE_ZEROING);
        vcmax(vf_hi, vf_x, vf_m, MODE_ZEROING);
        vcmin(vf_lo, vf_x, vf_m, MODE_ZEROING);
        vcgmax(vf_blocks, vf_x, vf_m, MODE_ZEROING);
        vsts(vf_s, vf_ty, (0 + ((r * 128) + 0)), NORM_B32, vf_one);
        vsts(vf_hi, vf_ty, (0 + ((r * 128) + 8)), NORM_B32, vf_one);
        vsts(vf_lo, vf_ty, (0 + ((r * 128) + 16)), NORM_B32, vf_one);
        vsts(vf_blocks, vf_ty, (0 + ((r * 128) + 64)), NORM_B32, vf_m);
    }
}
""",
}


CASES = {"softmax_row": (K.softmax_row, K.F32), "exp_sub_fp16": (K.exp_sub_fp16, K.F16),
         "masked_tail": (K.masked_tail, K.F32), "cast_rows": (K.cast_rows, K.F32), "reductions": (K.reductions, K.F32)}


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_vec_scope(name):
    body, in_type = CASES[name]
    assert K.vec_scope(K.kernel_cpp(K.kernel_for(body, in_type))) == GOLDEN[name].rstrip("\n")


def test_call_site_binds_ub_pointers_and_scalars_before_the_scope_and_guards_the_cpu_model():
    cpp = K.kernel_cpp(K.kernel_for(K.softmax_row))
    lines = [ln.strip() for ln in cpp.splitlines()]
    at = lines.index(next(ln for ln in lines if ln.startswith("__VEC_SCOPE__")))
    assert lines[at - 6:at] == [
        "#if defined(__CPU_SIM)", lines[at - 5], "#else",
        "__ubuf__ float* vf_tx = (__ubuf__ float*)tx.data();",
        "__ubuf__ float* vf_ty = (__ubuf__ float*)ty.data();",
        "const int64_t n_cols = n;"]
    assert lines[at - 5].startswith("#error") and "CPU model" in lines[at - 5]
    assert "#endif" in lines[at:]


def test_every_instruction_line_points_at_its_vf_source_line():
    text = K.vec_scope(K.kernel_cpp(K.kernel_for(K.masked_tail)), strip_locations=False)
    instr = [ln for ln in text.splitlines() if ln.strip().startswith(("vlds(", "vsts(", "vmuls(", "vcmps_", "vsel("))]
    assert len(instr) == 5 and all("  // vf_cpp_bodies.py:" in ln for ln in instr)


def _vf_error(body, match: str, line_of: str):
    k = K.kernel_for(body)
    with pytest.raises(CompileError, match=match) as exc:
        K.kernel_cpp(k)
    import inspect
    src, first = inspect.getsourcelines(body)
    want = first + next(i for i, ln in enumerate(src) if line_of in ln)
    assert exc.value.loc is not None and exc.value.loc.line == want
    return exc.value


@pl.vector_function
def _ar_stream_body(src, dst, n: pl.DT_INT64):
    m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    x = vf.load_align(src, 0)
    y = vf.exp(x, m)
    vf.clear_spr()
    ureg = vf.unalign_reg_for_store()
    pos = vf.gt(y, 1.0, m)
    packed = vf.squeeze(y, pos, gather_mode=pl.SqueezeMode.STORE_REG)
    vf.store_unalign(dst, packed, ureg)
    vf.store_unalign_post(dst, ureg)


@pl.vector_function
def _log2_body(src, dst, n: pl.DT_INT64):
    m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    x = vf.load_align(src, 0)
    z = vf.log2(x, m)
    w = vf.log10(z, m)
    vf.store_align(dst, w, m, 0)


@pl.vector_function
def _first_element_fp16(src, dst, n: pl.DT_INT64):
    m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP16)
    x = vf.load_align(src, 0, dtype=pl.DT_FP16)
    vf.store_align(dst, x, m, 0, dist=pl.StoreDist.FIRST_ELEMENT)


def test_a_form_without_a_spelling_is_a_located_error_naming_the_op():
    err = _vf_error(_ar_stream_body, r"cannot emit vf\.store_unalign: the AR-stream form", "vf.store_unalign(dst, packed")
    assert "vf.exp" not in str(err)


def test_log2_log10_are_vln_then_vmuls():
    """As the real backend's EmitVFLog2 / EmitVFLog10: vln into the destination, then vmuls by 1/ln 2 (1/ln 10)."""
    text = K.kernel_cpp(K.kernel_for(_log2_body))
    lines = [ln.split("//")[0].strip() for ln in text.splitlines() if "vln(" in ln or "vmuls(" in ln]
    assert lines == ["vln(vf_z, vf_x, vf_m, MODE_ZEROING);", "vmuls(vf_z, vf_z, 1.4426950408889634f, vf_m, MODE_ZEROING);",
                     "vln(vf_w, vf_z, vf_m, MODE_ZEROING);", "vmuls(vf_w, vf_w, 0.4342944819032518f, vf_m, MODE_ZEROING);"], lines


def test_a_spelling_that_refuses_one_case_names_the_op_and_the_case():
    k = K.kernel_for(_first_element_fp16, K.F16, K.F16)
    with pytest.raises(CompileError, match=r"vf\.store_align: distribution FIRST_ELEMENT for DT_FP16"):
        K.kernel_cpp(k)


def test_vf_on_a2a3_is_a_located_error():
    k = K.kernel_for(K.masked_tail)
    progs = k.compile().programs
    with pytest.raises(CompileError, match="a5 only; a2a3 has no VF unit"):
        emit_kernel(progs, k.name, "a2a3")


@pl.vector_function
def _blocks_body(src, dst, n: pl.DT_INT64):
    m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    x = vf.load_align(src, m, data_copy_mode=pl.DataCopyMode.DATA_BLOCK_COPY, block_stride=2)
    vf.store_align(dst, x, m, block_stride=3, data_copy_mode=pl.DataCopyMode.DATA_BLOCK_COPY)


def test_datablock_copies_pack_the_block_stride_into_the_high_half_of_the_stride_word():
    # PTO-ISA a5 TMov.hpp: cfgStride = (blockStride << 16) | repeatStride, the POST_UPDATE overload; a
    # pointer of its own (repeat stride 0) keeps the tile pointer where the VF source left it
    text = K.vec_scope(K.kernel_cpp(K.kernel_for(_blocks_body)))
    lines = [ln.strip() for ln in text.splitlines()]
    load = next(i for i, ln in enumerate(lines) if ln.startswith("vsldb("))
    store = next(i for i, ln in enumerate(lines) if ln.startswith("vsstb("))
    assert lines[load - 1] == "__ubuf__ float* vf_n = vf_tx + 0;"
    assert lines[load] == "vsldb(vf_x, vf_n, (static_cast<uint32_t>(2) << 16u), vf_m, POST_UPDATE);"
    assert lines[store - 1] == "__ubuf__ float* vf_n_1 = vf_ty + 0;"
    assert lines[store] == "vsstb(vf_x, vf_n_1, (static_cast<uint32_t>(3) << 16u), vf_m, POST_UPDATE);"


@pl.vector_function
def _blocks_b64_body(src, dst, n: pl.DT_INT64):
    m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_INT32)  # a b32 mask: no 64-bit pset
    x = vf.load_align(src, m, data_copy_mode=pl.DataCopyMode.DATA_BLOCK_COPY, block_stride=1)
    vf.store_align(dst, x, m, block_stride=1, data_copy_mode=pl.DataCopyMode.DATA_BLOCK_COPY)


def test_datablock_copies_of_64_bit_elements_are_a_located_error():
    i64 = pl.TileType(shape=[8, 32], dtype=pl.DT_INT64, target_memory=pl.MemorySpace.Vec)
    k = K.kernel_for(_blocks_b64_body, i64, i64)
    with pytest.raises(CompileError, match=r"vsldb / vsstb take 8-, 16- or 32-bit elements, not DT_INT64"):
        K.kernel_cpp(k)


def _gather_blocks(idx_dt):
    @pl.vector_function
    def body(src, dst, n: pl.DT_INT64):
        m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
        ix = vf.load_align(dst, 0, dtype=idx_dt)
        g = vf.gather(src, ix, m, data_copy_mode=pl.DataCopyMode.DATA_BLOCK_LOAD)
        vf.store_align(dst, g, m, 0)
    return body


def test_block_gather_is_vgatherb_with_32_bit_block_offsets():
    # PTO-ISA a5 TGatherB.hpp -> pto_vgatherb -> vgatherb(dst, base, idx, mask) (common/arch_cce_intrinsic.hpp)
    text = K.vec_scope(K.kernel_cpp(K.kernel_for(_gather_blocks(pl.DT_UINT32))))
    line = next(ln.strip() for ln in text.splitlines() if "vgatherb(" in ln)
    assert line == "vgatherb(vf_g, vf_tx + 0, vf_ix, vf_m);"


def test_block_gather_with_16_bit_offsets_is_a_located_error():
    _vf_error(_gather_blocks(pl.DT_UINT16), r"vgatherb takes 32-bit block offsets, not DT_UINT16", "vf.gather(")


@pl.vector_function
def _mask_store_body(src, dst, n: pl.DT_INT64):
    m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    x = vf.load_align(src, 0)
    ge = vf.ge(x, 0.0, m)
    u = vf.unalign_reg_for_store()
    vf.store_unalign(dst, ge, u)
    vf.store_unalign_post(dst, u)


def test_mask_unaligned_store_is_pstu_flushed_by_vstas_on_a_uint32_pointer():
    # PTO-ISA a6 TQuant.hpp: pstu(ureg, preg, (__ubuf__ uint32_t*&)ptr); vstas(ureg, ptr, 0, POST_UPDATE)
    lines = [ln.strip() for ln in K.vec_scope(K.kernel_cpp(K.kernel_for(_mask_store_body))).splitlines()]
    at = next(i for i, ln in enumerate(lines) if ln.startswith("pstu("))
    assert lines[at - 2:at + 2] == [
        "UnalignReg vf_u;", "__ubuf__ uint32_t* vf_n = (__ubuf__ uint32_t*)vf_ty + 0;",
        "pstu(vf_u, vf_ge, vf_n);", "vstas(vf_u, vf_n, 0, POST_UPDATE);"]
