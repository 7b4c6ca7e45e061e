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

from functools import lru_cache

import numpy as np

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
    return _box(tt.dtype.bits, tt.fractal, BOXES[layout][1] or "row")


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
    if space is MemorySpace.Scaling and tt.rows != 1:  # PTO-ISA TMov: "When TileType is Scaling, row must be 1"
        return (f"scale tile must have shape [1, N] (row == 1), got [{tt.rows}, {tt.cols}]: the fixpipe buffer "
                "holds one row of per-column quant words ([N, 1] per-row scaling is not supported; quantise "
                "per token in the Vector (UB) domain)")
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


def element_offsets(tt: TileType, layout: TensorLayout) -> np.ndarray:
    """Storage offset (in elements; in bytes for the packed 4-bit types) of each ``[row, col]`` of a
    tile in its slot: PTO-ISA's ``GetTileElementOffset`` (``include/pto/cpu/tile_offsets.hpp``).

    Plain layouts: ND ``r * cols + c``, DN ``c * rows + r``. Boxed layouts split the tile into inner
    boxes (:func:`inner_box`) stored whole: NZ (column-major blocks of row-major boxes) puts
    ``(r, c)`` at ``(c // bc) * rows * bc + r * bc + c % bc`` for boxes of ``bc`` columns, so an
    ``[N, K]`` NZ tile and a ``[K, N]`` ZN tile are the same bytes. The array is read-only and shared.
    """
    return _offsets(tt.shape, tt.dtype.bits, tt.fractal, layout)


@lru_cache(maxsize=256)
def _offsets(shape: tuple[int, int], bits: int, fractal: int | None, layout: TensorLayout) -> np.ndarray:
    rows, cols = shape
    if bits < 8:  # packed: byte columns, boxed as 1-byte items
        cols = max(1, cols // 2)
    r = np.arange(rows, dtype=np.int64)[:, None]
    c = np.arange(cols, dtype=np.int64)[None, :]
    row_major, box = BOXES[layout]
    if box is None:
        out = r * cols + c if row_major else c * rows + r
    else:
        ir, ic = _box(bits, fractal, box)
        inner = (r % ir) * ic + (c % ic) if box == "row" else (c % ic) * ir + (r % ir)
        numel = ir * ic
        if row_major:
            out = (r // ir) * cols * ir + (c // ic) * numel + inner
        else:
            out = (c // ic) * rows * ic + (r // ir) * numel + inner
    out = np.ascontiguousarray(out)
    out.setflags(write=False)
    return out


def _box(bits: int, fractal: int | None, box: str) -> tuple[int, int]:
    item = max(1, bits // 8)
    if fractal == ACC_FRACTAL:
        return FRACTAL_ROWS, FRACTAL_ROWS
    if fractal == MX_FRACTAL:
        return (16, 2) if box == "row" else (2, 16)
    if box == "row":
        return FRACTAL_ROWS, ALIGNED_BYTES // item
    return ALIGNED_BYTES // item, FRACTAL_ROWS


def region_rows(tt: TileType, layout: TensorLayout, rows: int, cols: int) -> tuple[int, int, int]:
    """The bytes a ``rows x cols`` region from ``[0, 0]`` touches, as ``(panels, pitch, used)``: ``panels``
    runs of ``used`` bytes, ``pitch`` bytes apart from the slot's start (a row-major tile's rows; a
    column-major tile's columns; a boxed tile's block columns (NZ, NN) or block rows (ZN, ZZ)).
    What the memory checkers record for an access."""
    R, C = tt.shape
    item = max(1, tt.dtype.bits // 8)
    if tt.dtype.packed:
        C, cols, item = max(1, C // 2), (cols + 1) // 2, 1
    row_major, box = BOXES[layout]
    if box is None:
        return (rows, C * item, cols * item) if row_major else (cols, R * item, rows * item)
    ir, ic = _box(tt.dtype.bits, tt.fractal, box)
    numel = ir * ic * item
    if row_major:  # block rows of ir rows, boxes along the columns
        return -(-rows // ir), C * ir * item, -(-cols // ic) * numel
    if box == "row":  # NZ: block columns; rows are contiguous inside one
        return -(-cols // ic), R * ic * item, rows * ic * item
    return -(-cols // ic), R * ic * item, -(-rows // ir) * numel
