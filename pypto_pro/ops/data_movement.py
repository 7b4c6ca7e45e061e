"""Data movement between global memory and tiles: ``pl.load``, ``pl.load_tile``, ``pl.store``,
``pl.store_tile`` (real pages: ``api/SIMD-API/operation/memory_data_movement/{load,load_tile,store,
store_tile}.md``).

A transfer moves the tile's **valid region** (its valid shape: TileType ``valid_shape`` or
``pl.set_validshape``), as the real codegen does (it sets the GlobalTensor's shape from the tile):
``rows x cols`` elements at ``offsets`` along the two tensor axes ``order`` selects (default the
last two; a descending ``order`` transposes). A window that leaves the tensor is a located
out-of-bounds fault (the chip would read or write past the tensor).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from pypto_pro.backends.pto.ctypes_map import ctype
from pypto_pro.backends.sim import batch_ops, batch_replay
from pypto_pro.backends.sim.batch_replay import BatchSpec
from pypto_pro.backends.sim.kit import Prepared, SimEnv, TileAccess, deferred, fault
from pypto_pro.backends.sim.prep_memo import memoized
from pypto_pro.ops.gm_window import window as _window
from pypto_pro.backends.sim import gm_copy, gm_strided, gm_views, numerics
from pypto_pro.backends.sim.fractal import values as fractal_values
from pypto_pro.backends.sim.inst import ATOMIC
from pypto_pro.errors_sim import OutOfBoundsError
from pypto_pro.frontend.operands import (Args, element_node, in_section, want_enum, want_index, want_tensor,
                                         want_tile)
from pypto_pro.ir.expr import BinOp, Const, Expr
from pypto_pro.ir.nodes import GMRef, TileOp, TileRef
from pypto_pro.language.enums import AtomicType, MemorySpace, PipeType, ReluPreMode, SectionKind, STPhase
from pypto_pro.backends.sim import fixpipe, hf8
from pypto_pro.ops.cpp import NoCpp
from pypto_pro.ops.decl import GM, api, instruction
from pypto_pro.ops.fixpipe_scale import convert, deq_word, has_scale, quant_words, scale_operand

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

FAMILY = "memory_data_movement"
LOAD_SPACES = {MemorySpace.Vec: SectionKind.VECTOR, MemorySpace.Mat: SectionKind.CUBE}
STORE_SPACES = {MemorySpace.Vec: (PipeType.MTE3, SectionKind.VECTOR), MemorySpace.Acc: (PipeType.FIX, SectionKind.CUBE)}
# the fixpipe converts an accumulator on its way out (PTO-ISA TSTORE from Acc)
ACC_STORE_DTYPES = {"DT_FP32": ("DT_FP32", "DT_FP16", "DT_BF16", "DT_HF8"), "DT_INT32": ("DT_INT32",)}


# ---- stubs (the real signatures; kernel keywords also take the real builders' operand names) --------
LOAD_ALIASES = {"out": "dst_tile", "tensor": "src_tensor"}   # block_ops.py _ir_load: pl.load(out=t, tensor=x, ...)
STORE_ALIASES = {"out": "dst_tensor", "tile": "src_tile"}    # _ir_store


@api(FAMILY, aliases=LOAD_ALIASES)
def load(dst_tile: Any, src_tensor: Any, offsets: Any, *, order: Any = None) -> None:
    """GM -> tile (Vec or Mat): the tile's valid region from element ``offsets`` (one per tensor axis).

    ``order``: the two tensor axes the tile's rows and columns run along (default the last two;
    descending = transposed)."""


@api(FAMILY, aliases=LOAD_ALIASES)
def load_tile(dst_tile: Any, src_tensor: Any, tile_offsets: Any, *, order: Any = None) -> None:
    """GM -> tile at tile coordinates: on the ``order`` axes the offset is the index times the tile's
    extent; other axes take ``tile_offsets`` as element offsets."""


@api(FAMILY, aliases=STORE_ALIASES)
def store(dst_tensor: Any, src_tile: Any, offsets: Any, *, relu_pre_mode: Any = None, scale: Any = None,
          order: Any = None, atomic: Any = AtomicType.AtomicNone, phase: Any = None) -> None:
    """Tile (Vec via MTE3, Acc via the fixpipe) -> GM: the tile's valid region at element ``offsets``.

    ``atomic=pl.AtomicType.AtomicAdd`` adds into GM; ``relu_pre_mode``, ``scale`` and ``phase`` are
    the fixpipe's options for Acc tiles."""


@api(FAMILY, aliases=STORE_ALIASES)
def store_tile(dst_tensor: Any, src_tile: Any, tile_offsets: Any, *, relu_pre_mode: Any = None, scale: Any = None,
               order: Any = None, atomic: Any = AtomicType.AtomicNone, phase: Any = None) -> None:
    """Tile -> GM at tile coordinates (see ``pl.load_tile``)."""


# ---- frontend checks ---------------------------------------------------------------------------


def _order(p: "FunctionParser", a: Args, rank: int, store: bool) -> tuple[int, int]:
    order = a["order"]
    if order is None:
        return (0, 0) if rank == 1 else (rank - 2, rank - 1)
    node = a.node("order")
    if not isinstance(order, (list, tuple)) or len(order) != 2 or \
            not all(isinstance(x, int) and not isinstance(x, bool) for x in order):
        p.fail(node, f"order must be a list of two compile-time tensor axes, got {p.describe(order)}")
    a0, a1 = order
    if not (0 <= a0 < rank and 0 <= a1 < rank) or a0 == a1:
        p.fail(node, f"order {list(order)} must name two different axes of the rank-{rank} tensor")
    if store and a0 > a1:
        p.fail(node, f"{a.display}: order must be ascending, got {list(order)} (transposed stores are not supported)")
    return a0, a1


def gm_offsets(p: "FunctionParser", a: Args, argname: str, tensor, tile: TileRef, axes: tuple[int, int],
               tile_coords: bool) -> tuple[Expr, ...]:
    """Element offsets of the window, one per tensor axis (tile coordinates scaled on ``axes``)."""
    coords = a[argname]
    node = a.node(argname)
    rank = tensor.param.type.rank
    if not isinstance(coords, (list, tuple)):
        p.fail(node, f"'{argname}' must be a list with one entry per tensor axis")
    if len(coords) != rank:
        p.fail(node, f"tensor '{tensor.param.name}' has rank {rank}; {len(coords)} {argname} given")
    tt = tile.tile_type
    if rank == 1 and tt.rows != 1:
        p.fail(node, f"a rank-1 tensor moves [1, N] tiles; tile '{tile.buffer.name}' has {tt.rows} rows")
    extents = {axes[1]: tt.cols} if rank == 1 else {axes[0]: tt.rows, axes[1]: tt.cols}
    out: list[Expr] = []
    for axis, c in enumerate(coords):
        at = element_node(node, rank, axis)
        c = want_index(p, at, c, f"{argname}[{axis}]")
        if isinstance(c, int) and c < 0:
            p.fail(at, f"{argname}[{axis}] = {c} is negative (negative indices are not supported)")
        ext = extents.get(axis, 1) if tile_coords else 1
        off = c * ext if isinstance(c, int) else (BinOp("*", c, Const(ext)) if ext != 1 else c)
        dim = tensor.param.type.dims[axis]
        if isinstance(off, int) and isinstance(dim, int) and off >= dim:
            p.fail(at, f"offset {off} on axis {axis} is outside tensor '{tensor.param.name}' (size {dim})")
        out.append(off if isinstance(off, Expr) else Const(off))
    return tuple(out)


def _check_dtype(p: "FunctionParser", node, tile: TileRef, tensor, verb: str) -> None:
    td, gd = tile.tile_type.dtype, tensor.param.type.dtype
    if td.bits != gd.bits:
        p.fail(node, f"{verb} moves bytes, it does not convert: tile '{tile.buffer.name}' is {td.name}, tensor "
                     f"'{tensor.param.name}' is {gd.name} (different widths; move the data, then pl.cast)")


def _load_check(p: "FunctionParser", node, a: Args, tile_coords: bool) -> None:
    tile = want_tile(p, a, "dst_tile")
    tensor = want_tensor(p, a, "src_tensor")
    space = tile.buffer.space
    if space not in LOAD_SPACES:
        p.fail(a.node("dst_tile"), f"{a.display} loads into Vec (UB) or Mat (L1) tiles only; "
                                   f"'{tile.buffer.name}' is in {space.name} (use pl.move for the other spaces)")
    in_section(p, node, LOAD_SPACES[space], f"{a.display} into a {space.name} tile")
    _check_dtype(p, node, tile, tensor, a.display)
    from pypto_pro.ops import mx_load
    if mx_load.is_mx_load(p, tile, tensor):  # MX scales: the pair-phase GM layout (ops/mx_load.py)
        mx_load.emit(p, node, a, tile, tensor, tile_coords)
        return
    axes = _order(p, a, tensor.param.type.rank, store=False)
    offsets = gm_offsets(p, a, "tile_offsets" if tile_coords else "offsets", tensor, tile, axes, tile_coords)
    p.ctx.builder.emit(TileOp("load", PipeType.MTE2, tile, (GMRef(tensor.param, offsets),),
                              attrs={"order": axes, "api": a.name}, loc=p.loc(node)))


def _store_check(p: "FunctionParser", node, a: Args, tile_coords: bool) -> None:
    tile = want_tile(p, a, "src_tile")
    tensor = want_tensor(p, a, "dst_tensor")
    space = tile.buffer.space
    if space not in STORE_SPACES:
        p.fail(a.node("src_tile"), f"{a.display} stores from Vec (UB) or Acc (L0C) tiles only; "
                                   f"'{tile.buffer.name}' is in {space.name}")
    pipe, section = STORE_SPACES[space]
    in_section(p, node, section, f"{a.display} from a {space.name} tile")
    attrs: dict = {"api": a.name}
    scalars: tuple = ()
    fp_tiles: tuple = ()
    if space is MemorySpace.Acc:
        src_name, dst_name = tile.tile_type.dtype.name, tensor.param.type.dtype.name
        scalars, fp_tiles = scale_operand(p, a, src_name, dst_name, attrs)
        allowed = ACC_STORE_DTYPES.get(src_name, ())
        if has_scale(attrs):
            outs = fixpipe.quant_outputs(p.ctx.arch.name, src_name, bool(fp_tiles))
            allowed = allowed + tuple(d for d in outs if d not in allowed)
        if dst_name not in allowed:
            p.fail(node, f"the fixpipe converts {tile.tile_type.dtype.name} accumulators to {', '.join(allowed)}, "
                         f"not {tensor.param.type.dtype.name}")
        attrs["relu"] = want_enum(p, a, "relu_pre_mode", ReluPreMode, optional=True) is not None
        if a["phase"] is not None:
            attrs["phase"] = want_enum(p, a, "phase", STPhase)
    else:
        _check_dtype(p, node, tile, tensor, a.display)
        for k in ("relu_pre_mode", "phase"):
            if a[k] is not None:
                p.fail(a.node(k), f"{a.display}({k}=...) is a fixpipe option: it applies to Acc tiles only")
        if a["scale"] is not None:
            p.fail(a.node("scale"), f"{a.display}(scale=...) is a fixpipe option: it applies to Acc tiles only")
    atomic = want_enum(p, a, "atomic", AtomicType)
    attrs["atomic"] = atomic is AtomicType.AtomicAdd
    axes = _order(p, a, tensor.param.type.rank, store=True)
    attrs["order"] = axes
    offsets = gm_offsets(p, a, "tile_offsets" if tile_coords else "offsets", tensor, tile, axes, tile_coords)
    p.ctx.builder.emit(TileOp("store", pipe, GMRef(tensor.param, offsets), (tile, *fp_tiles), scalars, attrs=attrs,
                              loc=p.loc(node)))


load.check(lambda p, node, a: _load_check(p, node, a, False))
load_tile.check(lambda p, node, a: _load_check(p, node, a, True))
store.check(lambda p, node, a: _store_check(p, node, a, False))
store_tile.check(lambda p, node, a: _store_check(p, node, a, True))


# ---- simulator ------------------------------------------------------------------------------------


def _rows_run_on(g: np.ndarray, offs: tuple, rows: int, axes: tuple[int, int]) -> bool:
    """Whether the window's rows run past its row axis into the next index of an outer axis: the chip's
    GM view is the two axes' strides with no per-axis bound, so e.g. a tile of (S, N) rows merged loads
    from a [B, S, N, D] tensor with order=[2, 3] (the quantised lightning indexer's Q). Such a window is
    walked by strides and bounded by the tensor's bytes; its columns must still fit their axis."""
    a0 = axes[0]
    return g.ndim > 1 and 0 < a0 and 0 <= offs[a0] < g.shape[a0] and offs[a0] + rows > g.shape[a0]


def _chip_strides(g: np.ndarray, axes: tuple[int, int]) -> tuple[int, int] | None:
    """The steps (elements) between a window's rows and columns when the inner ``order`` axis is not the
    tensor's last: the real codegen puts the two axes' strides in the GlobalTensor, but PTO-ISA a5's ND / DN
    copies (TLoadVecND2ND, TLoadCube, TStoreAccND, TStoreVecND) move each row (DN: column) as one
    contiguous burst and use only the outer stride. So that axis is walked with step 1, along the
    tensor's last axis; None when the inner axis is the last (the ordinary case)."""
    if g.ndim < 2 or max(axes) == g.ndim - 1 or not g.flags.c_contiguous:
        return None
    st = [s // g.itemsize for s in g.strides]
    return (1, st[axes[1]]) if axes[0] > axes[1] else (st[axes[0]], 1)


class _Tensor:
    """A GM operand at dispatch: a tensor parameter's array, or a ``pl.make_tensor`` view built from its
    run-time shape, strides and byte offset (which follow the offsets in the call's arguments)."""

    def __init__(self, op: TileOp, ref: GMRef, env: SimEnv):
        self.op, self.arrays = op, env.gm.arrays
        self.pidx, self.pname, self.rank = ref.param.index, ref.param.name, ref.param.type.rank
        self.view = ref.param if isinstance(ref.param, gm_views.TensorView) else None
        self._records: dict[tuple, tuple] = {}  # accesses() of a view: (id of its row rects, write) -> records

    def get(self, args: tuple) -> tuple[np.ndarray, tuple]:
        """(array, element offsets) of one call."""
        if self.view is None:
            return self.arrays[self.pidx], args
        rank, v = self.rank, args[self.rank:]
        base = self.arrays[self.view.base.index]
        g = gm_views.window(lambda m: fault(self.op, m, OutOfBoundsError), self.view, base, v[:rank],
                            v[rank:2 * rank], v[-1])
        return g, args[:rank]

    def strided(self, g: np.ndarray, offs: tuple, rows: int, cols: int, axes: tuple[int, int],
                strides: tuple[int, int] | None, packed: bool, write: bool) -> tuple:
        """A window walked with explicit strides (``pl.set_stride``, packed 4-bit types; see ``gm_strided``):
        (its elements, or for a write its addresses, and the GM checker's record)."""
        for axis, o in enumerate(offs):
            if not 0 <= o < g.shape[axis]:
                raise fault(self.op, f"{'store to' if write else 'load from'} '{self.pname}': offset {o} on axis "
                                     f"{axis} is outside the tensor's shape {list(g.shape)}", OutOfBoundsError)
        index = self.view.base.index if self.view is not None else self.pidx
        flat, start = gm_strided.base_of(self.arrays, index, g)
        addr = gm_strided.element_addresses(g, start, offs, rows, cols, axes, strides, packed)
        gm_strided.check_bounds(addr, flat.size, g.itemsize, packed, lambda m: fault(self.op, m, OutOfBoundsError),
                                f"{'store to' if write else 'load from'} '{self.pname}' ({rows} x {cols} at "
                                f"{list(offs)}, strides {list(strides) if strides else 'default'})")
        rect = gm_strided.checker_rect(g, start, addr, packed, self.view is not None)
        acc = ((self.pidx, self.pname, rect, write),)
        if write:
            return (flat, addr), acc
        return gm_strided.gather(flat, addr, g.dtype, packed), acc

    def accesses(self, g: np.ndarray, idx: tuple, rect: tuple, write: bool) -> tuple:
        """What the GM checker sees: the window's rect, or for a view one byte range per row of its base."""
        if self.view is None:
            return ((self.pidx, self.pname, rect, write),)
        base = self.arrays[self.view.base.index]
        rects = gm_views.row_rects(g, base, idx)
        got = self._records.get((id(rects), write))
        if got is None or got[0] is not rects:  # (the cache holds rects: its id is not reused meanwhile)
            if len(self._records) >= 1 << 12:
                self._records.clear()
            got = self._records[(id(rects), write)] = (rects, gm_views.records(self.pidx, self.pname, rects, write))
        return got[1]


def _load_sim(op: TileOp, env: SimEnv) -> Callable:
    tile, ref = op.dst, op.srcs[0]
    assert isinstance(tile, TileRef) and isinstance(ref, GMRef)
    t = TileAccess(env.states[tile.buffer.uid])
    gmt = _Tensor(op, ref, env)
    pname, axes = ref.param.name, op.attrs["order"]
    descriptors, packed = env.gm.strides, tile.tile_type.dtype.packed
    plain = [False]  # whether the last dispatch took the plain path (records of strided loads hold GM bytes)
    fast = gm_copy.plain_window(t, env.gm.arrays, ref.param.index, pname, descriptors, False) \
        if gmt.view is None and not packed and tuple(axes) == (0, 1) else None

    def dispatch(slot: int, *args: int) -> Prepared:
        if fast is not None and len(args) == 2:  # a window inside a 2-D tensor (gm_copy; else None)
            prep = fast(slot, *args)
            if prep is not None:
                plain[0] = True
                return prep
        plain[0] = False
        g, offs = gmt.get(args)
        r, c = t.valid[slot]
        strides = descriptors.get(ref.param.index)
        if strides is None and not packed and gmt.view is None:
            strides = _chip_strides(g, axes)
        if strides is not None or packed or _rows_run_on(g, offs, r, axes):  # (gathers the GM bytes now)
            src, gm_acc = gmt.strided(g, offs, r, c, axes, strides, packed, False)
            view = t.views[slot][:r, :(c + 1) // 2] if packed else t.views[slot][:r, :c]
            data = gm_strided.pack_codes(src) if packed else src
            data = data if data.dtype == view.dtype else data.view(view.dtype)
            run = deferred(lambda out: np.copyto(out, data), view)
            return Prepared(r, c, c * t.item == t.row_bytes, (t.access(slot, r, c, True),), gm_acc,
                            t.st.buffer.tile_type.dtype.nbytes(r * c), run, (t.written(slot, r, c),))
        idx, rect, transposed = _window(op, g, offs, r, c, axes, "load from", pname)
        src = g[idx]
        src = src.T if transposed else (src if g.ndim > 1 else src[None, :])
        view = t.region(slot, r, c)
        src = src if src.dtype == view.dtype else src.view(view.dtype)  # same width: the bytes move as they are
        run = deferred(lambda out: np.copyto(out, src), view)
        prep = Prepared(r, c, c * t.item == t.row_bytes, (t.access(slot, r, c, True),),
                        gmt.accesses(g, idx, rect, False), r * c * t.item, run, (t.written(slot, r, c),))
        if batch_replay.LANES > 1 and (isinstance(view, np.ndarray) or getattr(view, "boxes", None) is not None):  # (a boxed tile: batch_ops)
            prep.batch = BatchSpec(("load", src.shape, src.strides, src.dtype.str), batch_ops.load_many,
                                   ((src, g, idx), view))
        plain[0] = True
        return prep
    if gmt.view is not None:  # a pl.make_tensor view is rebuilt from its base on every call
        return dispatch
    # a plain load's record: a view of this launch's tensor (the memo is emptied with the binding's arrays),
    # keyed with the tensor's pl.set_stride descriptor
    return memoized(dispatch, [(0, t.valid)], state=lambda: descriptors.get(ref.param.index), gm=env.gm,
                    keep=lambda: plain[0])


def _store_sim(op: TileOp, env: SimEnv) -> Callable:
    ref, tile = op.dst, op.srcs[0]
    assert isinstance(tile, TileRef) and isinstance(ref, GMRef)
    t = TileAccess(env.states[tile.buffer.uid])
    gmt = _Tensor(op, ref, env)
    pname, axes = ref.param.name, op.attrs["order"]
    relu, atomic = op.attrs.get("relu", False), op.attrs.get("atomic", False)
    runtime_scale = "deq_runtime" in op.attrs
    fp = TileAccess(env.states[op.srcs[1].buffer.uid]) if len(op.srcs) > 1 else None  # type: ignore[union-attr]
    # the fixpipe's conversion into HiFloat8 (an Acc result); an HF8 tile's bytes are stored as they are
    to_hf8 = ref.param.type.dtype.name == "DT_HF8" and tile.tile_type.dtype.name != "DT_HF8"
    descriptors = env.gm.strides
    packed = tile.tile_type.dtype.packed
    write = ATOMIC if atomic else True  # the GM checker lets atomic adders overlap each other only
    # a copy of the tile's bytes (what batched replay runs for several blocks at once)
    plain = not (relu or atomic or to_hf8 or packed or fp is not None or runtime_scale or op.attrs.get("quant"))
    fast = gm_copy.plain_window(t, env.gm.arrays, ref.param.index, pname, descriptors, True) \
        if plain and gmt.view is None and tuple(axes) == (0, 1) else None

    def dispatch(slot: int, *args: int) -> Prepared:
        if fast is not None and len(args) == 2:  # a same-dtype copy into a window inside a 2-D tensor
            prep = fast(slot, *args)
            if prep is not None:
                return prep
        fp_slot = None
        if fp is not None:
            fp_slot, args = args[0], args[1:]
        if runtime_scale:
            args, deq = args[:-1], deq_word(op.attrs, args[-1])
        else:
            deq = deq_word(op.attrs, None)
        g, offs = gmt.get(args)
        r, c = t.valid[slot]
        view = t.region(slot, r, c)
        reads = (t.access(slot, r, c, False),)
        strides = descriptors.get(ref.param.index)
        if packed:  # 4-bit codes, two a byte: nibble addresses (gm_strided)
            (flat, addr), gm_acc = gmt.strided(g, offs, r, c, axes, strides, True, True)
            src = t.views[slot][:r, :(c + 1) // 2]
            run = _packed_write(src, c, flat, addr)
            return Prepared(r, c, False, reads, gm_acc, (r * c + 1) // 2, run)
        if strides is None and gmt.view is None:
            strides = _chip_strides(g, axes)
        run_on = strides is not None or _rows_run_on(g, offs, r, axes)
        if run_on:  # pl.set_stride, or rows past their axis: the elements go to their strided addresses
            (flat, addr), gm_acc = gmt.strided(g, offs, r, c, axes, strides, False, True)
            dst = np.empty((r, c), g.dtype)
        else:
            idx, rect, _ = _window(op, g, offs, r, c, axes, "store to", pname)
            dst = g[idx]
        if fp is not None:
            deq = quant_words(op, fp.views[fp_slot], fp.valid[fp_slot][1], 0, c, fault)
            reads += (fp.access(fp_slot, 1, c, False),)

        def compute(out: np.ndarray) -> None:
            data = np.asarray(view)
            q = convert(data, dst.dtype, op.attrs, deq, relu, hf8.encode)
            if q is not None:
                q = q if g.ndim > 1 else q[0]
                out[...] = np.add(out, q, dtype=out.dtype) if atomic and not to_hf8 else q
                return
            if to_hf8:
                q = hf8_out(data, relu)
                out[...] = q if g.ndim > 1 else q[0]
                return
            if relu:
                data = np.where(data > 0, data, np.zeros((), data.dtype))
            if dst.dtype != data.dtype and dst.dtype.itemsize != data.dtype.itemsize or \
                    t.space is MemorySpace.Acc and dst.dtype != data.dtype:
                converted = np.empty(data.shape, dst.dtype)
                numerics.cast(converted, np.ascontiguousarray(data), "rint")  # the fixpipe converts on the way out
                data = converted
            elif dst.dtype != data.dtype:
                data = data.view(dst.dtype)
            shaped = data if g.ndim > 1 else data[0]
            if atomic:
                out[...] = np.add(out, shaped, dtype=out.dtype) if out.dtype.kind == "f" else out + shaped
            else:
                out[...] = shaped
        if run_on:
            run = _strided_write(compute, flat, addr, dst, atomic)
            gm_acc = tuple((i, n, rr, write) for i, n, rr, _ in gm_acc)
            return Prepared(r, c, c * t.item == t.row_bytes, reads, gm_acc, r * c * t.item, run)
        run = _read_modify(compute, dst) if atomic else deferred(compute, dst)
        prep = Prepared(r, c, c * t.item == t.row_bytes, reads, gmt.accesses(g, idx, rect, write),
                        r * c * t.item, run)
        if plain and batch_replay.LANES > 1 and not run_on and g.ndim > 1 and dst.dtype == view.dtype and isinstance(view, np.ndarray):
            prep.batch = BatchSpec(("store", dst.shape, dst.strides, dst.dtype.str), batch_ops.store_many,
                                   ((dst, g, idx), view))
        return prep
    return dispatch


def _packed_write(src, cols: int, flat: np.ndarray, addr: np.ndarray) -> Callable:
    """A packed 4-bit tile's codes, read when the store starts, written to their nibbles when it lands."""
    def run(defer: bool):
        codes = gm_strided.unpack_codes(np.asarray(fractal_values(src), np.uint8), cols)

        def land() -> None:
            gm_strided.scatter(flat, addr, codes, True)
        if not defer:
            land()
            return None
        return land
    return run


def _strided_write(compute: Callable[[np.ndarray], None], flat: np.ndarray, addr: np.ndarray, scratch: np.ndarray,
                   atomic: bool) -> Callable:
    """A store through ``pl.set_stride`` strides: computed into ``scratch``, scattered when it lands (an
    atomic add reads GM then)."""
    def land() -> None:
        if atomic:
            scratch[...] = gm_strided.gather(flat, addr, scratch.dtype, False)
            compute(scratch)
        gm_strided.scatter(flat, addr, scratch, False)

    def run(defer: bool):
        if not atomic:
            compute(scratch)
        if not defer:
            land()
            return None
        return land
    return run


def hf8_out(data, relu: bool) -> np.ndarray:
    """The fixpipe's fp32 -> HiFloat8 conversion without a scale (a scaled one is a quant mode:
    ``fixpipe_scale.convert``)."""
    v = np.asarray(data).astype(np.float32)
    if relu:
        v = np.where(v > 0, v, np.float32(0))
    return hf8.encode(v)


def _read_modify(compute: Callable[[np.ndarray], None], dst: np.ndarray) -> Callable:
    """An atomic add reads GM at its end, when the write lands (the hardware adds at the destination)."""
    def run(defer: bool):
        if not defer:
            compute(dst)
            return None
        return lambda: compute(dst)
    return run


# ---- C++ ---------------------------------------------------------------------------------------------


def _cpp_window(op: TileOp, ctx, ref: GMRef, tile: TileRef) -> list[str]:
    """GlobalTensor over the window: shape = the tile's valid shape (as the real codegen sets it)."""
    from pypto_pro.backends.pto.ctypes_map import ctype
    name = ref.param.name
    offs = [ctx.cexpr(o) for o in ref.offsets]
    view = ref.param if hasattr(ref.param, "view_exprs") else None
    a0, a1 = op.attrs["order"]
    pre: list[str] = []
    if view is None:
        dims = ctx.dims(name)
        strides = [" * ".join(dims[axis + 1:]) or "1" for axis in range(len(dims))]
        base, gm_t = name, ctx.gm_type(name)
    else:  # a pl.make_tensor view: its own strides (elements of its dtype) from a byte offset into its base
        dims = list(view.shape)
        strides = [f"({ctx.cexpr(e)})" for e in view.strides]
        el = ctype(view.type.dtype)
        base = (f"reinterpret_cast<__gm__ {el}*>(reinterpret_cast<__gm__ uint8_t*>({view.base.name}) + "
                f"({ctx.cexpr(view.offset)}))")
        gm_t = "view_gm_t"
        if a0 <= a1:
            pre.append(f"using view_gm_t = GlobalTensor<{el}, Shape<1, 1, 1, DYNAMIC, DYNAMIC>, "
                       "Stride<1, 1, 1, DYNAMIC, DYNAMIC>>;")
    flat = " + ".join(o if s == "1" else f"({o}) * {s}" for o, s in zip(offs, strides))
    t = ctx.tile(tile)
    row_stride = strides[a0] if len(dims) > 1 else "cols"
    col_stride = strides[a1] if len(dims) > 1 else "1"
    desc = ctx.strides(name)
    if desc is not None:  # pl.set_stride: once set, the descriptor's steps replace the tensor's own
        flag, rs, cs = desc
        row_stride = f"({flag} ? {rs} : static_cast<int64_t>({row_stride}))"
        col_stride = f"({flag} ? {cs} : static_cast<int64_t>({col_stride}))"
    lines = [f"const int64_t rows = {t}.GetValidRow(), cols = {t}.GetValidCol();"] + pre
    if a0 > a1:  # a transposed window (order=[1, 0]): column-major in GM, PTO's Layout::DN
        lines.append(f"using gm_dn_t = GlobalTensor<{ctype(ref.param.type.dtype)}, Shape<1, 1, 1, DYNAMIC, DYNAMIC>, "
                     "Stride<1, 1, 1, DYNAMIC, DYNAMIC>, Layout::DN>;")
        gm_t = "gm_dn_t"
    return lines + [f"{gm_t} gm({base} + {flat}, {gm_t}::Shape(1, 1, 1, rows, cols), "
                    f"{gm_t}::Stride(1, 1, 1, {row_stride}, {col_stride}));"]


def _load_cpp(op: TileOp, ctx, arch: str) -> list[str]:
    tile, ref = op.dst, op.srcs[0]
    return _cpp_window(op, ctx, ref, tile) + [f"TLOAD({ctx.tile(tile)}, gm);"]


def _store_cpp(op: TileOp, ctx, arch: str) -> list[str]:
    """``TSTORE`` (``TSTORE_FP`` with a Scaling tile). The fixpipe options are PTO-ISA template
    arguments, in the real backend's order: ``TSTORE<[STPhase,] tile, GlobalTensor, AtomicType,
    ReluPreMode>(gm, tile[, deqScalar])``; an atomic add is the template's (PTO-ISA sets and resets
    the GM atomic mode itself, typed by the destination). A per-tensor scale is the 64-bit deqScalar
    the simulator uses: a constant word, a run-time fp32's bits, or run-time bits; bit 46 (signed) for
    an int8 destination."""
    ref, tile = op.dst, op.srcs[0]
    lines = _cpp_window(op, ctx, ref, tile)
    t = ctx.tile(tile)
    relu, atomic, phase = op.attrs.get("relu"), op.attrs.get("atomic"), op.attrs.get("phase")
    opts = ("AtomicType::AtomicAdd" if atomic else "AtomicType::AtomicNone",
            "ReluPreMode::NormalRelu" if relu else "ReluPreMode::NoRelu")
    tmpl = [f"STPhase::{phase.name}"] if phase is not None else []
    tmpl += [ctx.type_name(tile.buffer), "decltype(gm)", *opts]
    if op.attrs.get("vector_quant"):
        if phase is not None:
            raise NoCpp("TSTORE_FP has no STPhase form in PTO-ISA")
        fp = op.srcs[1]
        if not (relu or atomic):
            return lines + [f"TSTORE_FP(gm, {t}, {ctx.tile(fp)});"]
        return lines + [f"TSTORE_FP<{', '.join([tmpl[0], tmpl[1], ctx.type_name(fp.buffer), *opts])}>"
                        f"(gm, {t}, {ctx.tile(fp)});"]
    deq = _deq_cpp(op, ctx)
    if deq is None and not (relu or atomic or phase is not None):
        return lines + [f"TSTORE(gm, {t});"]
    if deq is None and not relu:  # PTO-ISA's ReluPreMode overload is Acc-only (a5 static_assert)
        tmpl = tmpl[:-1]
    return lines + [f"TSTORE<{', '.join(tmpl)}>(gm, {t}{', ' + deq if deq else ''});"]


def _deq_cpp(op: TileOp, ctx) -> str | None:
    """The deqScalar of a per-tensor fixpipe scale (``fixpipe_scale.deq_word``), as a uint64_t prvalue."""
    if "deq" in op.attrs:
        return f"static_cast<uint64_t>({op.attrs['deq']}ULL)"
    kind = op.attrs.get("deq_runtime")
    if kind is None:
        return None
    v = ctx.cexpr(op.scalars[-1])
    word = (f"static_cast<uint64_t>(__builtin_bit_cast(uint32_t, static_cast<float>({v})))" if kind == "f32"
            else f"static_cast<uint64_t>({v})")
    if op.attrs["deq_dst"] == "DT_INT8":
        word = f"(({word}) | (1ULL << 46))"
    return f"static_cast<uint64_t>({word})"


instruction("load", FAMILY, _load_sim, GM, _load_cpp)
instruction("store", FAMILY, _store_sim, GM, _store_cpp)

__all__ = ["load", "load_tile", "store", "store_tile", "ctype"]
