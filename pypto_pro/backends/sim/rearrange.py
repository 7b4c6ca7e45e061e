"""Numerics of the data-rearrangement instructions (gather / scatter / histogram / sort), on NumPy
arrays. Each follows PTO-ISA's a5 implementation (``include/pto/npu/a5/T*.hpp``) where it fixes a
behaviour the CPU model leaves open; docs/numerics.md says per op which. A case the chip leaves
undefined (an index outside the tile, a scatter write conflict) raises :class:`Undefined`, which
the instruction's rule turns into a located simulation fault.
"""
from __future__ import annotations

import numpy as np

GT, EQ = 4, 0  # pl.gather compare-form cmp_mode values (PTO-ISA CmpMode::GT / CmpMode::EQ)
# pl.gathermask pattern_mode -> (period, phase) of the kept columns (PTO-ISA MaskPattern P0101 ... P1111)
MASK_PATTERNS = {1: (2, 0), 2: (2, 1), 3: (4, 0), 4: (4, 1), 5: (4, 2), 6: (4, 3), 7: (1, 0)}


class Undefined(Exception):
    """The chip's result is undefined for these operands (the message says why)."""


def gather_index(out: np.ndarray, src_flat: np.ndarray, idx: np.ndarray) -> None:
    """``out[r, c] = src_flat[idx[r, c]]`` (TGATHER index form: flat element offsets into the whole
    source tile), the indices read unsigned as the a5 index register holds them (uint16 / uint32)."""
    i = idx.view(f"u{idx.dtype.itemsize}").astype(np.int64)
    bad = (i < 0) | (i >= src_flat.size)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise Undefined(f"index {int(i[r, c])} at [{r}, {c}] is outside the source tile's {src_flat.size} "
                        "elements (undefined on the chip)")
    out[...] = src_flat[i]


def _round_to_i32(v: np.ndarray) -> np.ndarray:
    """vcvt f32 -> s32 ROUND_R (nearest, ties to even); saturating, NaN -> 0."""
    f = np.nan_to_num(v.astype(np.float64), nan=0.0)
    return np.clip(np.rint(f), -2**31, 2**31 - 1).astype(np.int64)


def compare_keys(row: np.ndarray, k: int, kind: str) -> tuple[np.ndarray, object]:
    """The values the a5 compare-form TGATHER compares for one source row, and the key they are
    compared with (``kind``: the source dtype's numpy kind + size, e.g. ``f4``, ``i2``)."""
    if kind == "f4":   # f32 -> s32 (ROUND_R), compared as u32 with the key
        return _round_to_i32(row) & 0xFFFFFFFF, k
    if kind == "f2":   # f16 -> f32; the key goes through int16 -> f32
        key = np.float32(np.int16(np.uint16(k & 0xFFFF).view(np.int16)))
        return row.astype(np.float32), key
    bits = row.dtype.itemsize * 8
    u = row.view(f"u{row.dtype.itemsize}").astype(np.int64) & ((1 << bits) - 1)  # zero-extended lanes
    if bits == 32:
        return u, k
    if bits == 16:  # key = (uint32)(float)k
        return u, int(np.float32(k))
    key = float(np.float32(np.int32(np.uint32(k).view(np.int32))))  # b8: (uint32)(float)(int32)k
    return u, max(0, int(key))


def gather_compare(src_flat: np.ndarray, src_cols: int, rows: int, cols: int, k_flat: np.ndarray, mode: int,
                   offset: int, per_repeat: int, masked: bool) -> list[np.ndarray]:
    """Per source row, the uint32 indices of the elements ``> k`` (GT) or ``== k`` (EQ), row ``i``
    compared with ``k_flat[i]``. Indices count from ``offset`` and run on across rows in whole
    repeats of ``per_repeat`` lanes (the a5 vci / vadd index vector); the 8/16-bit forms compare every
    lane of the last repeat (``masked`` False), reading past the valid columns."""
    kind = f"{src_flat.dtype.kind}{src_flat.dtype.itemsize}"
    span = -(-cols // per_repeat) * per_repeat
    width = cols if masked else span
    out = []
    for i in range(rows):
        lo = i * src_cols
        if lo + width > src_flat.size:
            raise Undefined(f"row {i} compares {width} lanes from element {lo}, past the source tile's "
                            f"{src_flat.size} elements (the 8/16-bit forms compare whole {per_repeat}-lane repeats)")
        vals, key = compare_keys(src_flat[lo:lo + width], int(k_flat[i]), kind)
        hit = vals > key if mode == GT else vals == key
        base = offset + i * span
        out.append(((base + np.nonzero(hit)[0]) & 0xFFFFFFFF).astype(np.uint32))
    return out


def gatherb(out_bytes: np.ndarray, out_cols_bytes: int, src_bytes: np.ndarray, offsets: np.ndarray,
            rows: int, row_bytes: int) -> None:
    """TGATHERB: block ``b`` of row ``r`` of ``out`` (32 bytes) = the 32 source bytes at byte offset
    ``offsets[r, b]``, for the blocks covering the first ``row_bytes`` bytes of each row. A last block
    cut by the valid columns is gathered whole and stored only up to them (the a5 code's store
    predicate counts elements)."""
    blocks = -(-row_bytes // 32)
    for r in range(rows):
        for b in range(blocks):
            off = int(offsets[r, b])
            if off + 32 > src_bytes.size:
                raise Undefined(f"byte offset {off} at [{r}, {b}] reads past the source tile's {src_bytes.size} bytes")
            n = min(32, row_bytes - b * 32)
            d = r * out_cols_bytes + b * 32
            out_bytes[d:d + n] = src_bytes[off:off + n]


def gathermask(src: np.ndarray, mode: int) -> np.ndarray:
    """The kept columns of every row (``src`` is the valid region), flattened in row order (the a5
    8/16/32-bit code: ``vsqz`` + unaligned stores, packed across rows)."""
    period, phase = MASK_PATTERNS[mode]
    return src[:, phase::period].reshape(-1)


B64_LANES = 64  # one 256-byte vector of uint32 lanes: the a5 64-bit pattern gather handles this many per row


def gathermask_b64(out_flat: np.ndarray, src: np.ndarray, mode: int, out_cols: int) -> None:
    """The a5 64-bit pattern gather (``Int64GatherPattern``): row ``r`` keeps ``min(valid_cols //
    period, 64)`` elements (``src[r, phase + k * period]``; a shorter tail is dropped) and writes them
    from element ``r * (out_cols // period)`` of out (``out_cols`` = out's tile columns), rows in
    order, so a later row overwrites an earlier one where they overlap."""
    period, phase = MASK_PATTERNS[mode]
    n = min(src.shape[1] // period, B64_LANES)
    step = out_cols // period
    end = gathermask_b64_end(*src.shape, mode, out_cols)
    if end > out_flat.size:
        raise Undefined(f"row {src.shape[0] - 1} of the 64-bit pattern gather ends at element {end}, past out's "
                        f"{out_flat.size} (the a5 code writes row r from element r * {step})")
    for r in range(src.shape[0]):
        out_flat[r * step:r * step + n] = src[r, phase:phase + n * period:period]


def gathermask_b64_end(rows: int, cols: int, mode: int, out_cols: int) -> int:
    """One past the last element of out :func:`gathermask_b64` writes."""
    period, _ = MASK_PATTERNS[mode]
    return (rows - 1) * (out_cols // period) + min(cols // period, B64_LANES) if rows else 0


def scatter(dst_flat: np.ndarray, src: np.ndarray, idx: np.ndarray) -> None:
    """``dst_flat[idx[i, j]] = src[i, j]`` (TSCATTER) over a ``dst_flat`` zeroed first: the a5 code
    clears the whole destination tile (``InitUBBuffer<DstTile::Numel>``) before it scatters. Indices
    are read unsigned (the a5 index register is uint16 / uint32). Out-of-range indices and two writes
    to one element are undefined on the chip."""
    i = idx.view(f"u{idx.dtype.itemsize}").astype(np.int64).reshape(-1)
    bad = (i < 0) | (i >= dst_flat.size)
    if bad.any():
        k = int(np.argmax(bad))
        raise Undefined(f"index {int(i[k])} (element {k} of the index region) is outside the destination's "
                        f"{dst_flat.size} elements")
    uniq, counts = np.unique(i, return_counts=True)
    if (counts > 1).any():
        raise Undefined(f"{int((counts > 1).sum())} destination element(s) are written twice (first: element "
                        f"{int(uniq[counts > 1][0])}); the chip's result is undefined")
    dst_flat[...] = 0
    dst_flat[i] = src.reshape(-1)


def histogram(src: np.ndarray, idx_flat: np.ndarray, idx_cols: int, is_msb: bool) -> np.ndarray:
    """THISTOGRAM: per row of ``src`` (its valid region), the cumulative counts of one byte over 256
    bins. uint16: ``is_msb`` counts bits 15-8, else bits 7-0 of the elements whose high byte equals
    that row's ``idx`` value. uint32: ``is_msb`` counts bits 31-24 (BYTE_3), else bits 7-0 (BYTE_0) of
    the elements whose bytes 3 / 2 / 1 equal ``idx`` rows 0 / 1 / 2 (column 0)."""
    v = src.astype(np.int64)
    out = np.zeros((src.shape[0], 256), dtype=np.uint32)
    for r in range(src.shape[0]):
        row = v[r]
        if src.dtype.itemsize == 2:
            if is_msb:
                sel = (row >> 8) & 0xFF
            else:
                sel = row[((row >> 8) & 0xFF) == int(idx_flat[r])] & 0xFF
        elif is_msb:
            sel = (row >> 24) & 0xFF
        else:
            keep = (((row >> 24) & 0xFF) == int(idx_flat[0])) & (((row >> 16) & 0xFF) == int(idx_flat[idx_cols])) \
                & (((row >> 8) & 0xFF) == int(idx_flat[2 * idx_cols]))
            sel = row[keep] & 0xFF
        out[r] = np.cumsum(np.bincount(sel, minlength=256)).astype(np.uint32)
    return out


# ---- sorting: 8-byte (value, uint32 index) records ------------------------------------------------------


def records(values: np.ndarray, index: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The TSORT32 record layout, as elements of ``dtype``: fp32 ``[value, index bits]``, fp16
    ``[value, 0, index low half, index high half]`` (8 bytes per record)."""
    per = 8 // dtype.itemsize
    out = np.zeros((values.size, per), dtype=dtype)
    out[:, 0] = values
    out.view(np.uint8).reshape(values.size, 8)[:, 4:8] = index.astype("<u4").view(np.uint8).reshape(-1, 4)
    return out.reshape(-1)


def _order_key(v: np.ndarray) -> np.ndarray:
    """Descending sort key; NaN sorts after every number (docs/numerics.md)."""
    f = v.astype(np.float64)
    return np.where(np.isnan(f), np.inf, -f)


def sort32_row(values: np.ndarray, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One group of (at most) 32 values sorted descending; ties keep the lower index first."""
    order = np.lexsort((index.astype(np.int64), _order_key(values)))
    return values[order], index[order]


def merge_lists(lists: list[np.ndarray], per: int, out_structs: int, exhausted: bool) -> tuple[np.ndarray, list[int]]:
    """TMRGSORT of 2-4 sorted record lists: repeatedly take the head with the greatest value (the
    earliest list on a tie, NaN never greater), up to ``out_structs`` records; with ``exhausted`` stop
    as soon as one list is used up. Returns the records and how many were taken from each list."""
    heads = [0] * len(lists)
    sizes = [lst.size // per for lst in lists]
    out: list[np.ndarray] = []
    while len(out) < out_structs:
        pick = -1
        best = None
        for k, lst in enumerate(lists):
            if heads[k] < sizes[k]:
                v = lst[heads[k] * per]
                if pick < 0 or v > best:
                    pick, best = k, v
        if pick < 0:
            break
        out.append(lists[pick][heads[pick] * per:(heads[pick] + 1) * per])
        heads[pick] += 1
        if exhausted and any(h == s for h, s in zip(heads, sizes)):
            break
    flat = np.concatenate(out) if out else np.zeros(0, dtype=lists[0].dtype)
    return flat, heads


def mrgsort_blocks(src: np.ndarray, block_len: int, per: int) -> np.ndarray:
    """TMRGSORT single-source form: each group of 4 consecutive blocks of ``block_len`` elements
    (sorted record lists) merged into one. Returns only the merged groups: the instruction repeats
    ``cols // (4 * block_len)`` times, so a trailing partial group is neither read nor written
    (PTO-ISA a5 ``TMRGSORT_IMPL`` repeat count and the CPU model's group loop)."""
    group = 4 * block_len
    n = src.size // group * group
    out = np.empty(n, dtype=src.dtype)
    for base in range(0, n, group):
        blocks = [src[base + b * block_len: base + (b + 1) * block_len] for b in range(4)]
        merged, _ = merge_lists(blocks, per, 4 * block_len // per, False)
        out[base:base + merged.size] = merged
    return out


# ---- fillpad / quantisation ------------------------------------------------------------------------------

# PTO-ISA PadValueMap (include/pto/common/constants.hpp): the bits TFILLPAD writes, by element kind
_PAD_BITS = {
    "max": {"f4": 0x7F800000, "f2": 0x7C00, "bf16": 0x7F80, "i4": 0x7FFFFFFF, "u4": 0xFFFFFFFF, "i2": 0x7FFF,
            "u2": 0xFFFF, "i1": 0x7F, "u1": 0xFF},
    "min": {"f4": 0xFF800000, "f2": 0xFC00, "bf16": 0xFF80, "i4": 0x80000000, "u4": 0, "i2": 0x8000, "u2": 0,
            "i1": 0x80, "u1": 0},
}


def pad_value(dtype: np.dtype, pad: str) -> np.ndarray:
    """The pad element (a 0-d array of ``dtype``) for TilePad ``pad`` (``zero`` / ``max`` / ``min``):
    +-inf for floats, the integer limits otherwise (unsigned min is 0)."""
    if pad == "zero":
        return np.zeros((), dtype)
    key = "bf16" if dtype.name == "bfloat16" else f"{dtype.kind}{dtype.itemsize}"
    bits = _PAD_BITS[pad][key]
    return np.array(bits, dtype=f"u{dtype.itemsize}").view(dtype)


def fillpad(dst: np.ndarray, src: np.ndarray, rows: int, cols: int, dst_rows: int, pad: np.ndarray,
            copy: bool) -> None:
    """TFILLPAD (a5): copy src's valid ``rows x cols`` region (unless in place), pad columns ``cols..``
    of those rows to dst's full width, then every column of rows ``rows..dst_rows`` (dst's valid rows)."""
    if copy:
        dst[:rows, :cols] = src[:rows, :cols]
    dst[:rows, cols:] = pad
    dst[rows:dst_rows, :] = pad


def quant_int8(src: np.ndarray, scale: np.ndarray, offset: np.ndarray | None) -> np.ndarray:
    """TQUANT INT8_SYM / INT8_ASYM (a5): ``x = f32(src * scale[row])`` (``+ offset[row]`` in f32 for
    ASYM), rounded to nearest even once, saturated to int8 (SYM) or uint8 (ASYM); NaN -> 0."""
    x = (src.astype(np.float32) * scale.astype(np.float32)[:, None]).astype(np.float32)
    if offset is not None:
        x = (x + offset.astype(np.float32)[:, None]).astype(np.float32)
    lo, hi = (-128, 127) if offset is None else (0, 255)
    r = np.clip(np.rint(np.nan_to_num(x.astype(np.float64), nan=0.0)), lo, hi)
    return r.astype(np.int8 if offset is None else np.uint8)


def dequant(src: np.ndarray, scale: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """TDEQUANT (a5): ``f32(f32(src) - offset[row]) * scale[row]``, rounded to FP32 at each step."""
    x = (src.astype(np.float32) - offset.astype(np.float32)[:, None]).astype(np.float32)
    return (x * scale.astype(np.float32)[:, None]).astype(np.float32)
