"""Shape rules of each tile layout, as PTO-ISA's ``Tile`` template asserts them
(``include/pto/common/pto_tile.hpp``), and the per-arch layout rules of the real TileType
(``python/pypto_pro/ir/op/block_ops.py::_apply_default_layout``).

A layout is a (block layout, inner box layout) pair: ND = row-major, DN = column-major, NZ =
column-major blocks of row-major boxes, ZN = row-major blocks of column-major boxes, ZZ and NN the
two uniform boxed forms. Plain layouts need their contiguous dimension to fill 32-byte blocks;
boxed ones need whole boxes: ``16 x (32 / sizeof)`` for a 512-byte fractal (row-major box; swapped
for a column-major box), 16 x 16 for the 1024-byte Acc fractal (``fractal=1024``).
"""
from __future__ import annotations

from pypto_pro.language.enums import DN, ND, NN, NZ, ZN, ZZ, MemorySpace, TensorLayout
from pypto_pro.language.tile_type import TileType

ALIGNED_BYTES = 32
FRACTAL_ROWS = 16
ACC_FRACTAL = 1024
MX_FRACTAL = 32

# layout -> (block row-major?, inner box: None | "row" | "col")
BOXES: dict[TensorLayout, tuple[bool, str | None]] = {
    ND: (True, None), DN: (False, None), NZ: (False, "row"), ZN: (True, "col"), ZZ: (True, "row"), NN: (False, "col"),
}
# cube buffers on a5 reject these layouts (the real TileType raises ValueError)
A5_REJECTED = {MemorySpace.Left: (ZZ, NN), MemorySpace.Right: (ZZ, NN), MemorySpace.Acc: (ZZ, NN)}
A5_ONLY_SPACES = (MemorySpace.ScaleLeft, MemorySpace.ScaleRight)


def inner_box(tt: TileType, layout: TensorLayout) -> tuple[int, int]:
    """(rows, cols) of the inner box of a boxed layout (PTO-ISA ``getInnerRow/Col``)."""
    _, box = BOXES[layout]
    item = max(1, tt.dtype.bits // 8)
    if tt.fractal == ACC_FRACTAL:
        return FRACTAL_ROWS, FRACTAL_ROWS
    if tt.fractal == MX_FRACTAL:
        return (16, 2) if box == "row" else (2, 16)
    if box == "row":
        return FRACTAL_ROWS, ALIGNED_BYTES // item
    return ALIGNED_BYTES // item, FRACTAL_ROWS


def layout_violation(tt: TileType, arch_name: str) -> str | None:
    """Why ``tt`` cannot be placed on ``arch_name``, or None."""
    space = tt.target_memory
    layout = tt.effective_layout(arch_name)
    if space in A5_ONLY_SPACES and arch_name != "a5":
        return f"{space.name} tiles exist on a5 only (the MX scale buffers), not on {arch_name}"
    if arch_name == "a5" and layout in A5_REJECTED.get(space, ()):
        return f"{space.name} tiles do not support the {layout.name} layout on a5; use the default NZ/ZN layout"
    if space is MemorySpace.Bias:
        return None if tt.rows == 1 else "a Bias tile holds one row: shape [1, N]"
    rows, cols = tt.shape
    row_major, box = BOXES[layout]
    if box is None:
        if tt.dtype.packed:
            return None
        contiguous, what = (cols, "columns") if row_major else (rows, "rows")
        nbytes = tt.dtype.nbytes(contiguous)
        if nbytes % ALIGNED_BYTES:
            order = "row-major (ND)" if row_major else "column-major (DN)"
            return (f"a {order} {space.name} tile must fill 32-byte blocks along its {what}: {contiguous} x "
                    f"{tt.dtype.name} is {nbytes} bytes (PTO-ISA Tile alignment)")
        return None
    ir, ic = inner_box(tt, layout)
    if space is not MemorySpace.Vec and tt.fractal != MX_FRACTAL and rows != 1 and rows % ir:
        return (f"a {layout.name} {space.name} tile is stored in {ir} x {ic} boxes for {tt.dtype.name}: rows must be a "
                f"multiple of {ir}, got {rows}")
    if cols % ic:
        return (f"a {layout.name} {space.name} tile is stored in {ir} x {ic} boxes for {tt.dtype.name}: cols must be a "
                f"multiple of {ic}, got {cols}")
    return None
