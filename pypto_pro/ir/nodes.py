"""Statements, buffers and operands of the structured IR.

Every tile operation records its op name, operands, pipe, and source location in one place:
the sync pass, the checks, the cost model and the emitters all read ``TileOp``.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from pypto_pro.errors import SourceLocation
from pypto_pro.ir.expr import Expr, Var
from pypto_pro.language.enums import MemorySpace, PipeType, SectionKind
from pypto_pro.language.types import TensorType, TileType

_buf_uid = itertools.count()


@dataclass(eq=False)
class Buffer:
    """Storage of a tile or of a tile group's ring: one address per slot in one memory space."""

    name: str
    tile_type: TileType
    addrs: tuple[int, ...]
    mutex_ids: tuple[int, ...] | None
    is_group: bool
    loc: SourceLocation | None
    alias_of: "Buffer | None" = None  # a declared view shares its base's bytes and sync ids
    ring_counter: Var | None = None  # run-time ring position of a group (advanced by .next())
    fwd_ids: tuple[int, ...] | None = None  # cross-core ids per slot: producer -> consumer (data ready)
    bwd_ids: tuple[int, ...] | None = None  # cross-core ids per slot: consumer -> producer (slot free)
    uid: int = field(default_factory=lambda: next(_buf_uid))

    @property
    def space(self) -> MemorySpace:
        return self.tile_type.target_memory

    @property
    def depth(self) -> int:
        return len(self.addrs)

    @property
    def slot_bytes(self) -> int:
        return self.tile_type.nbytes

    @property
    def root(self) -> "Buffer":
        return self.alias_of.root if self.alias_of is not None else self

    def slot_label(self, slot: int) -> str:
        return f"{self.name}[{slot}]" if self.is_group else self.name


@dataclass(frozen=True, eq=False)
class TileRef:
    """A tile operand: a buffer and the (possibly run-time) ring slot it refers to."""

    buffer: Buffer
    slot: Expr  # Const(0) for a plain tile

    @property
    def tile_type(self) -> TileType:
        return self.buffer.tile_type


@dataclass(frozen=True)
class TensorParam:
    """A kernel parameter in global memory."""

    name: str
    type: TensorType
    index: int


@dataclass(frozen=True)
class ScalarParam:
    """A run-time scalar kernel parameter (``int`` or ``float``)."""

    name: str
    ty: str
    index: int


@dataclass(frozen=True, eq=False)
class GMRef:
    """A tile-shaped window of a global tensor, at element offsets (one per tensor axis)."""

    param: TensorParam
    offsets: tuple[Expr, ...]


Operand = TileRef | GMRef


class Stmt:
    loc: SourceLocation | None


@dataclass(eq=False)
class Assign(Stmt):
    var: Var
    value: Expr
    loc: SourceLocation | None = None


@dataclass(eq=False)
class For(Stmt):
    var: Var
    start: Expr
    stop: Expr
    step: Expr
    body: list[Stmt]
    loc: SourceLocation | None = None


@dataclass(eq=False)
class If(Stmt):
    cond: Expr
    then_body: list[Stmt]
    else_body: list[Stmt]
    loc: SourceLocation | None = None


@dataclass(eq=False)
class Section(Stmt):
    kind: SectionKind
    body: list[Stmt]
    loc: SourceLocation | None = None


@dataclass(eq=False)
class TileOp(Stmt):
    """One tile instruction. ``dst`` is written; ``srcs`` are read; ``scalars`` are scalar operands."""

    op: str
    pipe: PipeType
    dst: Operand
    srcs: tuple[Operand, ...]
    scalars: tuple[Expr, ...] = ()
    attrs: dict[str, Any] = field(default_factory=dict)
    loc: SourceLocation | None = None

    def tile_writes(self) -> tuple[TileRef, ...]:
        return (self.dst,) if isinstance(self.dst, TileRef) else ()

    def tile_reads(self) -> tuple[TileRef, ...]:
        return tuple(s for s in self.srcs if isinstance(s, TileRef))

    def tile_operands(self) -> tuple[TileRef, ...]:
        return self.tile_writes() + self.tile_reads()


@dataclass(eq=False)
class SetValidShape(Stmt):
    """Set the run-time valid region of a tile (or every slot of a group when ``slot`` is None)."""

    buffer: Buffer
    slot: Expr | None
    rows: Expr
    cols: Expr
    loc: SourceLocation | None = None


@dataclass(eq=False)
class StageSync(Stmt):
    """Cross-core sync of a shared tile group around a pipeline stage (``pl.pipeline.*``):
    ``wait_free`` / ``signal_ready`` (producer) and ``wait_ready`` / ``signal_free`` (consumer).
    The ``pipeline_sync`` pass lowers it to a cross-core set or wait on the right pipe."""

    kind: str
    buffer: Buffer
    slot: Expr
    loc: SourceLocation | None = None


SYNC_KINDS = ("set_flag", "wait_flag", "barrier", "lock", "unlock")


@dataclass(eq=False)
class SyncOp(Stmt):
    """A synchronisation instruction, written by the user or inserted by the sync pass.

    set_flag/wait_flag: ``src`` -> ``dst`` pipe with ``event``; lock/unlock: buffer id ``event``
    on pipe ``src``; barrier: drain pipe ``src``. ``origin`` says why the pass inserted it.
    """

    kind: str
    src: PipeType
    dst: PipeType | None
    event: Expr | None
    loc: SourceLocation | None = None
    origin: str = "user"

    @property
    def pipe(self) -> PipeType:
        """The pipe whose queue the instruction sits in."""
        return self.dst if self.kind == "wait_flag" else self.src  # type: ignore[return-value]


@dataclass(eq=False)
class KernelIR:
    """A whole kernel (before the section split) or one engine's program (after it)."""

    name: str
    params: list[TensorParam | ScalarParam]
    body: list[Stmt]
    buffers: list[Buffer]
    source_path: str
    kind: SectionKind | None = None  # set on per-engine programs
    constants: dict[str, Any] = field(default_factory=dict)
    param_vars: dict[str, Var] = field(default_factory=dict)  # run-time scalar parameters
    subblocks: int = 1  # Vector cores per block: 2 when the kernel has a Cube section
    generated: Any = None  # the pipeline transform's output, when the kernel was pipelined

    def tensor_params(self) -> list[TensorParam]:
        return [p for p in self.params if isinstance(p, TensorParam)]


def with_bodies(s: Stmt, rewrite) -> Stmt:
    """``s`` with each nested statement list replaced by ``rewrite(list)`` (For and If; others as is)."""
    import dataclasses
    if isinstance(s, For):
        return dataclasses.replace(s, body=rewrite(s.body))
    if isinstance(s, If):
        return dataclasses.replace(s, then_body=rewrite(s.then_body), else_body=rewrite(s.else_body))
    return s


def walk_stmts(body: list[Stmt]):
    """Yield every statement, depth first, in program order."""
    for s in body:
        yield s
        if isinstance(s, For):
            yield from walk_stmts(s.body)
        elif isinstance(s, If):
            yield from walk_stmts(s.then_body)
            yield from walk_stmts(s.else_body)
        elif isinstance(s, Section):
            yield from walk_stmts(s.body)
