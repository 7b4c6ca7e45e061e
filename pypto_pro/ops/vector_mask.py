"""Vector mask control: ``pl.set_mask_count()``, ``pl.set_mask_norm()``, ``pl.set_vec_mask(mask_high,
mask_low)``, ``pl.reset_mask()`` (real pages ``memory_vector_computation/vector_mask/*.md``).

They are scalar-unit (S pipe) writes of the vector mask register and its mode. The real pages say
that tile operations (``pl.add``, ``pl.mul``, ...) manage the mask themselves and overwrite what
these set, and PTO-ISA's a5 tile instructions build their own predicates from the valid shape: so
in a tile kernel they change no result, only the instruction stream (and its S-pipe time). A VF
body reads them with ``vf.get_mask_spr`` (the simulator keeps them per core, ``backends/sim/vec_mask.py``).
The simulator checks their operands (64-bit patterns), prices them as scalar instructions, and the
C++ backend spells them as the real backend does.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from pypto_pro.backends.sim.kit import Prepared, no_run
from pypto_pro.frontend.operands import Args, in_section, want_scalar
from pypto_pro.ir.expr import Const
from pypto_pro.ir.nodes import TileOp
from pypto_pro.language.enums import PipeType, SectionKind
from pypto_pro.ops.decl import SCALAR, declare, instruction

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

FAMILY = "vector_mask"
_U64 = 1 << 64


def _emit(p: "FunctionParser", node, a: Args, instr: str, scalars: tuple = ()) -> None:
    p.ctx.builder.emit(TileOp(instr, PipeType.S, None, (), scalars, {"api": a.name}, p.loc(node)))


def _plain(instr: str):
    def check(p: "FunctionParser", node, a: Args) -> None:
        in_section(p, node, SectionKind.VECTOR, a.display)
        _emit(p, node, a, instr)
    return check


def _set_vec_mask_check(p: "FunctionParser", node, a: Args) -> None:
    in_section(p, node, SectionKind.VECTOR, a.display)
    vals = []
    for name in ("mask_high", "mask_low"):
        v = want_scalar(p, a, name)
        if isinstance(v, Const):
            if not isinstance(v.value, int):
                p.fail(a.node(name), f"'{name}' must be an integer bit pattern, got {p.describe(a[name])}")
            if not -(1 << 63) <= v.value < _U64:
                p.fail(a.node(name), f"'{name}' = {v.value} does not fit in 64 bits")
        elif getattr(v, "ty", "int") != "int":
            p.fail(a.node(name), f"'{name}' must be an integer scalar, got {p.describe(a[name])}")
        vals.append(v)
    _emit(p, node, a, "set_vec_mask", tuple(vals))


def _sim(op: TileOp, env):
    """The S-pipe write of the core's mask SPRs happens in program order, at dispatch
    (``backends/sim/vec_mask.py``); no pipe work, no memory touched."""
    spr, kind = env.spr, op.op

    def dispatch(*scalars) -> Prepared:
        if spr is not None:
            if kind == "set_vec_mask":
                spr.high, spr.low = (int(v) & (_U64 - 1) for v in scalars)
            elif kind == "reset_mask":
                spr.high = spr.low = _U64 - 1
            else:
                spr.count = kind == "set_mask_count"
        return Prepared(0, 0, True, (), (), 0, no_run)
    return dispatch


def _cpp(line: str):
    def emit(op: TileOp, ctx, arch: str) -> list[str]:
        if op.op == "set_vec_mask":
            hi, lo = (f"static_cast<uint64_t>({ctx.cexpr(s)})" for s in op.scalars)
            return [f"set_vector_mask({hi}, {lo});"]
        return [line]
    return emit


for _instr, _line in (("set_mask_count", "set_mask_count();"), ("set_mask_norm", "set_mask_norm();"),
                      ("set_vec_mask", ""),
                      ("reset_mask", "set_vector_mask(static_cast<uint64_t>(-1), static_cast<uint64_t>(-1));")):
    instruction(_instr, FAMILY, _sim, SCALAR, _cpp(_line), pipe=PipeType.S)

declare(FAMILY, "set_mask_count", "", "Switch the vector mask to counter mode (S pipe); tile ops set their own "
        "masks, so results of pl.* tile ops do not change.", _plain("set_mask_count"))
declare(FAMILY, "set_mask_norm", "", "Switch the vector mask to per-bit (norm) mode (S pipe).",
        _plain("set_mask_norm"))
declare(FAMILY, "set_vec_mask", "mask_high, mask_low",
        "Set the 128-bit vector mask (two 64-bit patterns; in counter mode ``mask_low`` is an element count). "
        "Tile ops overwrite it with their own.", _set_vec_mask_check)
declare(FAMILY, "reset_mask", "", "Reset the vector mask to all ones (S pipe).", _plain("reset_mask"))
