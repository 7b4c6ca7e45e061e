"""Cube-engine and cross-core intrinsics: ``pl.move`` between buffers, ``pl.matmul``,
``pl.matmul_acc``, and ``pl.system.set_cross_core / wait_cross_core / sync_all``."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from pypto_pro.frontend.intrinsics import (Args, handler, in_section, want_event, want_pipe, want_tile,
                                           vector_op)
from pypto_pro.ir.expr import Const
from pypto_pro.ir.nodes import SyncOp, TileOp, TileRef
from pypto_pro.language.enums import MemorySpace, PipeType, SectionKind
from pypto_pro.ops.registry import ACC_STORE_DTYPES, MATMUL_DTYPES, OPS

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

V, M, L, R, A, B = (MemorySpace.Vec, MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc,
                    MemorySpace.Bias)

# (src space, dst space) -> (op name, pipe, section that issues it, needs a5's direct path)
MOVE_PATHS: dict[tuple[MemorySpace, MemorySpace], tuple[str, PipeType, SectionKind, bool]] = {
    (M, L): ("extract", PipeType.MTE1, SectionKind.CUBE, False),
    (M, R): ("extract", PipeType.MTE1, SectionKind.CUBE, False),
    (A, M): ("fixpipe", PipeType.FIX, SectionKind.CUBE, False),
    (A, V): ("fixpipe", PipeType.FIX, SectionKind.CUBE, True),
    (V, M): ("ub_to_l1", PipeType.MTE3, SectionKind.VECTOR, True),
}

GM_ROUND_TRIP = ("Cube and Vector exchange data through global memory on {arch}: pl.store the tile to a GM "
                 "workspace in section_cube(), pl.system.set_cross_core / wait_cross_core, then pl.load it in "
                 "section_vector() (the direct {path} path exists on a5)")


def _const_int(p: "FunctionParser", a: Args, name: str, v) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        p.fail(a.node(name), f"'{name}' entries must be compile-time ints, got {p.describe(v)}")
    return v


@handler("move")
def move(p: "FunctionParser", node: ast.Call, a: Args) -> None:
    dst, src = want_tile(p, a, "dst"), want_tile(p, a, "src")
    key = (src.buffer.space, dst.buffer.space)
    if key == (V, V):
        if a["offset"] is not None or a["transpose"] or a["subblock"] is not None:
            p.fail(node, "a Vec -> Vec move takes no offset, transpose or subblock")
        return vector_op(p, node, OPS["move"], a)
    path = MOVE_PATHS.get(key)
    if path is None:
        supported = ", ".join(f"{s.name}->{d.name}" for s, d in [(V, V), *MOVE_PATHS])
        p.fail(node, f"pl.move has no {key[0].name} -> {key[1].name} path (supported: {supported})")
    op, pipe, section, direct = path
    arch = p.ctx.arch
    if direct and not arch.direct_cube_vector_paths:
        p.fail(node, f"{arch.name} has no {key[0].name} -> {key[1].name} path. "
               + GM_ROUND_TRIP.format(arch=arch.name, path=f"{key[0].name}->{key[1].name}"))
    in_section(p, node, section, f"pl.move {key[0].name} -> {key[1].name}")
    st, dt = src.tile_type, dst.tile_type
    attrs: dict = {}
    if op == "extract":
        if st.dtype != dt.dtype:
            p.fail(a.node("dst"), f"pl.move {key[0].name} -> {key[1].name} keeps the dtype: 'src' is {st.dtype.name}, "
                                  f"'dst' is {dt.dtype.name}")
        transpose = a["transpose"]
        if not isinstance(transpose, bool):
            p.fail(a.node("transpose"), "transpose must be True or False")
        offset = a["offset"] if a["offset"] is not None else [0, 0]
        if not isinstance(offset, (list, tuple)) or len(offset) != 2:
            p.fail(a.node("offset"), "offset must be [row, col] element offsets into 'src'")
        r0, c0 = (_const_int(p, a, "offset", v) for v in offset)
        rows, cols = (dt.cols, dt.rows) if transpose else (dt.rows, dt.cols)
        if r0 < 0 or c0 < 0 or r0 + rows > st.rows or c0 + cols > st.cols:
            p.fail(node, f"pl.move takes a {rows} x {cols} window{' (transposed)' if transpose else ''} at "
                         f"[{r0}, {c0}] from '{src.buffer.name}' of shape {list(st.shape)}: it does not fit")
        attrs.update(offset=(r0, c0), transpose=transpose)
    else:
        if a["offset"] is not None or a["transpose"]:
            p.fail(node, f"pl.move {key[0].name} -> {key[1].name} takes no offset or transpose")
        if st.shape != dt.shape:
            p.fail(a.node("dst"), f"pl.move: 'dst' has shape {list(dt.shape)} but 'src' has {list(st.shape)}")
        if op == "fixpipe":
            allowed = ACC_STORE_DTYPES.get(st.dtype, ())
            if dt.dtype not in allowed:
                p.fail(a.node("dst"), f"the fixpipe converts {st.dtype.name} to {', '.join(d.name for d in allowed)}, "
                                      f"not {dt.dtype.name}")
        elif st.dtype != dt.dtype:
            p.fail(a.node("dst"), f"pl.move Vec -> Mat keeps the dtype: {st.dtype.name} vs {dt.dtype.name}")
        sub = a["subblock"]
        if key == (A, V):
            if sub is not None and sub not in (0, 1):
                p.fail(a.node("subblock"), "subblock must be 0, 1 or None (every Vector core of the block)")
            attrs["subblock"] = sub
        elif sub is not None:
            p.fail(a.node("subblock"), "only Acc -> Vec moves take a subblock")
    p.ctx.builder.emit(TileOp(op, pipe, dst, (src,), (), attrs, p.loc(node)))


def _cube_tile(p: "FunctionParser", a: Args, name: str, space: MemorySpace) -> TileRef:
    t = want_tile(p, a, name)
    if t.buffer.space is not space:
        p.fail(a.node(name), f"'{name}' must be a {space.name} tile (L0{'A' if space is L else 'B' if space is R else 'C'}"
                             f" for the Cube), '{t.buffer.name}' is in {t.buffer.space.name}")
    return t


def _matmul(p: "FunctionParser", node: ast.Call, a: Args, name: str, with_acc: bool) -> None:
    in_section(p, node, SectionKind.CUBE, f"pl.{name}")
    dst = _cube_tile(p, a, "dst", A)
    lhs, rhs = _cube_tile(p, a, "lhs", L), _cube_tile(p, a, "rhs", R)
    lt, rt, dt = lhs.tile_type, rhs.tile_type, dst.tile_type
    acc_dtype = MATMUL_DTYPES.get((lt.dtype, rt.dtype))
    if acc_dtype is None:
        pairs = ", ".join(f"{x.name} x {y.name}" for x, y in MATMUL_DTYPES)
        p.fail(node, f"the Cube multiplies {pairs}; not {lt.dtype.name} x {rt.dtype.name}")
    if dt.dtype != acc_dtype:
        p.fail(a.node("dst"), f"{lt.dtype.name} x {rt.dtype.name} accumulates in {acc_dtype.name}; 'dst' is {dt.dtype.name}")
    if lt.cols != rt.rows:
        p.fail(a.node("rhs"), f"pl.{name}: lhs is [{lt.rows}, {lt.cols}] and rhs is [{rt.rows}, {rt.cols}]: K differs")
    if (dt.rows, dt.cols) != (lt.rows, rt.cols):
        p.fail(a.node("dst"), f"pl.{name}: dst must be [{lt.rows}, {rt.cols}], is [{dt.rows}, {dt.cols}]")
    srcs: tuple = (lhs, rhs)
    if with_acc:
        acc = _cube_tile(p, a, "acc", A)
        if acc.tile_type.shape != dt.shape or acc.tile_type.dtype != dt.dtype:
            p.fail(a.node("acc"), f"pl.{name}: 'acc' must have dst's shape and dtype")
        srcs = (lhs, rhs, acc)
    elif a["bias"] is not None:
        bias = _cube_tile(p, a, "bias", B)
        if bias.tile_type.cols != dt.cols or bias.tile_type.dtype != dt.dtype:
            p.fail(a.node("bias"), f"pl.{name}: bias must be [1, {dt.cols}] {dt.dtype.name}")
        srcs = (lhs, rhs, bias)
    p.ctx.builder.emit(TileOp(name, PipeType.M, dst, srcs, (), {"bias": a["bias"] is not None} if not with_acc
                              else {}, p.loc(node)))


@handler("matmul")
def matmul(p, node, a):
    _matmul(p, node, a, "matmul", False)


@handler("matmul_acc")
def matmul_acc(p, node, a):
    _matmul(p, node, a, "matmul_acc", True)


@handler("set_cross_core", "wait_cross_core")
def cross_core(p: "FunctionParser", node: ast.Call, a: Args) -> None:
    if p.ctx.section is None:
        p.fail(node, f"pl.system.{a.name} must be inside a section")
    pipe = want_pipe(p, a, "pipe")
    ev = want_event(p, a, "event_id", int(p.ctx.arch.cross_core_event_ids.value), "cross-core event id")
    kind = "xset" if a.name == "set_cross_core" else "xwait"
    p.ctx.builder.emit(SyncOp(kind, pipe, None, ev, p.loc(node)))


@handler("sync_all")
def sync_all(p: "FunctionParser", node: ast.Call, a: Args) -> None:
    if p.ctx.section is None:
        p.fail(node, "pl.system.sync_all must be inside a section")
    p.ctx.builder.emit(SyncOp("sync_all", PipeType.S, None, Const(0), p.loc(node)))
