"""``pl.load`` of MX scales: a GM E8M0 tensor with a trailing physical pair axis into a fractal-32 ZZ / NN
Mat tile (real page ``matrix_computation/matmul_mx.md``; the real codegen's ``IsMXLoad`` / ``EmitMXLoad``
with PTO's ``Layout::MX_A_ND / MX_A_DN / MX_B_ND / MX_B_DN``).

GM holds the scales as an ordinary DT_FP8E8M0 tensor whose last axis (size 2) is the phase of a
group pair: scale A's logical ``[M, G]`` is stored ``[M, G/2, 2]`` (or ``[G/2, M, 2]``), scale B's
``[G, N]`` as ``[G/2, N, 2]`` (or ``[N, G/2, 2]``). The load's ``order`` names the tensor axes the
tile's rows and columns run along (default: the two before the pair axis); the group axis is the
tile's columns for a ZZ tile (scale A) and its rows for an NN tile (scale B). Group ``g`` of the
tile is at ``offset + g // 2`` on its tensor axis and ``g % 2`` on the pair axis; the offset on
the group axis counts pairs.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from pypto_pro.backends.sim.kit import Prepared, SimEnv, TileAccess, deferred, fault
from pypto_pro.errors_sim import OutOfBoundsError
from pypto_pro.ir.nodes import GMRef, TileOp, TileRef
from pypto_pro.language.dtypes import DT_FP8E8M0
from pypto_pro.language.enums import NN, ZZ, MemorySpace, PipeType
from pypto_pro.ops.decl import GM, instruction

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

FAMILY = "memory_data_movement"


def is_mx_load(p: "FunctionParser", tile: TileRef, tensor) -> bool:
    """The real rule: E8M0 tensor and tile, a Mat tile with a fractal-32 ZZ or NN layout."""
    tt = tile.tile_type
    return (tt.dtype is DT_FP8E8M0 and tensor.param.type.dtype is DT_FP8E8M0 and tile.buffer.space is MemorySpace.Mat
            and tt.fractal == 32 and tt.effective_layout(p.ctx.arch.name) in (ZZ, NN))


def emit(p: "FunctionParser", node, a, tile: TileRef, tensor, tile_coords: bool) -> None:
    from pypto_pro.ops.data_movement import gm_offsets
    rank = tensor.param.type.rank
    if rank < 3 or tensor.param.type.dims[-1] != 2:
        p.fail(a.node("src_tensor"), f"an MX scale load reads an E8M0 tensor whose last axis is the pair phase "
                                     f"(statically 2), such as [M, G/2, 2]; '{tensor.param.name}' has shape "
                                     f"{list(tensor.param.type.dims)}")
    if tile_coords:
        p.fail(node, "pl.load_tile of MX scales is not supported; use pl.load with element offsets")
    order = a["order"]
    if order is None:
        axes = (rank - 3, rank - 2)
    else:
        if not isinstance(order, (list, tuple)) or len(order) != 2 or \
                not all(isinstance(x, int) and not isinstance(x, bool) for x in order):
            p.fail(a.node("order"), f"order must be a list of two compile-time tensor axes, got {p.describe(order)}")
        axes = (int(order[0]), int(order[1]))
        if not all(0 <= x < rank - 1 for x in axes) or axes[0] == axes[1]:
            p.fail(a.node("order"), f"order {list(order)} must name two different axes before the pair axis "
                                    f"{rank - 1} of the rank-{rank} scale tensor")
    offsets = gm_offsets(p, a, "offsets", tensor, tile, axes, False)
    group_rows = tile.tile_type.effective_layout(p.ctx.arch.name) is NN
    p.ctx.builder.emit(TileOp("mx_scale_load", PipeType.MTE2, tile, (GMRef(tensor.param, offsets),),
                              attrs={"order": axes, "group_rows": group_rows, "api": a.name}, loc=p.loc(node)))


def _sim(op: TileOp, env: SimEnv) -> Callable:
    tile, ref = op.dst, op.srcs[0]
    assert isinstance(tile, TileRef) and isinstance(ref, GMRef)
    t = TileAccess(env.states[tile.buffer.uid])
    a0, a1 = op.attrs["order"]
    group_rows = op.attrs["group_rows"]
    pidx, pname = ref.param.index, ref.param.name

    def dispatch(slot: int, *offs: int) -> Prepared:
        g = env.gm.arrays[pidx]
        r, c = t.valid[slot]
        if (r if group_rows else c) % 2:
            raise fault(op, f"MX scale load into '{t.label}': {r if group_rows else c} groups; the pairs of the GM "
                            "layout need an even count")
        rows = np.arange(r)[:, None]
        cols = np.arange(c)[None, :]
        index: list = []
        rect: list = []
        for axis in range(g.ndim - 1):
            o = int(offs[axis])
            if axis == a0:
                ix = o + (rows // 2 if group_rows else rows)
            elif axis == a1:
                ix = o + (cols if group_rows else cols // 2)
            else:
                ix = np.full((1, 1), o)
            lo, hi = int(ix.min()), int(ix.max()) + 1
            if lo < 0 or hi > g.shape[axis]:
                raise fault(op, f"load from '{pname}': the MX scale window reaches index {hi - 1} on axis {axis}, past "
                                f"the tensor's size {g.shape[axis]}", OutOfBoundsError)
            index.append(ix)
            rect.append((lo, hi))
        index.append(rows % 2 if group_rows else cols % 2)
        rect.append((0, 2))
        src = g[tuple(np.broadcast_arrays(*index))]
        view = t.views[slot][:r, :c]
        src = src if src.dtype == view.dtype else src.view(view.dtype)
        run = deferred(lambda out: np.copyto(out, src), view)
        return Prepared(r, c, False, (t.access(slot, r, c, True),), ((pidx, pname, tuple(rect), False),), r * c, run,
                        (t.written(slot, r, c),))
    return dispatch


def _cpp(op: TileOp, ctx, arch: str) -> list[str]:
    """``TLOAD`` through a ``GlobalTensor`` with PTO's MX layout (the real ``EmitMXLoad``): scale A
    (ZZ tile) as ``Layout::MX_A_ND`` (or ``MX_A_DN`` when the tile's rows are the pair-contiguous
    axis), scale B (NN tile) as ``MX_B_ND`` / ``MX_B_DN``. The strides are the tensor's, taken along
    the load's ``order`` axes: PTO-ISA's window element ``[r, c]`` is then the element the simulator
    reads (group ``g`` at pair ``g // 2``, phase ``g % 2``)."""
    from pypto_pro.backends.pto.ctypes_map import ctype
    tile, ref = op.dst, op.srcs[0]
    name = ref.param.name
    dims = ctx.dims(name)
    strides = [" * ".join(dims[axis + 1:]) or "1" for axis in range(len(dims))]
    flat = " + ".join(o if st == "1" else f"({o}) * {st}" for o, st in
                      zip((ctx.cexpr(o) for o in ref.offsets), strides))
    a0, a1 = op.attrs["order"]
    major, minor = strides[a0], strides[a1]  # steps of the tile's rows / columns axes
    nd = minor == "2" or major != "2"       # the pair-contiguous axis is the tile's columns (ND) or rows (DN)
    layout = f"Layout::MX_{'B' if op.attrs['group_rows'] else 'A'}_{'ND' if nd else 'DN'}"
    s2, s3 = (major, minor) if nd else (minor, major)
    t, el = ctx.tile(tile), ctype(ref.param.type.dtype)
    return [f"const int64_t rows = {t}.GetValidRow(), cols = {t}.GetValidCol();",
            f"using mx_shape_t = TileShape2D<{el}, DYNAMIC, DYNAMIC, {layout}>;",
            "using mx_stride_t = Stride<DYNAMIC, DYNAMIC, DYNAMIC, DYNAMIC, 1>;",
            f"using mx_gm_t = GlobalTensor<{el}, mx_shape_t, mx_stride_t, {layout}>;",
            f"mx_gm_t gm({name} + {flat}, mx_shape_t(rows, cols), mx_stride_t(1, 1, {s2}, {s3}, 1));",
            f"TLOAD({t}, gm);"]


instruction("mx_scale_load", FAMILY, _sim, GM, _cpp)
