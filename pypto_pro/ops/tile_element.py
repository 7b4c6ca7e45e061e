"""``pl.getval`` / ``pl.setval`` (and ``t[i, j]`` / ``t[i, j] = v``) on a Vec tile (real pages
``transpose_and_element_access/getval.md`` / ``setval.md``; C++ ``tile.GetValue(offset)`` /
``tile.SetValue(offset, value)``).

Both are instructions of the scalar pipe S: the scalar unit itself reads or writes one element of
UB at the linear storage ``offset`` (the subscript form linearises its indices row-major over the
tile's shape). The offset counts storage elements whatever the layout, as the real ``GetValue`` /
``SetValue`` (``*(ptr + offset)``, PTO-ISA ``pto_tile.hpp``) and the real subscript rule
(``i * cols + j``, parser ``_parse_scalar_subscript_index``): on a DN tile ``t[i, j]`` is storage element
``i * cols + j`` (logical ``[(i*cols+j) % rows, (i*cols+j) // rows]``), on an NZ / ZN tile the element at
that position of its fractal boxes, not the logical ``(i, j)``. The chip does not order them against the other pipes: a tile written by MTE2 or V
needs a ``MTE2/V -> S`` sync before the read, and a store after a write needs ``S -> MTE3``
(``auto_mutex`` inserts both for a managed tile group). The simulator makes the read a real S
instruction: the scalar program stops at it until the block's scheduler has run it
(``backends/sim/live.py``), so it sees what the schedule has written by then, and the race checker
reports a missing sync with both source lines.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pypto_pro.backends.sim import fractal
from pypto_pro.backends.sim.gm_views import convert_scalar
from pypto_pro.backends.sim.kit import Prepared, fault, scalar_read, write_at_end
from pypto_pro.errors_sim import OutOfBoundsError
from pypto_pro.frontend.operands import in_section
from pypto_pro.ir.expr import Const, Expr, Var
from pypto_pro.ir.nodes import TileOp, TileRef
from pypto_pro.language.enums import MemorySpace, PipeType, SectionKind
from pypto_pro.ops.decl import SCALAR, instruction

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

FAMILY = "transpose_and_element_access"


def _tile_operand(p: "FunctionParser", node, tile, what: str) -> TileRef:
    ref = tile.ref
    in_section(p, node, SectionKind.VECTOR, f"{what} on a tile")
    if p.ctx.arch.name != "a5":  # getval.md / setval.md: Ascend 950 only
        p.fail(node, f"{what} on a tile is an Ascend 950 (a5) operation; on {p.ctx.arch.name} move the data through "
                     "GM (pl.store, then pl.getval of the tensor after a MTE3 -> S sync)")
    if ref.buffer.space is not MemorySpace.Vec:
        p.fail(node, f"{what} needs a Vec tile; '{ref.buffer.name}' is in {ref.buffer.space.name}")
    dtype = ref.tile_type.dtype
    if dtype.np_dtype is None or dtype.get_bit() < 8:
        p.fail(node, f"{what}: {dtype.name} is a storage-only type; it has no scalar value")
    return ref


def _offset(p: "FunctionParser", node, ref: TileRef, off: Any, what: str) -> Expr:
    if isinstance(off, bool) or not (isinstance(off, int) or (isinstance(off, Expr) and off.ty == "int")):
        p.fail(node, f"{what} offset must be an integer, got {p.describe(off)}")
    if isinstance(off, int):
        rows, cols = ref.tile_type.shape
        if not 0 <= off < rows * cols:
            p.fail(node, f"{what}: offset {off} is outside tile '{ref.buffer.name}' ({rows} x {cols} elements)")
        return Const(off)
    return off


def getval_tile(p: "FunctionParser", node, a) -> Var:
    """The frontend rule of ``pl.getval(tile, offset)``: an S instruction whose result is a fresh scalar."""
    ref = _tile_operand(p, a.node("container"), a["container"], "pl.getval")
    off = _offset(p, a.node("offset"), ref, a["offset"], "pl.getval")
    var = p.new_var(f"{ref.buffer.name}_val", ref.tile_type.dtype)
    p.ctx.builder.emit(TileOp("getval", PipeType.S, None, (ref,), (off,), {"result": var, "api": "getval",
                                                                            "access_scalars": True},
                              p.loc(node)))
    return var


def setval_tile(p: "FunctionParser", node, a) -> None:
    """The frontend rule of ``pl.setval(tile, offset, value)``."""
    ref = _tile_operand(p, a.node("container"), a["container"], "pl.setval")
    off = _offset(p, a.node("offset"), ref, a["offset"], "pl.setval")
    value = a["value"]
    if not isinstance(value, (bool, int, float, Expr)):
        p.fail(a.node("value"), f"pl.setval: 'value' must be a scalar, got {p.describe(value)}")
    v = value if isinstance(value, Expr) else Const(value)
    dtype = ref.tile_type.dtype
    if (dtype.is_int() or dtype.is_bool()) and v.ty == "float":
        p.fail(a.node("value"), f"pl.setval: a float value cannot be written to {dtype.name} tile "
                                f"'{ref.buffer.name}' (convert it first)")
    p.ctx.builder.emit(TileOp("setval", PipeType.S, ref, (), (off, v), {"api": "setval", "access_scalars": True}, p.loc(node)))


# ---- simulator ------------------------------------------------------------------------------------


class _Element:
    """One tile operand's slots as flat element arrays in storage order, and their byte addresses."""

    def __init__(self, op: TileOp, st, ref: TileRef):
        b = ref.buffer
        self.op = op
        try:  # storage order: row-major (ND), column-major (DN), box by box (NZ / ZN / ...)
            self.flats = [fractal.flat(v) for v in st.views]
        except ValueError:
            raise fault(op, f"pl.{op.op} on '{b.name}': its storage is not linear") from None
        self.item = b.tile_type.dtype.itemsize
        self.space = b.space
        self.addrs = b.addrs
        self.core = st.core
        self.label = [b.user_label(i) for i in range(b.depth)]
        self.size = b.tile_type.shape[0] * b.tile_type.shape[1]

    def check(self, slot: int, offset: int) -> None:
        if not 0 <= offset < self.size:
            raise fault(self.op, f"pl.{self.op.op} offset {offset} is outside tile {self.label[slot]} "
                                 f"({self.size} elements)", OutOfBoundsError)

    def access(self, slot: int, offset: int, write: bool) -> tuple:
        lo = self.addrs[slot] + offset * self.item
        return ((self.space, lo, lo + self.item, self.core), write, f"{self.label[slot]} element {offset}",
                1, self.item, self.item)


def getval_sim(op: TileOp, env):
    """``getval``: dispatch returns a record whose ``result`` is filled when its numerics run."""
    ref = op.srcs[0]
    if not isinstance(ref, TileRef):
        from pypto_pro.ops.getval import gm_read_sim
        return gm_read_sim(op, env)
    el = _Element(op, env.states[ref.buffer.uid], ref)

    def dispatch(slot: int, offset: int) -> Prepared:
        el.check(slot, offset)
        flat = el.flats[slot]
        return scalar_read((el.access(slot, offset, False),), (), el.item, lambda: flat[offset].item())
    return dispatch


def setval_sim(op: TileOp, env):
    ref = op.dst
    el = _Element(op, env.states[ref.buffer.uid], ref)
    dtype = ref.tile_type.dtype

    def dispatch(slot: int, offset: int, value) -> Prepared:
        el.check(slot, offset)
        flat = el.flats[slot]
        converted = convert_scalar(value, dtype)
        lo = el.addrs[slot] + offset * el.item

        def commit() -> None:
            flat[offset] = converted
        return Prepared(1, 1, True, (el.access(slot, offset, True),), (), el.item, write_at_end(commit),
                        (((el.core, el.space), lo, 1, el.item, el.item),))
    return dispatch


def getval_cpp(op: TileOp, ctx, arch: str) -> list[str]:
    var = ctx.cexpr(op.attrs["result"])
    src = op.srcs[0]
    if isinstance(src, TileRef):
        return [f"{var} = {ctx.tile(src)}.GetValue({ctx.cexpr(op.scalars[0])});"]
    from pypto_pro.backends.pto.storage import gm_element
    return [f"{var} = {gm_element(src.param, ctx.cexpr(src.offsets[0]), ctx.cexpr)};"]


def setval_tile_cpp(op: TileOp, ctx) -> list[str]:
    from pypto_pro.backends.pto.ctypes_map import ctype
    t = ctype(op.dst.tile_type.dtype)
    return [f"{ctx.tile(op.dst)}.SetValue({ctx.cexpr(op.scalars[0])}, static_cast<{t}>({ctx.cexpr(op.scalars[1])}));"]


def is_live_read(op: TileOp) -> bool:
    """A ``getval`` instruction: the scalar program waits for its value (``backends/sim/live.py``)."""
    return op.op == "getval"


def getval_params(op: TileOp, arch) -> dict[str, int]:
    """One element read by the scalar unit."""
    src = op.srcs[0]
    dtype = src.tile_type.dtype if isinstance(src, TileRef) else src.param.type.dtype
    return {"bytes": dtype.itemsize}


instruction("getval", FAMILY, getval_sim, SCALAR, getval_cpp, pipe=PipeType.S, params=getval_params)
