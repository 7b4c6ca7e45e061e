"""NumPy numerics of the bitwise, compare and select tile instructions (TAND/TANDS, TXOR, TSHL,
TSHR, TCMP/TCMPS, TSEL/TSELS), written in place into ``dst`` like ``numerics.py``.

The compare instructions write a **bit-packed mask**, as PTO-ISA's a5 TCMP does: row ``i`` of the
mask tile holds the results of source row ``i``, bit ``j % 8`` of byte ``j // 8`` (LSB first) for
column ``j``. The a5 code stores each row in whole vector chunks (32 bytes per 256 one-byte
elements, 16 bytes per 128 two- or four-byte elements, 8 bytes per 64 eight-byte elements), so the
bits after the last valid column of a chunk are written as 0 and the mask bytes after the last chunk
are left as they were. The select instructions read the mask the same way.
See ``docs/numerics.md``.
"""
from __future__ import annotations

import numpy as np

from pypto_pro.backends.sim.numerics import Scalar, _scalar

BITWISE = {"and": np.bitwise_and, "xor": np.bitwise_xor}
CMP_MODES = ("eq", "ne", "lt", "le", "gt", "ge")
_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
        "ge": np.greater_equal}


def _int_only(op: str, *arrays: np.ndarray) -> None:
    for a in arrays:
        if a.dtype.kind not in "iu":
            raise ValueError(f"op {op!r} takes integer tiles, got {a.dtype}")


def bitwise(op: str, dst: np.ndarray, a: np.ndarray, b: np.ndarray | Scalar) -> None:
    """TAND / TXOR (tile right operand) and TANDS (scalar, wrapped to the tile's width)."""
    _int_only(op, dst, a)
    rhs = b if isinstance(b, np.ndarray) else _scalar(dst.dtype, b)
    BITWISE[op](a, rhs, out=dst)


def shift(op: str, dst: np.ndarray, a: np.ndarray, n: np.ndarray) -> None:
    """TSHL / TSHR by a per-element amount. Right shifts are arithmetic for signed types and logical
    for unsigned ones; left shifts wrap. An amount outside ``0 .. width-1`` is undefined in C++ and
    forbidden by the real page: a ``ValueError`` here (the sim rule turns it into a located error)."""
    _int_only(op, dst, a, n)
    width = dst.dtype.itemsize * 8
    if n.size and (int(n.min()) < 0 or int(n.max()) >= width):
        bad = n[(n < 0) | (n >= width)].ravel()[0]
        raise ValueError(f"shift amount {int(bad)} is outside 0..{width - 1} for {dst.dtype} elements")
    (np.left_shift if op == "shl" else np.right_shift)(a, n.astype(a.dtype), out=dst)


def chunk_bytes(src_itemsize: int) -> int:
    """Bytes of mask one a5 TCMP vector chunk stores."""
    return {1: 32, 2: 16, 4: 16, 8: 8}[src_itemsize]


def mask_bytes(cols: int, src_itemsize: int) -> int:
    """Bytes per row the a5 TCMP writes for ``cols`` valid columns (whole chunks)."""
    chunk = chunk_bytes(src_itemsize)
    return -(-cols // (chunk * 8)) * chunk


def compare(mode: str, mask_rows: np.ndarray, a: np.ndarray, b: np.ndarray | Scalar) -> None:
    """TCMP / TCMPS: pack ``a (mode) b`` (``a``: the valid region, r x c) into ``mask_rows`` (a uint8
    view of the first r mask rows, at least ``mask_bytes(c, a.itemsize)`` bytes wide)."""
    rhs = b if isinstance(b, np.ndarray) else _scalar(a.dtype, b)
    r, c = a.shape
    nbytes = mask_bytes(c, a.dtype.itemsize)
    bits = np.zeros((r, nbytes * 8), dtype=bool)
    with np.errstate(invalid="ignore"):
        if a.dtype.kind == "V" or str(a.dtype) == "bfloat16":
            _CMP[mode](a.astype(np.float32), np.asarray(rhs).astype(np.float32), out=bits[:, :c])
        else:
            _CMP[mode](a, rhs, out=bits[:, :c])
    mask_rows[:, :nbytes] = np.packbits(bits, axis=1, bitorder="little")


def mask_bits(mask_rows: np.ndarray, cols: int) -> np.ndarray:
    """The first ``cols`` bits of each mask row (a uint8 view), as booleans."""
    need = -(-cols // 8)
    return np.unpackbits(mask_rows[:, :need], axis=1, count=cols, bitorder="little").astype(bool)


def select(dst: np.ndarray, mask_rows: np.ndarray, a: np.ndarray, b: np.ndarray | Scalar) -> None:
    """TSEL / TSELS: ``dst = a where the mask bit is 1 else b`` (``b`` a tile or a scalar converted
    to the tile dtype)."""
    r, c = dst.shape
    bits = mask_bits(mask_rows, c)
    rhs = b if isinstance(b, np.ndarray) else _scalar(dst.dtype, b)
    dst[...] = np.where(bits, a, rhs)
