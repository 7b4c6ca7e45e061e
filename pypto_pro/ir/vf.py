"""IR of vector functions (``@pl.vector_function``): registers, VF instructions and the call.

A VF call from tile code is one :class:`VfCall` statement on the V pipe (a ``TileOp``, so the sync
passes, the memory checks and the schedulers treat it as one V instruction over the tiles it
touches). Its ``body`` is an ordinary statement list (``Assign`` / ``For`` / ``If`` / ``While`` of
scalars) whose instructions are :class:`VfInstr`: one register-level instruction each (``vlds``,
``vadd``, ``vsts`` ...), operating on :class:`VReg` registers and UB addresses (:class:`MemRef`).
The real PyPTO Pro lowers the same call to a ``__VEC_SCOPE__`` of CCE micro-instructions.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from pypto_pro.errors import SourceLocation
from pypto_pro.ir.expr import Expr, Var
from pypto_pro.ir.nodes import Stmt, TileOp, TileRef
from pypto_pro.language.dtypes import DataType

_reg_uid = itertools.count()

VREG, MASK, ALIGN, = "vreg", "mask", "align"  # register kinds: RegTensor, MaskReg, UnalignReg


@dataclass(eq=False)
class VReg:
    """One VF register variable: a 256-byte vector register (``vreg``), a 256-bit predicate
    (``mask``) or an alignment register of an unaligned load / store sequence (``align``).
    ``dtype`` is the element type the register was declared with (a mask's: its granularity)."""

    kind: str
    dtype: DataType | None
    name: str
    uid: int = field(default_factory=lambda: next(_reg_uid))

    def __repr__(self) -> str:
        return f"{self.name}:{self.kind}<{self.dtype.short if self.dtype else '-'}>"


@dataclass(frozen=True, eq=False)
class RegRead:
    """A register operand, read as ``dtype`` (``vf.bit_cast`` reinterprets without converting)."""

    reg: VReg
    dtype: DataType | None

    def __repr__(self) -> str:
        same = self.dtype is self.reg.dtype
        return repr(self.reg) if same else f"bit_cast({self.reg.name}, {self.dtype.short if self.dtype else '-'})"


@dataclass(frozen=True, eq=False)
class MemRef:
    """A UB address: tile argument ``tile`` of the call plus ``offset`` bytes (a run-time scalar)."""

    tile: int
    offset: Expr


@dataclass(eq=False)
class VfInstr(Stmt):
    """One VF instruction: ``op`` (the ``vf.*`` name or an internal variant), the registers it
    writes (``dsts``), its operands (``RegRead`` / ``MemRef`` / scalar ``Expr`` / ``None``) and
    static attributes (dtypes, modes, dist ...). Declared in ``pypto_pro/ops/vf``."""

    op: str
    dsts: tuple[VReg, ...]
    args: tuple[Any, ...]
    attrs: dict[str, Any] = field(default_factory=dict)
    loc: SourceLocation | None = None

    def scalar_exprs(self) -> list[Expr]:
        """The run-time scalars the instruction needs (in order): scalar operands and addresses."""
        out: list[Expr] = []
        for a in self.args:
            if isinstance(a, MemRef):
                out.append(a.offset)
            elif isinstance(a, Expr):
                out.append(a)
        return out


@dataclass(eq=False)
class VfCall(TileOp):
    """A call of a ``@pl.vector_function`` from tile code: one V-pipe instruction.

    ``dst`` / ``srcs`` hold every tile argument (argument order, each once) so that the passes see
    all of them; ``tile_writes`` / ``tile_reads`` are the tiles the body stores to / loads from.
    ``scalars`` are the values of the scalar arguments, bound to ``params`` inside the body."""

    body: list[Stmt] = field(default_factory=list)
    params: tuple[Var, ...] = ()
    tiles: tuple[TileRef, ...] = ()
    written: frozenset[int] = frozenset()  # indices into ``tiles``
    read: frozenset[int] = frozenset()

    def tile_writes(self) -> tuple[TileRef, ...]:
        return tuple(t for i, t in enumerate(self.tiles) if i in self.written)

    def tile_reads(self) -> tuple[TileRef, ...]:
        return tuple(t for i, t in enumerate(self.tiles) if i in self.read)

    def tile_operands(self) -> tuple[TileRef, ...]:
        return self.tiles


def walk_instrs(body: list[Stmt]):
    """Every ``VfInstr`` of a VF body, in program order."""
    from pypto_pro.ir.nodes import walk_stmts
    for s in walk_stmts(body):
        if isinstance(s, VfInstr):
            yield s
