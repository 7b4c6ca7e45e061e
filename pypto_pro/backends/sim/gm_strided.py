"""GM windows walked with explicit row / column strides: ``pl.set_stride`` and the packed 4-bit types.

The real codegen gives every GM tensor one PTO ``GlobalTensor`` descriptor whose two innermost
strides (``DIM_3`` / ``DIM_4``) are the steps, in elements, between the tile's rows and columns
(the strides of the two ``order`` axes by default; PTO-ISA's ND copies walk the inner one with step 1,
``data_movement._chip_strides``). ``pl.set_stride(t, [row, col])`` overwrites
them in place (``SetStride<DIM_3, DIM_4>``); the offsets of a later ``pl.load`` / ``pl.store`` are
still computed from the tensor's declared shape. So element ``[i, j]`` of the window is at

    address(offsets in the declared shape) + i * row_stride + j * col_stride      (elements)

For the packed 4-bit types (FP4 E2M1 / E1M2: two elements a byte, the first in the low nibble)
the declared shape counts bytes, while PTO's strides count logical 4-bit elements: the window's
element ``[i, j]`` is nibble ``2 * byte_offset + i * row_stride + j * col_stride``. Without a
``set_stride`` those strides are the declared (byte) strides taken as elements, as on the chip,
which is why real FP4 kernels set them.

Each program (core) holds its own descriptors (``GMBinding.strides``: tensor index -> (row, col)),
set on the S pipe in program order and read by the loads and stores dispatched after them.
"""
from __future__ import annotations

from typing import Callable

import numpy as np


def base_of(arrays: list, index: int, g: np.ndarray) -> tuple[np.ndarray, int]:
    """(the memory's bytes, byte address of ``g``'s first element in them) for array or view ``g`` of
    GM parameter ``index``."""
    base = arrays[index]
    flat = base.reshape(-1).view(np.uint8)
    start = g.__array_interface__["data"][0] - flat.__array_interface__["data"][0]
    return flat, start


def element_addresses(g: np.ndarray, start: int, offs: tuple, rows: int, cols: int, axes: tuple[int, int],
                      strides: tuple[int, int] | None, packed: bool) -> np.ndarray:
    """Byte address (``packed``: nibble address) of each ``[i, j]`` of a ``rows x cols`` window."""
    item = g.itemsize
    corner = start + sum(int(o) * s for o, s in zip(offs, g.strides))
    if strides is None:
        if g.ndim == 1:
            strides = (0, g.strides[0] // item)
        else:
            strides = (g.strides[axes[0]] // item, g.strides[axes[1]] // item)
    sr, sc = (int(s) for s in strides)
    i = np.arange(rows, dtype=np.int64)[:, None]
    j = np.arange(cols, dtype=np.int64)[None, :]
    if packed:
        return 2 * corner + i * sr + j * sc
    return corner + (i * sr + j * sc) * item


def check_bounds(addr: np.ndarray, nbytes: int, item: int, packed: bool, fail: Callable[[str], Exception],
                 what: str) -> None:
    if addr.size == 0:
        return
    lo, hi = int(addr.min()), int(addr.max())
    limit = 2 * nbytes if packed else nbytes - item + 1
    if lo < 0 or hi >= limit:
        unit = "nibble" if packed else "byte"
        raise fail(f"{what} reaches {unit} {lo if lo < 0 else hi} of a tensor of {nbytes} bytes: the strided window "
                   "leaves the tensor (the chip's copy walks it with no bound, into whatever GM holds there)")


def gather(flat: np.ndarray, addr: np.ndarray, dtype: np.dtype, packed: bool) -> np.ndarray:
    """The elements at ``addr`` (packed: their 4-bit codes as uint8)."""
    if packed:
        b = flat[addr >> 1]
        return ((b >> ((addr & 1) * 4).astype(np.uint8)) & 0xF).astype(np.uint8)
    k = dtype.itemsize
    raw = flat[addr[..., None] + np.arange(k)]
    return np.ascontiguousarray(raw).view(dtype).reshape(addr.shape)


def scatter(flat: np.ndarray, addr: np.ndarray, values: np.ndarray, packed: bool) -> None:
    """Write ``values`` (packed: 4-bit codes) at ``addr``."""
    if packed:
        for hi in (0, 1):  # nibble by nibble: two codes of one byte may both be written
            sel = (addr & 1) == hi
            b = addr[sel] >> 1
            keep = np.uint8(0x0F if hi else 0xF0)
            flat[b] = (flat[b] & keep) | ((values[sel].astype(np.uint8) & 0xF) << (4 * hi)).astype(np.uint8)
        return
    k = values.dtype.itemsize
    raw = np.ascontiguousarray(values).view(np.uint8).reshape(addr.shape + (k,))
    flat[addr[..., None] + np.arange(k)] = raw


def checker_rect(g: np.ndarray, start: int, addr: np.ndarray, packed: bool, is_view: bool) -> tuple:
    """What the GM checker records: the bounding box, in the tensor's coordinates, of the elements the
    window touches (for a ``pl.make_tensor`` view, its byte range)."""
    if addr.size == 0:
        return tuple((0, 0) for _ in range(g.ndim))
    byte = addr >> 1 if packed else addr
    if is_view:
        return ((int(byte.min()), int(byte.max()) + g.itemsize),)
    elem = (byte - start) // g.itemsize
    elem = np.clip(elem, 0, g.size - 1)
    coords = np.unravel_index(elem.reshape(-1), g.shape)
    return tuple((int(c.min()), int(c.max()) + 1) for c in coords)


def pack_codes(codes: np.ndarray) -> np.ndarray:
    """``[r, c]`` 4-bit codes -> ``[r, ceil(c / 2)]`` bytes, the first of each pair in the low nibble."""
    codes = np.asarray(codes, np.uint8)
    if codes.shape[-1] % 2:
        codes = np.concatenate([codes, np.zeros(codes.shape[:-1] + (1,), np.uint8)], axis=-1)
    return (codes[..., 0::2] & 0xF) | ((codes[..., 1::2] & 0xF) << 4)


def unpack_codes(packed: np.ndarray, cols: int) -> np.ndarray:
    """``[r, ceil(c / 2)]`` bytes -> the ``[r, cols]`` 4-bit codes."""
    packed = np.asarray(packed, np.uint8)
    out = np.empty(packed.shape[:-1] + (packed.shape[-1] * 2,), np.uint8)
    out[..., 0::2] = packed & 0xF
    out[..., 1::2] = packed >> 4
    return out[..., :cols]
