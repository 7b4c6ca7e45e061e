"""Bitwise elementwise ops: ``pl.and_`` (tile or scalar right operand), ``pl.shl`` / ``pl.shr``
(per-element shift tiles) and ``pl.xor`` (with its workspace tile) (real pages
``memory_vector_computation/elementwise/{and_,shl,shr,xor}.md``; PTO-ISA TAND / TANDS / TSHL /
TSHR / TXOR). The real public API has no ``or_`` / ``not_`` / scalar shift forms.

Every instruction computes over ``out``'s valid shape; its tile sources must have that valid shape.
Numerics: ``backends/sim/numerics_bits.py`` (two's complement; arithmetic right shift for signed,
logical for unsigned; a shift amount outside ``0 .. width-1`` is a located simulation fault).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from pypto_pro.backends.sim import numerics_bits
from pypto_pro.backends.sim.kit import fault
from pypto_pro.backends.sim.templates import elementwise
from pypto_pro.frontend.operands import (Args, distinct, in_section, is_scalar_arg, row_major, same_dtype,
                                         same_shape, tile_in, want_scalar)
from pypto_pro.language.dtypes import (DT_INT8, DT_INT16, DT_INT32, DT_UINT8, DT_UINT16, DT_UINT32,
                                       INT_DTYPES)
from pypto_pro.language.enums import MemorySpace, SectionKind
from pypto_pro.ops.cpp import call_cpp
from pypto_pro.ops.decl import declare, instruction, vector
from pypto_pro.ops.elementwise import emit

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

FAMILY = "elementwise"
VEC = (MemorySpace.Vec,)
INT_8_16_32 = (DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32)  # "8/16/32位整型" (real pages)


def _operands(p: "FunctionParser", a: Args, names: tuple[str, ...], dtypes, cpp: str) -> list:
    """``out`` and the same-shape, same-dtype, row-major tile sources ``names``."""
    out = tile_in(p, a, "out", VEC, dtypes)
    row_major(p, a, "out", out, cpp)
    refs = [out]
    for name in names:
        t = tile_in(p, a, name, VEC, dtypes)
        same_shape(p, a, out, "out", t, name)
        same_dtype(p, a, out, "out", t, name)
        row_major(p, a, name, t, cpp)
        refs.append(t)
    return refs


def _and_check(p: "FunctionParser", node, a: Args) -> None:
    in_section(p, node, SectionKind.VECTOR, a.display)
    if is_scalar_arg(a["rhs"]):
        out, lhs = _operands(p, a, ("lhs",), INT_8_16_32, "TANDS")
        emit(p, node, a, "ands", out, (lhs,), (want_scalar(p, a, "rhs", out.tile_type.dtype),), ("out", "lhs"))
        return
    out, lhs, rhs = _operands(p, a, ("lhs", "rhs"), INT_8_16_32, "TAND")
    emit(p, node, a, "and", out, (lhs, rhs), (), ("out", "lhs", "rhs"))


def _shift_check(instr: str, cpp: str):
    def check(p: "FunctionParser", node, a: Args) -> None:
        in_section(p, node, SectionKind.VECTOR, a.display)
        out, lhs, rhs = _operands(p, a, ("lhs", "rhs"), INT_DTYPES, cpp)
        emit(p, node, a, instr, out, (lhs, rhs), (), ("out", "lhs", "rhs"))
    return check


def _xor_check(p: "FunctionParser", node, a: Args) -> None:
    in_section(p, node, SectionKind.VECTOR, a.display)
    out, lhs, rhs, tmp = _operands(p, a, ("lhs", "rhs", "tmp"), INT_8_16_32, "TXOR")
    for other, name in ((out, "out"), (lhs, "lhs"), (rhs, "rhs")):
        distinct(p, a, "tmp", other, name)
    emit(p, node, a, "xor", out, (lhs, rhs, tmp), (), ("out", "lhs", "rhs", "tmp"))


def _guarded(op_name: str, fn):
    """Numerics whose ValueError (a forbidden operand value) becomes a located fault of the statement."""
    def rule(op, env):
        def numerics(out, *xs):
            try:
                fn(out, *xs)
            except ValueError as e:
                raise fault(op, f"pl.{op.attrs.get('api', op_name)}: {e}") from None
        return elementwise(numerics)(op, env)
    return rule


# Cost: the a5 table has no row for these; they are one pass of the vector ALU like TADD, whose row
# they take (documented in docs/numerics.md). The a5 TXOR is one vxor and leaves ``tmp`` untouched.
instruction("and", FAMILY, elementwise(lambda o, x, y: numerics_bits.bitwise("and", o, x, y)), vector("add"),
            call_cpp("TAND"))
instruction("ands", FAMILY, elementwise(lambda o, x, s: numerics_bits.bitwise("and", o, x, s)), vector("adds"),
            call_cpp("TANDS", scalar=True))
instruction("shl", FAMILY, _guarded("shl", lambda o, x, n: numerics_bits.shift("shl", o, x, n)), vector("add"),
            call_cpp("TSHL"))
instruction("shr", FAMILY, _guarded("shr", lambda o, x, n: numerics_bits.shift("shr", o, x, n)), vector("add"),
            call_cpp("TSHR"))
instruction("xor", FAMILY, elementwise(lambda o, x, y: numerics_bits.bitwise("xor", o, x, y), unused=1),
            vector("add"), call_cpp("TXOR"))

declare(FAMILY, "and_", "out, lhs, rhs",
        "Bitwise ``out = lhs & rhs`` over out's valid shape (8/16/32-bit integers); ``rhs`` a tile (TAND) or an "
        "integer scalar (TANDS).", _and_check)
declare(FAMILY, "shl", "out, lhs, rhs",
        "``out = lhs << rhs`` with a per-element shift tile (TSHL); amounts must be in 0 .. width-1.",
        _shift_check("shl", "TSHL"))
declare(FAMILY, "shr", "out, lhs, rhs",
        "``out = lhs >> rhs`` with a per-element shift tile (TSHR): arithmetic for signed, logical for unsigned.",
        _shift_check("shr", "TSHR"))
declare(FAMILY, "xor", "out, lhs, rhs, tmp",
        "Bitwise ``out = lhs ^ rhs`` (TXOR); ``tmp`` is a workspace tile like ``out`` that must not overlap the "
        "operands.", _xor_check)
