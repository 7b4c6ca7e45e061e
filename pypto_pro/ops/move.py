"""``pl.move``: data between on-chip tiles, with the path (and so the pipe) chosen by the two memory
spaces (real page ``memory_data_movement/move.md``, declaration ``language/_api.py::move``).

Paths: Vec -> Vec (V, TMOV), Mat -> Left / Right (MTE1: TEXTRACT of a window at ``offset``, or TMOV
of the same shape), Acc -> Vec (FIX, a5; ``acc_to_vec_mode`` picks the Vector core(s): default
SingleModeVec0, as PTO-ISA's TMOV without a mode), Vec -> Mat (MTE3, a5). On a2a3 the last two do
not exist: Cube and Vector exchange data through global memory (a located CompileError says so).
``transpose=`` is ours (a transposing MTE1 copy) until the byte-exact fractal layouts land; the
real language transposes through ``order=`` loads into ZN tiles.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from pypto_pro.backends.sim import batch_ops, batch_replay, numerics
from pypto_pro.backends.sim.batch_replay import BatchSpec
from pypto_pro.backends.sim.fractal import box_copier
from pypto_pro.backends.sim.kit import Prepared, SimEnv, TileAccess, broadcast, deferred, fault, tiles
from pypto_pro.backends.sim.prep_memo import memoized
from pypto_pro.backends.sim.templates import elementwise
from pypto_pro.errors import CompileError
from pypto_pro.frontend.operands import Args, in_section, want_enum, want_tile
from pypto_pro.ir.expr import as_expr
from pypto_pro.ir.nodes import TileOp
from pypto_pro.language.enums import AccToVecMode, MemorySpace, PipeType, ReluPreMode, SectionKind
from pypto_pro.ops.cpp import NoCpp, call_cpp
from pypto_pro.ops.data_movement import ACC_STORE_DTYPES, hf8_out
from pypto_pro.ops.decl import PATH, api, instruction, vector
from pypto_pro.backends.sim import fixpipe, hf8
from pypto_pro.backends.sim.undefined import carriable, copy_carry
from pypto_pro.ops.fixpipe_scale import (convert, deq_word, has_scale, quant_words, scale_operand,
                                         single_mode_only)
from pypto_pro.ops.insert import TRANSPOSE_PAIR, emit_insert, ub_to_l1_sim
from pypto_pro.ops.insert import offsets as insert_offsets

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

FAMILY = "memory_data_movement"
# an undeferred Mat -> Left / Right move of whole boxes copies box view to box view in one pass
# (fractal.box_copier) instead of through a gathered copy and a scratch tile: the same bytes
# (tests/ops/test_move_box_copy.py compares the two); False restores the scratch path
BOX_COPY = True
V, M, L, R, A = MemorySpace.Vec, MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc

# (src space, dst space) -> (instruction, pipe, section that issues it, needs a5's direct Cube<->Vector path)
PATHS: dict[tuple[MemorySpace, MemorySpace], tuple[str, PipeType, SectionKind, bool]] = {
    (V, V): ("copy", PipeType.V, SectionKind.VECTOR, False),
    (M, L): ("extract", PipeType.MTE1, SectionKind.CUBE, False),
    (M, R): ("extract", PipeType.MTE1, SectionKind.CUBE, False),
    (A, V): ("fixpipe", PipeType.FIX, SectionKind.CUBE, True),
    (V, M): ("ub_to_l1", PipeType.MTE3, SectionKind.VECTOR, True),
    (M, MemorySpace.Bias): ("to_bias", PipeType.MTE1, SectionKind.CUBE, False),
    (M, MemorySpace.Scaling): ("to_scaling", PipeType.FIX, SectionKind.CUBE, False),
    # the MX scales (a5): the same MTE1 copy of dst's valid region (ops/matrix_mx.py)
    (M, MemorySpace.ScaleLeft): ("extract", PipeType.MTE1, SectionKind.CUBE, False),
    (M, MemorySpace.ScaleRight): ("extract", PipeType.MTE1, SectionKind.CUBE, False),
}
# Mat -> Bias converts on the way (PTO-ISA a5 TMovToBt); the bias table holds fp32
BIAS_DTYPES = {"DT_FP32": "DT_FP32", "DT_FP16": "DT_FP32", "DT_BF16": "DT_FP32", "DT_INT32": "DT_INT32"}
# (unit bytes the row must fill, capacity) of the bias table and the fixpipe buffer (TMovToBt / TMovToFb)
ONE_ROW_LIMITS = {"to_bias": (64, 4096, "bias table"), "to_scaling": (128, 4096, "fixpipe buffer")}
GM_ROUND_TRIP = ("Cube and Vector exchange data through global memory on {arch}: pl.store the tile to a GM "
                 "workspace in section_cube(), pl.system.set_cross_core / wait_cross_core, then pl.load it in "
                 "section_vector() (the direct {path} path exists on a5)")


@api(FAMILY, aliases={"out": "dst_tile", "src": "src_tile"})  # the real builder's names (_ir_move)
def move(dst_tile: Any, src_tile: Any, offset: Any = None, *, acc_to_vec_mode: Any = None, relu_pre_mode: Any = None,
         scale: Any = None, transpose: bool = False) -> None:
    """Move a tile between on-chip buffers; the path follows from the two memory spaces (see the module).

    ``offset`` [row, col]: take ``dst_tile``'s shape from ``src_tile`` at that element offset (Mat -> Left /
    Right); ``acc_to_vec_mode``: which Vector core(s) an Acc -> Vec move writes; ``relu_pre_mode``: ReLU in the
    fixpipe; ``transpose`` (ours): transpose a Mat -> Left / Right window or a Vec -> Vec copy."""


def _is_insert(p: "FunctionParser", a: Args, dst, src) -> bool:
    """The real rule for a ``pl.move`` that is a TINSERT: an offset and a destination that contains the
    source (compared transposed when the layouts are a transpose pair), or an equal-shape transposing
    Vec -> Mat move; never with the move-only keywords."""
    if any(a[k] is not None for k in ("acc_to_vec_mode", "relu_pre_mode", "scale")):
        return False
    arch = p.ctx.arch.name
    dl, sl = dst.tile_type.effective_layout(arch), src.tile_type.effective_layout(arch)
    transposed = TRANSPOSE_PAIR.get(dl) is sl
    dshape, sshape = tuple(dst.tile_type.shape), tuple(src.tile_type.shape)
    cmp = dshape[::-1] if transposed else dshape
    if a["offset"] is not None and all(d >= s for d, s in zip(cmp, sshape)) and cmp != sshape:
        return True
    return transposed and dshape == sshape[::-1] and (src.buffer.space, dst.buffer.space) == (V, M)


@move.check
def _move_check(p: "FunctionParser", node, a: Args) -> None:
    dst, src = want_tile(p, a, "dst_tile"), want_tile(p, a, "src_tile")
    if _is_insert(p, a, dst, src):
        off = insert_offsets(p, a, "offset") if a["offset"] is not None else (0, 0)
        emit_insert(p, node, dst, src, off, a.nodes.get("offset"), "pl.move (a TINSERT)")
        return
    key = (src.buffer.space, dst.buffer.space)
    path = PATHS.get(key)
    if path is None:
        supported = ", ".join(f"{s.name}->{d.name}" for s, d in PATHS)
        p.fail(node, f"pl.move has no {key[0].name} -> {key[1].name} path in this release (supported: {supported})")
    instr, pipe, section, direct = path
    arch = p.ctx.arch
    if direct and not arch.direct_cube_vector_paths:
        p.fail(node, f"{arch.name} has no {key[0].name} -> {key[1].name} path. "
               + GM_ROUND_TRIP.format(arch=arch.name, path=f"{key[0].name}->{key[1].name}"))
    in_section(p, node, section, f"pl.move {key[0].name} -> {key[1].name}")
    st, dt = src.tile_type, dst.tile_type
    attrs: dict = {"api": "move"}
    transpose = a["transpose"]
    if not isinstance(transpose, bool):
        p.fail(a.node("transpose"), "transpose must be True or False")
    for k in ("acc_to_vec_mode", "relu_pre_mode") if key != (A, V) else ():
        if a[k] is not None:
            p.fail(a.node(k), f"pl.move({k}=...) applies to Acc -> Vec moves only")
    if a["scale"] is not None and key != (A, V):
        p.fail(a.node("scale"), "pl.move(scale=...) is a fixpipe option: it applies to Acc -> Vec moves only")
    if instr == "extract":
        if st.dtype is not dt.dtype:
            p.fail(a.node("dst_tile"), f"pl.move Mat -> {key[1].name} keeps the dtype: 'src_tile' is {st.dtype.name}, "
                                       f"'dst_tile' is {dt.dtype.name}")
        r0, c0 = insert_offsets(p, a, "offset") if a["offset"] is not None else (0, 0)
        rows, cols = (dt.cols, dt.rows) if transpose else (dt.rows, dt.cols)
        if rows > st.rows or cols > st.cols or isinstance(r0, int) and r0 + rows > st.rows or \
                isinstance(c0, int) and c0 + cols > st.cols:
            p.fail(node, f"pl.move takes a {rows} x {cols} window{' (transposed)' if transpose else ''} at "
                         f"[{r0 if isinstance(r0, int) else 'r'}, {c0 if isinstance(c0, int) else 'c'}] from "
                         f"'{src.buffer.name}' of shape {list(st.shape)}: it does not fit")
        attrs.update(transpose=transpose, access_scalars=True, tmov=a["offset"] is None)
        p.ctx.builder.emit(TileOp(instr, pipe, dst, (src,), (as_expr(r0), as_expr(c0)), attrs, p.loc(node)))
        return
    else:
        offset = None
        if a["offset"] is not None:
            if instr != "fixpipe":
                p.fail(a.node("offset"), f"pl.move {key[0].name} -> {key[1].name} takes no offset")
            offset = insert_offsets(p, a, "offset")
        if transpose:
            hint = "; use pl.transpose" if instr == "copy" else ""
            p.fail(a.node("transpose"), f"pl.move {key[0].name} -> {key[1].name} cannot transpose{hint}")
        want = (st.cols, st.rows) if transpose else st.shape
        mode = want_enum(p, a, "acc_to_vec_mode", AccToVecMode, optional=True) if key == (A, V) else None
        single_mode_only(p, a)
        if offset is not None:  # TEXTRACT Acc -> Vec: from src at offset (dual modes: src's valid shape, split)
            r0, c0 = offset
            if dt.rows > st.rows or dt.cols > st.cols or isinstance(r0, int) and r0 >= st.rows or \
                    isinstance(c0, int) and c0 >= st.cols:
                p.fail(node, f"pl.move extracts a {dt.rows} x {dt.cols} tile at [{r0 if isinstance(r0, int) else 'r'}, "
                             f"{c0 if isinstance(c0, int) else 'c'}] from '{src.buffer.name}' of shape "
                             f"{list(st.shape)}: it does not fit")
            attrs["offset"] = True
            attrs["access_scalars"] = True
        elif tuple(dt.shape) != tuple(want) and mode is None:  # the real check skips shapes given a mode:
            # the valid shapes govern, checked when the move runs (it writes the Acc's valid shape, or its half)
            p.fail(a.node("dst_tile"), f"pl.move: 'dst_tile' has shape {list(dt.shape)}; this move needs "
                                       f"{list(want)}")
        scale_ops: tuple = ()
        fp_tiles: tuple = ()
        if instr == "fixpipe":
            scale_ops, fp_tiles = scale_operand(p, a, st.dtype.name, dt.dtype.name, attrs)
            allowed = ACC_STORE_DTYPES.get(st.dtype.name, ())
            if has_scale(attrs):
                outs = fixpipe.quant_outputs(arch.name, st.dtype.name, bool(fp_tiles))
                allowed = allowed + tuple(d for d in outs if d not in allowed)
            if dt.dtype.name not in allowed:
                p.fail(a.node("dst_tile"), f"the fixpipe converts {st.dtype.name} to {', '.join(allowed)}, not "
                                           f"{dt.dtype.name}")
            attrs["mode"] = mode or AccToVecMode.SingleModeVec0
            attrs["relu"] = want_enum(p, a, "relu_pre_mode", ReluPreMode, optional=True) is not None
        elif instr in ONE_ROW_LIMITS:
            _one_row_check(p, a, instr, st, dt)
            attrs["widen"] = st.dtype is not dt.dtype and instr == "to_bias"
        elif st.dtype is not dt.dtype:
            p.fail(a.node("dst_tile"), f"pl.move {key[0].name} -> {key[1].name} keeps the dtype: {st.dtype.name} vs "
                                       f"{dt.dtype.name}")
        if instr == "ub_to_l1":
            attrs["src_layout"] = st.effective_layout(arch.name)
        attrs["transpose"] = transpose
        scalars = tuple(as_expr(x) for x in offset) if offset is not None else ()
        p.ctx.builder.emit(TileOp(instr, pipe, dst, (src, *fp_tiles), scalars + scale_ops, attrs, p.loc(node)))
        return
    p.ctx.builder.emit(TileOp(instr, pipe, dst, (src,), (), attrs, p.loc(node)))


def _one_row_check(p: "FunctionParser", a: Args, instr: str, st, dt) -> None:
    """Mat -> Bias / Scaling: one row, the same shape, whole units of the target table (a5 static_asserts)."""
    unit, cap, what = ONE_ROW_LIMITS[instr]
    if st.rows != 1:
        p.fail(a.node("src_tile"), f"pl.move into the {what} moves one row: 'src_tile' is {list(st.shape)}")
    if instr == "to_bias":
        want = BIAS_DTYPES.get(st.dtype.name)
        if want is None or dt.dtype.name != want:
            pairs = ", ".join(f"{k} -> {v}" for k, v in BIAS_DTYPES.items())
            p.fail(a.node("dst_tile"), f"pl.move Mat -> Bias converts {pairs}; not {st.dtype.name} -> {dt.dtype.name}")
    elif st.dtype.bits != dt.dtype.bits:
        p.fail(a.node("dst_tile"), f"pl.move Mat -> Scaling copies bytes: {st.dtype.name} vs {dt.dtype.name}")
    nbytes = dt.cols * dt.dtype.itemsize
    if nbytes % unit or nbytes > cap:
        p.fail(a.node("dst_tile"), f"the {what} takes rows of a multiple of {unit} bytes, at most {cap}: "
                                   f"{dt.cols} x {dt.dtype.name} is {nbytes} bytes")


# ---- simulator ----------------------------------------------------------------------------------


def _copy_sim(op: TileOp, env: SimEnv) -> Callable:
    """Vec -> Vec (TMOV): the rows and columns both valid shapes cover (the smaller of the two, per
    axis, as PTO-ISA's a2a3 and a5 ``TMovToVec`` take them); dst's valid shape is left as it is."""
    d, a = tiles(op, env)
    carry = carriable(d, a)

    def dispatch(sd: int, sa: int) -> Prepared:
        (dr, dc), (sr, sc) = d.valid[sd], a.valid[sa]
        r, c = min(dr, sr), min(dc, sc)
        src, dv = a.region(sa, r, c), d.region(sd, r, c)
        run = deferred(lambda out: np.copyto(out, src), dv)
        written = (*d.written(sd, r, c), copy_carry(d, sd, a, sa, 0, 0, r, c, entry=False)) if carry else \
            d.written(sd, r, c)
        prep = Prepared(r, c, c * d.item == d.row_bytes, (a.access(sa, r, c, False), d.access(sd, r, c, True)), (),
                        r * c * d.item, run, (written,))
        if batch_replay.LANES > 1 and batch_ops.copyable(src, dv):
            prep.batch = BatchSpec((id(op), sd, sa, r, c), batch_ops.copy_many, (src, dv, False))
        return prep
    return memoized(dispatch, [(0, d.valid), (1, a.valid)])


def _box_run(copy: Callable[[], None], run: Callable[[bool], Callable | None]) -> Callable[[bool], Callable | None]:
    """``run`` whose undeferred form is ``copy()`` while :data:`BOX_COPY` is on (read when it runs)."""
    def fast(defer: bool) -> Callable | None:
        if defer or not BOX_COPY:
            return run(defer)
        copy()
        return None
    return fast


def _extract_sim(op: TileOp, env: SimEnv) -> Callable:
    """Mat -> Left/Right (MTE1): dst's valid region from ``src`` at ``offset``, optionally transposed."""
    d, a = tiles(op, env)
    transpose = op.attrs["transpose"]
    tmov = op.attrs.get("tmov", False)
    srows, scols = op.srcs[0].tile_type.shape  # type: ignore[union-attr]
    packed = op.dst.tile_type.dtype.packed  # type: ignore[union-attr]
    carry = carriable(d, a)
    windows: dict[tuple, Any] = {}  # (src slot, r0, c0, rows, cols) -> the source window

    def dispatch(sd: int, sa: int, r0: int, c0: int) -> Prepared:
        dr, dc = d.valid[sd]
        r, c = (dc, dr) if transpose else (dr, dc)
        vr, vc = a.valid[sa]
        if r0 < 0 or c0 < 0 or r0 + r > srows or c0 + c > scols:
            raise fault(op, f"pl.move reads a {r} x {c} window at [{r0}, {c0}] of '{a.label}', outside its "
                            f"{srows} x {scols} shape")
        # the MTE1 copy reads L1 bytes whatever the source's valid shape (real kernels narrow a wide L1 tile's
        # valid shape and extract past it); bytes nothing wrote are still reported by the checkers
        if packed:  # two 4-bit elements a byte: whole bytes of the window (offsets on even columns)
            if c0 % 2 or transpose:
                raise fault(op, "pl.move of a packed 4-bit tile takes windows at even columns, untransposed")
            src = a.views[sa][r0:r0 + r, c0 // 2:(c0 + c + 1) // 2]
            run = deferred(lambda out: np.copyto(out, src), d.views[sd][:dr, :(dc + 1) // 2])
        else:
            key = (sa, r0, c0, r, c)
            src = windows.get(key)
            if src is None:  # (a pure function of the key, as kit.TileAccess.region)
                src = windows[key] = a.views[sa][r0:r0 + r, c0:c0 + c]
            dv = d.region(sd, dr, dc)
            run = deferred(lambda out: np.copyto(out, src.T if transpose else src), dv)
            copy = None if transpose else box_copier(src, dv)
            if copy is not None:  # L1 -> L0 of whole boxes: undeferred, one strided copy (the same bytes)
                run = _box_run(copy, run)
        # a TMOV copies the destination's valid shape whatever the source's: the rows past the source's valid
        # shape carry what L1 holds there (garbage the chip computes with and a tail store leaves out), so the
        # checkers see the read of the source's valid part only
        read = a.window(sa, r0, min(r, vr), c0 + min(c, vc)) if tmov else a.window(sa, r0, r, c0 + c)
        # never-written L1 bytes (padding) are copied as they are: undefined elements of dst (sim/undefined.py)
        written = (*d.written(sd, dr, dc), copy_carry(d, sd, a, sa, r0, c0, r, c, transpose)) if carry else \
            d.written(sd, dr, dc)
        prep = Prepared(r, c, True, (read, d.access(sd, dr, dc, True)), (), dr * dc * d.item, run, (written,))
        if not packed and batch_replay.LANES > 1 and batch_ops.copyable(src, dv):
            prep.batch = BatchSpec((id(op), sd, sa, r0, c0, dr, dc), batch_ops.copy_many, (src, dv, transpose))
        return prep
    return memoized(dispatch, [(0, d.valid), (1, a.valid)])


def _fixpipe_part(op: TileOp, env: SimEnv, core: int, k: int | None) -> Callable:
    """Acc -> Vec into Vector core ``core``'s UB: the whole tile, or half of it (dual modes, part ``k``).

    The destination's bytes are that core's; its valid shape is the Cube program's own tile state
    (each core's program holds its own tile objects, as on the chip)."""
    uid = op.dst.buffer.uid  # type: ignore[union-attr]
    local = env.states[uid]
    d = TileAccess(dataclasses.replace(env.remote(core)[uid], valid=local.valid))  # type: ignore[misc]
    a = TileAccess(env.states[op.srcs[0].buffer.uid])  # type: ignore[union-attr]
    mode = op.attrs["mode"]
    same = op.dst.tile_type.dtype is op.srcs[0].tile_type.dtype  # type: ignore[union-attr]
    relu = op.attrs.get("relu", False)
    runtime_scale = "deq_runtime" in op.attrs
    to_hf8 = op.dst.tile_type.dtype.name == "DT_HF8"  # type: ignore[union-attr]
    fp = TileAccess(env.states[op.srcs[1].buffer.uid]) if len(op.srcs) > 1 else None  # type: ignore[union-attr]
    carry = carriable(d, a)

    def dispatch(sd: int, sa: int, *offset: int) -> Prepared:
        fp_slot = None
        if fp is not None:
            fp_slot, offset = offset[0], offset[1:]
        if runtime_scale:
            offset, deq = offset[:-1], deq_word(op.attrs, offset[-1])
        else:
            deq = deq_word(op.attrs, None)
        r, c = a.valid[sa]
        if offset and k is not None:  # TEXTRACT, dual mode: src's valid shape from [r0, c0], halved per core
            r0, c0 = offset
            rows, cols = op.srcs[0].tile_type.shape  # type: ignore[union-attr]
            if r0 < 0 or c0 < 0 or r0 + r > rows or c0 + c > cols:
                raise fault(op, f"pl.move extracts {r} x {c} (the valid shape of '{a.label}') at [{r0}, {c0}]: "
                                f"outside its {rows} x {cols} shape")
            if mode is AccToVecMode.DualModeSplitM:
                r = (r + 1) // 2
                at = (r0 + k * r, c0)
                src = a.views[sa][r0 + k * r:r0 + (k + 1) * r, c0:c0 + c]
                acc_src = a.window(sa, r0 + k * r, r, c0 + c)
            else:
                c = (c + 31) // 32 * 32 // 2
                at = (r0, c0 + k * c)
                src = a.views[sa][r0:r0 + r, c0 + k * c:c0 + (k + 1) * c]
                acc_src = a.window(sa, r0, r, c0 + (k + 1) * c)
        elif offset:  # TEXTRACT: dst's valid region from the Acc at [r0, c0]
            r0, c0 = offset
            r, c = d.valid[sd]
            vr, vc = a.valid[sa]
            if r0 < 0 or c0 < 0 or r0 + r > vr or c0 + c > vc:
                raise fault(op, f"pl.move extracts {r} x {c} at [{r0}, {c0}] of '{a.label}', whose valid shape is "
                                f"{vr} x {vc}")
            at = (r0, c0)
            src = a.views[sa][r0:r0 + r, c0:c0 + c]
            acc_src = a.window(sa, r0, r, c0 + c)
        elif mode is AccToVecMode.DualModeSplitM:
            vr = r
            r = (r + 1) // 2  # the real codegen rounds the Acc's valid M up to even
            at = (k * r, 0)
            src = a.views[sa][k * r:(k + 1) * r, :c]
            # the rounded-up row is moved as it is but is no data: checked for stale bytes is only
            # what the matmul wrote (the Acc's valid rows)
            acc_src = a.window(sa, k * r, max(0, min(r, vr - k * r)), c)
        elif mode is AccToVecMode.DualModeSplitN:
            vc = c
            c = (c + 31) // 32 * 32 // 2  # valid N rounded up to 32, then halved
            at = (0, k * c)
            src = a.views[sa][:r, k * c:(k + 1) * c]
            acc_src = a.window(sa, 0, r, min((k + 1) * c, vc))  # (the rounded-up columns are no data)
        else:
            at = (0, 0)
            src = a.views[sa][:r, :c]
            acc_src = a.access(sa, r, c, False)
        # PTO-ISA's TMOV Acc -> Vec moves the Acc's valid shape (TMovCcToUb(m, n) of src.GetValidRow/Col):
        # the destination's valid shape is not consulted, only its physical shape must hold the rows
        dr, dc = op.dst.tile_type.shape  # type: ignore[union-attr]
        if dr < r or dc < c:
            raise fault(op, f"pl.move Acc -> Vec writes {r} x {c} into '{d.label}', whose shape is {dr} x {dc}")
        reads = (acc_src, d.access(sd, r, c, True))
        if fp is not None:  # single modes only: the columns of the Acc it reads, from column c0
            c0 = offset[1] if offset else 0
            deq = quant_words(op, fp.views[fp_slot], fp.valid[fp_slot][1], c0, c, fault)
            reads += (fp.access(fp_slot, 1, c0 + c, False),)

        def compute(out: np.ndarray) -> None:
            q = convert(src, out.dtype, op.attrs, deq, relu, hf8.encode)
            if q is not None:
                out[...] = q
                return
            if to_hf8:
                out[...] = hf8_out(src, relu)
                return
            data = np.maximum(src, np.zeros((), src.dtype)) if relu else src
            if same:
                np.copyto(out, data)
            else:
                numerics.cast(out, np.ascontiguousarray(data), "rint")
        dv = d.views[sd][:r, :c]
        run = deferred(compute, dv)
        # Acc bytes past what the matmul wrote (a valid N widened to the fixpipe's alignment) move as they are:
        # undefined elements of dst (sim/undefined.py)
        written = (*d.written(sd, r, c), copy_carry(d, sd, a, sa, *at, r, c)) if carry else d.written(sd, r, c)
        prep = Prepared(r, c, True, reads, (), r * c * d.item, run, (written,))
        if plain and batch_replay.LANES > 1:  # a copy or a plain conversion: batched replay runs it for several blocks at once
            key = (id(op), core, sd, sa, offset, r, c)
            if same and batch_ops.copyable(src, dv):
                prep.batch = BatchSpec(key, batch_ops.copy_many, (src, dv, False))
            elif not same and isinstance(dv, np.ndarray):
                prep.batch = BatchSpec(key, _fixpipe_cast_many, (src, dv))
        return prep
    plain = not (relu or to_hf8 or fp is not None or runtime_scale or op.attrs.get("quant"))
    return dispatch


def _fixpipe_cast_many(preps: list, stack, defer: bool):
    """Batched Acc -> Vec conversion (no scale, no relu): every block's ``numerics.cast`` of its
    contiguous copy of the Acc window, as the per-block path computes it."""
    src, dv = preps[0].batch.data
    vals = batch_ops.read(stack, src)
    if vals is None:
        return NotImplemented
    return batch_ops.land(stack(dv), lambda out: numerics.cast(out, vals, "rint"), defer)


def _fixpipe_sim(op: TileOp, env: SimEnv) -> Callable:
    if env.remote is None:
        raise CompileError("an Acc -> Vec move needs the block's Vector cores, but the kernel has no section_vector()",
                           op.loc)
    mode = op.attrs["mode"]
    if mode in (AccToVecMode.SingleModeVec0, AccToVecMode.SingleModeVec1):
        dispatch = _fixpipe_part(op, env, 0 if mode is AccToVecMode.SingleModeVec0 else 1, None)
    else:
        dispatch = broadcast([_fixpipe_part(op, env, k, k) for k in (0, 1)])
    if len(op.srcs) > 1 or "deq_runtime" in op.attrs:  # reads a scaling tile's words, or a run-time scale
        return dispatch
    # the destination's valid shape is the Cube program's own tile state (_fixpipe_part)
    return memoized(dispatch, [(0, env.states[op.dst.buffer.uid].valid),  # type: ignore[union-attr]
                               (1, env.states[op.srcs[0].buffer.uid].valid)])  # type: ignore[union-attr]


def _to_table_sim(op: TileOp, env: SimEnv) -> Callable:
    """Mat -> Bias (fp16 / bf16 widened to fp32) or Mat -> Scaling (the bytes as they are)."""
    widen = op.attrs.get("widen", False)

    def move_row(out: np.ndarray, x) -> None:
        x = np.ascontiguousarray(x)
        if widen:
            numerics.cast(out, x, "rint")  # fp16 / bf16 -> fp32: exact
        else:
            out[...] = x.view(out.dtype)
    return elementwise(move_row)(op, env)


# ---- C++ ----------------------------------------------------------------------------------------------


def _extract_cpp(op: TileOp, ctx, arch: str) -> list[str]:
    r0, c0 = (ctx.cexpr(e) for e in op.scalars)
    if op.attrs.get("transpose"):
        return _transposed_extract_cpp(op, ctx, r0, c0)
    return [f"TEXTRACT({ctx.tile(op.dst)}, {ctx.tile(op.srcs[0])}, {r0}, {c0});"]


def _transposed_extract_cpp(op: TileOp, ctx, r0: str, c0: str) -> list[str]:
    """``transpose=True`` (ours): PTO-ISA's TEXTRACT has no transpose flag, but an NZ Mat tile [R, C]
    holds exactly the bytes of the ZN tile [C, R] of its transpose (each 16 x C0 row-major box is a
    C0 x 16 column-major box, the column-major block order a row-major one). So the source is
    re-declared as that ZN tile at the same L1 address and the window extracted at (c0, r0)."""
    from pypto_pro.backends.pto.ctypes_map import ctype
    from pypto_pro.language.enums import NZ
    src = op.srcs[0]
    b, tt = src.buffer, src.buffer.tile_type
    if b.space is not MemorySpace.Mat or tt.effective_layout("a5") is not NZ:
        raise NoCpp(f"a transposing move reads an NZ Mat tile; '{b.name}' is {b.space.name} "
                    f"{tt.effective_layout('a5').name}")
    addr = f"0x{b.addrs[0]:05x}" if len(b.addrs) == 1 else \
        f"pp_pick<{', '.join(f'0x{x:05x}' for x in b.addrs)}>({ctx.cexpr(src.slot)})"
    s = ctx.tile(src)
    return [f"using tr_t = Tile<TileType::Mat, {ctype(tt.dtype)}, {tt.cols}, {tt.rows}, BLayout::RowMajor, DYNAMIC, "
            "DYNAMIC, SLayout::ColMajor, 512>;  // the NZ source seen as the ZN tile of its transpose",
            "tr_t tr;",
            f"TASSIGN(tr, {addr}); tr.SetValidShape({s}.GetValidCol(), {s}.GetValidRow());",
            f"TEXTRACT({ctx.tile(op.dst)}, tr, {c0}, {r0});"]


def _fixpipe_cpp(op: TileOp, ctx, arch: str) -> list[str]:
    """Acc -> Vec through the fixpipe (a5): ``TMOV<dst, src, [fp,] AccToVecMode, ReluPreMode>`` as the
    real backend spells it, ``TEXTRACT<...>(..., row, col)`` at an offset; a per-tensor scale is the
    deqScalar operand (``data_movement._deq_cpp``), a Scaling tile the fp operand."""
    from pypto_pro.ops.data_movement import _deq_cpp
    if arch != "a5":
        raise NoCpp("Acc -> Vec moves are a5 only")
    mode = op.attrs["mode"].name
    relu = "ReluPreMode::NormalRelu" if op.attrs.get("relu") else "ReluPreMode::NoRelu"
    dst, src = ctx.tile(op.dst), ctx.tile(op.srcs[0])
    types = f"{ctx.type_name(op.dst.buffer)}, {ctx.type_name(op.srcs[0].buffer)}"
    at = ", ".join(ctx.cexpr(e) for e in op.scalars[:2]) if op.attrs.get("offset") else None
    if op.attrs.get("vector_quant"):
        fp = op.srcs[1]
        tmpl = f"<{types}, {ctx.type_name(fp.buffer)}, AccToVecMode::{mode}, {relu}>"
        if at is not None:
            return [f"TEXTRACT{tmpl}({dst}, {src}, {ctx.tile(fp)}, {at});"]
        return [f"TMOV{tmpl}({dst}, {src}, {ctx.tile(fp)});"]
    tmpl = f"<{types}, AccToVecMode::{mode}, {relu}>"
    deq = _deq_cpp(op, ctx)
    if deq is not None:
        extract = f"TEXTRACT{tmpl}({dst}, {src}, {deq}, {at or '0, 0'});"
        if at is not None:
            return [extract]
        # PTO-ISA's CPU model drops the deqScalar of TMOV (its TEXTRACT applies it): same instruction there
        return ["#if defined(__CPU_SIM)", extract, "#else", f"TMOV{tmpl}({dst}, {src}, {deq});", "#endif"]
    if at is not None:
        return [f"TEXTRACT{tmpl}({dst}, {src}, {at});"]
    return [f"TMOV{tmpl}({dst}, {src});"]


instruction("copy", FAMILY, _copy_sim, vector("copy", "copy", flops=False), call_cpp("TMOV"))
instruction("extract", FAMILY, _extract_sim, PATH, _extract_cpp)
instruction("fixpipe", FAMILY, _fixpipe_sim, PATH, _fixpipe_cpp)
instruction("ub_to_l1", FAMILY, ub_to_l1_sim, PATH, call_cpp("TMOV"))
instruction("to_bias", FAMILY, _to_table_sim, PATH, call_cpp("TMOV"), pipe=PipeType.MTE1)
instruction("to_scaling", FAMILY, _to_table_sim, PATH, call_cpp("TMOV"), pipe=PipeType.FIX)
