"""Tile state and element access: ``pl.set_validshape(tile, [rows, cols])`` (real page
``transpose_and_element_access/set_validshape.md``). A statement of the scalar unit (S pipe): it
changes the valid shape every later instruction on the tile (or every slot of a group) works on.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pypto_pro.backends.sim import gm_views
from pypto_pro.backends.sim.kit import fault
from pypto_pro.errors_sim import OutOfBoundsError
from pypto_pro.frontend.operands import Args, element_node, want_index
from pypto_pro.frontend.values import GroupValue, TileValue
from pypto_pro.ir.expr import Const, Expr
from pypto_pro.ir.nodes import GMRef, SetValidShape
from pypto_pro.ops.decl import SCALAR, api, instruction

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

FAMILY = "transpose_and_element_access"


@api(FAMILY)
def set_validshape(tile: Any, shape: Any) -> None:
    """Set the valid region ``[rows, cols]`` of a tile, or of every slot of a tile group (1 <= each entry
    <= the tile's shape); loads, stores and compute instructions then work on that region."""


@set_validshape.check
def _check(p: "FunctionParser", node, a: Args) -> None:
    target = a["tile"]
    if isinstance(target, GroupValue):
        buf, slot = target.buffer, None
    elif isinstance(target, TileValue):
        buf, slot = target.ref.buffer, target.ref.slot
    else:
        p.fail(a.node("tile"), f"pl.set_validshape needs a tile or a tile group, got {p.describe(target)}")
    shape = a["shape"]
    node_s = a.node("shape")
    if not isinstance(shape, (list, tuple)) or len(shape) != 2:
        p.fail(node_s, f"pl.set_validshape takes the shape as one list [rows, cols], got {p.describe(shape)}")
    tt = buf.tile_type
    if not tt.dynamic_valid:
        p.fail(a.node("tile"), f"'{buf.name}' has the static valid_shape {list(tt.valid_shape)}; declare "
                               "valid_shape=[-1, -1] in its pl.TileType to set it at run time")
    dims: list[Expr] = []
    for i, (v, limit, what) in enumerate(zip(shape, tt.shape, ("rows", "cols"))):
        at = element_node(node_s, 2, i)
        v = want_index(p, at, v, f"valid {what}")
        if isinstance(v, int) and not 1 <= v <= limit:
            p.fail(at, f"valid {what} {v} is outside 1..{limit} for '{buf.name}'")
        dims.append(v if isinstance(v, Expr) else Const(v))
    p.ctx.builder.emit(SetValidShape(buf, slot, dims[0], dims[1], p.loc(node)))


# ---- pl.setval on a GM tensor (its frontend rule: frontend/resources.py) ------------------------------


def _setval_sim(op, env):
    if not isinstance(op.dst, GMRef):  # a Vec tile (ops/tile_element.py)
        from pypto_pro.ops.tile_element import setval_sim
        return setval_sim(op, env)
    return gm_views.scalar_write(op, env.gm.arrays, lambda m: fault(op, m, OutOfBoundsError))


def _setval_cpp(op, ctx, arch: str) -> list[str]:
    if not isinstance(op.dst, GMRef):
        from pypto_pro.ops.tile_element import setval_tile_cpp
        return setval_tile_cpp(op, ctx)
    from pypto_pro.backends.pto.ctypes_map import ctype
    from pypto_pro.backends.pto.storage import setval_lines
    return setval_lines(op, ctx.cexpr, ctype)


def _setval_params(op, arch) -> dict[str, int]:
    """One element written by the scalar unit."""
    dtype = op.dst.param.type.dtype if isinstance(op.dst, GMRef) else op.dst.tile_type.dtype
    return {"bytes": dtype.itemsize}


instruction("setval", FAMILY, _setval_sim, SCALAR, _setval_cpp, params=_setval_params)
