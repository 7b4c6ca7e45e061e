"""Shape rules of each on-chip layout: the Cube's fractal formats need whole fractals.

A fractal is 16 rows x 32 bytes (16 x 16 fp16, 16 x 32 int8, 16 x 8 fp32): L1 (NZ) and L0A hold
[M, K] operands as M in 16-row fractals and K in 32-byte fractals; L0B holds [K, N] with K in
32-byte fractals and N in 16-column fractals; L0C holds [M, N] in 16 x 16 fractals. Sources:
Ascend Cube fractal layout (PTO-ISA Tile layouts for TileType::Mat/Left/Right/Acc).
"""
from __future__ import annotations

from pypto_pro.language.enums import MemorySpace
from pypto_pro.language.types import TileType

FRACTAL_ROWS = 16
FRACTAL_BYTES = 32


def layout_violation(tt: TileType) -> str | None:
    """Why ``tt``'s shape cannot live in its memory space's layout, or None."""
    rows, cols, item = tt.rows, tt.cols, tt.dtype.itemsize
    space = tt.target_memory
    if space in (MemorySpace.Mat, MemorySpace.Left):
        if rows % FRACTAL_ROWS or (cols * item) % FRACTAL_BYTES:
            return (f"a {space.name} tile is stored in {FRACTAL_ROWS} x {FRACTAL_BYTES}-byte fractals: rows must be a "
                    f"multiple of {FRACTAL_ROWS} and cols a multiple of {FRACTAL_BYTES // item} for {tt.dtype.name}")
    elif space is MemorySpace.Right:
        if (rows * item) % FRACTAL_BYTES or cols % FRACTAL_ROWS:
            return (f"a Right tile [K, N] is stored in fractals: K must be a multiple of {FRACTAL_BYTES // item} for "
                    f"{tt.dtype.name} and N a multiple of {FRACTAL_ROWS}")
    elif space is MemorySpace.Acc:
        if rows % FRACTAL_ROWS or cols % FRACTAL_ROWS:
            return f"an Acc tile is stored in 16 x 16 fractals: rows and cols must be multiples of {FRACTAL_ROWS}"
    elif space is MemorySpace.Bias:
        if rows != 1:
            return "a Bias tile holds one row: shape [1, N]"
    return None
