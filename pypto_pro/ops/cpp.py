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


def unsupported(reason: str) -> Callable[..., list[str]]:
    """An ``#error`` line for an instruction the C++ backend cannot spell in this case."""
    def emit(op: TileOp, ctx, arch: str) -> list[str]:
        return [f'#error "{reason}"']
    return emit
