"""Real-style ``@pl.vector_function`` bodies for the PTO-ISA C++ VF tests (``test_vf_emit.py``): each
is called from one a5 kernel that loads a tile, runs the body and stores the result."""
from __future__ import annotations

import re

import pypto_pro.language as pl
from pypto_pro.backends.pto import emit_kernel
from pypto_pro.language import Vf as vf

ROWS, COLS, LANES = 8, 128, 64
F32 = pl.TileType(shape=[ROWS, COLS], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
F16 = pl.TileType(shape=[ROWS, 2 * COLS], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)


@pl.vector_function
def softmax_row(src, dst, n_cols: pl.DT_INT64):
    full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    n_regs = (n_cols + LANES - 1) // LANES
    for r in pl.range(0, ROWS):
        mx = vf.full(-3.0e38, full, dtype=pl.DT_FP32)
        for k in pl.range(0, n_regs):
            m = vf.update_mask(n_cols - k * LANES, dtype=pl.DT_FP32)
            x = vf.load_align(src, [r, k * LANES])
            mx = vf.max(mx, x, m, mode=pl.MergeMode.MERGING)
        top1 = vf.reduce_max(mx, full)
        top = vf.full(top1, full)
        acc = vf.full(0.0, full, dtype=pl.DT_FP32)
        for k in pl.range(0, n_regs):
            m = vf.update_mask(n_cols - k * LANES, dtype=pl.DT_FP32)
            x = vf.load_align(src, [r, k * LANES])
            d = vf.sub(x, top, m)
            e = vf.exp(d, m)
            acc = vf.add(acc, e, m, mode=pl.MergeMode.MERGING)
            vf.store_align(dst, e, m, [r, k * LANES])
        total1 = vf.reduce_sum(acc, full)
        total = vf.full(total1, full)
        vf.mem_bar(mode=pl.MemBarMode.VST_VLD)
        for k in pl.range(0, n_regs):
            m = vf.update_mask(n_cols - k * LANES, dtype=pl.DT_FP32)
            e = vf.load_align(dst, [r, k * LANES])
            y = vf.div(e, total, m)
            vf.store_align(dst, y, m, [r, k * LANES])


@pl.vector_function
def exp_sub_fp16(src, dst, n_cols: pl.DT_INT64):
    """fp16 in, fp32 out: exp(x - max) of the even and the odd lanes (vexpdif PART_EVEN / PART_ODD)."""
    m16 = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP16)
    m32 = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    mx = vf.load_align(src, 0, dist=pl.LoadDist.BRC)
    for r in pl.range(0, ROWS):
        x = vf.load_align(src, [r, 0])
        even = vf.exp_sub(x, mx, m16, layout=pl.CastLayout.ZERO)
        odd = vf.exp_sub(x, mx, m16, layout=pl.CastLayout.ONE)
        vf.store_align(dst, even, m32, [r, 0])
        vf.store_align(dst, odd, m32, [r, LANES])


@pl.vector_function
def masked_tail(src, dst, n_cols: pl.DT_INT64):
    """A row whose last register is partial: update_mask's count, a scalar op, a compare + select."""
    for r in pl.range(0, ROWS):
        for k in pl.range(0, (n_cols + LANES - 1) // LANES):
            m = vf.update_mask(n_cols - k * LANES, dtype=pl.DT_FP32)
            x = vf.load_align(src, [r, k * LANES])
            y = vf.muls(x, 0.5, m)
            pos = vf.gt(x, 0.0, m)
            z = vf.select(x, y, pos)
            vf.store_align(dst, z, m, [r, k * LANES])


@pl.vector_function
def cast_rows(src, dst, n_cols: pl.DT_INT64):
    """fp32 -> fp16 (rounded, even lanes) and back (widening, even lanes), stored packed."""
    m32 = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    for r in pl.range(0, ROWS):
        x = vf.load_align(src, [r, 0])
        h = vf.astype(x, m32, dtype=pl.DT_FP16, round_mode=pl.VFRoundMode.CAST_RINT, layout=pl.CastLayout.ZERO)
        m16 = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP16)
        back = vf.astype(h, m16, dtype=pl.DT_FP32, layout=pl.CastLayout.ZERO)
        vf.store_align(dst, back, m32, [r, 0])


@pl.vector_function
def reductions(src, dst, n_cols: pl.DT_INT64):
    """Sum / max / min of each row's first register, and the per-32-byte-block max."""
    m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    one = vf.create_mask(pattern=pl.MaskPattern.VL1, dtype=pl.DT_FP32)
    for r in pl.range(0, ROWS):
        x = vf.load_align(src, [r, 0])
        s = vf.reduce_sum(x, m)
        hi = vf.reduce_max(x, m)
        lo = vf.reduce_min(x, m)
        blocks = vf.reduce_max(x, m, datablock=True)
        vf.store_align(dst, s, one, [r, 0])
        vf.store_align(dst, hi, one, [r, 8])
        vf.store_align(dst, lo, one, [r, 16])
        vf.store_align(dst, blocks, m, [r, 64])


def kernel_for(body, in_type=F32, out_type=F32):
    """An a5 kernel: load a tile of ``x``, ``body(tile, out_tile, n_cols)``, store to ``y``."""
    in_dt, out_dt = in_type.dtype, out_type.dtype
    ri, ci = in_type.shape
    ro, co = out_type.shape

    def vf_kernel(x: pl.Tensor[[ri, ci], in_dt], y: pl.Tensor[[ro, co], out_dt], n: pl.DT_INT64):
        tx = pl.make_tile(in_type, addr=0x0)
        ty = pl.make_tile(out_type, addr=0x10000)
        with pl.section_vector():
            pl.load(tx, x, [0, 0])
            body(tx, ty, n)
            pl.store(y, ty, [0, 0])
    vf_kernel.__name__ = f"vf_{body.__name__}"
    return pl.jit(vf_kernel, arch="a5")


def kernel_cpp(kernel) -> str:
    return emit_kernel(kernel.compile().programs, kernel.name, kernel.arch)["kernel.cpp"]


def vec_scope(cpp: str, strip_locations: bool = True) -> str:
    """The ``__VEC_SCOPE__ { ... }`` block of the kernel's first VF call, dedented."""
    lines = cpp.splitlines()
    start = next(i for i, ln in enumerate(lines) if "__VEC_SCOPE__ {" in ln)
    pad = len(lines[start]) - len(lines[start].lstrip())
    out, depth = [], 0
    for ln in lines[start:]:
        out.append(ln[pad:])
        depth += ln.count("{") - ln.count("}")
        if depth == 0:
            break
    text = "\n".join(out)
    return re.sub(r"  // [\w.]+\.py:\d+", "", text) if strip_locations else text
