"""Tile subviews: ``tile[r0:r1, c0:c1]`` in a Cube / Vector section (real page
``memory_data_movement/subview.md``).

The sub-tile shares its tile's bytes (no new memory): it starts at element ``[r0, c0]`` of the
tile, keeps the tile's row stride (its physical shape is the tile's, less the rows / columns it
starts past) and its valid shape is the slice window clamped to the tile's valid shape, as the
real parser does (a slice stop past the shape is clamped, a start past the shape or the valid
shape is an error). A tile whose valid shape can change at run time is clamped when the subview
is taken, against the valid shape it has then. Only UB (Vec) tiles in ND or DN layout can be
sliced; a tensor cannot (use ``pl.load`` / ``pl.store`` offsets).
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from pypto_pro.frontend.values import TileValue
from pypto_pro.ir.expr import Const
from pypto_pro.ir.nodes import Buffer, SetValidShape, TileRef
from pypto_pro.language.enums import DN, ND, MemorySpace
from pypto_pro.language.tile_type import DYNAMIC_VALID, TileType

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser


def is_slice_subscript(node: ast.Subscript) -> bool:
    """``x[a:b, c:d]`` (or any subscript with a ``:`` in it)."""
    s = node.slice
    return isinstance(s, ast.Slice) or (isinstance(s, ast.Tuple) and any(isinstance(e, ast.Slice) for e in s.elts))


def _bound(p: "FunctionParser", node: ast.AST | None, default: int, what: str) -> int:
    if node is None:
        return default
    v = p.eval(node)
    if isinstance(v, bool) or not isinstance(v, int):
        if hasattr(v, "dtype"):
            p.fail(node, f"a run-time {what} is not supported yet in this release: slice a tile with compile-time "
                         "bounds (the simulator places every tile at a compile-time address)")
        p.fail(node, f"the {what} must be an integer, got {p.describe(v)}")
    return v


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
    starts, sizes = [], []
    for axis, (s, extent) in enumerate(zip(node.slice.elts, tt.shape)):
        if not isinstance(s, ast.Slice):
            p.fail(s, f"a tile slice takes ':' in every dimension (dimension {axis} is an index)")
        if s.step is not None:
            p.fail(s.step, "a tile slice has no step")
        lo = _bound(p, s.lower, 0, "slice start")
        hi = min(_bound(p, s.upper, extent, "slice stop"), extent)  # the real clamps a stop past the shape
        if not 0 <= lo < extent:
            p.fail(s, f"slice start {lo} is outside dimension {axis} of '{b.name}' (size {extent})")
        if hi <= lo:
            p.fail(s, f"slice {lo}:{hi} of dimension {axis} is empty")
        starts.append(lo)
        sizes.append(hi - lo)
    r0, c0 = starts
    rows, cols = tt.shape
    valid: list[Any] = [DYNAMIC_VALID, DYNAMIC_VALID]
    static = tt.static_valid if not tt.dynamic_valid else None
    if static is not None:  # a compile-time valid shape clamps now
        for axis in (0, 1):
            left = static[axis] - starts[axis]
            if left <= 0:
                p.fail(node.slice.elts[axis], f"slice start {starts[axis]} is past the valid shape {list(static)} of "
                                              f"'{b.name}' (dimension {axis})")
            valid[axis] = min(sizes[axis], left)
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
        p.ctx.builder.emit(SetValidShape(view, ref.slot, Const(sizes[0]), Const(sizes[1]), p.loc(node),
                                         clamp_to=(b, r0, c0)))
    return TileValue(TileRef(view, ref.slot))
