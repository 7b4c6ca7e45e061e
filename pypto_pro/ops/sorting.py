"""Sorting: ``pl.sort32``, ``pl.mrgsort``, ``pl.mrgsort2`` (real pages
``memory_vector_computation/sorting/*.md``; PTO-ISA TSORT32, TMRGSORT).

Values travel as 8-byte (value, uint32 index) records: two FP32 elements or four FP16 elements per
record (``rearrange.records``). ``sort32`` sorts each group of 32 values of a row descending (ties:
lower index first); ``mrgsort`` merges each run of 4 sorted blocks of one row; ``mrgsort2`` merges
2-4 sorted lists into ``dst`` (up to dst's valid columns). Numerics: ``backends/sim/rearrange.py``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pypto_pro.backends.sim import rearrange as rr
from pypto_pro.frontend.operands import Args, in_section, same_dtype, want_bool, want_int, want_tile
from pypto_pro.frontend.values import TileValue
from pypto_pro.language.dtypes import DT_FP16, DT_FP32, DT_UINT32
from pypto_pro.language.enums import SectionKind
from pypto_pro.ops.decl import declare, instruction, vector
from pypto_pro.ops.elementwise import emit
from pypto_pro.ops.rearrange_kit import dispatcher, vec_tile, whole

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

FAMILY = "sorting"
FLOATS = (DT_FP16, DT_FP32)
COST = vector("cast", flops=False)  # no PTO-ISA cost row: one vector pass over the region (docs/numerics.md)
MERGE_COST = vector("mrgsort", flops=False)  # vmrgsort4, per 256 bytes of records merged (arch/costs.py)


# ---- pl.sort32 ---------------------------------------------------------------------------------------


def _sort32_check(p: "FunctionParser", node, a: Args) -> None:
    in_section(p, node, SectionKind.VECTOR, a.display)
    dst = vec_tile(p, a, "dst", FLOATS, cpp="TSORT32")
    src = vec_tile(p, a, "src", FLOATS, cpp="TSORT32")
    idx = vec_tile(p, a, "idx", (DT_UINT32,), cpp="TSORT32")
    same_dtype(p, a, dst, "dst", src, "src")
    per = 8 // src.tile_type.dtype.itemsize
    srcs = [src, idx]
    if a["tmp"] is not None:
        tmp = vec_tile(p, a, "tmp", cpp="TSORT32")
        same_dtype(p, a, tmp, "tmp", src, "src")
        srcs.append(tmp)
    cols = src.tile_type.cols
    if dst.tile_type.cols < cols * per:
        p.fail(a.node("dst"), f"pl.sort32: each value becomes an 8-byte record ({per} {src.tile_type.dtype.name} "
                              f"elements): 'dst' needs {cols * per} columns, has {dst.tile_type.cols}")
    whole_row = whole_row_limit(p.ctx.arch.name, src.tile_type.dtype.itemsize)
    need = 32 * -(-cols // 32) if cols <= whole_row else 32
    if a["tmp"] is not None and want_tile(p, a, "tmp").tile_type.cols < need:
        what = "a padded copy of a source row" if cols <= whole_row else "the padded last group of a row"
        p.fail(a.node("tmp"), f"pl.sort32: 'tmp' holds {what}: it needs {need} columns")
    emit(p, node, a, "sort32", dst, tuple(srcs), (), ("dst", "src", "idx", "tmp")[:len(srcs) + 1],
         writes=(2,) if len(srcs) == 3 else (), whole_row=whole_row)


def whole_row_limit(arch: str, item: int) -> int:
    """The longest row (valid columns) TSORT32's tmp form copies whole into tmp; longer rows copy only
    their last group (PTO-ISA ``MAX_UB_TMP`` = 8160: bytes on a5, elements on a2a3)."""
    return 8160 // item if arch == "a5" else 8160


def _sort32_sim(op, env):
    whole_row = op.attrs["whole_row"]

    def body(ts, slots):
        d, s, i = ts[0], ts[1], ts[2]
        has_tmp = len(ts) > 3
        rows = d.valid[slots[0]][0]
        vc = s.valid[slots[1]][1]
        dt = s.views[slots[1]].dtype
        per = 8 // dt.itemsize
        # the tail path (PTO-ISA a5 TSORT32 with tmp, validCol % 32 != 0) pads the last group with -NaN in
        # tmp; a row of whole groups is sorted from src and tmp is not touched
        tail = has_tmp and vc % 32 != 0
        groups = -(-vc // 32) if tail else vc // 32
        shared = i.valid[slots[2]][0] == 1
        sv = s.views[slots[1]]
        iv = i.views[slots[2]]
        width = groups * 32
        if not shared and iv.shape[0] < rows:
            raise rr.Undefined(f"idx has {iv.shape[0]} rows for {rows} rows to sort (give one shared row or one per row)")
        dcols = whole(d)[1]
        keep = min(groups * 32, dcols // per)  # records past dst's end land outside the tile on the chip

        def padded(a: np.ndarray, fill) -> np.ndarray:
            out = np.full(width, fill, dtype=a.dtype)
            n = min(width, a.size)
            out[:n] = a[:n]
            return out

        def compute(outs):
            dflat = outs[0].reshape(whole(d))
            vals = None
            for r in range(rows):
                vals = padded(sv[r], 0)
                if tail:
                    vals[vc:] = -np.float32(np.nan)  # the a5 kernel pads the tail group with -NaN
                ind = padded(iv[0 if shared else r], 0)
                rec = [rr.records(*rr.sort32_row(vals[g * 32:(g + 1) * 32], ind[g * 32:(g + 1) * 32]), dt)
                       for g in range(groups)]
                flat = np.concatenate(rec)[:keep * per] if rec else np.zeros(0, dt)
                dflat[r, :flat.size] = flat
            if tail and vals is not None:  # what the last row left in tmp
                outs[1].reshape(-1)[:staged] = vals[width - staged:]
        # the tail path's copy into tmp moves whole 32-byte blocks, but what it brings past the valid columns
        # is overwritten by the padding: only the valid columns count as read
        src_read = vc if tail else width
        staged = (width if vc <= whole_row else 32) if tail else 0  # tmp gets the whole padded row, or its last group
        if tail and staged > whole(ts[3])[1]:  # a valid shape the frontend could not see
            raise rr.Undefined(f"tmp holds {whole(ts[3])[1]} elements; the tail path writes {staged} to it")
        reads = [(1, rows, src_read), (2, 1 if shared else rows, min(width, iv.shape[1]))]
        writes = [(0, rows, keep * per)] + ([(3, 1, staged)] if tail else [])
        return reads, writes, compute, rows, max(1, width)
    return dispatcher(op, env, body)


instruction("sort32", FAMILY, _sort32_sim, COST,
            lambda op, ctx, arch: [f"TSORT32({', '.join(ctx.tile(x) for x in (op.dst, *op.srcs))});"])
declare(FAMILY, "sort32", "dst, src, idx, tmp=None",
        "Sort each group of 32 values of every row of ``src`` descending, each with its uint32 index from ``idx``, into "
        "8-byte (value, index) records in ``dst`` (TSORT32); ``tmp`` pads a last group of fewer than 32 values.",
        _sort32_check)


# ---- pl.mrgsort --------------------------------------------------------------------------------------


def _mrgsort_check(p: "FunctionParser", node, a: Args) -> None:
    in_section(p, node, SectionKind.VECTOR, a.display)
    block = want_int(p, a, "block_len")
    dst = vec_tile(p, a, "dst", FLOATS, cpp="TMRGSORT")
    src = vec_tile(p, a, "src", FLOATS, cpp="TMRGSORT")
    same_dtype(p, a, dst, "dst", src, "src")
    per = 8 // src.tile_type.dtype.itemsize
    if block <= 0 or block % per:
        p.fail(a.node("block_len"), f"pl.mrgsort: block_len counts tile elements of whole records ({per} per record), "
                                    f"got {block}")
    for name, t in (("dst", dst), ("src", src)):
        if t.tile_type.rows != 1:
            p.fail(a.node(name), f"pl.mrgsort: '{name}' must be a single-row tile (TMRGSORT), has {t.tile_type.rows} rows")
    if dst.tile_type.shape != src.tile_type.shape:
        p.fail(a.node("dst"), f"pl.mrgsort: 'dst' must have src's shape {list(src.tile_type.shape)}")
    emit(p, node, a, "mrgsort", dst, (src,), (), ("dst", "src"), block_len=block)


def _mrgsort_sim(op, env):
    block = op.attrs["block_len"]

    def body(ts, slots):
        d, s = ts
        c = s.valid[slots[1]][1]  # the a5 repeat count reads src's valid columns (srcCol / (blockLen * 4))
        sv = s.views[slots[1]].reshape(-1)[:c]
        per = 8 // sv.dtype.itemsize

        n = c // (4 * block) * (4 * block)  # whole groups of 4 blocks; the tail stays as it was

        def compute(outs):
            if n:
                outs[0][:n] = rr.mrgsort_blocks(sv[:n], block, per)
        # priced by what vmrgsort4 merges (its repeats x 4 blocks), not by every valid column
        if not n:
            return [], [], compute, 1, 0
        return [(1, 1, n)], [(0, 1, n)], compute, 1, n
    return dispatcher(op, env, body)


instruction("mrgsort", FAMILY, _mrgsort_sim, MERGE_COST,
            lambda op, ctx, arch: [f"TMRGSORT({ctx.tile(op.dst)}, {ctx.tile(op.srcs[0])}, {op.attrs['block_len']});"])
declare(FAMILY, "mrgsort", "dst, src, *, block_len",
        "Merge sort one row of (value, index) records: every 4 consecutive sorted blocks of ``block_len`` elements are "
        "merged into one descending run (TMRGSORT).", _mrgsort_check)


# ---- pl.mrgsort2 -------------------------------------------------------------------------------------


def _mrgsort2_check(p: "FunctionParser", node, a: Args) -> None:
    in_section(p, node, SectionKind.VECTOR, a.display)
    exhausted = want_bool(p, a, "exhausted")
    extra = a["args"]
    if len(extra) > 2:
        p.fail(node, f"pl.mrgsort2 merges 2 to 4 lists; got {2 + len(extra)} sources")
    for k, v in enumerate(extra):
        if not isinstance(v, TileValue):
            p.fail(node.args[4 + k] if len(node.args) > 4 + k else node,
                   f"pl.mrgsort2: extra source {k + 3} must be a tile, got {p.describe(v)}")
        a.values[f"src{k + 2}"] = v
        a.nodes[f"src{k + 2}"] = node.args[4 + k] if len(node.args) > 4 + k else node
    names = ["src0", "src1"] + [f"src{k + 2}" for k in range(len(extra))]
    dst = vec_tile(p, a, "dst", FLOATS, cpp="TMRGSORT")
    tmp = vec_tile(p, a, "tmp", FLOATS, cpp="TMRGSORT")
    srcs = [vec_tile(p, a, n, FLOATS, cpp="TMRGSORT") for n in names]
    for name, t in [("dst", dst), ("tmp", tmp)] + list(zip(names, srcs)):
        same_dtype(p, a, t, name, dst, "dst")
        if t.tile_type.rows != 1:
            p.fail(a.node(name), f"pl.mrgsort2: '{name}' must be a single-row tile (TMRGSORT), has {t.tile_type.rows} rows")
    if tmp.tile_type.cols < dst.tile_type.cols:
        p.fail(a.node("tmp"), f"pl.mrgsort2: 'tmp' needs at least dst's {dst.tile_type.cols} columns")
    # tmp is an output: the a5 / a2a3 code merges into it, then copies dst's part out (numerics.md)
    emit(p, node, a, "mrgsort2", dst, tuple(srcs) + (tmp,), (), ("dst",) + tuple(names) + ("tmp",),
         exhausted=exhausted, writes=(len(srcs),))


def _mrgsort2_sim(op, env):
    """PTO-ISA a5 (and a2a3) ``TMrgsort``: ``vmrgsort4`` merges every record of every list (up to the
    stop with ``exhausted``) into ``tmp``, then ``MovUb2Ub`` copies dst's valid columns, rounded up
    to 32-byte blocks, from ``tmp`` to ``dst`` (tmp's bytes past the merged records included)."""
    exhausted = op.attrs["exhausted"]

    def body(ts, slots):
        d, srcs, t = ts[0], ts[1:-1], ts[-1]
        ti = len(ts) - 1
        c = d.valid[slots[0]][1]
        item = d.views[slots[0]].dtype.itemsize
        per = 8 // item
        lists = [s.views[sl].reshape(-1)[:s.valid[sl][1] // per * per] for s, sl in zip(srcs, slots[1:-1])]
        total = sum(lst.size for lst in lists)  # elements of every list's records: what tmp receives at most
        tmp_cols = whole(t)[1]
        if total > tmp_cols:
            raise rr.Undefined(f"the merge writes every list's records to tmp ({total} elements, {total * item} "
                               f"bytes) but tmp holds {tmp_cols} ({tmp_cols * item} bytes): the chip writes past tmp (PTO-ISA TMRGSORT: tmp's "
                               f"columns must be at least the sum of the sources'; the page: tmp must hold the merge "
                               f"of all input lists)")
        copy = -(-c * item // 32) * 32 // item  # MovUb2Ub moves whole 32-byte blocks
        if copy > tmp_cols:
            raise rr.Undefined(f"dst's {c} valid columns are copied from tmp in 32-byte blocks ({copy} elements), "
                               f"past tmp's {tmp_cols}")

        def compute(outs):
            if total:
                merged, _ = rr.merge_lists(lists, per, total // per, exhausted)
                outs[0][:merged.size] = merged
                staged = outs[0]
            else:  # nothing to merge: dst gets tmp's bytes as they are
                staged = t.views[slots[-1]].reshape(-1)
            outs[-1][:copy] = staged[:copy]
        reads = [(k + 1, 1, s.valid[sl][1]) for k, (s, sl) in enumerate(zip(srcs, slots[1:-1]))]
        if c > total:  # dst's valid columns reach past the merged records: the copy brings tmp's old bytes
            reads.append((ti, 1, c))
        writes = ([(ti, 1, total)] if total else []) + [(0, 1, copy)]  # tmp first, as the chip writes them
        return reads, writes, compute, 1, total
    return dispatcher(op, env, body)


def _mrgsort2_cpp(op, ctx, arch: str) -> list[str]:
    dst = ctx.tile(op.dst)
    *srcs, tmp = (ctx.tile(x) for x in op.srcs)

    def ty(e: str) -> str:
        return f"std::remove_reference_t<decltype({e})>"
    flag = "true" if op.attrs["exhausted"] else "false"
    return ["MrgSortExecutedNumList executedNumList;",
            f"TMRGSORT_IMPL<{ty(dst)}, {ty(tmp)}, {', '.join(ty(s) for s in srcs)}, {flag}>({dst}, executedNumList, "
            f"{tmp}, {', '.join(srcs)});"]


instruction("mrgsort2", FAMILY, _mrgsort2_sim, MERGE_COST, _mrgsort2_cpp)
declare(FAMILY, "mrgsort2", "src0, src1, dst, tmp, *args, exhausted=False",
        "Merge 2-4 descending lists of (value, index) records (``src0``, ``src1`` and up to two more after ``tmp``) "
        "into ``dst``, up to its valid columns (TMRGSORT); ``exhausted`` stops when any list runs out.",
        _mrgsort2_check)
