"""Scalar reads of global memory: ``pl.getval(container, offset)`` (and its sugar ``x[i, j]``) on a GM
tensor (real page ``memory_vector_computation/transpose_and_element_access/getval.md``).

The simulator runs a block's scalar program before it times the instructions, so a scalar read
must not depend on what the kernel's own instructions write: ``pl.getval`` reads GM tensors the
kernel never writes (inputs: offsets, strides, lengths), and a read of a tensor that the kernel
also writes, or of a tile, is a located CompileError ("not supported yet"), never a stale value.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from pypto_pro.errors import CompileError, SourceLocation
from pypto_pro.errors_sim import OutOfBoundsError
from pypto_pro.frontend.operands import Args
from pypto_pro.frontend.values import TensorValue, TileValue
from pypto_pro.ir.expr import Const, Expr
from pypto_pro.ir.nodes import GMRef, TensorParam, TileOp, walk_stmts
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
        """Python source of the read (``executor`` binds ``_gm_read`` to the launch's GM arrays)."""
        where = f"{self.loc.path}:{self.loc.line}" if self.loc else ""
        return f"_gm_read({self.param.index}, {writer(self.offset)}, {where!r})"

    def cpp_code(self, writer: Callable[[Expr], str]) -> str:
        return f"{self.param.name}[{writer(self.offset)}]"


@api(FAMILY)
def getval(container: Any, offset: Any) -> Any:
    """Read the scalar at linear element ``offset`` of a GM tensor (``x[i, j]`` is the same read at the
    row-major offset of the indices)."""


@getval.check
def _getval_check(p: "FunctionParser", node, a: Args) -> Expr:
    c = a["container"]
    if isinstance(c, TileValue):
        p.fail(a.node("container"), "pl.getval on a tile is not supported yet in this release (the simulator "
                                    "schedules instructions after the scalar program runs); read a GM tensor")
    if not isinstance(c, TensorValue):
        p.fail(a.node("container"), f"pl.getval: 'container' must be a tensor, got {p.describe(c)}", kind="type")
    param = c.param
    if hasattr(param, "view_exprs"):
        p.fail(a.node("container"), "pl.getval on a pl.make_tensor / pl.set_stride view is not supported yet in this "
                                    "release; read the tensor parameter")
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
    return out


def check_reads(programs) -> None:
    """Refuse a ``pl.getval`` of a tensor that an instruction of the kernel writes (see module doc)."""
    written: set[str] = set()
    reads: list[GmRead] = []
    for prog in programs:
        for s in walk_stmts(prog.body):
            if isinstance(s, TileOp) and isinstance(s.dst, GMRef):
                written.add(getattr(s.dst.param, "base", s.dst.param).name)
            for e in _stmt_exprs(s):
                reads.extend(_reads(e))
            if isinstance(s, TileOp):
                for o in (s.dst, *s.srcs):
                    if isinstance(o, GMRef):
                        for e in o.offsets:
                            reads.extend(_reads(e))
    for r in reads:
        if r.param.name in written:
            raise CompileError(f"pl.getval of tensor '{r.param.name}', which this kernel also writes, is not "
                               "supported yet in this release (the simulator reads scalars before it runs the "
                               "instructions)", r.loc)
