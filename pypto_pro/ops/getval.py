"""Scalar reads of global memory: ``pl.getval(container, offset)`` (and its sugar ``x[i, j]``) on a GM
tensor (real page ``memory_vector_computation/transpose_and_element_access/getval.md``); the tile
form is ``ops/tile_element.py``.

A read of a tensor that no instruction of the kernel writes (offsets, strides, lengths) is a plain
scalar-side read at dispatch. A read of a tensor the kernel also writes (``pl.store``,
``pl.setval``) is an S-pipe ``getval`` instruction: the scalar program waits for the block's
scheduler to run it (``backends/sim/live.py``), so it sees what the schedule has written by then
and the global-memory checker orders it against the writers (a ``MTE3 -> S`` sync, as on the chip).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable


from pypto_pro.errors import SourceLocation
from pypto_pro.errors_sim import OutOfBoundsError
from pypto_pro.frontend.operands import Args
from pypto_pro.frontend.values import TensorValue, TileValue
from pypto_pro.ir.expr import Const, Expr
from pypto_pro.ir.nodes import GMRef, TensorParam, TileOp, walk_stmts
from pypto_pro.language.enums import PipeType
from pypto_pro.ops.decl import api

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

FAMILY = "transpose_and_element_access"


@dataclass(frozen=True, eq=False)
class GmRead(Expr):
    """The scalar at element ``offset`` (row-major) of GM tensor ``param`` (``pl.getval``)."""

    param: TensorParam
    offset: Expr
    loc: SourceLocation | None = None

    @property
    def dtype(self):  # type: ignore[override]
        return self.param.type.dtype

    def children(self) -> tuple[Expr, ...]:
        return (self.offset,)

    def sim_code(self, writer: Callable[[Expr], str]) -> str:
        """Python source of the read: ``_gm_read`` (bound by the executor to the launch's GM arrays) for a
        tensor the kernel never writes, else a ``getval`` instruction (``writer.instruction``)."""
        register = getattr(writer, "instruction", None)
        base = getattr(self.param, "base", self.param)
        if register is not None and (base.name in getattr(writer, "live_gm", ()) or hasattr(self.param, "view_exprs")):
            return register(self.instruction())
        where = f"{self.loc.path}:{self.loc.line}" if self.loc else ""
        return f"_gm_read({self.param.index}, {writer(self.offset)}, {where!r})"

    def instruction(self) -> TileOp:
        """The S-pipe instruction of this read (its value is the call's result)."""
        return TileOp("getval", PipeType.S, None, (GMRef(self.param, (self.offset,)),), (),
                      {"result": None, "api": "getval"}, self.loc)

    def cpp_code(self, writer: Callable[[Expr], str]) -> str:
        from pypto_pro.backends.pto.storage import gm_element
        return gm_element(self.param, writer(self.offset), writer)


@api(FAMILY)
def getval(container: Any, offset: Any) -> Any:
    """Read the scalar at linear element ``offset`` of a GM tensor or a Vec tile, on the S pipe (``x[i, j]``
    is the same read at the row-major offset of the indices)."""


@getval.check
def _getval_check(p: "FunctionParser", node, a: Args) -> Expr:
    c = a["container"]
    if isinstance(c, TileValue):
        from pypto_pro.ops.tile_element import getval_tile
        return getval_tile(p, node, a)
    if not isinstance(c, TensorValue):
        p.fail(a.node("container"), f"pl.getval: 'container' must be a tensor or a tile, got {p.describe(c)}",
               kind="type")
    param = c.param
    dtype = param.type.dtype
    if dtype.np_dtype is None or dtype.get_bit() < 8:
        p.fail(a.node("container"), f"pl.getval: {dtype.name} is a storage-only type; it has no scalar value")
    off = a["offset"]
    if isinstance(off, bool) or not (isinstance(off, int) or (isinstance(off, Expr) and off.ty == "int")):
        p.fail(a.node("offset"), f"pl.getval offset must be an integer, got {p.describe(off)}")
    if isinstance(off, int):
        size = 1
        for d in param.type.dims:
            size = size * d if isinstance(d, int) and isinstance(size, int) else None  # type: ignore[assignment]
        if off < 0 or (size is not None and off >= size):
            p.fail(a.node("offset"), f"pl.getval: offset {off} is outside tensor '{param.name}'")
        off = Const(off)
    return GmRead(param, off, p.loc(node))


def reader(arrays: list) -> Callable[[int, int, str], Any]:
    """The simulator's ``_gm_read(index, offset, where)``: the element as a Python number."""
    def read(index: int, offset: int, where: str) -> Any:
        flat = arrays[index].reshape(-1)
        if not 0 <= offset < flat.size:
            raise OutOfBoundsError(f"{where}: pl.getval offset {offset} is outside the tensor ({flat.size} elements)")
        return flat[offset].item()
    return read


def _reads(e: Expr):
    if isinstance(e, GmRead):
        yield e
    for c in e.children():
        yield from _reads(c)


def _stmt_exprs(s) -> list[Expr]:
    out = []
    for v in vars(s).values():
        if isinstance(v, Expr):
            out.append(v)
        elif isinstance(v, (tuple, list)):
            out.extend(x for x in v if isinstance(x, Expr))
    if isinstance(s, TileOp):
        for o in (s.dst, *s.srcs):
            if isinstance(o, GMRef):
                out.extend(o.offsets)
    return out


def gm_reads(body) -> list[GmRead]:
    """Every ``pl.getval`` of a GM tensor in a program body."""
    return [r for s in walk_stmts(body) for e in _stmt_exprs(s) for r in _reads(e)]


def written_tensors(programs) -> frozenset[str]:
    """Names of the GM tensors (bases of views) that an instruction of the kernel writes."""
    return frozenset(getattr(s.dst.param, "base", s.dst.param).name for prog in programs
                     for s in walk_stmts(prog.body) if isinstance(s, TileOp) and isinstance(s.dst, GMRef))


def gm_read_sim(op: TileOp, env):
    """The ``getval`` instruction on a GM tensor (or a view): one element, read when it runs."""
    from pypto_pro.backends.sim import gm_views
    from pypto_pro.backends.sim.kit import fault, scalar_read
    param = op.srcs[0].param
    arrays = env.gm.arrays
    item = param.type.dtype.itemsize

    def dispatch(offset: int, *view):
        g, index, gm = gm_views.element(param, arrays, view, offset, lambda m: fault(op, m, OutOfBoundsError), False)
        return scalar_read((), gm, item, lambda: g[index].item())
    return dispatch
