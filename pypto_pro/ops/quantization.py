"""Quantisation: ``pl.quant(out, src, scale, *, mode=pl.QuantMode.SYM, offset=None)`` and
``pl.dequant(out, src, scale, offset)`` (real pages ``operation/quantization/{quant,dequant}.md``;
PTO-ISA TQUANT<INT8_SYM / INT8_ASYM>, TDEQUANT). One scale (and offset) per row.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from pypto_pro.backends.sim import rearrange as rr
from pypto_pro.frontend.operands import Args, in_section, same_shape, want_enum
from pypto_pro.language.dtypes import DT_FP32, DT_INT8, DT_INT16, DT_UINT8
from pypto_pro.language.enums import QuantMode, SectionKind
from pypto_pro.ops.decl import declare, instruction, vector
from pypto_pro.ops.elementwise import emit
from pypto_pro.ops.rearrange_kit import dispatcher, flat_rows, vec_tile, whole

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

FAMILY = "quantization"


def _param(p: "FunctionParser", a: Args, name: str, rows: int):
    t = vec_tile(p, a, name, (DT_FP32,), rm=False)
    if t.tile_type.rows * t.tile_type.cols < rows:
        p.fail(a.node(name), f"{a.display}: '{name}' holds one FP32 value per row: it needs {rows} values, "
                             f"'{t.buffer.name}' is {list(t.tile_type.shape)}")
    return t


def _quant_check(p: "FunctionParser", node, a: Args) -> None:
    in_section(p, node, SectionKind.VECTOR, a.display)
    mode = want_enum(p, a, "mode", QuantMode)
    sym = mode is QuantMode.SYM
    out = vec_tile(p, a, "out", (DT_INT8,) if sym else (DT_UINT8,), cpp="TQUANT")
    src = vec_tile(p, a, "src", (DT_FP32,), cpp="TQUANT")
    same_shape(p, a, out, "out", src, "src")
    scale = _param(p, a, "scale", src.tile_type.rows)
    srcs = [src, scale]
    if not sym:
        if a["offset"] is None:
            p.fail(a.node("mode"), "pl.quant(mode=pl.QuantMode.ASYM) needs offset= (one zero point per row)")
        srcs.append(_param(p, a, "offset", src.tile_type.rows))
    emit(p, node, a, "quant", out, tuple(srcs), (), ("out", "src", "scale", "offset")[:len(srcs) + 1], sym=sym)


def _quant_sim(op, env):
    def body(ts, slots):
        d, s, sc = ts[0], ts[1], ts[2]
        off = ts[3] if len(ts) > 3 else None
        r, c = s.valid[slots[1]]
        sv = s.views[slots[1]][:r, :c]
        scale = sc.views[slots[2]].reshape(-1)[:r]  # the a5 kernel reads scale element `row` (flat)
        offset = off.views[slots[3]].reshape(-1)[:r] if off is not None else None

        def compute(outs):
            outs[0].reshape(whole(d))[:r, :c] = rr.quant_int8(sv, scale, offset)
        reads = [(1, r, c), (2, *flat_rows(sc, r))] + ([(3, *flat_rows(off, r))] if off is not None else [])
        return reads, [(0, r, c)], compute, r, c
    return dispatcher(op, env, body)


def _quant_cpp(op, ctx, arch: str) -> list[str]:
    names = ", ".join(ctx.tile(x) for x in (op.dst, *op.srcs))
    return [f"TQUANT<QuantType::{'INT8_SYM' if op.attrs['sym'] else 'INT8_ASYM'}>({names});"]


instruction("quant", FAMILY, _quant_sim, vector("cast", flops=False), _quant_cpp)
declare(FAMILY, "quant", "out, src, scale, *, mode=QuantMode.SYM, offset=None",
        "Quantise FP32 ``src`` per row: SYM ``out = sat_int8(rint(src * scale))``; ASYM ``out = sat_uint8(rint(src * "
        "scale + offset))`` (TQUANT).", _quant_check)


def _dequant_check(p: "FunctionParser", node, a: Args) -> None:
    in_section(p, node, SectionKind.VECTOR, a.display)
    out = vec_tile(p, a, "out", (DT_FP32,), cpp="TDEQUANT")
    src = vec_tile(p, a, "src", (DT_INT8, DT_INT16), cpp="TDEQUANT")
    same_shape(p, a, out, "out", src, "src")
    scale = _param(p, a, "scale", src.tile_type.rows)
    offset = _param(p, a, "offset", src.tile_type.rows)
    emit(p, node, a, "dequant", out, (src, scale, offset), (), ("out", "src", "scale", "offset"))


def _dequant_sim(op, env):
    def body(ts, slots):
        d, s, sc, off = ts
        r, c = d.valid[slots[0]]
        sv = s.views[slots[1]][:r, :c]
        scale = sc.views[slots[2]][:r, 0]  # element (row, 0): the a5 kernel steps the row stride
        offset = off.views[slots[3]][:r, 0]

        def compute(outs):
            outs[0].reshape(whole(d))[:r, :c] = rr.dequant(sv, scale, offset)
        return [(1, r, c), (2, r, 1), (3, r, 1)], [(0, r, c)], compute, r, c
    return dispatcher(op, env, body)


instruction("dequant", FAMILY, _dequant_sim, vector("cast", flops=False),
            lambda op, ctx, arch: [f"TDEQUANT({', '.join(ctx.tile(x) for x in (op.dst, *op.srcs))});"])
declare(FAMILY, "dequant", "out, src, scale, offset",
        "Dequantise int8 / int16 ``src`` per row: ``out = (src - offset) * scale`` in FP32 (TDEQUANT).",
        _dequant_check)
