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
    mutex_ids: tuple[tuple[int, ...], ...] | None  # per slot, its buffer (mutex) ids: one or several
    is_group: bool
    loc: SourceLocation | None
    alias_of: "Buffer | None" = None  # a declared view shares its base's bytes and sync ids
    ring_counter: Var | None = None  # run-time ring position of a group (advanced by .next())
    fwd_ids: tuple[int, ...] | None = None  # cross-core ids per slot: producer -> consumer (data ready)
    bwd_ids: tuple[int, ...] | None = None  # cross-core ids per slot: consumer -> producer (slot free)
    joins: tuple["Buffer", ...] = ()  # a join of tiles of these buffers (if / helper return): their slots, in order
    uid: int = field(default_factory=lambda: next(_buf_uid))
    view_starts: Any = None  # a subview at a run-time start: its slots' starts in alias_of (ir/subview.py ViewStarts)

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

    @property
    def mutex_union(self) -> tuple[int, ...]:
        """Every mutex id of the buffer's slots, in first-use order."""
        return tuple(dict.fromkeys(m for row in self.mutex_ids or () for m in row))

    def slot_label(self, slot: int) -> str:
        return f"{self.name}[{slot}]" if self.is_group else self.name

    def user_label(self, slot: int) -> str:
        """How reports name slot ``slot``: ``t``, ``g[1]``; a join's slot (``bufs[i]`` on a tuple of tiles,
        an ``if`` picking one) by the user's tile it is, not by the join's generated name."""
        for m in self.joins:
            if slot < m.depth:
                return m.user_label(slot)
            slot -= m.depth
        return f"{self.name}[{slot}]" if self.depth > 1 else self.name


@dataclass(frozen=True, eq=False)
class TileRef:
    """A tile operand: a buffer and the (possibly run-time) ring slot it refers to."""

    buffer: Buffer
    slot: Expr  # Const(0) for a plain tile

    @property
    def tile_type(self) -> TileType:
        return self.buffer.tile_type

    @property
    def root_slot(self) -> Expr:
        """The slot of ``buffer.root`` these bytes lie in (a run-time subview's own slot also encodes
        where it starts: ``ir/subview.py``)."""
        b, slot = self.buffer, self.slot
        while b.alias_of is not None:
            if b.view_starts is not None:
                from pypto_pro.ir.subview import base_slot
                slot = base_slot(b.view_starts, slot)
            b = b.alias_of
        return slot


@dataclass(frozen=True)
class TensorParam:
    """A kernel parameter in global memory."""

    name: str
    type: TensorType
    index: int


NO_DEFAULT = object()  # a parameter without a default value


@dataclass(frozen=True)
class ScalarParam:
    """A scalar kernel parameter: ``ty`` is ``"int"`` / ``"float"`` / ``"bool"`` (run time, of
    ``dtype``) or ``"constexpr"`` (a compile-time value); ``default`` is used when a launch omits it."""

    name: str
    ty: str
    index: int
    dtype: Any = None  # the pl.DT_* of a run-time scalar
    default: Any = NO_DEFAULT
    legacy: bool = False  # annotated with Python's int / float (ours) rather than a pl.DT_*


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
class While(Stmt):
    """``while cond: body``, the condition tested before every iteration (the frontend lowers a
    condition that needs statements of its own to ``while True:`` + ``if not cond: break``)."""

    cond: Expr
    body: list[Stmt]
    loc: SourceLocation | None = None


@dataclass(eq=False)
class Break(Stmt):
    """Leave the innermost ``For`` / ``While``."""

    loc: SourceLocation | None = None


@dataclass(eq=False)
class Continue(Stmt):
    """Start the next iteration of the innermost ``For`` / ``While``."""

    loc: SourceLocation | None = None


@dataclass(eq=False)
class Return(Stmt):
    """End the program (a kernel's early ``return``)."""

    loc: SourceLocation | None = None


JUMPS = (Break, Continue, Return)
LOOPS = (For, While)


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
        """``dst``, and the sources listed by position in ``attrs["writes"]`` (a second output, such as
        the count tile of pl.gather's compare form)."""
        extra = tuple(self.srcs[i] for i in self.attrs.get("writes", ()))
        return ((self.dst,) if isinstance(self.dst, TileRef) else ()) + extra  # type: ignore[return-value]

    def tile_reads(self) -> tuple[TileRef, ...]:
        skip = self.attrs.get("writes", ())
        return tuple(s for i, s in enumerate(self.srcs) if isinstance(s, TileRef) and i not in skip)

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
    # a subview's valid shape (``tile[r0:r1, c0:c1]``): rows / cols clamped, when it runs, to what the
    # tile ``clamp_to[0]`` has valid past its element [clamp_to[1], clamp_to[2]]
    clamp_to: "tuple[Buffer, int, int] | None" = None


@dataclass(eq=False)
class StageSync(Stmt):
    """Cross-core sync of a shared tile group around a pipeline stage (``pl.pipeline.*``):
    ``wait_free`` / ``signal_ready`` (producer) and ``wait_ready`` / ``signal_free`` (consumer).
    The ``pipeline_sync`` pass lowers it to a cross-core set or wait on the right pipe."""

    kind: str
    buffer: Buffer
    slot: Expr
    loc: SourceLocation | None = None


SYNC_KINDS = ("set_flag", "wait_flag", "barrier", "lock", "unlock", "xset", "xwait", "sync_all", "dcci")


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
    # kind-specific settings: sync_mode (xset / xwait), mode and candidates (lock / unlock),
    # core_type / mode / workspaces (sync_all), target / offset / cache_line / dst (dcci)
    attrs: dict = field(default_factory=dict)

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


def child_bodies(s: Stmt) -> tuple[list[Stmt], ...]:
    """The statement lists nested in ``s``: a loop's body, an if's two branches, a section's body."""
    if isinstance(s, (For, While, Section)):
        return (s.body,)
    if isinstance(s, If):
        return (s.then_body, s.else_body)
    return ()


def with_bodies(s: Stmt, rewrite) -> Stmt:
    """``s`` with each nested statement list replaced by ``rewrite(list)`` (loops and ifs; others as is)."""
    import dataclasses
    if isinstance(s, (For, While)):
        return dataclasses.replace(s, body=rewrite(s.body))
    if isinstance(s, If):
        return dataclasses.replace(s, then_body=rewrite(s.then_body), else_body=rewrite(s.else_body))
    return s


def walk_stmts(body: list[Stmt]):
    """Yield every statement, depth first, in program order."""
    for s in body:
        yield s
        for b in child_bodies(s):
            yield from walk_stmts(b)


def jumps_out(body: list[Stmt], loop_depth: int = 0):
    """The ``Break`` / ``Continue`` statements of ``body`` that leave it (not ones that only end a loop
    nested inside it), and every ``Return``, in program order."""
    for s in body:
        if isinstance(s, Return) or (isinstance(s, (Break, Continue)) and loop_depth == 0):
            yield s
        for b in child_bodies(s):
            yield from jumps_out(b, loop_depth + (1 if isinstance(s, LOOPS) else 0))
