"""``pl.dump_data`` (real page ``Utils-API/debugging/dump_data.md``): its frontend check and the
simulator rules of the three instructions it lowers to, as the real lowering does:

* ``dump_tensor`` (S pipe): a GM tensor, whole or the window ``offsets`` / ``shapes``, printed as
  ``TPRINT`` of a GlobalTensor view (``=== [dump_tensor] dtype: ..., Layout: ND, shape=[...] ===``,
  one ``Batch`` per leading index, values ``%d `` / ``%u `` / ``%f ``);
* ``dump_tile`` (V pipe): a Vec tile, whole (``=== [dump_tile] ...``, every physical element, ``| `` /
  ``--------`` after the valid region) or a window (``=== [TPRINT Tile Window] ...``, the window cut
  at the valid shape);
* ``dump_acc`` (FIX pipe): an Acc tile, copied whole into ``workspace`` (ND, row-major: the chip
  writes it there, so the workspace holds it afterwards), then the window (default: the whole tile)
  printed from the workspace (``=== [TPRINT Acc Tile Window] ...``).

``loc=True`` first prints ``[file:line] dump_tensor`` (``dump_tile``); ``flag="name"`` then prints
``=== [flag] name ===``.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

import numpy as np

from pypto_pro.backends.sim import debug_log, gm_views
from pypto_pro.backends.sim.kit import Prepared, fault
from pypto_pro.errors_sim import OutOfBoundsError
from pypto_pro.frontend.operands import Args, element_node
from pypto_pro.frontend.values import GroupValue, TensorValue, TileValue
from pypto_pro.ir.expr import Const, Expr
from pypto_pro.ir.nodes import GMRef, TileOp
from pypto_pro.ir.views import TensorView
from pypto_pro.language.enums import MemorySpace, PipeType, SectionKind
from pypto_pro.ops.debug import _CORE_ARGS, _core_key, _location, _want_loc, dump_data
from pypto_pro.ops.decl import SCALAR, instruction

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

FAMILY = "debugging"
_LAYOUT_NAMES = {"ND": "ND", "DN": "DN", "NZ": "Nz", "ZN": "Zn", "NN": "Nn", "ZZ": "Zz"}


def _window_list(p: "FunctionParser", a: Args, name: str, rank: int, what: str) -> list[Expr]:
    v = a[name]
    node = a.node(name)
    if not isinstance(v, (list, tuple)):
        p.fail(node, f"pl.dump_data {name} must be a list of integer scalars, got {p.describe(v)}")
    if len(v) != rank:
        p.fail(node, f"pl.dump_data {name} must match the {what} rank {rank}, got {len(v)} entries")
    out: list[Expr] = []
    for i, x in enumerate(v):
        at = element_node(node, rank, i)
        if isinstance(x, bool) or not (isinstance(x, int) or (isinstance(x, Expr) and x.dtype.is_int())):
            p.fail(at, f"pl.dump_data {name}[{i}] must be an integer scalar, got {p.describe(x)}")
        if name == "shapes" and isinstance(x, int) and x <= 0:
            p.fail(at, f"pl.dump_data shape at axis {i} must be positive, got {x}")
        if name == "offsets" and isinstance(x, int) and x < 0:
            p.fail(at, f"pl.dump_data offset at axis {i} must not be negative, got {x}")
        out.append(Const(x) if isinstance(x, int) else x)
    return out


@dump_data.check
def _check_dump(p: "FunctionParser", node: ast.Call, a: Args) -> None:
    data, ws, flag = a["data"], a["workspace"], a["flag"]
    show = _want_loc(p, a)
    if flag is not None and not isinstance(flag, str):
        p.fail(a.node("flag"), f"pl.dump_data requires a str flag, got {p.describe(flag)}", kind="type")
    if (a["offsets"] is None) != (a["shapes"] is None):
        p.fail(node, "pl.dump_data offsets and shapes must be provided together")
    window = a["offsets"] is not None
    where = _location(p, node) if show else ""
    if isinstance(data, TensorValue):
        if ws is not None:
            p.fail(a.node("workspace"), "pl.dump_data: workspace is only valid for Tile inputs, not Tensor")
        rank = data.param.type.rank
        scal = (_window_list(p, a, "offsets", rank, "tensor") + _window_list(p, a, "shapes", rank, "tensor")
                if window else [])
        head = (f"{where} dump_tensor\n" if where else "") + (f"=== [flag] {flag} ===\n" if flag else "")
        p.ctx.builder.emit(TileOp("dump_tensor", PipeType.S, None, (GMRef(data.param, ()),),  # type: ignore[arg-type]
                                  (*scal, *_CORE_ARGS), {"head": head, "window": window, "rank": rank,
                                                         "api": "dump_data"}, p.loc(node)))
        return
    if isinstance(data, GroupValue):
        p.fail(a.node("data"), f"pl.dump_data takes a tile; use {data.buffer.name}.current() for the group's slot")
    if not isinstance(data, TileValue):
        p.fail(a.node("data"), f"pl.dump_data requires a Tensor or a Tile, got {p.describe(data)}", kind="type")
    ref = data.ref
    tt = ref.tile_type
    space = tt.target_memory
    name = ref.buffer.name
    if space not in (MemorySpace.Vec, MemorySpace.Acc):
        p.fail(a.node("data"), f"pl.dump_data cannot print {space.name} tile '{name}': only Vec (UB) tiles, Acc "
                               "(L0C) tiles through a workspace, and GM tensors can be printed")
    section = p.ctx.section
    if space is MemorySpace.Vec and section is SectionKind.CUBE:
        p.fail(node, f"pl.dump_data of a Vec tile is not allowed in a Cube section ('{name}'); only Acc (L0C) tiles "
                     "and GM tensors can be dumped there")
    if space is MemorySpace.Acc and section is SectionKind.VECTOR:
        p.fail(node, f"pl.dump_data of an Acc tile is not allowed in a Vector section ('{name}'); only Vec (UB) "
                     "tiles and GM tensors can be dumped there")
    rows, cols = tt.shape
    scal = (_window_list(p, a, "offsets", 2, "tile") + _window_list(p, a, "shapes", 2, "tile") if window else [])
    head = (f"{where} dump_tile\n" if where else "") + (f"=== [flag] {flag} ===\n" if flag else "")
    attrs = {"head": head, "window": window, "api": "dump_data"}
    if space is MemorySpace.Vec:
        if ws is not None:
            p.fail(a.node("workspace"), f"pl.dump_data: workspace is only valid for Acc tiles ('{name}' is a Vec tile)")
        attrs["layout"] = _LAYOUT_NAMES.get(tt.effective_layout(p.ctx.arch.name).name, "ND")
        p.ctx.builder.emit(TileOp("dump_tile", PipeType.V, None, (ref,), (*scal, *_CORE_ARGS), attrs,  # type: ignore[arg-type]
                                  p.loc(node)))
        return
    if ws is None:
        p.fail(node, f"pl.dump_data of Acc tile '{name}' needs workspace=<a GM tensor of {tt.dtype.name} with at least "
                     f"{rows * cols} elements>: an Acc tile is printed through GM")
    if not isinstance(ws, TensorValue):
        p.fail(a.node("workspace"), f"pl.dump_data workspace must be a GM tensor, got {p.describe(ws)}", kind="type")
    wtype = ws.param.type
    if wtype.dtype is not tt.dtype:
        p.fail(a.node("workspace"), f"pl.dump_data workspace dtype {wtype.dtype.name} differs from the tile's "
                                    f"{tt.dtype.name}", kind="type")
    size = 1
    for d in wtype.dims:
        size = size * d if isinstance(d, int) and isinstance(size, int) else None  # type: ignore[assignment]
    if isinstance(size, int) and 0 < size < rows * cols:
        p.fail(a.node("workspace"), f"pl.dump_data workspace '{ws.param.name}' has {size} elements; the whole Acc "
                                    f"tile ({rows} x {cols} = {rows * cols}) is written there first")
    if not window:
        scal = [Const(0), Const(0), Const(rows), Const(cols)]
    p.ctx.builder.emit(TileOp("dump_acc", PipeType.FIX, GMRef(ws.param, ()), (ref,), (*scal, *_CORE_ARGS),
                              attrs, p.loc(node)))


# ---- simulator rules ---------------------------------------------------------------------------


def _gm_array(op: TileOp, ref: GMRef, arrays: list, args: tuple, fail):
    """``ref``'s whole memory as an ndarray (a ``pl.make_tensor`` view built from ``args``)."""
    param = ref.param
    if isinstance(param, TensorView):
        rank = param.type.rank
        return gm_views.window(fail, param, arrays[param.base.index], args[:rank], args[rank:2 * rank], args[2 * rank])
    return arrays[param.index]


def _dump_tensor_sim(op: TileOp, env):
    ref = op.srcs[0]
    dtype = ref.param.type.dtype
    nview = len(ref.param.view_exprs()) if isinstance(ref.param, TensorView) else 0
    head, window, rank = op.attrs["head"], op.attrs["window"], op.attrs["rank"]
    arrays = env.gm.arrays

    def fail(msg: str) -> Exception:
        return fault(op, msg, OutOfBoundsError)

    def dispatch(*args) -> Prepared:
        g = _gm_array(op, ref, arrays, args[:nview], fail)
        scal = args[nview:-3]
        if window:
            offs, shp = scal[:rank], scal[rank:2 * rank]
            for ax, (o, n, full) in enumerate(zip(offs, shp, g.shape)):
                if o < 0 or n <= 0 or o + n > full:
                    raise fail(f"pl.dump_data window [{o}, {o + n}) of axis {ax} is outside tensor '{ref.param.name}' "
                                f"(dim {full})")
            sel = tuple(slice(int(o), int(o + n)) for o, n in zip(offs, shp))
        else:
            sel = ()
        log = debug_log.current()
        slot = log.reserve(_core_key(env, args)) if log is not None else None

        def run(defer: bool):
            if slot is not None:
                slot.append(head + debug_log.tensor_text(g[sel], dtype))
            return None
        return Prepared(1, 1, True, (), (), 0, run)
    return dispatch


def _dump_tile_sim(op: TileOp, env):
    ref = op.srcs[0]
    st = env.states[ref.buffer.uid]
    tt = ref.tile_type
    head, window, layout = op.attrs["head"], op.attrs["window"], op.attrs["layout"]

    def dispatch(slot_i: int, *args) -> Prepared:
        view, valid = st.views[slot_i], st.valid[slot_i]
        if window:
            ro, co, rr, rc = (int(x) for x in args[:4])
            if ro < 0 or co < 0:
                raise fault(op, f"pl.dump_data window offsets [{ro}, {co}] of tile '{ref.buffer.name}' are negative",
                            OutOfBoundsError)
        log = debug_log.current()
        slot = log.reserve(_core_key(env, args)) if log is not None else None

        def run(defer: bool):
            if slot is None:
                return None
            data = np.asarray(view)  # logical values, also of a boxed (NZ) tile
            vr, vc = valid
            if not window:
                slot.append(head + debug_log.tile_text(data, (vr, vc), tt.dtype, layout))
                return None
            rows, cols = data.shape
            shown = (min(debug_log.window_bounds(rr, ro, vr), rows), min(debug_log.window_bounds(rc, co, vc), cols))
            slot.append(head + debug_log.tile_window_text(data, (ro, co), (max(rr, 0), max(rc, 0)), shown, tt.dtype,
                                                          layout, "Vec"))
            return None
        return Prepared(1, 1, True, (), (), 0, run)
    return dispatch


def _dump_acc_sim(op: TileOp, env):
    ws_ref, ref = op.dst, op.srcs[0]
    st = env.states[ref.buffer.uid]
    tt = ref.tile_type
    rows, cols = tt.shape
    nview = len(ws_ref.param.view_exprs()) if isinstance(ws_ref.param, TensorView) else 0
    head = op.attrs["head"]
    arrays = env.gm.arrays

    def fail(msg: str) -> Exception:
        return fault(op, msg, OutOfBoundsError)

    def dispatch(slot_i: int, *args) -> Prepared:
        g = _gm_array(op, ws_ref, arrays, args[:nview], fail)
        ro, co, rr, rc = (int(x) for x in args[nview:nview + 4])
        if g.size < rows * cols:
            raise fail(f"pl.dump_data workspace '{ws_ref.param.name}' has {g.size} elements; Acc tile "
                       f"'{ref.buffer.name}' needs {rows * cols}")
        if ro < 0 or co < 0:
            raise fail(f"pl.dump_data window offsets [{ro}, {co}] of tile '{ref.buffer.name}' are negative")
        flat = g.reshape(-1) if g.flags.c_contiguous else None
        if flat is None:
            raise fail(f"pl.dump_data workspace '{ws_ref.param.name}' must be contiguous")
        data = st.views[slot_i]
        log = debug_log.current()
        slot = log.reserve(_core_key(env, args)) if log is not None else None
        shown = (debug_log.window_bounds(rr, ro, rows), debug_log.window_bounds(rc, co, cols))

        def run(defer: bool):
            now = np.asarray(data)  # the logical [rows, cols] values (an Acc tile is stored NZ: a Region)
            copy = now.reshape(-1).copy()
            if slot is not None:
                slot.append(head + debug_log.tile_window_text(now, (ro, co), (max(rr, 0), max(rc, 0)), shown,
                                                              tt.dtype, "NZ", "Acc"))

            def commit() -> None:
                flat[:rows * cols] = copy
            if not defer:
                commit()
                return None
            return commit
        return Prepared(1, 1, True, (), (), 0, run)
    return dispatch


_NO_CPP = "device prints (cce::printf / TPRINT) are not emitted by the C++ backend in this release"
instruction("dump_tensor", FAMILY, _dump_tensor_sim, SCALAR, cpp_missing=_NO_CPP)
instruction("dump_tile", FAMILY, _dump_tile_sim, SCALAR, cpp_missing=_NO_CPP)
instruction("dump_acc", FAMILY, _dump_acc_sim, SCALAR, cpp_missing=_NO_CPP)
