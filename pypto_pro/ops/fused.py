"""Fused and composite vector ops (real pages ``memory_vector_computation/fused_vector_computation/*``
and ``composite_computation/{axpy,fused_mul_add}.md``).

Two kinds, as the real backend spells them:

* **sequences** of single instructions, emitted as those instructions (so every stage, cost and
  checker sees exactly what the chip runs), with the real backend's operand order, which uses the
  *left* operand as the intermediate and so **overwrites it**:

  ===================  ===================================================================
  add_relu / sub_relu  ``TADD|TSUB(lhs, lhs, rhs); TRELU(out, lhs)``
  add_relu_cast /      ``TADD|TSUB(lhs, lhs, rhs); TRELU(lhs, lhs); TCVT(out, lhs, mode)``
  sub_relu_cast
  mul_cast             ``TMUL(lhs, lhs, rhs); TCVT(out, lhs, mode)``
  mul_add_dst          ``TMUL(lhs, lhs, rhs); TADD(out, lhs, out)``  (out = lhs*rhs + out)
  fused_mul_add        ``TMUL(lhs, lhs, out); TADD(out, lhs, rhs)``  (out = lhs*out + rhs)
  fused_mul_add_relu   ``TMUL(a, a, out); TADD(a, a, b); TRELU(out, a)``
  ===================  ===================================================================

* **single instructions**: TADDC (``addc``), TAXPY (``axpy``), TPARTADD/MAX/MIN/MUL (``part*``).
  Numerics: ``backends/sim/numerics_fused.py`` (every step rounds to the tile dtype).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from pypto_pro.backends.sim import numerics_fused
from pypto_pro.backends.sim.kit import Prepared, deferred, fault, tiles
from pypto_pro.backends.sim.templates import elementwise
from pypto_pro.frontend.operands import (Args, in_section, row_major, same_dtype, same_shape, tile_in,
                                         want_scalar)
from pypto_pro.ir.nodes import TileOp
from pypto_pro.language.dtypes import (ARITH_DTYPES, DataType, DT_BF16, DT_FP16, DT_FP32, DT_INT16, DT_INT32, DT_INT64,
                                       DT_UINT16, DT_UINT32, DT_UINT64, INT_DTYPES)
from pypto_pro.language.enums import MemorySpace, SectionKind
from pypto_pro.ops.conversion import CAST_DTYPES, cast_attrs
from pypto_pro.ops.cpp import call_cpp
from pypto_pro.ops.decl import declare, instruction, vector
from pypto_pro.ops.elementwise import emit

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

FAMILY = "fused_vector_computation"
VEC = (MemorySpace.Vec,)
B16_B32 = (DT_FP16, DT_BF16, DT_INT16, DT_UINT16, DT_FP32, DT_INT32, DT_UINT32)   # "b16、b32" (TADDC)
# The sequences run pl.add / pl.mul's instructions, so they take what those take (ARITH_DTYPES): the real
# pages also list UINT16/UINT32 (and 64-bit ints for mul_add_dst / mul_cast), which pl.add does not take yet.
SEQ_B16_B32 = tuple(d for d in B16_B32 if d in ARITH_DTYPES)
MUL_ADD_DTYPES = tuple(d for d in (DT_INT16, DT_UINT16, DT_INT32, DT_UINT32, DT_INT64, DT_UINT64, DT_FP16, DT_BF16,
                                   DT_FP32) if d in ARITH_DTYPES)
MUL_CAST_SRC = MUL_ADD_DTYPES                                                     # 16/32/64-bit ints, floats


def _same_tiles(p: "FunctionParser", a: Args, names: tuple[str, ...], dtypes, cpp: str) -> list:
    """Tiles ``names`` (the first is the reference): Vec, one of ``dtypes``, same shape and dtype, row-major."""
    ref = tile_in(p, a, names[0], VEC, dtypes)
    row_major(p, a, names[0], ref, cpp)
    refs = [ref]
    for name in names[1:]:
        t = tile_in(p, a, name, VEC, dtypes)
        same_shape(p, a, ref, names[0], t, name)
        same_dtype(p, a, ref, names[0], t, name)
        row_major(p, a, name, t, cpp)
        refs.append(t)
    return refs


# ---- sequences ----------------------------------------------------------------------------------

RELU_OPS = {"add_relu": ("add", "TADD", (DT_FP16, DT_FP32, DT_INT32)),
            "sub_relu": ("sub", "TSUB", (DT_FP16, DT_FP32))}


def _relu_check(api_name: str):
    instr, cpp, dtypes = RELU_OPS[api_name]

    def check(p: "FunctionParser", node, a: Args) -> None:
        in_section(p, node, SectionKind.VECTOR, a.display)
        out, lhs, rhs = _same_tiles(p, a, ("out", "lhs", "rhs"), dtypes, cpp)
        emit(p, node, a, instr, lhs, (lhs, rhs), (), ("lhs", "lhs", "rhs"))
        emit(p, node, a, "relu", out, (lhs,), (), ("out", "lhs"))
    return check


def _target(p: "FunctionParser", a: Args, out) -> None:
    t = a["target_type"]
    if not isinstance(t, DataType):
        p.fail(a.node("target_type"), f"'target_type' must be a pl.DT_* data type, got {p.describe(t)}")
    if t is not out.tile_type.dtype:
        p.fail(a.node("target_type"), f"{a.display}: target_type is {t.name} but 'out' is {out.tile_type.dtype.name}; "
                                      "they must agree")


CAST_OPS = {"add_relu_cast": ("add", "TADD", (DT_FP16, DT_FP32), True),
            "sub_relu_cast": ("sub", "TSUB", (DT_FP16, DT_FP32), True),
            "mul_cast": ("mul", "TMUL", MUL_CAST_SRC, False)}


def _cast_seq_check(api_name: str):
    instr, cpp, dtypes, relu = CAST_OPS[api_name]

    def check(p: "FunctionParser", node, a: Args) -> None:
        in_section(p, node, SectionKind.VECTOR, a.display)
        lhs, rhs = _same_tiles(p, a, ("lhs", "rhs"), dtypes, cpp)
        out = tile_in(p, a, "out", VEC, CAST_DTYPES)
        same_shape(p, a, lhs, "lhs", out, "out")
        row_major(p, a, "out", out, "TCVT")
        _target(p, a, out)
        attrs = cast_attrs(p, a, lhs.tile_type.dtype, out.tile_type.dtype)
        emit(p, node, a, instr, lhs, (lhs, rhs), (), ("lhs", "lhs", "rhs"))
        if relu:
            emit(p, node, a, "relu", lhs, (lhs,), (), ("lhs", "lhs"))
        emit(p, node, a, "cast", out, (lhs,), (), ("out", "lhs"), **attrs)
    return check


def _mul_add_dst_check(p: "FunctionParser", node, a: Args) -> None:
    in_section(p, node, SectionKind.VECTOR, a.display)
    out, lhs, rhs = _same_tiles(p, a, ("out", "lhs", "rhs"), MUL_ADD_DTYPES, "TMUL")
    emit(p, node, a, "mul", lhs, (lhs, rhs), (), ("lhs", "lhs", "rhs"))
    emit(p, node, a, "add", out, (lhs, out), (), ("out", "lhs", "out"))


def _fused_mul_add_check(p: "FunctionParser", node, a: Args) -> None:
    in_section(p, node, SectionKind.VECTOR, a.display)
    out, lhs, rhs = _same_tiles(p, a, ("out", "lhs", "rhs"), SEQ_B16_B32, "TMUL")
    emit(p, node, a, "mul", lhs, (lhs, out), (), ("lhs", "lhs", "out"))
    emit(p, node, a, "add", out, (lhs, rhs), (), ("out", "lhs", "rhs"))


def _fused_mul_add_relu_check(p: "FunctionParser", node, a: Args) -> None:
    in_section(p, node, SectionKind.VECTOR, a.display)
    out, ta, tb = _same_tiles(p, a, ("out", "a", "b"), SEQ_B16_B32, "TMUL")
    emit(p, node, a, "mul", ta, (ta, out), (), ("a", "a", "out"))
    emit(p, node, a, "add", ta, (ta, tb), (), ("a", "a", "b"))
    emit(p, node, a, "relu", out, (ta,), (), ("out", "a"))


for _api in RELU_OPS:
    declare(FAMILY, _api, "out, lhs, rhs",
            f"``out = relu(lhs {'+' if _api == 'add_relu' else '-'} rhs)``, emitted as {RELU_OPS[_api][1]}(lhs, lhs, "
            "rhs); TRELU(out, lhs): **lhs is overwritten** with the intermediate.", _relu_check(_api))
for _api, (_i, _c, _d, _relu) in CAST_OPS.items():
    declare(FAMILY, _api, "out, lhs, rhs, target_type, *, mode=RoundMode.CAST_ROUND",
            f"``out = cast({'relu(' if _relu else ''}lhs {_i} rhs{')' if _relu else ''}, target_type, mode)``, emitted "
            f"as {_c}(lhs, lhs, rhs){'; TRELU(lhs, lhs)' if _relu else ''}; TCVT(out, lhs, mode): **lhs is "
            "overwritten**. ``target_type`` must be out's dtype.", _cast_seq_check(_api))
declare(FAMILY, "mul_add_dst", "out, lhs, rhs",
        "``out = lhs * rhs + out`` (TMUL(lhs, lhs, rhs); TADD(out, lhs, out): **lhs is overwritten**).",
        _mul_add_dst_check)
declare("composite_computation", "fused_mul_add", "out, lhs, rhs",
        "``out = lhs * out + rhs`` (TMUL(lhs, lhs, out); TADD(out, lhs, rhs): **lhs is overwritten**).",
        _fused_mul_add_check)
declare(FAMILY, "fused_mul_add_relu", "out, a, b",
        "``out = relu(out * a + b)`` (TMUL(a, a, out); TADD(a, a, b); TRELU(out, a): **a is overwritten**).",
        _fused_mul_add_relu_check)


# ---- TADDC ----------------------------------------------------------------------------------------


def _addc_check(p: "FunctionParser", node, a: Args) -> None:
    in_section(p, node, SectionKind.VECTOR, a.display)
    out, ta, tb, tc = _same_tiles(p, a, ("out", "a", "b", "c"), B16_B32, "TADDC")
    emit(p, node, a, "addc", out, (ta, tb, tc), (), ("out", "a", "b", "c"))


# Cost: no a5 row; TADDC is two vadd passes, priced as TADD's row twice would be (basis: docs/numerics.md)
instruction("addc", FAMILY, elementwise(numerics_fused.addc), vector("add"), call_cpp("TADDC"))
declare(FAMILY, "addc", "out, a, b, c", "``out = (a + b) + c`` over out's valid shape (TADDC; b16 / b32 elements).",
        _addc_check)


# ---- TAXPY ----------------------------------------------------------------------------------------


def _axpy_check(p: "FunctionParser", node, a: Args) -> None:
    in_section(p, node, SectionKind.VECTOR, a.display)
    out = tile_in(p, a, "out", VEC, (DT_FP16, DT_FP32))
    src = tile_in(p, a, "src", VEC, (DT_FP16, DT_FP32))
    same_shape(p, a, out, "out", src, "src")
    od, sd = out.tile_type.dtype, src.tile_type.dtype
    if od is not sd and not (sd is DT_FP16 and od is DT_FP32):
        p.fail(a.node("src"), f"{a.display}: 'src' is {sd.name} and 'out' {od.name}; TAXPY takes the same dtype or an "
                              "FP16 source with an FP32 destination")
    row_major(p, a, "out", out, "TAXPY")
    row_major(p, a, "src", src, "TAXPY")
    emit(p, node, a, "axpy", out, (src, out), (want_scalar(p, a, "alpha", sd),), ("out", "src", "out"))


def _axpy_cpp(op: TileOp, ctx, arch: str) -> list[str]:
    from pypto_pro.backends.pto.ctypes_map import ctype
    src = op.srcs[0]
    return [f"TAXPY({ctx.tile(op.dst)}, {ctx.tile(src)}, "
            f"static_cast<{ctype(src.tile_type.dtype)}>({ctx.cexpr(op.scalars[0])}));"]


# ``out`` is read (the accumulator) and written: the IR lists it as a source too, so auto sync and the
# checkers see the read. Cost: no a5 row; one multiply-add pass, priced as TMUL.
instruction("axpy", "composite_computation",
            elementwise(lambda out, src, acc, alpha: numerics_fused.axpy(out, src, alpha, acc)), vector("mul"),
            _axpy_cpp)
declare("composite_computation", "axpy", "out, src, alpha",
        "``out = alpha * src + out`` (TAXPY); ``alpha`` is held in src's dtype; an FP16 ``src`` with an FP32 ``out`` "
        "is widened first.", _axpy_check)


# ---- TPART* ---------------------------------------------------------------------------------------

PART = {"partadd": ("TPARTADD", INT_DTYPES + (DT_FP16, DT_BF16, DT_FP32)),
        "partmax": ("TPARTMAX", INT_DTYPES + (DT_FP16, DT_BF16, DT_FP32)),
        "partmin": ("TPARTMIN", INT_DTYPES + (DT_FP16, DT_BF16, DT_FP32)),
        "partmul": ("TPARTMUL", tuple(d for d in INT_DTYPES if d.itemsize < 8) + (DT_FP16, DT_BF16, DT_FP32))}


def _part_check(api_name: str):
    cpp, dtypes = PART[api_name]

    def check(p: "FunctionParser", node, a: Args) -> None:
        in_section(p, node, SectionKind.VECTOR, a.display)
        out, s0, s1 = _same_tiles(p, a, ("out", "src0", "src1"), dtypes, cpp)
        emit(p, node, a, api_name, out, (s0, s1), (), ("out", "src0", "src1"))
    return check


def _part_sim(op: TileOp, env):
    """TPART*: over out's valid shape; one source must cover it, the other's valid region may be smaller
    (a5 asserts this: a located fault otherwise)."""
    d, a, b = tiles(op, env)
    name = op.op

    def dispatch(sd: int, sa: int, sb: int) -> Prepared:
        r, c = d.valid[sd]
        ar, ac = a.valid[sa]
        br, bc = b.valid[sb]
        if (ar, ac) != (r, c) and (br, bc) != (r, c):
            raise fault(op, f"pl.{name}: neither source's valid shape ({ar} x {ac}, {br} x {bc}) equals the "
                            f"destination's {r} x {c}; one of them must")
        if ar > r or ac > c or br > r or bc > c:
            raise fault(op, f"pl.{name}: a source's valid shape exceeds the destination's {r} x {c}")
        av, bv = a.views[sa][:ar, :ac], b.views[sb][:br, :bc]
        run = deferred(lambda out: numerics_fused.part(name, out, av, bv), d.views[sd][:r, :c])
        acc = (a.access(sa, ar, ac, False), b.access(sb, br, bc, False), d.access(sd, r, c, True))
        return Prepared(r, c, c * d.item == d.row_bytes, acc, (), r * c * d.item, run, (d.written(sd, r, c),))
    return dispatch


_PART_COST = {"partadd": "add", "partmax": "maximum", "partmin": "minimum", "partmul": "mul"}
for _api, (_cpp, _dts) in PART.items():
    instruction(_api, FAMILY, _part_sim, vector(_PART_COST[_api]), call_cpp(_cpp))
    declare(FAMILY, _api, "out, src0, src1",
            f"Partial {_api[4:]} ({_cpp}): where both sources are valid ``out = src0 {_api[4:]} src1``, where only one "
            "is, a copy of it; one source's valid shape must equal out's.", _part_check(_api))
