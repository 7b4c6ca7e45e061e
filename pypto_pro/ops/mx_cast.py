"""``pl.cast`` into the MX mantissa types (a5 only): fp32 -> FP8 E4M3FN / E5M2 and bf16 -> FP4 E2M1 / E1M2
(PTO-ISA a5 ``TCvt.hpp``: ``f32 -> e4m3 / e5m2 #rnd #sat``, ``BF16 -> FP4 #rnd #sat``; fp32 reaches FP4
through bf16, as the real MXFP4 quantisation path does). Rounding by the RoundMode, saturation to
the largest finite value (``backends/sim/mx.encode``). An FP4 tile's valid columns count logical
elements, written two a byte (low nibble first).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from pypto_pro.backends.sim import mx
from pypto_pro.backends.sim.fractal import values as region_values
from pypto_pro.backends.sim.gm_strided import pack_codes
from pypto_pro.backends.sim.kit import Prepared, SimEnv, deferred, require_valid, tiles
from pypto_pro.frontend.operands import Args, same_shape, tile_in
from pypto_pro.language.dtypes import DT_BF16, DT_FP4E1M2, DT_FP4E2M1, DT_FP8E4M3FN, DT_FP8E5M2, DT_FP32
from pypto_pro.language.enums import MemorySpace
from pypto_pro.ops.decl import instruction, vector

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

FAMILY = "type_conversion"
# destination -> the one source dtype TCVT converts from
MX_CASTS = {DT_FP8E4M3FN: DT_FP32, DT_FP8E5M2: DT_FP32, DT_FP4E2M1: DT_BF16, DT_FP4E1M2: DT_BF16}


def is_mx_cast(a: Args) -> bool:
    out = getattr(a["out"], "ref", None)  # a TileValue's TileRef
    dt = getattr(getattr(out, "tile_type", None), "dtype", None)
    return dt in MX_CASTS


def emit(p: "FunctionParser", node, a: Args) -> None:
    from pypto_pro.ops.conversion import cast_attrs
    from pypto_pro.ops.elementwise import emit as emit_op
    out = tile_in(p, a, "out", (MemorySpace.Vec,), tuple(MX_CASTS))
    want = MX_CASTS[out.tile_type.dtype]
    src = tile_in(p, a, "src", (MemorySpace.Vec,), (want,), what=f"{a.display} into {out.tile_type.dtype.name}")
    if p.ctx.arch.name != "a5":
        p.fail(node, f"{a.display} into {out.tile_type.dtype.name} exists on a5 (Ascend 950) only")
    same_shape(p, a, out, "out", src, "src")
    attrs = cast_attrs(p, a, src.tile_type.dtype, out.tile_type.dtype)
    emit_op(p, node, a, "cast_mx", out, (src,), (), ("out", "src"), **attrs)


def _sim(op, env: SimEnv) -> Callable:
    d, s = tiles(op, env)
    mode = op.attrs["mode"]
    dt = op.dst.tile_type.dtype

    def dispatch(sd: int, ss: int) -> Prepared:
        r, c = d.valid[sd]
        require_valid(op, s, ss, r, c, "src")
        src = s.views[ss][:r, :c]

        def compute(out: np.ndarray) -> None:
            codes = mx.encode(np.asarray(region_values(src)).astype(np.float64), dt.name, mode)
            out[...] = pack_codes(codes) if dt.packed else codes.view(out.dtype)
        view = d.views[sd][:r, :(c + 1) // 2] if dt.packed else d.views[sd][:r, :c]
        run = deferred(compute, view)
        return Prepared(r, c, False, (s.access(ss, r, c, False), d.access(sd, r, c, True)), (), r * c * s.item, run,
                        (d.written(sd, r, c),))
    return dispatch


def _cpp(op, ctx, arch: str) -> list[str]:
    return [f"TCVT({ctx.tile(op.dst)}, {ctx.tile(op.srcs[0])}, RoundMode::{op.attrs['round_mode'].name});"]


instruction("cast_mx", FAMILY, _sim, vector("cast", flops=False), _cpp)
