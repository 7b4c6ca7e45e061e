"""Padding: ``pl.fillpad(out, src, *, mode=pl.FillPadMode.NORMAL)`` (real page
``memory_vector_computation/fillpad.md``; PTO-ISA TFILLPAD / TFILLPAD_EXPAND / TFILLPAD_INPLACE).

``out`` gets ``src``'s valid region, and its padding (the columns right of that region up to out's
full width, then the rows below it down to out's valid rows) gets the fill value of out's
``TileType.pad``: zero, or max / min (+-inf for floats, the integer limits otherwise).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from pypto_pro.backends.sim import rearrange as rr
from pypto_pro.frontend.operands import Args, in_section, want_enum
from pypto_pro.language.enums import FillPadMode, MemorySpace, SectionKind, TilePad
from pypto_pro.ops.decl import declare, instruction, vector
from pypto_pro.ops.elementwise import emit
from pypto_pro.ops.rearrange_kit import dispatcher, vec_tile, whole, width

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

FAMILY = "fillpad"
CPP = {FillPadMode.NORMAL: "TFILLPAD", FillPadMode.EXPAND: "TFILLPAD_EXPAND", FillPadMode.INPLACE: "TFILLPAD_INPLACE"}


def _check(p: "FunctionParser", node, a: Args) -> None:
    in_section(p, node, SectionKind.VECTOR, a.display)
    mode = want_enum(p, a, "mode", FillPadMode)
    for name in ("out", "src"):
        t = a[name]
        if getattr(getattr(t, "ref", None), "buffer", None) is not None and t.ref.buffer.space is MemorySpace.Mat:
            p.fail(a.node(name), "pl.fillpad on Mat (L1) tiles is not supported yet in this release")
    out = vec_tile(p, a, "out", cpp=CPP[mode])
    src = vec_tile(p, a, "src", cpp=CPP[mode])
    width(p, a, "out", out, (8, 16, 32))
    if out.tile_type.dtype.bits != src.tile_type.dtype.bits:
        p.fail(a.node("src"), f"pl.fillpad: 'src' ({src.tile_type.dtype.name}) must have out's element width "
                              f"({out.tile_type.dtype.name})")
    pad = out.tile_type.pad
    if pad is None or pad is TilePad.null:
        p.fail(a.node("out"), f"pl.fillpad: '{out.buffer.name}' has no pad value; give its pl.TileType "
                              "pad=pl.TilePad.zero, .max or .min")
    os_, ss = out.tile_type.shape, src.tile_type.shape
    if mode is FillPadMode.EXPAND:
        if os_[0] < ss[0] or os_[1] < ss[1]:
            p.fail(a.node("out"), f"pl.fillpad(mode=EXPAND): 'out' {list(os_)} must be at least src's {list(ss)}")
    elif os_ != ss:
        p.fail(a.node("out"), f"pl.fillpad(mode={mode.name}): 'out' {list(os_)} must have src's shape {list(ss)}")
    same = out.buffer.addrs == src.buffer.addrs and out.buffer.root.space is src.buffer.root.space
    if mode is FillPadMode.INPLACE and not same:
        p.fail(a.node("src"), "pl.fillpad(mode=INPLACE): 'out' and 'src' must be the same memory (same address)")
    if mode is not FillPadMode.INPLACE and same:
        p.fail(a.node("src"), f"pl.fillpad(mode={mode.name}): 'out' and 'src' are at the same address; use "
                              "mode=pl.FillPadMode.INPLACE")
    emit(p, node, a, "fillpad", out, (src,), (), ("out", "src"), mode=mode, pad=pad.name)


def _sim(op, env):
    mode, pad = op.attrs["mode"], op.attrs["pad"]

    def body(ts, slots):
        d, s = ts
        r, c = s.valid[slots[1]]
        dr = d.valid[slots[0]][0]
        sv = s.views[slots[1]]
        value = rr.pad_value(d.views[slots[0]].dtype, pad)
        copy = mode is not FillPadMode.INPLACE

        def compute(outs):
            src = sv if sv.dtype == outs[0].dtype else sv.view(outs[0].dtype)
            rr.fillpad(outs[0].reshape(whole(d)), src, r, c, max(dr, r), value, copy)
        reads = [(1, r, c)] if copy else []
        return reads, [(0, max(dr, r), whole(d)[1])], compute, max(dr, r), whole(d)[1]
    return dispatcher(op, env, body)


def _cpp(op, ctx, arch: str) -> list[str]:
    return [f"{CPP[op.attrs['mode']]}({ctx.tile(op.dst)}, {ctx.tile(op.srcs[0])});"]


instruction("fillpad", FAMILY, _sim, vector("expands", flops=False), _cpp)
declare(FAMILY, "fillpad", "out, src, *, mode=FillPadMode.NORMAL",
        "Copy ``src``'s valid region into ``out`` and fill the rest with out's TileType pad value (TFILLPAD); "
        "``mode``: NORMAL (same shape, other address), EXPAND (out larger), INPLACE (same tile memory).", _check)
