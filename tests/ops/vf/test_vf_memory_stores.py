"""VF stores against a NumPy reference of UB bytes (data_movement/store_align.md, store.md, store_unalign*.md,
scatter.md, types/StoreDist.md, types/DataCopyMode.md): every StoreDist from registers of every width
it takes, under a random partial mask and under all lanes, with the output tile loaded from a sentinel
first so every byte a store must leave alone is checked; mask-register stores; offsets, post_update and
address registers; DATA_BLOCK_COPY; vf.store / vf.store_unalign at unaligned elements; vf.scatter.
Inputs are random bytes (every bit pattern of each type occurs); results are compared bit for bit."""
from __future__ import annotations

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.errors import CompileError
from pypto_pro.language import Vf as vf

from vf_kernels import ALL, lanes
from vf_mem_kernels import B8, B8_32, B16, B32, B64, UINT, bits, io_kernel, rand, run_io, width

COVERED = frozenset({"store_align", "store", "store_unalign", "store_unalign_post", "unalign_reg_for_store",
                     "scatter"})

SD = pl.StoreDist
U8 = pl.DT_UINT8


def _names(dts):
    return [d.name for d in dts]


def mask_bytes(dt, seed: int, full: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """A ``[1, 256]`` uint8 tile whose first 32 bytes are a predicate for ``dt`` lanes (each element's
    ``width`` bits equal), and the element predicate: random, with lane 0 off (or every lane)."""
    L = lanes(dt)
    act = np.ones(L, bool) if full else np.random.default_rng(seed).random(L) < 0.5
    if not full:
        act[0], act[1] = False, True
    out = np.zeros((1, 256), np.uint8)
    out[0, :32] = np.packbits(np.repeat(act, width(dt)), bitorder="little")
    return out, act


def _store_kernel(dt, n, dist, offset):
    """Load the data (ta, [1, n] of dt) and the predicate bits (tm); store_align(to + offset) of
    register 0 under that mask with ``dist`` (INTLV: registers 0 and 1)."""
    L = lanes(dt)

    @pl.vector_function
    def body(ta, tm, to):
        pm = vf.create_mask(pattern=ALL, dtype=dt)
        pm = vf.load_align(tm)
        x = vf.load_align(ta, 0)
        if dist.name.startswith("INTLV"):
            y = vf.load_align(ta, L)
            vf.store_align(to, x, y, pm, offset, dist=dist)
        else:
            vf.store_align(to, x, pm, offset, dist=dist)
    return io_kernel(body, [(dt, n), (U8, 256)], (dt, n))


def ref_store(src: np.ndarray, src2: np.ndarray, act: np.ndarray, dist: str, w: int, out: np.ndarray) -> None:
    """Write into the byte array ``out`` (from the store's address) what ``dist`` stores of the register
    bytes ``src`` (and ``src2`` for INTLV) under the element predicate ``act``."""
    u = UINT[w]
    if dist in ("NORM", "NORM_B16"):  # active elements in place, the rest untouched
        o = out[:256].view(u)
        o[act] = src.view(u)[act]
    elif dist == "FIRST_ELEMENT":  # element 0 whatever the mask
        out[:w] = src[:w]
    elif dist in ("PACK", "PACK4"):  # the low half / quarter of each active element, back to back
        part = w // 2 if dist == "PACK" else w // 4
        kept = src.reshape(-1, w)[act][:, :part].reshape(-1)
        out[:kept.size] = kept
    else:  # INTLV: even[0], odd[0], even[1], ... (INTLV_B32 at 32-bit elements); the mask per element pair
        iw = 4 if dist == "INTLV_B32" else w
        both = np.empty(2 * (256 // iw), UINT[iw])
        both[0::2], both[1::2] = src.view(UINT[iw]), src2.view(UINT[iw])
        a = np.repeat(act if iw == w else np.ones(256 // iw, bool), 2)
        o = out[:512].view(UINT[iw])
        o[a] = both[a]


_CASES = [(SD.NORM, B8_32 + B64), (SD.NORM_B16, B16), (SD.FIRST_ELEMENT, B8_32), (SD.PACK, B16 + B32),
          (SD.PACK4, B32), (SD.INTLV, B8_32), (SD.INTLV_B32, B32)]


def test_every_store_dist_is_listed():
    assert {d for d, _ in _CASES} == set(SD)


@pytest.mark.parametrize("full", [False, True], ids=["partial", "all"])
@pytest.mark.parametrize("dist,dt", [pytest.param(d, dt, id=f"{d.name}-{dt.name}") for d, dts in _CASES
                                     for dt in dts])
def test_store_dist(dist, dt, full):
    """Register bytes to UB by dist under a random mask (lane 0 off: FIRST_ELEMENT ignores the mask) or
    every lane; the bytes the store does not write keep the sentinel. A 64-bit register takes a mask of
    its dtype (each element's eight predicate bits). PACK / PACK4 pack the low half / quarter of the
    active elements back to back, as the page's table says ("the valid elements ... stored contiguously";
    with every lane active it is the plain narrowing store of PTO-ISA's PK_B16 / PK_B32 / PK4_B32).
    INTLV writes even[0], odd[0], even[1], ... (2 VL bytes); neither the page nor PTO-ISA says how the
    one mask gates that pair of registers: ours (and this reference) lets element i's predicate gate the
    pair even[i], odd[i]."""
    L = lanes(dt)
    n = 3 * L
    offset = 32 // width(dt)  # 32 bytes in: the offset is elements of the tile
    a, s = rand(dt, n, width(dt) * 10 + list(SD).index(dist)), rand(dt, n, 3)
    mb, act = mask_bytes(dt, 4 + width(dt), full)
    out = run_io(_store_kernel(dt, n, dist, offset), a, mb, s)
    want = bits(s).view(np.uint8).copy()
    src = bits(a).view(np.uint8)
    ref_store(src[:256], src[256:512], act, dist.name, width(dt), want[32:])
    np.testing.assert_array_equal(bits(out).view(np.uint8), want)


def test_first_element_at_an_element_aligned_address():
    """FIRST_ELEMENT needs only the element's alignment: element 3 of an FP16 tile."""
    dt, L = pl.DT_FP16, 128
    a, s = rand(dt, 2 * L, 31), rand(dt, 2 * L, 32)
    mb, _ = mask_bytes(dt, 33)
    out = run_io(_store_kernel(dt, 2 * L, SD.FIRST_ELEMENT, 3), a, mb, s)
    want = bits(s).copy()
    want[3] = bits(a)[0]
    np.testing.assert_array_equal(bits(out), want)


# ---- mask registers -------------------------------------------------------------------------------------


@pytest.mark.parametrize("mask_dt", [pl.DT_INT8, pl.DT_BF16, pl.DT_UINT32], ids=["b8", "b16", "b32"])
@pytest.mark.parametrize("dist", ["NORM", "PACK"])
def test_mask_register_store(dist, mask_dt):
    """A mask register to UB: NORM its 256 bits (32 bytes, bit i of the bytes = predicate bit i), PACK
    every other bit (16 bytes); the bytes after them keep the sentinel."""
    @pl.vector_function
    def body(ta, to):
        pm = vf.create_mask(pattern=ALL, dtype=mask_dt)
        pm = vf.load_align(ta)
        vf.store_align(to, pm, dist=getattr(SD, dist))
    a, s = rand(U8, 256, 41), rand(U8, 256, 42)
    out = run_io(io_kernel(body, [(U8, 256)], (U8, 256)), a, s)
    pred = np.unpackbits(a[0, :32], bitorder="little")
    want = s[0].copy()
    packed = np.packbits(pred if dist == "NORM" else pred[0::2], bitorder="little")
    want[:packed.size] = packed
    np.testing.assert_array_equal(out[0], want)


# ---- offsets: post_update, address registers, [row, col], DATA_BLOCK_COPY -----------------------------


@pytest.mark.parametrize("dt", [pl.DT_INT8, pl.DT_FP16, pl.DT_INT32, pl.DT_UINT64],
                         ids=["INT8", "FP16", "INT32", "UINT64"])
def test_post_update_stores_walk_a_cursor_by_the_offset(dt):
    """post_update=True: the store writes at the cursor, then the cursor moves by the offset (elements;
    a 64-bit register too: the page says the backend doubles its b32 count). Stride 1.5 registers."""
    L = lanes(dt)
    step = L + L // 2

    @pl.vector_function
    def body(ta, to):
        m = vf.create_mask(pattern=ALL, dtype=dt)
        for i in pl.range(0, 3):
            x = vf.load_align(ta, i * L)
            vf.store_align(to, x, m, step, post_update=True)
    n = 5 * L
    a, s = rand(dt, n, 43), rand(dt, n, 44)
    out = run_io(io_kernel(body, [(dt, n)], (dt, n)), a, s)
    want = bits(s).copy()
    for i in range(3):
        want[i * step:i * step + L] = bits(a)[i * L:(i + 1) * L]
    np.testing.assert_array_equal(bits(out), want)


@pytest.mark.parametrize("dt", [pl.DT_UINT8, pl.DT_BF16, pl.DT_FP32, pl.DT_INT64],
                         ids=["UINT8", "BF16", "FP32", "INT64"])
def test_address_register_and_list_offsets(dt):
    """store_align(to, x, mask, create_addr_reg(i, 2 * lanes, dtype=the tile's)) puts register i at
    2 * i * lanes; an [0, lanes] offset at element lanes (a [1, n] tile: row * n + col)."""
    L = lanes(dt)

    @pl.vector_function
    def body(ta, to):
        m = vf.create_mask(pattern=ALL, dtype=dt)
        for i in pl.range(0, 2):
            ar = vf.create_addr_reg(i, 2 * L, dtype=dt)
            x = vf.load_align(ta, i * L)
            vf.store_align(to, x, m, ar)
        y = vf.load_align(ta, 2 * L)
        vf.store_align(to, y, m, [0, L])
    n = 4 * L
    a, s = rand(dt, n, 45), rand(dt, n, 46)
    out = run_io(io_kernel(body, [(dt, n)], (dt, n)), a, s)
    want = bits(s).copy()
    src = bits(a)
    want[:L], want[2 * L:3 * L], want[L:2 * L] = src[:L], src[L:2 * L], src[2 * L:3 * L]
    np.testing.assert_array_equal(bits(out), want)


@pytest.mark.parametrize("dt", [pl.DT_INT8, pl.DT_FP16, pl.DT_UINT32], ids=["b8", "b16", "b32"])
@pytest.mark.parametrize("block_stride", [2, 1])
def test_data_block_copy_store(dt, block_stride):
    """DATA_BLOCK_COPY: register block j (32 bytes) goes to block j * block_stride when any of its 32
    predicate bits is set, else that UB block is not written; with post_update the next store starts
    repeat_stride blocks on."""
    L = lanes(dt)
    mode = pl.DataCopyMode.DATA_BLOCK_COPY

    @pl.vector_function
    def body(ta, tm, to):
        pm = vf.create_mask(pattern=ALL, dtype=dt)
        pm = vf.load_align(tm)
        for i in pl.range(0, 2):
            x = vf.load_align(ta, i * L)
            vf.store_align(to, x, pm, data_copy_mode=mode, block_stride=block_stride, repeat_stride=20,
                           post_update=True)
    n = 36 * 32 // width(dt)
    a, s = rand(dt, n, 47), rand(dt, n, 48)
    mb = np.zeros((1, 256), np.uint8)
    blocks = np.array([1, 0, 1, 1, 0, 0, 1, 0], bool)
    mb[0, :32] = np.where(blocks, 0x01, 0x00).repeat(4)  # one set bit makes its block active
    out = run_io(io_kernel(body, [(dt, n), (U8, 256)], (dt, n)), a, mb, s)
    want = bits(s).view(np.uint8).copy()
    src = bits(a).view(np.uint8)
    for i in range(2):
        for j in range(8):
            if blocks[j]:
                at = i * 20 * 32 + j * block_stride * 32
                want[at:at + 32] = src[256 * i + 32 * j:256 * i + 32 * j + 32]
    np.testing.assert_array_equal(bits(out).view(np.uint8), want)


# ---- vf.store / vf.store_unalign: any address ----------------------------------------------------------


@pytest.mark.parametrize("dt", [pl.DT_UINT8, pl.DT_INT16, pl.DT_BF16, pl.DT_FP32, pl.DT_UINT64],
                         ids=["UINT8", "INT16", "BF16", "FP32", "UINT64"])
@pytest.mark.parametrize("start", [0, 3])
def test_store_at_any_element_with_counts(dt, start):
    """vf.store(tile + k, x): every lane from element k (no alignment); with count, the first count
    elements; with post_update, twice through the cursor, count elements apart."""
    L = lanes(dt)
    c = L // 2 + 1

    @pl.vector_function
    def body(ta, to):
        x = vf.load_align(ta, 0)
        y = vf.load_align(ta, L)
        vf.store(to + start, x)
        vf.store(to + (start + 2 * L), y, c)
        for i in pl.range(0, 2):
            vf.store(to + (start + 3 * L), x, c, post_update=True)
    n = 5 * L
    a, s = rand(dt, n, 49), rand(dt, n, 50)
    out = run_io(io_kernel(body, [(dt, n)], (dt, n)), a, s)
    want = bits(s).copy()
    src = bits(a)
    at = start
    want[at:at + L] = src[:L]
    at = start + 2 * L
    want[at:at + c] = src[L:L + c]
    for i in range(2):
        at = start + 3 * L + i * c
        want[at:at + c] = src[:c]
    np.testing.assert_array_equal(bits(out), want)


@pytest.mark.parametrize("dt", [pl.DT_INT8, pl.DT_UINT16, pl.DT_FP16, pl.DT_INT32, pl.DT_INT64],
                         ids=["INT8", "UINT16", "FP16", "INT32", "INT64"])
@pytest.mark.parametrize("start", [0, 5])
def test_store_unalign_stream_from_an_unaligned_element(dt, start):
    """unalign_reg_for_store, then store_unalign(tile + k, x, ureg, count, post_update=True) in a loop
    and store_unalign_post: the registers' first count elements back to back from element k (the
    page's stream: each store's tail waits in the register, the post flushes the last); nothing else
    written."""
    L = lanes(dt)
    c = L - 3

    @pl.vector_function
    def body(ta, to):
        ureg = vf.unalign_reg_for_store()
        for i in pl.range(0, 3):
            x = vf.load_align(ta, i * L)
            vf.store_unalign(to + start, x, ureg, c, post_update=True)
        vf.store_unalign_post(to + start, ureg, 0, post_update=True)
    n = 4 * L
    a, s = rand(dt, n, 51), rand(dt, n, 52)
    out = run_io(io_kernel(body, [(dt, n)], (dt, n)), a, s)
    want = bits(s).copy()
    src = bits(a)
    for i in range(3):
        want[start + i * c:start + (i + 1) * c] = src[i * L:i * L + c]
    np.testing.assert_array_equal(bits(out), want)


@pytest.mark.parametrize("mask_dt", [pl.DT_UINT8, pl.DT_FP16, pl.DT_INT32], ids=["b8", "b16", "b32"])
def test_store_unalign_of_a_mask_register_packs_one_bit_per_element(mask_dt):
    """store_unalign of a mask (pstu): one bit per element of the mask's type (lanes / 8 bytes: 32, 16,
    8), bit i = element i, at any byte; the bytes after them keep the sentinel."""
    L = lanes(mask_dt)

    @pl.vector_function
    def body(ta, to):
        pm = vf.create_mask(pattern=ALL, dtype=mask_dt)
        pm = vf.load_align(ta)
        ureg = vf.unalign_reg_for_store()
        vf.store_unalign(to + 3, pm, ureg)
        vf.store_unalign_post(to + 3, ureg)
    mb, act = mask_bytes(mask_dt, 60)
    s = rand(U8, 256, 61)
    out = run_io(io_kernel(body, [(U8, 256)], (U8, 256)), mb, s)
    want = s[0].copy()
    want[3:3 + L // 8] = np.packbits(act, bitorder="little")
    np.testing.assert_array_equal(out[0], want)


# ---- scatter -------------------------------------------------------------------------------------------

_SCATTER = [(pl.DT_INT16, pl.DT_UINT16), (pl.DT_UINT16, pl.DT_UINT16), (pl.DT_FP16, pl.DT_UINT16),
            (pl.DT_BF16, pl.DT_UINT16), (pl.DT_INT32, pl.DT_UINT32), (pl.DT_UINT32, pl.DT_UINT32),
            (pl.DT_FP32, pl.DT_UINT32)]


@pytest.mark.parametrize("full", [False, True], ids=["partial", "all"])
@pytest.mark.parametrize("dt,idx_dt", _SCATTER, ids=[d.name for d, _ in _SCATTER])
def test_scatter(dt, idx_dt, full):
    """tile[index[i]] = src[i] on the active lanes (index in elements, distinct); every other element of
    the tile keeps its value."""
    L = lanes(dt)
    n = 3 * L

    @pl.vector_function
    def body(ta, ti, tm, to):
        pm = vf.create_mask(pattern=ALL, dtype=dt)
        pm = vf.load_align(tm)
        x = vf.load_align(ta, 0)
        ix = vf.load_align(ti, 0)
        vf.scatter(to, x, ix, pm)
    rng = np.random.default_rng(53)
    idx = rng.permutation(n)[:L].astype(idx_dt == pl.DT_UINT16 and np.uint16 or np.uint32).reshape(1, L)
    a, s = rand(dt, L, 54), rand(dt, n, 55)
    mb, act = mask_bytes(dt, 56, full)
    kernel = io_kernel(body, [(dt, L), (idx_dt, L), (U8, 256)], (dt, n))
    out = run_io(kernel, a, idx, mb, s)
    want = bits(s).copy()
    want[idx[0][act].astype(np.int64)] = bits(a)[act]
    np.testing.assert_array_equal(bits(out), want)


@pytest.mark.parametrize("dt", B8, ids=_names(B8))
def test_scatter_of_8_bit_elements_takes_the_even_ones(dt):
    """scatter.md: for DT_INT8 / DT_UINT8 only the even elements of src count, src[2i] going to
    tile[index[i]] (16-bit indices, one per 16-bit lane; lane i's predicate is the mask's bit 2i)."""
    n = 512

    @pl.vector_function
    def body(ta, ti, tm, to):
        pm = vf.create_mask(pattern=ALL, dtype=dt)
        pm = vf.load_align(tm)
        x = vf.load_align(ta, 0)
        ix = vf.load_align(ti, 0)
        vf.scatter(to, x, ix, pm)
    rng = np.random.default_rng(57)
    idx = rng.permutation(n)[:128].astype(np.uint16).reshape(1, 128)
    a, s = rand(dt, 256, 58), rand(dt, n, 59)
    act = rng.random(128) < 0.5
    mb = np.zeros((1, 256), np.uint8)
    mb[0, :32] = np.packbits(np.repeat(act, 2), bitorder="little")
    kernel = io_kernel(body, [(dt, 256), (pl.DT_UINT16, 128), (U8, 256)], (dt, n))
    out = run_io(kernel, a, idx, mb, s)
    want = bits(s).copy()
    want[idx[0][act].astype(np.int64)] = bits(a)[0::2][act]
    np.testing.assert_array_equal(bits(out), want)


@pytest.mark.parametrize("dt,idx_dt", [(pl.DT_FP32, pl.DT_UINT16), (pl.DT_FP16, pl.DT_UINT32),
                                       (pl.DT_INT8, pl.DT_UINT32), (pl.DT_INT16, pl.DT_INT16)])
def test_scatter_index_type_outside_the_table_is_a_located_error(dt, idx_dt):
    """scatter.md's table: b8 / b16 data take DT_UINT16 indices, b32 DT_UINT32, b64 DT_UINT32 / DT_UINT64."""
    L, Li = lanes(dt), lanes(idx_dt)

    @pl.vector_function
    def body(ta, ti, to):
        pm = vf.create_mask(pattern=ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        ix = vf.load_align(ti, 0)
        vf.scatter(to, x, ix, pm)  # <- here
    kernel = io_kernel(body, [(dt, L), (idx_dt, Li)], (dt, L))
    with pytest.raises(CompileError, match="vf.scatter") as e:
        kernel.compile()
    assert "test_vf_memory_stores.py" in str(e.value) and "vf.scatter(to, x, ix, pm)" in str(e.value)

