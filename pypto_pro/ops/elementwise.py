"""Elementwise vector ops: binary (tile or scalar right operand), their scalar forms, unary math,
and ``pl.expands`` (real pages: ``memory_vector_computation/elementwise/*.md``,
``math_functions/{exp,recip,rsqrt,expands}.md``).

``pl.add(out, lhs, rhs)`` dispatches on ``rhs`` as the real parser does: a tile gives ``add``
(TADD), a scalar gives ``adds`` (TADDS). Every instruction computes over ``out``'s valid shape,
and its tile sources must have that valid shape (PTO-ISA). Numerics: ``backends/sim/numerics.py``
(one rounding to the tile dtype; ints wrap), documented in docs/numerics.md.
"""
from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from pypto_pro.backends.sim import numerics, torch_engine
from pypto_pro.backends.sim.templates import elementwise, fill
from pypto_pro.frontend.operands import (Args, in_section, is_scalar_arg, row_major, same_dtype, same_shape,
                                         tile_in, want_scalar)
from pypto_pro.ir.nodes import TileOp
from pypto_pro.language.dtypes import (ARITH_DTYPES, DT_BF16, DT_FP16, DT_FP32, DT_INT8, DT_INT16, DT_INT32, DT_INT64,
                                       DT_UINT8, DT_UINT16, DT_UINT32, DT_UINT64)
from pypto_pro.language.dtypes import INT_DTYPES
from pypto_pro.language.enums import MemorySpace, PipeType, SectionKind
from pypto_pro.ops.cpp import call_cpp
from pypto_pro.ops.decl import declare, instruction, vector

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

FAMILY = "elementwise"
VEC = (MemorySpace.Vec,)
FLOATS = (DT_FP16, DT_BF16, DT_FP32)
# pl.div: 16 / 32 / 64-bit integers, FP16 and FP32 (real div.md; a5 TDivS / TDiv static_asserts, the 64-bit
# ones through PTO-ISA Int64Div: C division, truncating toward zero), and BF16 as before
DIV_DTYPES = FLOATS + (DT_INT16, DT_UINT16, DT_INT32, DT_UINT32, DT_INT64, DT_UINT64)
FILL_DTYPES = (DT_FP16, DT_BF16, DT_FP32, DT_INT8, DT_UINT8, DT_INT16, DT_INT32, DT_UINT16, DT_UINT32)  # TEXPANDS (a5)


def emit(p: "FunctionParser", node, a: Args, instr: str, dst, srcs: tuple, scalars: tuple = (),
         names: tuple = (), **attrs) -> None:
    """Append one V-pipe instruction to the kernel."""
    attrs["api"] = a.name
    if names:
        attrs["operand_names"] = names
    p.ctx.builder.emit(TileOp(instr, PipeType.V, dst, srcs, tuple(scalars), attrs, p.loc(node)))


# ---- binary, with the unified tile / scalar right operand -------------------------------------------

BINARY = {  # api -> (tile instruction, scalar instruction, PTO-ISA tile op, scalar op, dtypes)
    "add": ("add", "adds", "TADD", "TADDS", ARITH_DTYPES),
    "sub": ("sub", "subs", "TSUB", "TSUBS", ARITH_DTYPES),
    "mul": ("mul", "muls", "TMUL", "TMULS", ARITH_DTYPES),
    "div": ("div", "divs", "TDIV", "TDIVS", DIV_DTYPES),
    "maximum": ("maximum", "maxs", "TMAX", "TMAXS", ARITH_DTYPES),
    "minimum": ("minimum", "mins", "TMIN", "TMINS", ARITH_DTYPES),
}

# the a5 dtype tables (PTO-ISA static_asserts, the real pages): add / sub / maximum / minimum take every
# 8- to 64-bit integer, mul every 16- to 64-bit one, as do their scalar forms (TADDS ... TMINS)
# (a5 only: PTO-ISA's a2a3 instructions take fp16, fp32, int16, int32, so there the common set stays)
for _api, _dts in (("add", FLOATS + INT_DTYPES), ("sub", FLOATS + INT_DTYPES), ("maximum", FLOATS + INT_DTYPES),
                   ("minimum", FLOATS + INT_DTYPES), ("mul", FLOATS + tuple(d for d in INT_DTYPES if d.bits > 8))):
    BINARY[_api] = BINARY[_api][:4] + (_dts,)


def _arch_dtypes(p: "FunctionParser", dtypes: tuple) -> tuple:
    return dtypes if p.ctx.arch.name == "a5" else tuple(d for d in dtypes if d in ARITH_DTYPES or d in FLOATS)


def binary_check(api_name: str, reduce_check=None):
    tile_instr, scalar_instr, tile_cpp, scalar_cpp, all_dtypes = BINARY[api_name]

    def check(p: "FunctionParser", node, a: Args) -> None:
        if reduce_check is not None and a.get("dim") is not None:
            return reduce_check(p, node, a)
        in_section(p, node, SectionKind.VECTOR, a.display)
        dtypes = _arch_dtypes(p, all_dtypes)
        out = tile_in(p, a, "out", VEC, dtypes)
        lhs = tile_in(p, a, "lhs", VEC, dtypes)
        same_shape(p, a, out, "out", lhs, "lhs")
        same_dtype(p, a, out, "out", lhs, "lhs")
        scalar = is_scalar_arg(a["rhs"])
        for name, t in (("out", out), ("lhs", lhs)):
            row_major(p, a, name, t, scalar_cpp if scalar else tile_cpp)
        if scalar:
            emit(p, node, a, scalar_instr, out, (lhs,), (want_scalar(p, a, "rhs", out.tile_type.dtype),),
                 ("out", "lhs"))
            return
        rhs = tile_in(p, a, "rhs", VEC, dtypes)
        same_shape(p, a, out, "out", rhs, "rhs")
        same_dtype(p, a, out, "out", rhs, "rhs")
        row_major(p, a, "rhs", rhs, tile_cpp)
        emit(p, node, a, tile_instr, out, (lhs, rhs), (), ("out", "lhs", "rhs"))
    return check


def scalar_form_check(instr: str, all_dtypes, cpp: str):
    """Our (and the real backend's pass-through) explicit scalar forms: ``pl.adds(out, src, scalar)``."""
    def check(p: "FunctionParser", node, a: Args) -> None:
        in_section(p, node, SectionKind.VECTOR, a.display)
        dtypes = _arch_dtypes(p, all_dtypes)
        out = tile_in(p, a, "out", VEC, dtypes)
        src = tile_in(p, a, "src", VEC, dtypes)
        same_shape(p, a, out, "out", src, "src")
        same_dtype(p, a, out, "out", src, "src")
        row_major(p, a, "out", out, cpp)
        row_major(p, a, "src", src, cpp)
        emit(p, node, a, instr, out, (src,), (want_scalar(p, a, "scalar", out.tile_type.dtype),), ("out", "src"))
    return check


def _binary_numerics(name: str):
    def run(out, x, y) -> None:
        numerics.binary(name, out, x, y)
    run.bind = lambda out, x, y: torch_engine.bind_binary(name, out, x, y)  # type: ignore[attr-defined]
    return run


def _scalar_numerics(name: str):
    return lambda out, x, s: numerics.binary_scalar(name, out, x, s)


def _located(rule_of):
    """An elementwise rule whose numerics errors (an integer division by zero) name the op's line."""
    def wrap(numerics_fn):
        def rule(op, env):
            def run(*args):
                try:
                    numerics_fn(*args)
                except ZeroDivisionError as exc:
                    from pypto_pro.backends.sim.kit import fault  # (kit imports the ops: not at module level)
                    raise fault(op, f"pl.{op.attrs.get('api', op.op)}: {exc}") from None
            return rule_of(run)(op, env)
        return rule
    return wrap


for _api, (_ti, _si, _tcpp, _scpp, _dts) in BINARY.items():
    # (an integer division by zero stops the launch: div is not batched, so it stops where it did)
    _rule = _located(elementwise) if _api == "div" else partial(elementwise, batch=True)
    instruction(_ti, FAMILY, _rule(_binary_numerics(_ti)), vector(_ti), call_cpp(_tcpp))
    instruction(_si, FAMILY, _rule(_scalar_numerics(_si)), vector(_si), call_cpp(_scpp, scalar=True))
    if _api not in ("maximum", "minimum"):  # those two also reduce (dim=); declared in reduction.py
        declare(FAMILY, _api, "out, lhs, rhs",
                f"``out = lhs {_api} rhs`` over out's valid shape; ``rhs`` is a tile ({_tcpp}) or a scalar ({_scpp}).",
                binary_check(_api))
    declare(FAMILY, _si, "out, src, scalar", f"``out = {_si[:-1]}(src, scalar)`` ({_scpp}; same as pl.{_api} with a "
            "scalar right operand).", scalar_form_check(_si, _dts, _scpp))


# ---- unary math -----------------------------------------------------------------------------------

UNARY = {  # api -> (PTO-ISA op, dtypes)
    "neg": ("TNEG", ARITH_DTYPES), "abs": ("TABS", ARITH_DTYPES), "exp": ("TEXP", FLOATS), "log": ("TLOG", FLOATS),
    "sqrt": ("TSQRT", FLOATS), "rsqrt": ("TRSQRT", FLOATS), "recip": ("TRECIP", FLOATS),
    "relu": ("TRELU", ARITH_DTYPES),
}


def unary_check(name: str, dtypes, cpp: str):
    def check(p: "FunctionParser", node, a: Args) -> None:
        in_section(p, node, SectionKind.VECTOR, a.display)
        out = tile_in(p, a, "out", VEC, dtypes)
        src = tile_in(p, a, "src", VEC, dtypes)
        same_shape(p, a, out, "out", src, "src")
        same_dtype(p, a, out, "out", src, "src")
        row_major(p, a, "out", out, cpp)
        row_major(p, a, "src", src, cpp)
        emit(p, node, a, name, out, (src,), (), ("out", "src"))
    return check


def _unary_numerics(name: str):
    return lambda out, x: numerics.unary(name, out, x)


for _name, (_cpp, _dts) in UNARY.items():
    instruction(_name, FAMILY, elementwise(_unary_numerics(_name), batch=True), vector(_name), call_cpp(_cpp))
    declare(FAMILY, _name, "out, src", f"``out = {_name}(src)`` over out's valid shape ({_cpp}).",
            unary_check(_name, _dts, _cpp))


# ---- expands ----------------------------------------------------------------------------------------


def _expands_check(p: "FunctionParser", node, a: Args) -> None:
    in_section(p, node, SectionKind.VECTOR, a.display)
    out = tile_in(p, a, "out", VEC, FILL_DTYPES)
    emit(p, node, a, "expands", out, (), (want_scalar(p, a, "scalar", out.tile_type.dtype),), ("out",))


instruction("expands", FAMILY, fill(numerics.fill), vector("expands", flops=False), call_cpp("TEXPANDS", scalar=True))
declare(FAMILY, "expands", "out, scalar", "Fill ``out``'s valid region with ``scalar`` (TEXPANDS).", _expands_check)
