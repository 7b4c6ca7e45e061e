"""Transpose and index fill: ``pl.transpose(out, src)`` (real page
``memory_vector_computation/transpose_and_element_access/transpose.md``; PTO-ISA TTRANS) and
``pl.fill_index(out, start)`` (``transpose_and_element_access/fill_index.md``; TCI).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pypto_pro.backends.sim.templates import fill
from pypto_pro.frontend.operands import Args, in_section, want_int, want_scalar
from pypto_pro.language.dtypes import DT_INT16, DT_INT32, DT_UINT16, DT_UINT32
from pypto_pro.language.enums import SectionKind
from pypto_pro.ops.decl import declare, instruction, vector
from pypto_pro.ops.elementwise import emit
from pypto_pro.ops.rearrange_kit import dispatcher, vec_tile, width

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

FAMILY = "transpose_and_element_access"


# ---- pl.transpose ------------------------------------------------------------------------------------


def _transpose_check(p: "FunctionParser", node, a: Args) -> None:
    in_section(p, node, SectionKind.VECTOR, a.display)
    # axis1 / axis2: the real builder's compile-time ints (block_ops.py _ir_transpose); its block.transpose
    # codegen emits TTRANS whatever they hold (backend_cce_block_out_ops.cpp), so a 2-D swap either way
    want_int(p, a, "axis1")
    want_int(p, a, "axis2")
    out = vec_tile(p, a, "out", cpp="TTRANS")
    src = vec_tile(p, a, "src", cpp="TTRANS")
    width(p, a, "src", src, (8, 16, 32))
    if out.tile_type.dtype is not src.tile_type.dtype:
        p.fail(a.node("out"), f"pl.transpose: 'out' is {out.tile_type.dtype.name}, 'src' {src.tile_type.dtype.name}")
    if out.buffer.root is src.buffer.root and out.buffer.addrs == src.buffer.addrs:
        p.fail(a.node("out"), "pl.transpose: 'out' must be a different tile from 'src'")
    sr, sc = src.tile_type.shape
    if out.tile_type.rows < sc or out.tile_type.cols < sr:
        p.fail(a.node("out"), f"pl.transpose: 'out' must hold the transposed [{sc}, {sr}], has "
                              f"{list(out.tile_type.shape)}")
    emit(p, node, a, "transpose", out, (src,), (), ("out", "src"))


def _transpose_sim(op, env):
    def body(ts, slots):
        d, s = ts
        r, c = s.valid[slots[1]]
        sv = s.views[slots[1]][:r, :c]

        def compute(outs):
            outs[0].reshape(d.st.buffer.tile_type.shape)[:c, :r] = sv.T
        return [(1, r, c)], [(0, c, r)], compute, r, c
    return dispatcher(op, env, body)


instruction("transpose", FAMILY, _transpose_sim, vector("cast", flops=False),
            # the real backend passes src as TTRANS's tmp operand too (A5 takes and ignores it)
            lambda op, ctx, arch: [f"TTRANS({ctx.tile(op.dst)}, {ctx.tile(op.srcs[0])}, {ctx.tile(op.srcs[0])});"])
declare(FAMILY, "transpose", "out, src, axis1=0, axis2=1",
        "``out[j, i] = src[i, j]`` over src's valid region (TTRANS); ``axis1`` / ``axis2`` (compile-time ints, "
        "as the real builder takes) do not change it: the real backend swaps the two axes of the 2-D tile.",
        _transpose_check)


# ---- pl.fill_index -----------------------------------------------------------------------------------

INDEX_DTYPES = (DT_INT16, DT_UINT16, DT_INT32, DT_UINT32)


def _fill_index_check(p: "FunctionParser", node, a: Args) -> None:
    in_section(p, node, SectionKind.VECTOR, a.display)
    out = vec_tile(p, a, "out", INDEX_DTYPES, cpp="TCI")
    if out.tile_type.rows != 1:
        p.fail(a.node("out"), f"pl.fill_index fills a one-row tile (TCI); '{out.buffer.name}' has "
                              f"{out.tile_type.rows} rows")
    start = want_scalar(p, a, "start", out.tile_type.dtype)
    emit(p, node, a, "fill_index", out, (), (start,), ("out",))


def _fill_index_numerics(out: np.ndarray, start) -> None:
    """TCI ascending: ``out[0, j] = start + j``, wrapping at the tile dtype's width."""
    bits = out.dtype.itemsize * 8
    vals = (int(start) + np.arange(out.shape[1], dtype=np.int64)) & ((1 << bits) - 1)
    out[0, :] = vals.astype(f"u{out.dtype.itemsize}").view(out.dtype)


def _fill_index_cpp(op, ctx, arch: str) -> list[str]:
    from pypto_pro.backends.pto.ctypes_map import ctype
    t = ctype(op.dst.tile_type.dtype)  # type: ignore[union-attr]
    d = ctx.tile(op.dst)
    return [f"TCI<std::remove_reference_t<decltype({d})>, {t}, 0>({d}, ({t})({ctx.cexpr(op.scalars[0])}));"]


instruction("fill_index", FAMILY, fill(_fill_index_numerics), vector("expands", flops=False), _fill_index_cpp)
declare(FAMILY, "fill_index", "out, start",
        "Fill the one-row tile ``out`` with ``start, start + 1, ...`` over its valid columns (TCI).",
        _fill_index_check)
