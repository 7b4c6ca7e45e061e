"""Tile subviews: ``tile[r0:r1, c0:c1]`` in a Cube / Vector section (real page
``memory_data_movement/subview.md``).

The sub-tile shares its tile's bytes (no new memory): it starts at element ``[r0, c0]`` of the
tile, keeps the tile's row stride (its physical shape is the tile's, less the rows / columns it
starts past) and its valid shape is the slice window clamped to the tile's valid shape, as the
real parser does (a slice stop past the shape is clamped, a start past the shape or the valid
shape is an error). A tile whose valid shape can change at run time is clamped when the subview
is taken, against the valid shape it has then. Only UB (Vec) tiles in ND or DN layout can be
sliced; a tensor cannot (use ``pl.load`` / ``pl.store`` offsets).

A bound may be a run-time integer scalar, as the real page allows. A run-time stop only makes the
valid shape a run-time one. A run-time start makes the view's address a run-time one: the view
keeps the tile's physical shape (as the real C++ backend's re-addressed descriptor does) and has a
slot per possible start (``ir/subview.py``); the start is taken when the subview is evaluated
(later assignments to its variables do not move the view), and a start outside the tile or past
its valid shape is a located fault when it runs.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from pypto_pro.frontend.resources import taken
from pypto_pro.frontend.values import TileValue
from pypto_pro.ir.expr import BinOp, Const, Expr
from pypto_pro.ir.nodes import Buffer, SetValidShape, TileRef
from pypto_pro.ir.subview import SubviewSlot, ViewStarts
from pypto_pro.language.enums import DN, ND, MemorySpace
from pypto_pro.language.tile_type import DYNAMIC_VALID, TileType

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser


def is_slice_subscript(node: ast.Subscript) -> bool:
    """``x[a:b, c:d]`` (or any subscript with a ``:`` in it)."""
    s = node.slice
    return isinstance(s, ast.Slice) or (isinstance(s, ast.Tuple) and any(isinstance(e, ast.Slice) for e in s.elts))


def _bound(p: "FunctionParser", node: ast.AST | None, default: int, what: str) -> int | Expr:
    """A slice bound: a compile-time int, or a run-time integer scalar (an ``Expr``)."""
    if node is None:
        return default
    v = p.eval(node)
    if isinstance(v, bool) or not isinstance(v, (int, Expr)) or (isinstance(v, Expr) and not v.dtype.is_int()):
        p.fail(node, f"the {what} must be an integer, got {p.describe(v)}", kind="type")
    return int(v.value) if isinstance(v, Const) else v  # a typed constant (pl.const) is a compile-time bound


def tile_subview(p: "FunctionParser", node: ast.Subscript, base: Any) -> TileValue:
    """The sub-tile ``base[r0:r1, c0:c1]``."""
    if not isinstance(base, TileValue):
        if type(base).__name__ == "TensorValue":
            p.fail(node, "a tensor cannot be sliced; use pl.load / pl.store with an offset list")
        p.fail(node, f"{p.describe(base)} cannot be sliced")
    ref = base.ref
    b = ref.buffer
    tt = b.tile_type
    layout = tt.effective_layout(p.ctx.arch.name)
    if tt.target_memory is not MemorySpace.Vec or layout not in (ND, DN):
        p.fail(node, f"only UB (Vec) tiles in ND or DN layout can be sliced; '{b.name}' is a {tt.target_memory.name} "
                     f"{layout.name} tile (use pl.load or pl.move with an offset)")
    if not isinstance(node.slice, ast.Tuple):
        p.fail(node, "a 1-D tile slice is not supported; slice both dimensions: tile[r0:r1, c0:c1]")
    if len(node.slice.elts) != 2:
        p.fail(node.slice, f"a tile slice has 2 dimensions, got {len(node.slice.elts)}")
    starts: list[int | Expr] = []
    sizes: list[int | Expr] = []
    for axis, (s, extent) in enumerate(zip(node.slice.elts, tt.shape)):
        if not isinstance(s, ast.Slice):
            p.fail(s, f"a tile slice takes ':' in every dimension (dimension {axis} is an index)")
        if s.step is not None:
            p.fail(s.step, "a tile slice has no step")
        lo = _bound(p, s.lower, 0, "slice start")
        hi = _bound(p, s.upper, extent, "slice stop")
        if isinstance(hi, int):
            hi = min(hi, extent)  # the real clamps a constant stop past the shape
        if isinstance(lo, int) and not 0 <= lo < extent:
            p.fail(s, f"slice start {lo} is outside dimension {axis} of '{b.name}' (size {extent})")
        if isinstance(lo, int) and isinstance(hi, int):
            if hi <= lo:
                p.fail(s, f"slice {lo}:{hi} of dimension {axis} is empty")
            sizes.append(hi - lo)
        else:  # a run-time size: upper - start, clamped to the valid shape when the view is taken
            lo_e = taken(p, s.lower, lo, f"{b.name}_start") if isinstance(lo, Expr) else Const(lo)
            sizes.append(_expr(hi) if isinstance(lo, int) and lo == 0 else BinOp("-", _expr(hi), lo_e))
            lo = lo_e if isinstance(lo, Expr) else lo
        starts.append(lo)
    if any(isinstance(x, Expr) for x in starts):
        return _runtime_subview(p, node, ref, layout, starts, sizes)
    r0, c0 = starts  # type: ignore[misc]
    rows, cols = tt.shape
    valid: list[Any] = [DYNAMIC_VALID, DYNAMIC_VALID]
    static = tt.static_valid if not tt.dynamic_valid else None
    if static is not None:  # a compile-time valid shape: a start past it is an error now
        for axis in (0, 1):
            if static[axis] - starts[axis] <= 0:  # type: ignore[operator]
                p.fail(node.slice.elts[axis], f"slice start {starts[axis]} is past the valid shape {list(static)} of "
                                              f"'{b.name}' (dimension {axis})")
    if static is not None and all(isinstance(x, int) for x in sizes):  # ... and clamps now
        valid = [min(sizes[axis], static[axis] - starts[axis]) for axis in (0, 1)]  # type: ignore[operator]
    else:
        static = None
    # the physical shape: the tile's, less what the view starts past (its stride stays the tile's)
    shape = [rows - r0, cols] if layout is ND else [rows, cols - c0]
    offset = tt.dtype.nbytes(r0 * cols + c0 if layout is ND else c0 * rows + r0)
    sub_tt = TileType(shape, tt.dtype, tt.target_memory, valid_shape=valid, layout=tt.layout, fractal=tt.fractal,
                      pad=tt.pad, compact=tt.compact)
    cap = p.ctx.arch.memory(tt.target_memory).capacity
    end = max(b.addrs) + offset + sub_tt.nbytes
    if end > cap:
        p.fail(node, f"this subview's rows run {end - cap} bytes past the end of UB ({cap} bytes); place '{b.name}' "
                     "lower or slice from its first column")
    view = Buffer(p.ctx.fresh_name(f"{b.name}_sub"), sub_tt, tuple(a + offset for a in b.addrs), b.mutex_ids,
                  b.is_group, p.loc(node), alias_of=b)
    p.ctx.buffers.append(view)
    if static is None:  # clamped against the tile's valid shape when the subview is taken
        p.ctx.builder.emit(SetValidShape(view, ref.slot, _expr(sizes[0]), _expr(sizes[1]), p.loc(node),
                                         clamp_to=(b, r0, c0)))
    return TileValue(TileRef(view, ref.slot))


def _expr(v: int | Expr) -> Expr:
    return v if isinstance(v, Expr) else Const(v)


def _runtime_subview(p: "FunctionParser", node: ast.Subscript, ref: TileRef, layout, starts: list, sizes: list
                     ) -> TileValue:
    """A subview whose start is a run-time value: a buffer with a slot per possible start
    (``ir/subview.py``), over the tile's bytes with its physical shape (the real keeps the tile's shape
    and row stride and sets the window as the valid shape)."""
    b = ref.buffer
    if b.view_starts is not None:
        p.fail(node, f"'{b.name}' is itself a subview at a run-time start; slice its tile once, adding the starts")
    tt = b.tile_type
    rows, cols = tt.shape
    row, col = starts
    vs = ViewStarts(row if isinstance(row, int) else 0, col if isinstance(col, int) else 0,
                    rows if isinstance(row, Expr) else 1, cols if isinstance(col, Expr) else 1)
    addrs, ids = [], []
    for bs, r, c in vs.slots(b):
        addrs.append(b.addrs[bs] + tt.dtype.nbytes(r * cols + c if layout is ND else c * rows + r))
        if b.mutex_ids:
            ids.append(b.mutex_ids[bs])
    sub_tt = TileType([rows, cols], tt.dtype, tt.target_memory, valid_shape=[DYNAMIC_VALID, DYNAMIC_VALID],
                      layout=tt.layout, fractal=tt.fractal, pad=tt.pad, compact=tt.compact)
    view = Buffer(p.ctx.fresh_name(f"{b.name}_sub"), sub_tt, tuple(addrs), tuple(ids) if b.mutex_ids else None,
                  True, p.loc(node), alias_of=b, view_starts=vs)
    p.ctx.buffers.append(view)
    slot = SubviewSlot(ref.slot, row if isinstance(row, Expr) else None, col if isinstance(col, Expr) else None,
                       vs, (rows, cols), b.name, p.loc(node))
    p.ctx.builder.emit(SetValidShape(view, slot, _expr(sizes[0]), _expr(sizes[1]), p.loc(node),
                                     clamp_to=(b, vs.r0, vs.c0)))
    return TileValue(TileRef(view, slot))
