"""C++ spellings shared by many instructions: ``OP(dst, src..., scalar...)`` calls of PTO-ISA."""
from __future__ import annotations

from typing import Callable

from pypto_pro.ir.nodes import TileOp, TileRef


def call_cpp(name: str, scalar: bool = False, extra: tuple[str, ...] = (),
             ntiles: int | None = None) -> Callable[..., list[str]]:
    """``NAME(dst, tile sources..., [scalar cast to the destination's C type], extra...)``; ``ntiles``
    keeps only the first tile operands (an API operand the instruction does not take)."""
    def emit(op: TileOp, ctx, arch: str) -> list[str]:
        from pypto_pro.backends.pto.ctypes_map import ctype
        args = [ctx.tile(t) for t in (op.dst, *op.srcs) if isinstance(t, TileRef)][:ntiles]
        if scalar:
            dt = op.dst.tile_type.dtype  # type: ignore[union-attr]
            args += [f"static_cast<{ctype(dt)}>({ctx.cexpr(s)})" for s in op.scalars]
        args += list(extra)
        return [f"{name}({', '.join(args)});"]
    return emit


class NoCpp(Exception):
    """Raised by an instruction's C++ spelling for a case PTO-ISA (or this backend) cannot express; the
    emitter turns it into a located ``CompileError`` naming the op (``backends/pto/tile_ops.py``)."""


def unsupported(reason: str) -> Callable[..., list[str]]:
    """A C++ spelling that always refuses, with ``reason`` (a located CompileError at emit time)."""
    def emit(op: TileOp, ctx, arch: str) -> list[str]:
        raise NoCpp(reason)
    return emit
