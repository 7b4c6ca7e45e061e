"""Tile instructions as PTO-ISA calls, with the run-time valid shapes the simulator computes.

Every tile has a dynamic valid shape (``Tile<..., DYNAMIC, DYNAMIC>``); before each instruction the
emitted code sets the destination's valid shape the way ``backends/sim/tile_ops.py`` does (a load
marks its in-bounds window, an elementwise op covers its first source clipped to the destination's
declared shape, a row reduction gives ``rows x 1``...), so PTO-ISA computes on the same region.
"""
from __future__ import annotations

from typing import Callable

from pypto_pro.ir.expr import Expr
from pypto_pro.ir.nodes import Buffer, GMRef, TileOp, TileRef
from pypto_pro.language.enums import MemorySpace
from pypto_pro.ops.registry import OPS

from pypto_pro.backends.pto.ctypes_map import ROUND_MODE, ctype

BINARY = {"add": "TADD", "sub": "TSUB", "mul": "TMUL", "div": "TDIV", "maximum": "TMAX", "minimum": "TMIN"}
SCALAR = {"adds": "TADDS", "subs": "TSUBS", "muls": "TMULS", "divs": "TDIVS", "maxs": "TMAXS", "mins": "TMINS"}
UNARY = {"exp": "TEXP", "log": "TLOG", "sqrt": "TSQRT", "rsqrt": "TRSQRT", "recip": "TRECIP", "abs": "TABS",
         "neg": "TNEG", "relu": "TRELU"}
ROW_REDUCE = {"sum": "TROWSUM", "max": "TROWMAX", "min": "TROWMIN"}
COL_REDUCE = {"sum": "TCOLSUM", "max": "TCOLMAX", "min": "TCOLMIN"}
EXPAND_OP = {"expand_add": "ADD", "expand_sub": "SUB", "expand_mul": "MUL", "expand_div": "DIV",
             "expand_max": "MAX", "expand_min": "MIN"}


class OpContext:
    """What the op writer needs from the program emitter: names and expression spelling."""

    def __init__(self, cexpr: Callable[[Expr], str], tile_name: Callable[[Buffer], str],
                 type_name: Callable[[Buffer], str], decl_tracked: set[int], gm_type: Callable[[str], str],
                 dims: Callable[[str], list[str]]):
        self.cexpr = cexpr
        self.tile_name = tile_name
        self.type_name = type_name
        self.decl_tracked = decl_tracked
        self.gm_type = gm_type
        self.dims = dims

    def tile(self, ref: TileRef) -> str:
        name = self.tile_name(ref.buffer)
        return f"{name}[{self.cexpr(ref.slot)}]" if ref.buffer.is_group else name

    def declared(self, ref: TileRef) -> tuple[str, str]:
        b = ref.buffer
        if b.uid in self.decl_tracked:
            slot = self.cexpr(ref.slot) if b.is_group else "0"
            name = self.tile_name(b)
            return f"{name}_decl[{slot}][0]", f"{name}_decl[{slot}][1]"
        r, c = b.tile_type.valid_shape
        return str(r), str(c)


def _err(reason: str) -> list[str]:
    return [f'#error "{reason}"']


def _window(ctx: OpContext, ref: GMRef, rows_limit: str, cols_limit: str) -> list[str]:
    """Lines declaring r0/c0, rows/cols (the window clipped to the tensor) and ``gm`` (its GlobalTensor)."""
    name = ref.param.name
    dims = ctx.dims(name)
    offs = [ctx.cexpr(o) for o in ref.offsets]
    strides: list[str] = []
    for axis in range(len(dims)):
        rest = dims[axis + 1:]
        strides.append(" * ".join(rest) if rest else "1")
    flat = " + ".join(o if s == "1" else f"({o}) * {s}" for o, s in zip(offs, strides))
    gm_t = ctx.gm_type(name)
    if len(dims) == 1:
        lines = [f"const int64_t c0 = {offs[0]};",
                 "const int64_t rows = 1;",
                 f"const int64_t cols = pp_min({cols_limit}, {dims[0]} - c0);"]
        row_stride = "cols"
    else:
        lines = [f"const int64_t r0 = {offs[-2]}, c0 = {offs[-1]};",
                 f"const int64_t rows = pp_min({rows_limit}, {dims[-2]} - r0), "
                 f"cols = pp_min({cols_limit}, {dims[-1]} - c0);"]
        row_stride = dims[-1]
    lines.append(f"{gm_t} gm({name} + {flat}, {gm_t}::Shape(1, 1, 1, rows, cols), "
                 f"{gm_t}::Stride(1, 1, 1, {row_stride}, 1));")
    return lines


def op_lines(op: TileOp, ctx: OpContext, arch: str) -> list[str]:
    """C++ statements for one tile instruction; several lines are wrapped in a block by the caller."""
    name = op.op
    t = ctx.tile
    if name == "load":
        dst, src = op.dst, op.srcs[0]
        assert isinstance(dst, TileRef) and isinstance(src, GMRef)
        dr, dc = ctx.declared(dst)
        return _window(ctx, src, dr, dc) + [f"{t(dst)}.SetValidShape(rows, cols);", f"TLOAD({t(dst)}, gm);"]
    if name == "store":
        dst, src = op.dst, op.srcs[0]
        assert isinstance(dst, GMRef) and isinstance(src, TileRef)
        lines = _window(ctx, dst, f"{t(src)}.GetValidRow()", f"{t(src)}.GetValidCol()")
        return lines + [f"pp_store(gm, {t(src)}, rows, cols);"]
    if name in ("extract", "matmul", "matmul_acc", "fixpipe", "ub_to_l1"):
        return _cube(op, ctx, arch)
    spec = OPS.get(name)
    if spec is None:
        return _err(f"tile op '{name}' has no PTO-ISA mapping in this backend")
    kind = spec.kind
    dst = op.dst
    assert isinstance(dst, TileRef)
    dr, dc = ctx.declared(dst)
    srcs = [s for s in op.srcs if isinstance(s, TileRef)]
    if kind == "binary":
        return [f"pp_valid_from({t(dst)}, {t(srcs[0])}, {dr}, {dc});",
                f"{BINARY[name]}({t(dst)}, {t(srcs[0])}, {t(srcs[1])});"]
    if kind == "scalar":
        scalar = f"static_cast<{ctype(srcs[0].tile_type.dtype)}>({ctx.cexpr(op.scalars[0])})"
        return [f"pp_valid_from({t(dst)}, {t(srcs[0])}, {dr}, {dc});",
                f"{SCALAR[name]}({t(dst)}, {t(srcs[0])}, {scalar});"]
    if kind == "unary":
        return [f"pp_valid_from({t(dst)}, {t(srcs[0])}, {dr}, {dc});", f"{UNARY[name]}({t(dst)}, {t(srcs[0])});"]
    if kind == "cast":
        mode = ROUND_MODE[op.attrs.get("mode", "rint")]
        return [f"pp_valid_from({t(dst)}, {t(srcs[0])}, {dr}, {dc});", f"TCVT({t(dst)}, {t(srcs[0])}, {mode});"]
    if kind == "move":
        return [f"pp_valid_from({t(dst)}, {t(srcs[0])}, {dr}, {dc});", f"TMOV({t(dst)}, {t(srcs[0])});"]
    if kind == "fill":
        scalar = f"static_cast<{ctype(dst.tile_type.dtype)}>({ctx.cexpr(op.scalars[0])})"
        return [f"{t(dst)}.SetValidShape({dr}, {dc});", f"TEXPANDS({t(dst)}, {scalar});"]
    if kind == "reduce":
        src = srcs[0]
        if op.attrs["dim"] == 1:
            lines = [f"{t(dst)}.SetValidShape({t(src)}.GetValidRow(), 1);"]
            if len(srcs) > 1:
                lines.append(f"{ROW_REDUCE[name]}({t(dst)}, {t(src)}, {t(srcs[1])});")
            else:  # PTO-ISA's row reductions take a scratch tile; the kernel gave none (pl.<op>(..., tmp=...))
                lines += ["#if !defined(__CPU_SIM)",
                          f'#error "pl.{name}(dim=1) without tmp=: PTO-ISA {ROW_REDUCE[name]} needs a scratch '
                          f'tile on the NPU (the CPU model ignores it); pass tmp= in the kernel"',
                          "#endif",
                          f"{ROW_REDUCE[name]}({t(dst)}, {t(src)}, {t(src)});"]
            dt = dst.tile_type
            if dt.cols * dt.dtype.itemsize == 32:
                # A [rows, 32 B] row vector: TROWEXPAND* read its whole 32-byte block per row, so copy
                # the value (column 0) over the block; the tile stays valid over the block from here on.
                lanes = 32 // dt.dtype.itemsize
                lines += [f"{t(dst)}.SetValidShape({t(src)}.GetValidRow(), {lanes});",
                          f"TROWEXPAND({t(dst)}, {t(dst)});  // replicate each row's value over its 32-byte block"]
            return lines
        return [f"{t(dst)}.SetValidShape(1, {t(src)}.GetValidCol());", f"{COL_REDUCE[name]}({t(dst)}, {t(src)});"]
    if kind == "expand":
        fn = ("TROWEXPAND" if op.attrs["dim"] == 1 else "TCOLEXPAND") + EXPAND_OP[name]
        return [f"pp_valid_from({t(dst)}, {t(srcs[0])}, {dr}, {dc});",
                f"{fn}({t(dst)}, {t(srcs[0])}, {t(srcs[1])});"]
    return _err(f"tile op '{name}' (kind {kind}) has no PTO-ISA mapping in this backend")


def _cube(op: TileOp, ctx: OpContext, arch: str) -> list[str]:
    t = ctx.tile
    dst = op.dst
    assert isinstance(dst, TileRef)
    srcs = [s for s in op.srcs if isinstance(s, TileRef)]
    if op.op == "extract":
        src = srcs[0]
        if op.attrs.get("transpose"):
            return _err("pl.move(..., transpose=True): PTO-ISA TEXTRACT has no transpose flag (a transposed "
                        "operand is a DN GlobalTensor or a Right tile layout); not emitted")
        r0, c0 = op.attrs["offset"]
        win_r, win_c = dst.tile_type.rows, dst.tile_type.cols
        # valid shapes are unsigned: subtract in int64_t (a window past the edge is empty, not huge)
        return [f"const int64_t rows = pp_max(0, pp_min({win_r}, static_cast<int64_t>({t(src)}.GetValidRow()) - {r0})), "
                f"cols = pp_max(0, pp_min({win_c}, static_cast<int64_t>({t(src)}.GetValidCol()) - {c0}));",
                f"{t(dst)}.SetValidShape(rows, cols);",
                f"if (rows > 0 && cols > 0) TEXTRACT({t(dst)}, {t(src)}, {r0}, {c0});  "
                f"// an empty window past the edge adds nothing"]
    if op.op == "matmul":
        lhs, rhs = srcs[0], srcs[1]
        shape = f"{t(dst)}.SetValidShape({t(lhs)}.GetValidRow(), {t(rhs)}.GetValidCol());"
        if len(srcs) > 2:
            return [shape, f"TMATMUL_BIAS({t(dst)}, {t(lhs)}, {t(rhs)}, {t(srcs[2])});"]
        return [shape, f"TMATMUL({t(dst)}, {t(lhs)}, {t(rhs)});"]
    if op.op == "matmul_acc":
        lhs, rhs, acc = srcs[0], srcs[1], srcs[2]
        shape = f"{t(dst)}.SetValidShape({t(lhs)}.GetValidRow(), {t(rhs)}.GetValidCol());"
        guard = f"if ({t(lhs)}.GetValidCol() > 0) "  # an empty K window adds nothing
        return [shape, guard + f"TMATMUL_ACC({t(dst)}, {t(acc)}, {t(lhs)}, {t(rhs)});"]
    src = srcs[0]
    shape = f"{t(dst)}.SetValidShape({t(src)}.GetValidRow(), {t(src)}.GetValidCol());"
    if op.op == "fixpipe" and dst.buffer.space is MemorySpace.Vec:
        if arch != "a5":
            return _err("Acc -> Vec moves are a5 only")
        sub = op.attrs.get("subblock")
        if sub is None:
            return _err("pl.move(Acc -> Vec) into every Vector core: PTO-ISA TMOV writes one AIV "
                        "(SingleModeVec0/1) or splits the tile (DualModeSplitM/N); it cannot broadcast")
        return [shape, f"TMOV<{ctx.type_name(dst.buffer)}, {ctx.type_name(src.buffer)}, "
                       f"AccToVecMode::SingleModeVec{int(sub)}>({t(dst)}, {t(src)});"]
    return [shape, f"TMOV({t(dst)}, {t(src)});"]


