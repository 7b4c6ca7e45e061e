"""One dispatched instruction of a block: what the scalar unit put into a pipe's queue.

The record carries everything the scheduler, the checkers, the cost model and the trace need:
pipe, kind, cycles, the sync resource it touches, its memory accesses, the numerics to run, and
the source location. Times are filled in by the scheduler.
"""
from __future__ import annotations

from typing import Any, Callable

from pypto_pro.language.enums import PipeType

PIPES: tuple[PipeType, ...] = tuple(p for p in PipeType if p is not PipeType.ALL)
PIPE_INDEX: dict[PipeType, int] = {p: i for i, p in enumerate(PIPES)}
NPIPES = len(PIPES)

# kinds
OP, SET, WAIT, LOCK, UNLOCK, BARRIER = range(6)
KIND_NAMES = ("op", "sync", "wait_flag", "lock", "unlock", "barrier")
CORE_NAMES = ("AIC", "AIV0", "AIV1")


def queue_name(q: int, mixed: bool) -> str:
    """``V`` for a single-core block, ``AIV0.V`` when the block has several cores."""
    core, pipe = divmod(q, NPIPES)
    if core >= len(CORE_NAMES) or (core and not mixed):
        return f"core{core}.{PIPES[pipe].name}"
    return f"{CORE_NAMES[core]}.{PIPES[pipe].name}" if mixed else PIPES[pipe].name


class SyncSpec:
    """Sync effects fused into an instruction: flags waited on and buffer ids acquired before it
    starts; flags set and ids released when it ends. Keys of flags are (src pipe, dst pipe, event)."""

    __slots__ = ("waits", "acquires", "sets", "releases", "xwaits", "xsets", "origins", "pre_at", "xat")

    def __init__(self, waits: tuple = (), acquires: tuple = (), sets: tuple = (), releases: tuple = (),
                 xwaits: tuple = (), xsets: tuple = ()):
        self.waits = waits
        self.acquires = acquires
        self.sets = sets
        self.releases = releases
        self.xwaits = xwaits  # cross-core: ((receiver core, id), count) consumed before start
        self.xsets = xsets    # cross-core: (receiver core, id) signalled at the end
        self.origins: list = []  # (kind, key, SyncOp statement) it came from, in order (for messages)
        # the core's dispatch index of each sync folded in before the op (wait_flag / lock /
        # wait_cross_core, in order), and of the set_cross_core behind each entry of ``xsets``: each is an
        # instruction of its own on the chip (the cross-core counter check, scheduler.py ``_frontier``)
        self.pre_at: tuple = ()
        self.xat: tuple = ()

    def __bool__(self) -> bool:
        return bool(self.waits or self.acquires or self.sets or self.releases or self.xwaits or self.xsets)


ATOMIC = "atomic"  # the is_write of a GM access that adds atomically at the destination (truthy: a write)


class Inst:
    """A dispatched instruction; ``run(defer)`` executes its numerics. ``accesses``: (space, lo, hi, is_write, label) on-chip byte ranges;
    ``gm``: (param index, param name, rect, is_write) with rect a tuple of (start, stop) per axis."""

    __slots__ = ("seq", "pipe", "kind", "cycles", "key", "accesses", "gm", "run", "stmt", "name", "nbytes",
                 "flops", "path", "start", "end", "vc", "extra", "t_issue", "port", "l2", "head", "tail",
                 "commits", "drained", "at", "gate", "su")

    def __init__(self, seq: int, pipe: int, kind: int, cycles: float, stmt: Any, name: str,
                 key: Any = None, accesses: tuple = (), gm: tuple = (), run: Callable | None = None,
                 nbytes: int = 0, flops: int = 0, path: str | None = None, extra: SyncSpec | None = None,
                 port: float = 0.0, head: float = 0.0, tail: float = 0.0, t_issue: float = 0.0,
                 commits: tuple = ()):
        self.seq = seq
        self.pipe = pipe
        self.kind = kind
        self.cycles = cycles
        self.key = key
        self.accesses = accesses
        self.gm = gm
        self.run = run
        self.stmt = stmt
        self.name = name
        self.nbytes = nbytes
        self.flops = flops
        self.path = path
        self.start = 0.0
        self.end = 0.0
        self.vc: tuple[int, ...] | None = None
        self.extra = extra       # the SyncSpec fused into it, if any
        self.t_issue = t_issue   # when the scalar unit dispatched it
        self.port = port         # cycles it occupies the core's share of chip GM bandwidth
        self.l2 = None           # GM access priced by the L2 model: (miss cycles, miss port cycles, hit cycles)
        self.head = head         # vector startup, paid when the pipe was idle before it
        self.tail = tail         # vector drain, paid when a sync flushes the pipe after it
        self.commits = commits   # on-chip regions this instruction writes (for the never-written check)
        self.drained = 0         # at its start: its pipe's instructions up to this count are known finished
        self.at = -1             # its core's dispatch index (the scalar unit's n-th instruction; -1: unknown)
        # a2a3: the last cross-core wait its core dispatched before it, which stalls the whole scalar unit
        # (PTO-ISA wait-flag-dev.md): this record starts no earlier than that wait's end (arch/pipes.py)
        self.gate: Inst | None = None
        self.su = False          # it is such a wait (a record on S that every later record of its core waits for)

    @property
    def loc(self):
        return getattr(self.stmt, "loc", None)

    def where(self) -> str:
        loc = self.loc
        return f"{loc.path}:{loc.line}" if loc else "<unknown>"

    def describe(self) -> str:
        core, pipe = divmod(self.pipe, NPIPES)
        where = (f"{CORE_NAMES[core]}." if core < len(CORE_NAMES) else f"core{core}.") if core else ""
        return f"{self.name} on {where}{PIPES[pipe].name} ({self.where()})"


def sync_where(inst: Inst, kind: str, key, nth: int = 0) -> str:
    """``file:line`` of the ``nth`` sync instruction behind (kind, key) fused into ``inst``."""
    ex = inst.extra
    stmts = [st for k, kk, st in ex.origins if k == kind and kk == key] if ex is not None else None
    stmt = stmts[min(nth, len(stmts) - 1)] if stmts else None
    loc = getattr(stmt, "loc", None) or inst.loc
    return f"{loc.path}:{loc.line}" if loc else "<unknown>"
