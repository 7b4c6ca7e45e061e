"""Scatter / gather and histogram: ``pl.gather``, ``pl.gatherb``, ``pl.gathermask``, ``pl.scatter``,
``pl.histogram`` (real pages ``memory_vector_computation/scatter_gather/*.md``; PTO-ISA TGATHER,
TGATHERB, TGATHER<MaskPattern>, TSCATTER, THISTOGRAM).

``pl.gather`` has the two forms of the real backend: the index form ``gather(out, src, idx, tmp)``
(``out[r, c] = src_flat[idx[r, c]]``) and the compare form ``gather(out, src, k_value, cdst, tmp,
cmp_mode=4|0, offset=n)``, which writes the indices of the elements of each row greater than
(``cmp_mode=4``) or equal to (``cmp_mode=0``) that row's key, and the bytes written per row into
``cdst``. As in the real backend, the compare form is chosen by the fifth tile operand with an
explicit ``cmp_mode``; ``offset`` only reaches the compare form. Numerics: ``backends/sim/rearrange.py``.
"""
from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np

from pypto_pro.backends.sim import rearrange as rr
from pypto_pro.frontend.operands import Args, in_section, same_dtype, want_bool, want_int
from pypto_pro.language.dtypes import (DT_FP16, DT_FP32, DT_INT8, DT_INT16, DT_INT32, DT_UINT8, DT_UINT16,
                                       DT_UINT32)
from pypto_pro.language.enums import SectionKind
from pypto_pro.ops.decl import declare, instruction, vector
from pypto_pro.ops.elementwise import emit
from pypto_pro.ops.rearrange_kit import dispatcher, flat_rows, separate, vec_tile, whole, width

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

FAMILY = "scatter_gather"
IDX16 = (DT_INT16, DT_UINT16)
IDX32 = (DT_INT32, DT_UINT32)
CMP_SRC = (DT_FP32, DT_UINT32, DT_INT32, DT_UINT16, DT_INT16, DT_FP16, DT_INT8, DT_UINT8)
COST = vector("cast", flops=False)  # no PTO-ISA cost row: one vector pass over the region (docs/numerics.md)


def _tmpl(name: str, ts: list[str]) -> str:
    return f"{name}<{', '.join(f'std::remove_reference_t<decltype({t})>' for t in ts)}"


# ---- pl.gather ---------------------------------------------------------------------------------------


def _gather_check(p: "FunctionParser", node, a: Args) -> None:
    in_section(p, node, SectionKind.VECTOR, a.display)
    extra = a["args"]
    explicit = {k.arg for k in node.keywords}
    if len(extra) > 1:
        p.fail(node, f"pl.gather takes 4 tiles (index form) or 5 (compare form), got {4 + len(extra)}")
    if extra:
        return _gather_cmp(p, node, a, extra[0], "cmp_mode" in explicit)
    if "cmp_mode" in explicit:
        p.fail(a.node("cmp_mode"), "pl.gather: cmp_mode selects the compare form, which takes 5 tiles "
                                   "(out, src, k_value, cdst, tmp); the index form (out, src, idx, tmp) takes none")
    out = vec_tile(p, a, "out", cpp="TGATHER")
    src = vec_tile(p, a, "src", cpp="TGATHER")
    idx = vec_tile(p, a, "idx", IDX16 + IDX32, cpp="TGATHER")
    tmp = vec_tile(p, a, "tmp", rm=False)
    same_dtype(p, a, out, "out", src, "src")
    bits = width(p, a, "out", out, (8, 16, 32, 64))
    ib = idx.tile_type.dtype.bits
    if bits == 64 and ib != 32 or bits == 8 and ib != 16:
        p.fail(a.node("idx"), f"pl.gather of b{bits} data takes {'32' if bits == 64 else '16'}-bit indices; "
                              f"'{idx.buffer.name}' is {idx.tile_type.dtype.name}")
    if tmp.tile_type.dtype is not idx.tile_type.dtype or tmp.tile_type.shape != idx.tile_type.shape:
        p.fail(a.node("tmp"), f"pl.gather: 'tmp' must have idx's dtype and shape ({idx.tile_type.dtype.name} "
                              f"{list(idx.tile_type.shape)})")
    separate(p, a, "tmp", (("out", out), ("src", src), ("idx", idx)))
    if "offset" in explicit and a["offset"] != 0:
        warnings.warn(f"{p.loc(node)}: pl.gather(offset=...) has no effect in the index form (the real backend "
                      "passes offset to the compare form only)", stacklevel=2)
    emit(p, node, a, "gather", out, (src, idx, tmp), (), ("out", "src", "idx", "tmp"), tmp=True)


def _gather_cmp(p: "FunctionParser", node, a: Args, tmp_v, has_mode: bool) -> None:
    if not has_mode:
        p.fail(node, "pl.gather with 5 tiles is the compare form: give cmp_mode=4 (greater than) or 0 (equal)")
    mode = want_int(p, a, "cmp_mode")
    if mode not in (rr.GT, rr.EQ):
        p.fail(a.node("cmp_mode"), f"pl.gather compare form supports cmp_mode=4 (GT) or 0 (EQ) only (PTO-ISA "
                                   f"TGATHER), got {mode}")
    offset = want_int(p, a, "offset")
    out = vec_tile(p, a, "out", (DT_INT32, DT_UINT32), cpp="TGATHER")
    src = vec_tile(p, a, "src", CMP_SRC, cpp="TGATHER")
    key = vec_tile(p, a, "idx", (DT_UINT16, DT_UINT32), rm=False)
    cdst = vec_tile(p, a, "tmp", rm=False)
    a.values["tmp_tile"] = tmp_v
    a.nodes["tmp_tile"] = node.args[4] if len(node.args) > 4 else node
    tmp = vec_tile(p, a, "tmp_tile", rm=False)
    emit(p, node, a, "gather_cmp", out, (src, key, cdst, tmp), (), ("out", "src", "k_value", "cdst", "tmp"),
         cmp_mode=mode, offset=offset, writes=(2,))


def _gather_sim(op, env):
    def body(ts, slots):
        d, s, i = ts[0], ts[1], ts[2]
        r, c = d.valid[slots[0]]
        iv = i.views[slots[2]][:r, :c]
        sflat = s.views[slots[1]].reshape(-1)

        def compute(outs):
            region = outs[0].reshape(whole(d))[:r, :c]
            rr.gather_index(region, sflat, iv)
        return [(1, *whole(s)), (2, r, c)], [(0, r, c)], compute, r, c
    return dispatcher(op, env, body)


def _gather_cmp_sim(op, env):
    mode, offset = op.attrs["cmp_mode"], op.attrs["offset"]

    def body(ts, slots):
        d, s, k, cd = ts[0], ts[1], ts[2], ts[3]
        vr, vc = s.valid[slots[1]]
        item = s.st.buffer.tile_type.dtype.itemsize
        per_repeat = 128 if item == 1 else 64
        masked = item == 4
        sflat = s.views[slots[1]].reshape(-1)
        kflat = k.views[slots[2]].reshape(-1)
        dcols = whole(d)[1]
        if kflat.size < vr:
            raise rr.Undefined(f"k_value holds {kflat.size} keys for {vr} source rows")

        def compute(outs):
            rows = rr.gather_compare(sflat, whole(s)[1], vr, vc, kflat, mode, offset, per_repeat, masked)
            dflat, cflat = outs
            if cflat.size < vr:
                raise rr.Undefined(f"cdst holds {cflat.size} elements for {vr} row counts")
            for i, hits in enumerate(rows):
                lo = i * dcols
                if lo + hits.size > dflat.size:
                    raise rr.Undefined(f"row {i} writes {hits.size} indices from element {lo}, past out's "
                                       f"{dflat.size} elements")
                dflat[lo:lo + hits.size] = hits.astype(dflat.dtype)
                cflat[i] = np.array(hits.size * 4).astype(cflat.dtype)
        return ([(1, vr, min(vc, whole(s)[1])), (2, *flat_rows(k, vr))],
                # the whole count tile counts as written: real kernels store all of it (test_gather_cmp)
                [(0, vr, dcols), (3, *whole(cd))], compute, vr, vc)
    return dispatcher(op, env, body)


def _gather_cpp(op, ctx, arch: str) -> list[str]:
    d, s, i, t = (ctx.tile(x) for x in (op.dst, *op.srcs))
    return [f"TGATHER({d}, {s}, {i}, {t});"]


def _gather_cmp_cpp(op, ctx, arch: str) -> list[str]:
    names = [ctx.tile(x) for x in (op.dst, *op.srcs)]
    mode = "CmpMode::GT" if op.attrs["cmp_mode"] == rr.GT else "CmpMode::EQ"
    return [f"{_tmpl('TGATHER', names)}, {mode}>({', '.join(names)}, {op.attrs['offset']});"]


instruction("gather", FAMILY, _gather_sim, COST, _gather_cpp)
instruction("gather_cmp", FAMILY, _gather_cmp_sim, COST, _gather_cmp_cpp)
declare(FAMILY, "gather", "out, src, idx, tmp, *args, cmp_mode=0, offset=0",
        "Gather by index: ``out[r, c] = src_flat[idx[r, c]]`` over out's valid shape (TGATHER). With a fifth tile, "
        "``gather(out, src, k_value, cdst, tmp, cmp_mode=4|0, offset=n)`` writes per row the indices (from "
        "``offset``) of the elements > (4) or == (0) that row's key, and the bytes written into ``cdst``.",
        _gather_check)


# ---- pl.gatherb --------------------------------------------------------------------------------------


def _gatherb_check(p: "FunctionParser", node, a: Args) -> None:
    in_section(p, node, SectionKind.VECTOR, a.display)
    out = vec_tile(p, a, "out", cpp="TGATHERB")
    src = vec_tile(p, a, "src", cpp="TGATHERB")
    offs = vec_tile(p, a, "offsets", (DT_UINT32,), cpp="TGATHERB")
    same_dtype(p, a, out, "out", src, "src")
    width(p, a, "out", out, (8, 16, 32))
    per_block = 32 // out.tile_type.dtype.itemsize
    if offs.tile_type.cols * per_block < out.tile_type.cols or offs.tile_type.rows < out.tile_type.rows:
        p.fail(a.node("offsets"), f"pl.gatherb: 'offsets' needs one entry per 32-byte block of out: shape "
                                  f"[{out.tile_type.rows}, {out.tile_type.cols // per_block}], has "
                                  f"{list(offs.tile_type.shape)}")
    emit(p, node, a, "gatherb", out, (src, offs), (), ("out", "src", "offsets"))


def _gatherb_sim(op, env):
    def body(ts, slots):
        d, s, o = ts
        r, c = d.valid[slots[0]]
        item = d.item
        blocks = -(-c * item // 32)  # a last block cut by the valid columns is stored up to them
        sbytes = s.views[slots[1]].reshape(-1).view(np.uint8)
        ov = o.views[slots[2]]

        def compute(outs):
            rr.gatherb(outs[0].view(np.uint8), whole(d)[1] * item, sbytes, ov, r, c * item)
        return [(1, *whole(s)), (2, r, blocks)], [(0, r, c)], compute, r, c
    return dispatcher(op, env, body)


instruction("gatherb", FAMILY, _gatherb_sim, COST,
            lambda op, ctx, arch: [f"TGATHERB({', '.join(ctx.tile(x) for x in (op.dst, *op.srcs))});"])
declare(FAMILY, "gatherb", "out, src, offsets",
        "Gather 32-byte blocks: block b of row r of ``out`` is the 32 bytes of ``src`` at byte offset "
        "``offsets[r, b]`` (TGATHERB).", _gatherb_check)


# ---- pl.gathermask -----------------------------------------------------------------------------------

PATTERN_CPP = {1: "P0101", 2: "P1010", 3: "P0001", 4: "P0010", 5: "P0100", 6: "P1000", 7: "P1111"}


def _gathermask_check(p: "FunctionParser", node, a: Args) -> None:
    in_section(p, node, SectionKind.VECTOR, a.display)
    mode = want_int(p, a, "pattern_mode")
    if mode not in rr.MASK_PATTERNS:
        p.fail(a.node("pattern_mode"), f"pl.gathermask: pattern_mode must be 1..7, got {mode}")
    out = vec_tile(p, a, "out", cpp="TGATHER")
    src = vec_tile(p, a, "src", cpp="TGATHER")
    if out.tile_type.dtype.bits != src.tile_type.dtype.bits:
        p.fail(a.node("out"), f"pl.gathermask: 'out' ({out.tile_type.dtype.name}) and 'src' "
                              f"({src.tile_type.dtype.name}) must have the same element width")
    # a2a3 (vreducev2) has only the 16/32-bit forms: PTO-ISA npu/a2a3/TGather.hpp static_asserts the rest
    width(p, a, "src", src, (16, 32) if p.ctx.arch.name == "a2a3" else (8, 16, 32, 64))
    emit(p, node, a, "gathermask", out, (src,), (), ("out", "src"), pattern_mode=mode)


def _gathermask_sim(op, env):
    mode = op.attrs["pattern_mode"]

    def body(ts, slots):
        d, s = ts
        r, c = s.valid[slots[1]]
        sv = s.views[slots[1]][:r, :c]
        if s.item == 8:  # the a5 64-bit path: rows step by out's tile columns // period (not packed)
            oc = whole(d)[1]
            end = rr.gathermask_b64_end(r, c, mode, oc)

            def compute64(outs):
                rr.gathermask_b64(outs[0], sv.view(outs[0].dtype) if sv.dtype != outs[0].dtype else sv, mode, oc)
            return [(1, r, c)], [(0, *flat_rows(d, max(end, 1)))], compute64, r, c
        dr, dc = d.valid[slots[0]]
        if dc != whole(d)[1]:
            raise rr.Undefined(f"out's valid columns ({dc}) must be its full width ({whole(d)[1]}): the kept columns "
                               "are stored contiguously")
        n = rr.gathermask(sv, mode).size

        def compute(outs):
            kept = rr.gathermask(sv, mode)
            if kept.size > outs[0].size:
                raise rr.Undefined(f"{kept.size} kept elements do not fit out's {outs[0].size}")
            outs[0][:kept.size] = kept.view(outs[0].dtype) if kept.dtype != outs[0].dtype else kept
        return [(1, r, c)], [(0, *flat_rows(d, max(n, 1)))], compute, r, c
    return dispatcher(op, env, body)


def _gathermask_cpp(op, ctx, arch: str) -> list[str]:
    d, s = ctx.tile(op.dst), ctx.tile(op.srcs[0])
    return [f"{_tmpl('TGATHER', [d, s])}, MaskPattern::{PATTERN_CPP[op.attrs['pattern_mode']]}>({d}, {s});"]


instruction("gathermask", FAMILY, _gathermask_sim, COST, _gathermask_cpp)
declare(FAMILY, "gathermask", "out, src, *, pattern_mode",
        "Keep the columns of ``src`` a bit pattern picks (1: even, 2: odd, 3-6: column 0/1/2/3 of every 4, 7: all), "
        "packed row after row into ``out`` (TGATHER<MaskPattern>).", _gathermask_check)


# ---- pl.scatter --------------------------------------------------------------------------------------


def _scatter_check(p: "FunctionParser", node, a: Args) -> None:
    in_section(p, node, SectionKind.VECTOR, a.display)
    out = vec_tile(p, a, "out", cpp="TSCATTER")
    src = vec_tile(p, a, "src", cpp="TSCATTER")
    idx = vec_tile(p, a, "idx", IDX16 + IDX32, cpp="TSCATTER")
    same_dtype(p, a, out, "out", src, "src")
    bits = width(p, a, "out", out, (8, 16, 32, 64))
    want = IDX32 if bits >= 32 else IDX16
    if idx.tile_type.dtype not in want:
        p.fail(a.node("idx"), f"pl.scatter of b{bits} data takes {'32' if bits >= 32 else '16'}-bit indices "
                              f"(TSCATTER); '{idx.buffer.name}' is {idx.tile_type.dtype.name}")
    emit(p, node, a, "scatter", out, (src, idx), (), ("out", "src", "idx"))


def _scatter_sim(op, env):
    def body(ts, slots):
        d, s, i = ts
        r, c = i.valid[slots[2]]
        sv = s.views[slots[1]][:r, :c]
        iv = i.views[slots[2]][:r, :c]

        def compute(outs):
            rr.scatter(outs[0], sv, iv)
        return [(1, r, c), (2, r, c)], [(0, *whole(d))], compute, r, c
    return dispatcher(op, env, body)


instruction("scatter", FAMILY, _scatter_sim, COST,
            lambda op, ctx, arch: [f"TSCATTER({', '.join(ctx.tile(x) for x in (op.dst, *op.srcs))});"])
declare(FAMILY, "scatter", "out, src, idx",
        "Scatter by index: ``out_flat[idx[i, j]] = src[i, j]`` over idx's valid shape (TSCATTER).", _scatter_check)


# ---- pl.histogram ------------------------------------------------------------------------------------


def _histogram_check(p: "FunctionParser", node, a: Args) -> None:
    in_section(p, node, SectionKind.VECTOR, a.display)
    msb = want_bool(p, a, "is_msb")
    dst = vec_tile(p, a, "dst", (DT_UINT32,), cpp="THISTOGRAM")
    src = vec_tile(p, a, "src", (DT_UINT16, DT_UINT32), cpp="THISTOGRAM")
    idx = vec_tile(p, a, "idx", (DT_UINT8,), rm=False)
    dt, st, it = dst.tile_type, src.tile_type, idx.tile_type
    arch = p.ctx.arch.name
    if dt.cols < 256:
        p.fail(a.node("dst"), f"pl.histogram: 'dst' needs at least 256 columns (one per byte value), has {dt.cols}")
    if dt.rows < st.rows:
        p.fail(a.node("dst"), f"pl.histogram: 'dst' needs a row per source row ({st.rows}), has {dt.rows}")
    if st.dtype is DT_UINT16:
        if it.effective_layout(arch).name != "DN" or it.cols != 1 or it.rows != st.rows:
            p.fail(a.node("idx"), f"pl.histogram of uint16 data takes 'idx' as a [{st.rows}, 1] tile with layout=pl.DN "
                                  f"(one filter byte per row); '{idx.buffer.name}' is {list(it.shape)} "
                                  f"{it.effective_layout(arch).name}")
    elif not msb and (it.effective_layout(arch).name != "ND" or it.rows != 3 or it.cols != st.cols):
        p.fail(a.node("idx"), f"pl.histogram of uint32 data with is_msb=False takes 'idx' as a [3, {st.cols}] ND tile "
                              "(bytes 3 / 2 / 1 to match in column 0)")
    emit(p, node, a, "histogram", dst, (src, idx), (), ("dst", "src", "idx"), is_msb=msb)


def _histogram_sim(op, env):
    msb = op.attrs["is_msb"]

    def body(ts, slots):
        d, s, i = ts
        r, c = s.valid[slots[1]]
        sv = s.views[slots[1]][:r, :c]
        iflat = i.views[slots[2]].reshape(-1)
        icols = whole(i)[1]

        def compute(outs):
            h = rr.histogram(sv, iflat, icols, msb)
            if r * 256 > outs[0].size:
                raise rr.Undefined("dst is too small for 256 bins per source row")
            outs[0][:r * 256] = h.reshape(-1)  # the a5 kernel writes row r's bins at element 256 * r
        return [(1, r, c), (2, *whole(i))], [(0, *flat_rows(d, r * 256))], compute, r, c
    return dispatcher(op, env, body)


def _histogram_cpp(op, ctx, arch: str) -> list[str]:
    d, s, i = (ctx.tile(x) for x in (op.dst, *op.srcs))
    wide = op.srcs[0].tile_type.dtype is DT_UINT32  # type: ignore[union-attr]
    byte = ("BYTE_3" if wide else "BYTE_1") if op.attrs["is_msb"] else "BYTE_0"
    return [f"THISTOGRAM<HistByte::{byte}>({d}, {s}, {i});"]


instruction("histogram", FAMILY, _histogram_sim, COST, _histogram_cpp)
declare(FAMILY, "histogram", "dst, src, idx, *, is_msb",
        "Radix-sort histogram: per row, the cumulative counts over 256 bins of the high byte (``is_msb``) or of the "
        "low byte of the elements whose higher byte(s) match ``idx`` (THISTOGRAM).", _histogram_check)
