"""The IR of SIMT code (``pl.simt``): a SIMT function's body and the launch that runs it.

A :class:`SimtFunction` holds the body of one ``@pl.simt.function(max_threads=...)``, compiled
with the types its launch passes (the real call-site instantiation); SIMT callees are inlined into
it, as plain helpers are. Its statements are the kernel's own (``Assign``, ``If``, ``For``,
``While``, ``Break``, ``Continue``) plus :class:`ElementStore`; its expressions add the thread
queries (:class:`ThreadQuery`), a tile parameter's run-time valid shape (:class:`ValidDim`) and
element reads (:class:`ElementLoad`). Every value is per thread: the simulator runs the body once
for all threads at a time (``backends/sim/simt``).

:class:`SimtLaunch` is the kernel-side instruction (a V-pipe ``TileOp``): its tile and tensor
operands are the launch's memory arguments, ``scalars`` its scalar arguments; what it reads and
writes comes from the function body, so the passes (auto sync, liveness) see the real accesses.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pypto_pro.errors import SourceLocation
from pypto_pro.ir.expr import Expr, Var, _set
from pypto_pro.ir.nodes import Assign, For, GMRef, If, Stmt, TileOp, TileRef, While, child_bodies
from pypto_pro.language.dtypes import DT_INT32, DT_UINT32, DataType

# thread queries: (name, axis) -> read of the thread's context register
DIM3_QUERIES = ("thread_idx", "block_dim", "block_idx", "grid_dim")


@dataclass(eq=False)
class SimtParam:
    """One parameter of a SIMT function, typed by the launch (or the call) that instantiated it.

    ``kind``: ``"scalar"`` (``var`` is its per-thread register), ``"tile"`` (a UB tile: ``shape`` is
    its static shape, row-major) or ``"tensor"`` (a GM tensor: its static shape)."""

    name: str
    kind: str
    dtype: DataType
    index: int
    shape: tuple[int, ...] = ()
    var: Var | None = None

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


@dataclass(frozen=True, eq=False)
class ThreadQuery(Expr):
    """``pl.simt.<name>().<axis>`` (``axis`` 0/1/2 for x/y/z) or ``pl.simt.warp_size()`` (axis 0):
    UINT32, except warp_size's INT32 (the real type rules)."""

    name: str
    axis: int = 0

    def __post_init__(self) -> None:
        _set(self, "dtype", DT_INT32 if self.name == "warp_size" else DT_UINT32)

    def text(self, write) -> str:
        if self.name in DIM3_QUERIES:
            return f"pl.simt.{self.name}().{'xyz'[self.axis]}"
        return f"pl.simt.{self.name}()"


@dataclass(frozen=True, eq=False)
class ValidDim(Expr):
    """``tile.valid_shape[axis]`` of a tile parameter: the tile's valid rows / cols at the launch (UINT32)."""

    param: SimtParam
    axis: int

    def __post_init__(self) -> None:
        _set(self, "dtype", DT_UINT32)

    def text(self, write) -> str:
        return f"{self.param.name}.valid_shape[{self.axis}]"


@dataclass(frozen=True, eq=False)
class ElementLoad(Expr):
    """``param[i, j, ...]`` read by each thread: the element at row-major ``offset`` of a tile or tensor."""

    param: SimtParam
    offset: Expr
    loc: SourceLocation | None = None

    def __post_init__(self) -> None:
        _set(self, "dtype", self.param.dtype)

    def children(self) -> tuple[Expr, ...]:
        return (self.offset,)

    def text(self, write) -> str:
        return f"{self.param.name}.flat[{write(self.offset)}]"


@dataclass(eq=False)
class ElementStore(Stmt):
    """``param[i, j, ...] = value`` by each thread (``value`` converts to the element type as C does)."""

    param: SimtParam
    offset: Expr
    value: Expr
    loc: SourceLocation | None = None

    def text(self, write) -> str:
        return f"{self.param.name}.flat[{write(self.offset)}] = {write(self.value)}"


@dataclass(eq=False)
class SimtFunction:
    """A launchable SIMT function instantiated for its launch's argument types."""

    name: str
    params: list[SimtParam]
    body: list[Stmt]
    max_threads: int
    loc: SourceLocation | None = None
    callees: tuple[str, ...] = ()  # SIMT callees inlined into it (outermost first)

    def accessed(self) -> tuple[set[int], set[int]]:
        """Indices of the parameters its body reads and writes (through any path)."""
        reads: set[int] = set()
        writes: set[int] = set()

        def expr(e: Expr) -> None:
            if isinstance(e, ElementLoad):
                reads.add(e.param.index)
            for c in e.children():
                expr(c)

        def visit(body: list[Stmt]) -> None:
            for s in body:
                if isinstance(s, ElementStore):
                    writes.add(s.param.index)
                    expr(s.offset)
                    expr(s.value)
                elif isinstance(s, Assign):
                    expr(s.value)
                elif isinstance(s, For):
                    for e in (s.start, s.stop, s.step):
                        expr(e)
                elif isinstance(s, (If, While)):
                    expr(s.cond)
                for b in child_bodies(s):
                    visit(b)
        visit(self.body)
        return reads, writes


Binding = TileRef | GMRef | Expr


@dataclass(eq=False)
class SimtLaunch(TileOp):
    """``pl.simt.launch(fn, threads=(x, y, z), args=(...))``: one V-pipe instruction.

    ``(dst, *srcs)`` are the memory arguments in argument order (``dst`` is None when there are
    none), ``scalars`` the scalar ones; ``bindings[k]`` says where parameter ``k`` of ``function``
    comes from: ``("mem", i)`` for operand ``i`` of ``(dst, *srcs)``, ``("scalar", i)`` for
    ``scalars[i]``. ``written`` / ``read`` are the operand indices the body writes / reads."""

    function: SimtFunction | None = None
    threads: tuple[int, int, int] = (1, 1, 1)
    bindings: tuple[tuple[str, int], ...] = ()
    written: tuple[int, ...] = ()
    read: tuple[int, ...] = ()
    model: Any = None  # the arch's SimtModel (arch/simt.py): launch limits and cost numbers

    def operands(self) -> tuple:
        return tuple(o for o in (self.dst, *self.srcs) if o is not None)

    def tile_writes(self) -> tuple[TileRef, ...]:
        ops = self.operands()
        return tuple(ops[i] for i in self.written if isinstance(ops[i], TileRef))

    def tile_reads(self) -> tuple[TileRef, ...]:
        ops = self.operands()
        return tuple(ops[i] for i in self.read if isinstance(ops[i], TileRef))

    @property
    def sub_body(self) -> list[Stmt]:
        """The SIMT function's body (the IR dumps show it under the launch)."""
        return self.function.body if self.function is not None else []

    @property
    def total_threads(self) -> int:
        x, y, z = self.threads
        return x * y * z
