"""The register file of one Vector core's VF unit, byte-exact, and the lane helpers of VF numerics.

* a vector register (``RegTensor``) is 256 bytes (VL); its lanes are ``256 / sizeof(T)`` elements of
  the dtype it is read as (a 4-bit type packs two elements per byte and is moved as b8);
* a predicate (``MaskReg``) is 256 bits, one per register byte: element ``i`` of a ``w``-byte type
  is active when bit ``w * i`` is set (``pset_b32(PAT_ALL)`` sets every bit; PTO-ISA's mask
  granularity: b8 / b16 / b32 use every 1st / 2nd / 4th bit);
* an alignment register holds the pending bytes of an unaligned store sequence;
* the AR special-purpose register (``vf.clear_spr``, ``vf.squeeze`` with ``STORE_REG``).

Registers keep whatever the previous VF left in them (the hardware does not clear them); a register
never written in this launch holds the poison byte 0xFF, like on-chip memory.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from pypto_pro.language.dtypes import DataType

VL = 256          # bytes per vector register
POISON = 0xFF


class RegFile:
    """Vector, mask and alignment registers of one core, by register uid, and the SPRs."""

    __slots__ = ("v", "m", "align", "ar", "sqz", "spr_mask")

    def __init__(self) -> None:
        self.v: dict[int, np.ndarray] = {}
        self.m: dict[int, np.ndarray] = {}
        self.align: dict[int, dict] = {}
        self.ar = 0
        self.sqz = 0  # the byte count of the last vf.squeeze(STORE_REG), which the next AR store writes
        self.spr_mask: tuple | None = None  # the core's {MASK1, MASK0}, mode (backends/sim/vec_mask.py) at the call

    def prepare(self, vregs, masks, aligns) -> None:
        """Allocate the registers a VF body uses (first use in this launch: poison), each kind's new ones
        as the rows of one array (``rows_of``: the batched plans copy them in and out in one call)."""
        new = [uid for uid in dict.fromkeys(vregs) if uid not in self.v]
        block = np.full((len(new), VL), POISON, np.uint8)
        self.v.update(zip(new, block))
        new = [uid for uid in dict.fromkeys(masks) if uid not in self.m]
        block = np.ones((len(new), VL), np.bool_)
        self.m.update(zip(new, block))
        for uid in aligns:
            self.align.setdefault(uid, {})


def rows_of(regs: list[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray, list[int]]] | None:
    """``regs`` (rows of ``RegFile.prepare``'s arrays) as (array, row indices, positions in ``regs``) per
    array, or None when one is not such a row."""
    out: dict[int, tuple] = {}
    for pos, r in enumerate(regs):
        b = r.base
        if b is None or b.ndim != 2 or b.shape[1] != VL or not b.flags.c_contiguous or r.shape != (VL,):
            return None
        off = r.__array_interface__["data"][0] - b.__array_interface__["data"][0]
        got = out.setdefault(id(b), (b, [], []))
        got[1].append(off // b.strides[0])
        got[2].append(pos)
    return [(b, np.asarray(ix, np.intp), ps) for b, ix, ps in out.values()]


_NP: dict[str, np.dtype] = {}


def np_of(dt: DataType) -> np.dtype:
    """NumPy dtype of one register element of ``dt`` (b8 storage for the 4-bit and HF8 types)."""
    t = _NP.get(dt.name)
    if t is None:
        t = np.dtype(np.uint8) if dt.np_dtype is None or dt.name == "DT_HF8" else np.dtype(dt.np_dtype)
        _NP[dt.name] = t
    return t


def width(dt: DataType) -> int:
    """Bytes per lane (4-bit types are moved and masked as b8)."""
    return max(1, dt.bits // 8)


def lanes(dt: DataType) -> int:
    return VL // width(dt)


def view(reg: np.ndarray, dt: DataType) -> np.ndarray:
    """The register's 256 bytes as ``dt`` lanes (a view: writes go to the register)."""
    return reg.view(np_of(dt))


def active(mask: np.ndarray, dt: DataType) -> np.ndarray:
    """Element predicate of a mask for ``dt`` lanes: bit ``w * i`` (a view)."""
    w = width(dt)
    return mask[::w] if w > 1 else mask


def active_rows(masks: np.ndarray, dt: DataType) -> np.ndarray:
    """:func:`active` over an ``[N, 256]`` stack of masks (the batched plans, ``batch.py``): ``[N, lanes]``."""
    w = width(dt)
    return masks[:, ::w] if w > 1 else masks


def set_active(mask: np.ndarray, act: np.ndarray, dt: DataType) -> None:
    """Write an element predicate into a mask: every bit of element ``i`` takes ``act[i]``."""
    w = width(dt)
    if w == 1:
        mask[:] = act
    else:
        mask[:] = np.repeat(act, w)


def merge(dst: np.ndarray, result: np.ndarray, act: np.ndarray, merging: bool) -> None:
    """Write ``result`` into the active lanes of ``dst``; inactive lanes keep ``dst`` (MERGING) or
    become 0 (ZEROING)."""
    if merging:
        np.copyto(dst, result, where=act)
    else:
        np.copyto(dst, result)
        dst[~act] = 0


BF16 = np.dtype(ml_dtypes.bfloat16)
F32 = np.dtype(np.float32)


def compute_dtype(t: np.dtype) -> np.dtype:
    """Where lanes of ``t`` are computed: fp32 for bf16 (one rounding back), the type itself otherwise."""
    return F32 if t == BF16 else t


class PerRegFile:
    """What an instruction derives from a register file (the register views it reads and writes),
    computed at the first run on a file and kept while the same file comes back: a call site's registers
    persist across its runs, so binding them once per file saves a lookup and a view per operand per run."""

    __slots__ = ("_make", "_rf", "_views")

    def __init__(self, make) -> None:
        self._make, self._rf, self._views = make, None, None

    def __call__(self, rf: RegFile):
        if self._rf is not rf:
            self._views, self._rf = self._make(rf), rf
        return self._views
