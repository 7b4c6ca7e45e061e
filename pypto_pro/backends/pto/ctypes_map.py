"""Spelling of pypto_pro types in PTO-ISA C++: element types, pipes, tile types, round modes."""
from __future__ import annotations

from pypto_pro.ir.nodes import Buffer
from pypto_pro.language.dtypes import DataType
from pypto_pro.language.enums import DN, NN, ZN, ZZ, MemorySpace, PipeType

# Element types as PTO-ISA spells them (pto/common/type.hpp; ``half`` / ``bfloat16_t`` come from it).
CTYPE: dict[str, str] = {
    "DT_FP16": "half", "DT_BF16": "bfloat16_t", "DT_FP32": "float", "DT_INT8": "int8_t",
    "DT_UINT8": "uint8_t", "DT_INT16": "int16_t", "DT_INT32": "int32_t",
    "DT_UINT16": "uint16_t", "DT_UINT32": "uint32_t", "DT_INT64": "int64_t", "DT_UINT64": "uint64_t",
}

def ctype(dt: DataType) -> str:
    """The element type; the MX / HiFloat8 types as PTO-ISA names them (``float8_e4m3_t``,
    ``float8_e8m0_t``, ``float4_e2m1x2_t``, ``hifloat8_t``: ``pto/cpu/MXTypes.hpp`` on the CPU model)."""
    name = CTYPE.get(dt.name) or getattr(dt, "c_type", None)
    if not name:
        from pypto_pro.ops.cpp import NoCpp
        raise NoCpp(f"{dt.name} has no PTO-ISA element type")
    return name


def has_ctype(dt: DataType) -> bool:
    return bool(CTYPE.get(dt.name) or getattr(dt, "c_type", None))


def pipe(p: PipeType) -> str:
    return f"PIPE_{p.name}"


def tile_type_expr(b: Buffer) -> str:
    """The PTO-ISA ``Tile<...>`` type of one buffer slot; every tile has a run-time valid shape."""
    t = b.tile_type
    ct, r, c = ctype(t.dtype), t.rows, t.cols
    space = b.space
    if space is MemorySpace.Vec:
        # a DN tile is column-major ([R, 1] row results; an undeclared [R, 1] is DN too)
        block = "ColMajor" if t.effective_layout("a5") is DN else "RowMajor"
        pad = t.pad.name if t.pad is not None and t.pad.name != "null" else None  # pl.fillpad reads it from the type
        if pad:
            return (f"Tile<TileType::Vec, {ct}, {r}, {c}, BLayout::{block}, DYNAMIC, DYNAMIC, SLayout::NoneBox, "
                    f"TileConfig::fractalABSize, PadValue::{pad.capitalize()}>")
        return f"Tile<TileType::Vec, {ct}, {r}, {c}, BLayout::{block}, DYNAMIC, DYNAMIC>"
    if space is MemorySpace.Mat and t.rows == 1 and t.effective_layout("a5").name == "ND":
        # a one-row ND Mat tile: the staging row of a Bias / Scaling move (TMov to Bt / Fb)
        return f"Tile<TileType::Mat, {ct}, 1, {c}, BLayout::RowMajor, DYNAMIC, DYNAMIC>"
    if space is MemorySpace.Mat and t.layout in (ZN, ZZ, NN):
        # ZN: a transposed operand (row-major blocks of column-major boxes); ZZ / NN: the MX scale tiles
        # (fractal 32), as PTO-ISA's tmatmul_mx tests declare them
        block, box = ("RowMajor", "ColMajor") if t.layout is ZN else ("RowMajor", "RowMajor") if t.layout is ZZ \
            else ("ColMajor", "ColMajor")
        fractal = 512 if t.layout is ZN else (t.fractal or 32)
        return f"Tile<TileType::Mat, {ct}, {r}, {c}, BLayout::{block}, DYNAMIC, DYNAMIC, SLayout::{box}, {fractal}>"
    if space is MemorySpace.Mat:  # L1 holds NZ fractals (ND -> NZ on load), as PTO-ISA's matmul tests do
        return f"Tile<TileType::Mat, {ct}, {r}, {c}, BLayout::ColMajor, DYNAMIC, DYNAMIC, SLayout::RowMajor, 512>"
    if space is MemorySpace.ScaleLeft:  # MX scales of the left operand (ZZ), found at addr(left) >> 4
        return f"TileLeftScale<{ct}, {r}, {c}, DYNAMIC, DYNAMIC>"
    if space is MemorySpace.ScaleRight:  # MX scales of the right operand (NN)
        return f"TileRightScale<{ct}, {r}, {c}, DYNAMIC, DYNAMIC>"
    if space is MemorySpace.Left:
        return f"TileLeft<{ct}, {r}, {c}, DYNAMIC, DYNAMIC>"
    if space is MemorySpace.Right:
        return f"TileRight<{ct}, {r}, {c}, DYNAMIC, DYNAMIC>"
    if space is MemorySpace.Acc:
        return f"TileAcc<{ct}, {r}, {c}, DYNAMIC, DYNAMIC>"
    if space is MemorySpace.Bias:
        return f"Tile<TileType::Bias, {ct}, 1, {c}, BLayout::RowMajor, DYNAMIC, DYNAMIC>"
    if space is MemorySpace.Scaling:  # the fixpipe buffer: one row of 64-bit quant words
        return f"Tile<TileType::Scaling, {ct}, 1, {c}, BLayout::RowMajor, DYNAMIC, DYNAMIC>"
    raise ValueError(f"no PTO-ISA tile type for memory space {space}")
