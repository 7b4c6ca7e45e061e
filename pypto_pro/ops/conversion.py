"""Type conversion: ``pl.cast(out, src, *, mode=pl.RoundMode.CAST_ROUND)`` (real page
``memory_vector_computation/type_conversion/cast.md``; PTO-ISA TCVT).

The real default rounds half away from zero (CAST_ROUND). Float -> int saturates and maps NaN to
0; float -> float rounds once by the mode; CAST_NONE is the conversion PTO-ISA's TCVT does when no
rounding is asked for (float -> int truncates, anything else rounds to nearest even). CAST_ODD is
round-to-odd for FP32 -> FP16, the only pair the a5 TCVT implements it for; on any other pair the
a5 code falls back to the CAST_NONE conversion, and so does the simulator.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from pypto_pro.backends.sim import numerics
from pypto_pro.backends.sim.templates import elementwise
from pypto_pro.frontend.operands import Args, in_section, same_shape, tile_in, want_enum
from pypto_pro.language.dtypes import DataType, DT_BF16, DT_FP16, DT_FP32, DT_INT8, DT_INT16, DT_INT32, DT_UINT8
from pypto_pro.language.enums import MemorySpace, RoundMode, SectionKind
from pypto_pro.ops.decl import declare, instruction, vector
from pypto_pro.ops.elementwise import emit

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

FAMILY = "type_conversion"
CAST_DTYPES = (DT_FP16, DT_BF16, DT_FP32, DT_INT8, DT_UINT8, DT_INT16, DT_INT32)
# RoundMode -> the numerics' mode name
MODES = {RoundMode.CAST_RINT: "rint", RoundMode.CAST_ROUND: "round", RoundMode.CAST_FLOOR: "floor",
         RoundMode.CAST_CEIL: "ceil", RoundMode.CAST_TRUNC: "trunc"}


def cast_attrs(p: "FunctionParser", a: Args, src: DataType, dst: DataType) -> dict:
    """The ``cast`` instruction's attributes for ``a["mode"]`` converting ``src`` to ``dst``: the
    numerics' mode name (what TCVT does with that RoundMode on that pair) and the RoundMode."""
    mode = want_enum(p, a, "mode", RoundMode)
    if mode is RoundMode.CAST_ODD and src is DT_FP32 and dst is DT_FP16:
        name = "odd"
    elif mode in (RoundMode.CAST_NONE, RoundMode.CAST_ODD):
        name = "trunc" if src.is_float() and not dst.is_float() else "rint"
    else:
        name = MODES[mode]
    return {"mode": name, "round_mode": mode}


def _cast_check(p: "FunctionParser", node, a: Args) -> None:
    in_section(p, node, SectionKind.VECTOR, a.display)
    from pypto_pro.ops import mx_cast
    if mx_cast.is_mx_cast(a):  # into FP8 / FP4 (a5): ops/mx_cast.py
        mx_cast.emit(p, node, a)
        return
    out = tile_in(p, a, "out", (MemorySpace.Vec,), CAST_DTYPES)
    src = tile_in(p, a, "src", (MemorySpace.Vec,), CAST_DTYPES)
    same_shape(p, a, out, "out", src, "src")
    attrs = cast_attrs(p, a, src.tile_type.dtype, out.tile_type.dtype)
    emit(p, node, a, "cast", out, (src,), (), ("out", "src"), **attrs)


def _cast_sim(op, env):
    mode = op.attrs["mode"]
    return elementwise(_cast_numerics(mode), batch=True)(op, env)


_CASTS: dict = {}


def _cast_numerics(mode: str):
    """One numerics callable per mode (batched replay runs equal ones together)."""
    got = _CASTS.get(mode)
    if got is None:
        got = _CASTS[mode] = lambda out, x: numerics.cast(out, x, mode)
    return got


def _cast_cpp(op, ctx, arch: str) -> list[str]:
    return [f"TCVT({ctx.tile(op.dst)}, {ctx.tile(op.srcs[0])}, RoundMode::{op.attrs['round_mode'].name});"]


instruction("cast", FAMILY, _cast_sim, vector("cast", flops=False), _cast_cpp)
declare(FAMILY, "cast", "out, src, *, mode=RoundMode.CAST_ROUND",
        "Convert ``src`` to ``out``'s dtype over out's valid shape (TCVT); ``mode`` a pl.RoundMode, default "
        "CAST_ROUND (ties away from zero).", _cast_check)
