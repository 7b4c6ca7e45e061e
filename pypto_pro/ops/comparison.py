"""Compare and select: ``pl.eq ne lt le gt ge`` (tile or scalar right operand; PTO-ISA TCMP /
TCMPS) and ``pl.select(out, mask, lhs, rhs, tmp)`` (TSEL / TSELS) (real pages
``memory_vector_computation/comparison/comparison.md``, ``selection/select.md``).

The compare writes a **bit-packed UINT8 mask**: row ``i`` of the mask tile holds the results of
source row ``i``, bit ``j % 8`` of byte ``j // 8`` (LSB first) for column ``j``, stored in whole
vector chunks as the a5 code does (``backends/sim/numerics_bits.py``). It covers the source's
valid shape (TCMP reads ``lhs``'s valid shape); the select covers ``out``'s. ``tmp`` is required by
the API and neither read nor written.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from pypto_pro.backends.sim import numerics_bits
from pypto_pro.backends.sim.kit import Prepared, deferred, fault, require_valid, tiles
from pypto_pro.frontend.operands import (Args, in_section, is_scalar_arg, row_major, same_dtype, same_shape,
                                         tile_in, want_scalar, want_tile)
from pypto_pro.ir.nodes import TileOp
from pypto_pro.language.dtypes import DT_BF16, DT_FP16, DT_FP32, DT_UINT8, INT_DTYPES
from pypto_pro.language.enums import MemorySpace, SectionKind
from pypto_pro.ops.decl import declare, instruction, vector
from pypto_pro.ops.elementwise import emit

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

FAMILY = "comparison"
VEC = (MemorySpace.Vec,)
CMP_DTYPES = INT_DTYPES + (DT_FP16, DT_BF16, DT_FP32)      # TcmpCheck (a5)
SEL_DTYPES = CMP_DTYPES                                     # TSEL: 1/2/4/8-byte elements
SELS_DTYPES = INT_DTYPES + (DT_FP16, DT_FP32)               # the real page: no BF16 with a scalar
MODES = {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE"}  # PTO-ISA CmpMode
SYMBOL = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


# ---- compare ------------------------------------------------------------------------------------


def _mask_fits(p: "FunctionParser", a: Args, mask, src, what: str) -> None:
    """The mask tile must be UINT8, row-major, hold a row per source row and the packed bytes of a row."""
    mt, st = mask.tile_type, src.tile_type
    need = numerics_bits.mask_bytes(st.cols, st.dtype.itemsize)
    if mt.rows < st.rows or mt.cols < need:
        p.fail(a.node(what), f"{a.display}: mask tile '{mask.buffer.name}' is {list(mt.shape)}; a bit-packed mask of "
                             f"{list(st.shape)} {st.dtype.name} elements needs at least [{st.rows}, {need}] UINT8 "
                             "(use the source's shape)")


def _cmp_check(api_name: str):
    mode = MODES[api_name]

    def check(p: "FunctionParser", node, a: Args) -> None:
        in_section(p, node, SectionKind.VECTOR, a.display)
        scalar = is_scalar_arg(a["rhs"])
        cpp = "TCMPS" if scalar else "TCMP"
        out = tile_in(p, a, "out", VEC, (DT_UINT8,))
        lhs = tile_in(p, a, "lhs", VEC, CMP_DTYPES)
        row_major(p, a, "out", out, cpp)
        row_major(p, a, "lhs", lhs, cpp)
        _mask_fits(p, a, out, lhs, "out")
        if scalar:
            emit(p, node, a, "cmps", out, (lhs,), (want_scalar(p, a, "rhs", lhs.tile_type.dtype),), ("out", "lhs"),
                 cmp_mode=mode)
            return
        rhs = tile_in(p, a, "rhs", VEC, CMP_DTYPES)
        same_shape(p, a, lhs, "lhs", rhs, "rhs")
        same_dtype(p, a, lhs, "lhs", rhs, "rhs")
        row_major(p, a, "rhs", rhs, cpp)
        emit(p, node, a, "cmp", out, (lhs, rhs), (), ("out", "lhs", "rhs"), cmp_mode=mode)
    return check


def _cmp_sim(op: TileOp, env) -> callable:
    """TCMP / TCMPS over the source's valid shape into the packed mask rows."""
    ts = tiles(op, env)
    m, a = ts[0], ts[1]
    b = ts[2] if len(ts) > 2 else None
    mode = op.attrs["cmp_mode"].lower()
    nbytes_of = numerics_bits.mask_bytes

    def dispatch(sm: int, sa: int, *rest) -> Prepared:
        r, c = a.valid[sa]
        if b is not None:
            require_valid(op, b, rest[0], r, c, "rhs")
            rhs_view = b.views[rest[0]][:r, :c]
        av = a.views[sa][:r, :c]
        nb = nbytes_of(c, a.item)
        if m.st.buffer.tile_type.rows < r or m.st.buffer.tile_type.cols < nb:
            raise fault(op, f"pl.{op.attrs.get('api')}: mask tile '{m.label}' cannot hold the packed mask of {r} x {c}")

        def compute(out) -> None:
            numerics_bits.compare(mode, out, av, rhs_view if b is not None else rest[0])
        run = deferred(compute, m.views[sm][:r, :nb])
        acc = [a.access(sa, r, c, False), m.access(sm, r, nb, True)]
        if b is not None:
            acc.insert(1, b.access(rest[0], r, c, False))
        return Prepared(r, c, c * a.item == a.row_bytes, tuple(acc), (), r * c * a.item, run, (m.written(sm, r, nb),))
    return dispatch


def _cmp_cpp(scalar: bool):
    def emit_cpp(op: TileOp, ctx, arch: str) -> list[str]:
        from pypto_pro.backends.pto.ctypes_map import ctype
        args = [ctx.tile(op.dst), ctx.tile(op.srcs[0])]
        if scalar:
            args.append(f"static_cast<{ctype(op.srcs[0].tile_type.dtype)}>({ctx.cexpr(op.scalars[0])})")
        else:
            args.append(ctx.tile(op.srcs[1]))
        return [f"{'TCMPS' if scalar else 'TCMP'}({', '.join(args)}, CmpMode::{op.attrs['cmp_mode']});"]
    return emit_cpp


# Cost: no a5 row for TCMP / TSEL; priced as one vector ALU pass (the TADD / TADDS rows).
instruction("cmp", FAMILY, _cmp_sim, vector("add"), _cmp_cpp(False))
instruction("cmps", FAMILY, _cmp_sim, vector("adds"), _cmp_cpp(True))
for _name in MODES:
    declare(FAMILY, _name, "out, lhs, rhs",
            f"Bit-packed mask ``out = (lhs {SYMBOL[_name]} rhs)`` (UINT8 tile shaped like ``lhs``); ``rhs`` a tile "
            "(TCMP) or a scalar (TCMPS). Feed it to pl.select.", _cmp_check(_name))


# ---- select -------------------------------------------------------------------------------------


def _select_check(p: "FunctionParser", node, a: Args) -> None:
    in_section(p, node, SectionKind.VECTOR, a.display)
    scalar = is_scalar_arg(a["rhs"])
    dtypes = SELS_DTYPES if scalar else SEL_DTYPES
    cpp = "TSELS" if scalar else "TSEL"
    out = tile_in(p, a, "out", VEC, dtypes)
    mask = tile_in(p, a, "mask", VEC, (DT_UINT8,))
    lhs = tile_in(p, a, "lhs", VEC, dtypes)
    tmp = want_tile(p, a, "tmp")
    if tmp.buffer.space is not MemorySpace.Vec:
        p.fail(a.node("tmp"), f"{a.display} needs 'tmp' in Vec; '{tmp.buffer.name}' is in {tmp.buffer.space.name}")
    same_shape(p, a, out, "out", lhs, "lhs")
    same_dtype(p, a, out, "out", lhs, "lhs")
    for name, t in (("out", out), ("mask", mask), ("lhs", lhs)):
        row_major(p, a, name, t, cpp)
    _mask_fits(p, a, mask, out, "mask")
    if scalar:
        emit(p, node, a, "sels", out, (mask, lhs, tmp), (want_scalar(p, a, "rhs", out.tile_type.dtype),),
             ("out", "mask", "lhs", "tmp"))
        return
    rhs = tile_in(p, a, "rhs", VEC, dtypes)
    same_shape(p, a, out, "out", rhs, "rhs")
    same_dtype(p, a, out, "out", rhs, "rhs")
    row_major(p, a, "rhs", rhs, cpp)
    emit(p, node, a, "sel", out, (mask, lhs, rhs, tmp), (), ("out", "mask", "lhs", "rhs", "tmp"))


def _sel_sim(op: TileOp, env) -> callable:
    """TSEL / TSELS over out's valid shape: the mask bit of (i, j) picks lhs (1) or rhs (0)."""
    ts = tiles(op, env)
    scalar = op.op == "sels"
    d, m, a = ts[0], ts[1], ts[2]
    b = None if scalar else ts[3]
    ntiles = len(ts) - 1  # source slots in the run-time arguments (tmp included)

    def dispatch(sd: int, sm: int, sa: int, *rest) -> Prepared:
        r, c = d.valid[sd]
        require_valid(op, a, sa, r, c, "lhs")
        av = a.views[sa][:r, :c]
        need = -(-c // 8)
        mv = m.views[sm][:r, :need]
        if b is not None:
            sb = rest[0]
            require_valid(op, b, sb, r, c, "rhs")
            rhs = b.views[sb][:r, :c]
        else:
            rhs = rest[ntiles - 2]
        run = deferred(lambda out: numerics_bits.select(out, mv, av, rhs), d.views[sd][:r, :c])
        acc = [m.access(sm, r, need, False), a.access(sa, r, c, False)]
        if b is not None:
            acc.append(b.access(rest[0], r, c, False))
        acc.append(d.access(sd, r, c, True))
        return Prepared(r, c, c * d.item == d.row_bytes, tuple(acc), (), r * c * d.item, run, (d.written(sd, r, c),))
    return dispatch


def _sel_cpp(op: TileOp, ctx, arch: str) -> list[str]:
    from pypto_pro.backends.pto.ctypes_map import ctype
    args = [ctx.tile(t) for t in (op.dst, *op.srcs)]
    if op.op == "sels":
        args.append(f"static_cast<{ctype(op.dst.tile_type.dtype)}>({ctx.cexpr(op.scalars[0])})")
        return [f"TSELS({', '.join(args)});"]
    return [f"TSEL({', '.join(args)});"]


instruction("sel", FAMILY, _sel_sim, vector("add"), _sel_cpp)
instruction("sels", FAMILY, _sel_sim, vector("adds"), _sel_cpp)
declare(FAMILY, "select", "out, mask, lhs, rhs, tmp",
        "``out = lhs where mask else rhs`` over out's valid shape; ``mask`` is the bit-packed UINT8 tile of "
        "pl.eq/ne/lt/le/gt/ge, ``rhs`` a tile (TSEL) or a scalar (TSELS); ``tmp`` is required and unused.",
        _select_check)
