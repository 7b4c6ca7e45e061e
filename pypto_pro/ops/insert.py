"""``pl.insert``: a Vec (UB) tile into a Mat (L1) tile at ``offset`` (real page
``memory_data_movement/insert.md``; PTO-ISA TINSERT Vec -> Mat), and the byte copies the UB -> L1
DMA makes (also what ``pl.move`` Vec -> Mat, PTO-ISA TMOV = TEXTRACT Vec -> Mat, does).

The UB -> L1 path is a DMA of 32-byte blocks in storage order, not an element-wise copy: what lands
in L1 depends on both tiles' layouts, byte for byte as PTO-ISA's a5 implementation
(``include/pto/npu/a5/TInsert.hpp``, ``TExtract.hpp::TExtractVecToMat``) programs the DMA:

* NZ source: one burst per 32-byte column block (``c0 = 32 / sizeof`` columns), ``valid rows``
  blocks long, into the destination's column block at ``offset``. An NZ source into an NZ Mat is a
  sub-tile insert; into a ZN Mat (the same bytes as an NZ tile of the transposed shape) it lands
  transposed: ``dst[offset[1] + j, offset[0] + i] = src[i, j]``.
* ZN source: one burst per 32-byte row block into a ZN Mat.
* ND source: rows of ``valid cols`` elements, written as if the destination were row-major, so an
  ND tile inserted into an NZ Mat is scrambled, as on the chip (the real docs: move it to an NZ Vec
  tile first, ``pl.move(tile_nz, tile_nd)``).

Whole 32-byte blocks move: a valid width that is not a multiple of ``c0`` carries the rest of its
last block along, as the hardware does.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable


from pypto_pro.arch.layouts import BOXES
from pypto_pro.backends.sim import fractal
from pypto_pro.backends.sim.kit import Prepared, SimEnv, fault, tiles
from pypto_pro.backends.sim.prep_memo import memoized
from pypto_pro.backends.sim.undefined import bytes_carry
from pypto_pro.frontend.operands import Args, element_node, in_section, want_index, want_tile
from pypto_pro.ir.expr import as_expr
from pypto_pro.ir.nodes import TileOp, TileRef
from pypto_pro.language.enums import DN, ND, NN, NZ, ZN, ZZ, MemorySpace, PipeType, SectionKind, TensorLayout
from pypto_pro.language.tile_type import TileType
from pypto_pro.ops.decl import PATH, api, instruction

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

FAMILY = "memory_data_movement"
BLOCK = 32  # bytes per DMA block
# layouts that are one another's transpose (the same bytes with the axes swapped)
TRANSPOSE_PAIR = {NZ: ZN, ZN: NZ, NN: ZZ, ZZ: NN, ND: DN, DN: ND}


@api(FAMILY, aliases={"out": "dst_tile", "src": "src_tile"})  # the real builder's names (_ir_insert)
def insert(dst_tile: Any, src_tile: Any, offset: Any) -> None:
    """Insert the Vec tile ``src_tile`` into the Mat tile ``dst_tile`` with its top-left corner at
    ``offset = [row, col]`` (UB -> L1 on MTE3; a byte DMA, see the module docstring)."""


def _layout(p: "FunctionParser", t: TileRef) -> TensorLayout:
    return t.tile_type.effective_layout(p.ctx.arch.name)


def emit_insert(p: "FunctionParser", node, dst: TileRef, src: TileRef, offset: tuple, offset_node,
                display: str) -> None:
    """Check and emit one TINSERT (``pl.insert``, or ``pl.move`` when it dispatches to insert)."""
    arch = p.ctx.arch
    if dst.buffer.space is not MemorySpace.Mat or src.buffer.space is not MemorySpace.Vec:
        p.fail(node, f"{display} inserts a Vec (UB) tile into a Mat (L1) tile; got {src.buffer.space.name} -> "
                     f"{dst.buffer.space.name}")
    if not arch.direct_cube_vector_paths:
        p.fail(node, f"{arch.name} has no Vec -> Mat path: the Vector core reaches L1 through global memory "
                     "(pl.store to a GM workspace, pl.system.set_cross_core / wait_cross_core, pl.load into the Mat "
                     "tile); the direct UB -> L1 path exists on a5")
    in_section(p, node, SectionKind.VECTOR, display)
    st, dt = src.tile_type, dst.tile_type
    if st.dtype is not dt.dtype:
        p.fail(node, f"{display} copies bytes: 'src_tile' is {st.dtype.name}, 'dst_tile' is {dt.dtype.name}")
    sl, dl = _layout(p, src), _layout(p, dst)
    if sl not in (ND, NZ, ZN):
        p.fail(node, f"{display}: a {sl.name} Vec tile cannot be inserted (the UB -> L1 DMA takes ND, NZ or ZN tiles)")
    if sl is ZN and dl is not ZN:
        p.fail(node, f"{display}: a ZN Vec tile inserts into a ZN Mat tile only; '{dst.buffer.name}' is {dl.name}")
    rows, cols = dt.shape
    if sl is NZ and BOXES[dl][0]:  # NZ bytes into a row-major-block Mat: the transposed coordinates
        rows, cols = cols, rows
    r0, c0 = offset
    # the DMA moves the source's valid shape (a padded source, e.g. [65, 64] valid [64, 64], inserts 64 rows):
    # a static valid shape must fit from the offset; a run-time one is checked when the copy runs
    for i, (o, ext, lim) in enumerate(((r0, st.valid_shape[0], rows), (c0, st.valid_shape[1], cols))):
        at = element_node(offset_node, 2, i) if offset_node is not None else node
        if isinstance(o, int) and isinstance(ext, int) and ext > 0 and o + ext > lim:
            p.fail(at, f"{display}: offset[{i}] = {o} + the source's valid {ext} exceeds the destination's {lim}")
        if isinstance(o, int) and o >= lim:
            p.fail(at, f"{display}: offset[{i}] = {o} is past the destination's {lim}")
    attrs = {"api": "insert", "access_scalars": True, "src_layout": sl, "dst_layout": dl}
    p.ctx.builder.emit(TileOp("insert", PipeType.MTE3, dst, (src,), (as_expr(r0), as_expr(c0)), attrs, p.loc(node)))


def offsets(p: "FunctionParser", a: Args, name: str) -> tuple[Any, Any]:
    v = a[name]
    if not isinstance(v, (list, tuple)) or len(v) != 2:
        p.fail(a.node(name), f"'{name}' must be [row, col] element offsets, got {p.describe(v)}")
    out = []
    for i, x in enumerate(v):
        x = want_index(p, element_node(a.node(name), 2, i), x, f"{name}[{i}]")
        if isinstance(x, int) and x < 0:
            p.fail(element_node(a.node(name), 2, i), f"{name}[{i}] = {x} is negative")
        out.append(x)
    return out[0], out[1]


@insert.check
def _insert_check(p: "FunctionParser", node, a: Args) -> None:
    dst, src = want_tile(p, a, "dst_tile"), want_tile(p, a, "src_tile")
    emit_insert(p, node, dst, src, offsets(p, a, "offset"), a.node("offset"), "pl.insert")


# ---- the UB -> L1 DMA, in elements of the tile's dtype (bytes for the packed 4-bit types) ----------


def _item(tt: TileType) -> int:
    return 1 if tt.dtype.packed else tt.dtype.itemsize


def _units(tt: TileType, n: int) -> int:
    """``n`` columns in storage units (bytes for a packed type)."""
    return n // 2 if tt.dtype.packed else n


def insert_bursts(st: TileType, sl: TensorLayout, dt: TileType, dl: TensorLayout, vr: int, vc: int,
                  r0: int, c0: int) -> list[tuple[int, int, int]]:
    """TINSERT's bursts as ``(src offset, dst offset, length)`` in storage units."""
    item = _item(st)
    c0s = BLOCK // item
    if sl is NZ:
        dst_rows = dt.rows if not BOXES[dl][0] else _units(dt, dt.cols)
        cb, cr = _units(st, c0), _units(st, vc)
        start = (cb // c0s) * dst_rows * c0s + r0 * c0s + cb % c0s
        return [(j * st.rows * c0s, start + j * dst_rows * c0s, vr * c0s) for j in range(-(-cr // c0s))]
    if sl is ZN:
        dst_cols = dt.cols
        start = (r0 // c0s) * dst_cols * c0s + c0 * c0s + r0 % c0s
        return [(j * st.cols * c0s, start + j * dst_cols * c0s, vc * c0s) for j in range(-(-vr // c0s))]
    # ND: rows written as if the destination were row-major
    dcols, scols, w = _units(dt, dt.cols), _units(st, st.cols), _units(st, vc)
    start = r0 * dcols + _units(st, c0)
    total = vr * w * item
    if w == scols == dcols and total >= BLOCK:
        return [(0, start, total // BLOCK * BLOCK // item)]
    if w * item >= BLOCK:
        burst = w * item // BLOCK * BLOCK // item
        sgap = (scols * item - w * item) // BLOCK * BLOCK // item
        dgap = (dcols * item - w * item) // BLOCK * BLOCK // item
        return [(i * (burst + sgap), start + i * (burst + dgap), burst) for i in range(vr)]
    return [(0, start, -(-total // BLOCK) * BLOCK // item)]


def tmov_bursts(st: TileType, sl: TensorLayout, dt: TileType, vr: int, vc: int) -> list[tuple[int, int, int]]:
    """TMOV Vec -> Mat (TEXTRACT Vec -> Mat at [0, 0]): ``vr x vc`` is the destination's valid shape."""
    item = _item(st)
    c0s = BLOCK // item
    if sl is NZ:
        rows = -(-vr // 16) * 16
        stride = rows + st.rows - dt.rows
        return [(j * stride * c0s, j * rows * c0s, rows * c0s) for j in range(-(-_units(st, vc) // c0s))]
    return [(0, 0, vr * _units(st, vc) * item // BLOCK * BLOCK // item)]


def _dma_sim(bursts_of: Callable) -> Callable:
    def rule(op: TileOp, env: SimEnv) -> Callable:
        d, s = tiles(op, env)
        dt, st = op.dst.tile_type, op.srcs[0].tile_type  # type: ignore[union-attr]
        dst_n, src_n = dt.nbytes // _item(dt), st.nbytes // _item(st)

        def dispatch(sd: int, ss: int, *offset: int) -> Prepared:
            vr, vc = s.valid[ss] if offset else d.valid[sd]
            bursts = bursts_of(vr, vc, *offset)
            for so, do, n in bursts:
                if so < 0 or do < 0 or so + n > src_n or do + n > dst_n:
                    raise fault(op, f"pl.{op.attrs.get('api', op.op)}: the {vr} x {vc} copy at {list(offset) or [0, 0]}"
                                    f" reaches past '{d.label}' or '{s.label}' (the DMA moves whole 32-byte blocks)")
            src_flat, dst_flat = fractal.flat(s.views[ss]), fractal.flat(d.views[sd])

            def run(defer: bool):
                data = [src_flat[so:so + n].copy() for so, _, n in bursts]

                def commit() -> None:
                    for (_, do, n), x in zip(bursts, data):
                        dst_flat[do:do + n] = x
                if not defer:
                    commit()
                    return None
                return commit
            item = _item(dt)
            space, lo, _, core = d.keys[sd]
            label = d.labels[sd]
            writes = tuple(((space, lo + do * item, lo + (do + n) * item, core), True, label, 1, n * item, n * item)
                           for _, do, n in bursts)
            commits = tuple(((core, space), lo + do * item, 1, n * item, n * item) for _, do, n in bursts)
            if commits:  # undefined (padding) bytes carried on, byte for byte (sim/undefined.py), at the last commit
                commits = (*commits[:-1], (*commits[-1], bytes_carry(d, sd, s, ss, bursts, item)))
            return Prepared(vr, vc, True, (s.access(ss, vr, vc, False), *writes), (),
                            sum(n for _, _, n in bursts) * item, run, commits)
        return memoized(dispatch, [(0, d.valid), (1, s.valid)])
    return rule


def _insert_sim(op: TileOp, env: SimEnv) -> Callable:
    st, dt = op.srcs[0].tile_type, op.dst.tile_type  # type: ignore[union-attr]
    sl, dl = op.attrs["src_layout"], op.attrs["dst_layout"]
    return _dma_sim(lambda vr, vc, r0, c0: insert_bursts(st, sl, dt, dl, vr, vc, r0, c0))(op, env)


def ub_to_l1_sim(op: TileOp, env: SimEnv) -> Callable:
    """TMOV Vec -> Mat: the destination's valid region as TEXTRACT Vec -> Mat at [0, 0] moves it."""
    st, dt = op.srcs[0].tile_type, op.dst.tile_type  # type: ignore[union-attr]
    sl = op.attrs["src_layout"]
    return _dma_sim(lambda vr, vc: tmov_bursts(st, sl, dt, vr, vc))(op, env)


def _insert_cpp(op: TileOp, ctx, arch: str) -> list[str]:
    r0, c0 = (ctx.cexpr(e) for e in op.scalars)
    return [f"TINSERT({ctx.tile(op.dst)}, {ctx.tile(op.srcs[0])}, {r0}, {c0});"]


instruction("insert", FAMILY, _insert_sim, PATH, _insert_cpp, pipe=PipeType.MTE3)

__all__ = ["insert", "emit_insert", "insert_bursts", "tmov_bursts", "ub_to_l1_sim", "TRANSPOSE_PAIR"]
