"""The mask producers (``vf_computation/mask_operations``): create_mask (every MaskPattern at every
granularity the page's table names), update_mask (counts below, at and above the lane count) and
mask_gen_with_reg_tensor (every b16 / b32 block), against references from the pages' tables.

A mask is observed through ``vf.select(x, 0, mask)`` on unsigned registers of the mask's own granularity
(b8 / b16 / b32 / b64), so only the element predicates the page defines are compared, not how many bits
of an element's group the simulator sets. MaskWidth is the get_mask_spr enum: ``test_vf_mask_spr.py``.
"""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.errors import CompileError
from pypto_pro.language import Vf as vf

from located import check_location, marked_line
from vf_kernels import lanes, vf_kernel

COVERED = frozenset({"create_mask", "update_mask", "mask_gen_with_reg_tensor"})

# create_mask.md table 1: the dtypes of each granularity; the observing register type
GRAINS = {
    8: ([pl.DT_INT8, pl.DT_UINT8, pl.DT_FP8E4M3FN, pl.DT_FP8E5M2, pl.DT_FP8E8M0, pl.DT_HF8, pl.DT_FP4E2M1,
         pl.DT_FP4E1M2], pl.DT_UINT8),
    16: ([pl.DT_FP16, pl.DT_UINT16, pl.DT_BF16], pl.DT_UINT16),
    32: ([pl.DT_FP32, pl.DT_INT32, pl.DT_UINT32], pl.DT_UINT32),
    64: ([pl.DT_INT64, pl.DT_UINT64], pl.DT_UINT64),
}
MASK_DTYPES = [(dt, obs, bits) for bits, (dts, obs) in GRAINS.items() for dt in dts]
COUNT = {"VL1": 1, "VL2": 2, "VL3": 3, "VL4": 4, "VL8": 8, "VL16": 16, "VL32": 32, "VL64": 64, "VL128": 128}



def expected(pattern: str, n: int) -> np.ndarray:
    """create_mask.md table 2 for n elements: VLk the lowest k (all when k >= n), H / Q the lowest half /
    quarter, M3 / M4 the elements whose index is a multiple of 3 / 4."""
    i = np.arange(n)
    if pattern == "ALL":
        return np.ones(n, bool)
    if pattern == "ALLF":
        return np.zeros(n, bool)
    if pattern in COUNT:
        return i < COUNT[pattern]
    return {"H": i < n // 2, "Q": i < n // 4, "M3": i % 3 == 0, "M4": i % 4 == 0}[pattern]


def data(obs):
    n = lanes(obs)
    x = np.random.default_rng(obs.bits).integers(1, 2**min(obs.bits, 63), n, dtype=np.uint64)
    return x.astype(obs.np_dtype).reshape(1, n)


PATTERNS = list(pl.MaskPattern)


def run_rows(body, obs, x, rows: int):
    """``body`` over a [2, lanes] tile (row 0 ``x``, row 1 zeros: the select's other operand ``z``; 64-bit
    registers have no vf.sub) into a [rows, lanes] output."""
    n = lanes(obs)
    out = np.full((rows, n), 0xAB, obs.np_dtype)
    vf_kernel(body, [(obs, [2, n])], (obs, [rows, n]))[None, 1](np.concatenate([x, np.zeros_like(x)]), out)
    return out


def create_body(dt, obs):
    n = lanes(obs)

    @pl.vector_function
    def body(ti, to):
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=obs)
        x = vf.load_align(ti, 0)
        z = vf.load_align(ti, n)
        for k in range(len(PATTERNS)):  # unrolled: one create_mask per pattern, one output row each
            m = vf.create_mask(pattern=PATTERNS[k], dtype=dt)
            r = vf.select(x, z, m)
            vf.store_align(to, r, full, k * n)
    return body


@pytest.mark.parametrize("dt,obs,bits", MASK_DTYPES, ids=lambda v: getattr(v, "name", str(v)))
def test_create_mask_every_pattern(dt, obs, bits):
    x = data(obs)
    got = run_rows(create_body(dt, obs), obs, x, len(PATTERNS))
    for k, pattern in enumerate(PATTERNS):
        np.testing.assert_array_equal(got[k], np.where(expected(pattern.name, lanes(obs)), x[0], 0),
                                      err_msg=pattern.name)


def create_default_body(obs):
    @pl.vector_function
    def body(ti, to):
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=obs)
        m = vf.create_mask()
        h = vf.create_mask(pattern=pl.MaskPattern.H)
        x = vf.load_align(ti, 0)
        z = vf.load_align(ti, 2048 // obs.bits)
        r = vf.select(x, z, m)
        r = vf.select(r, z, h)
        vf.store_align(to, r, full)
    return body


def test_create_mask_defaults_all_at_b32():
    """The defaults: pattern ALL, dtype FP32 (b32): H without a dtype is the lowest 32 of 64 elements."""
    obs = pl.DT_UINT32
    x = data(obs)
    got = run_rows(create_default_body(obs), obs, x, 1)[0]
    np.testing.assert_array_equal(got, np.where(np.arange(64) < 32, x[0], 0))


UPDATE_DTYPES = [(pl.DT_UINT8, pl.DT_UINT8), (pl.DT_FP8E4M3FN, pl.DT_UINT8), (pl.DT_BF16, pl.DT_UINT16),
                 (pl.DT_FP16, pl.DT_UINT16), (pl.DT_FP32, pl.DT_UINT32), (pl.DT_INT32, pl.DT_UINT32),
                 (pl.DT_INT64, pl.DT_UINT64)]


def update_body(counts, dt, obs):
    n = lanes(obs)

    @pl.vector_function
    def body(ti, to):
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=obs)
        x = vf.load_align(ti, 0)
        z = vf.load_align(ti, n)
        for k in range(len(counts)):
            m = vf.update_mask(counts[k], dtype=dt)
            r = vf.select(x, z, m)
            vf.store_align(to, r, full, k * n)
    return body


@pytest.mark.parametrize("dt,obs", UPDATE_DTYPES, ids=lambda d: d.name)
def test_update_mask_counts(dt, obs):
    """update_mask.md: the lowest min(scalar, VL) elements active (VL: the element count of dtype's
    granularity); the scalar itself is not changed here (the page: the interface modifies no register)."""
    n = lanes(obs)
    counts = [0, 1, 17, n - 1, n, n + 1, 1000]
    x = data(obs)
    got = run_rows(update_body(counts, dt, obs), obs, x, len(counts))
    for k, count in enumerate(counts):
        np.testing.assert_array_equal(got[k], np.where(np.arange(n) < count, x[0], 0), err_msg=f"count {count}")


def test_update_mask_of_a_loop_counter_tails_the_last_block():
    """The page's use: a loop over blocks of 64 fp32 elements, update_mask(remaining) on each; 150
    elements give 64, 64 and 22 active lanes."""
    obs = pl.DT_UINT32
    rows = 3
    T = pl.TileType(shape=[rows, 64], dtype=obs, target_memory=pl.MemorySpace.Vec)

    @pl.vector_function
    def body(ti, to):
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=obs)
        for b in pl.range(0, 3):
            m = vf.update_mask(150 - b * 64, dtype=pl.DT_FP32)
            x = vf.load_align(ti, b * 64)
            z = vf.sub(x, x, full)
            r = vf.select(x, z, m)
            vf.store_align(to, r, full, b * 64)  # (z: x - x, 32-bit lanes)

    @pl.jit()
    def k(a: pl.Tensor[[rows, 64], obs], out: pl.Tensor[[rows, 64], obs]):
        ti = pl.make_tile(T, addr=0)
        to = pl.make_tile(T, addr=0x400)
        with pl.section_vector():
            pl.load(ti, a, [0, 0])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            body(ti, to)
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
            pl.store(out, to, [0, 0])

    x = np.arange(1, rows * 64 + 1, dtype=np.uint32).reshape(rows, 64)
    out = np.zeros_like(x)
    k[None, 1](x, out)
    np.testing.assert_array_equal(out.ravel(), np.where(np.arange(rows * 64) < 150, x.ravel(), 0))


def gen_body(src_dt, obs, offsets):
    n = lanes(obs)

    @pl.vector_function
    def body(ti, to):
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=obs)
        s = vf.load_align(ti, 0, dtype=src_dt)
        z = vf.load_align(ti, n)
        ones = vf.adds(z, 1, full)
        m = vf.mask_gen_with_reg_tensor(s)  # the default offset, 0
        r = vf.select(ones, z, m)
        vf.store_align(to, r, full)
        for k in range(len(offsets)):
            m = vf.mask_gen_with_reg_tensor(s, offset=offsets[k])
            r = vf.select(ones, z, m)
            vf.store_align(to, r, full, (k + 1) * n)
    return body


GEN = [(pl.DT_FP16, pl.DT_UINT16), (pl.DT_BF16, pl.DT_UINT16), (pl.DT_INT16, pl.DT_UINT16), (pl.DT_UINT16, pl.DT_UINT16),
       (pl.DT_FP32, pl.DT_UINT32), (pl.DT_INT32, pl.DT_UINT32), (pl.DT_UINT32, pl.DT_UINT32)]


@pytest.mark.parametrize("src_dt,obs", GEN, ids=lambda d: d.name)
def test_mask_gen_with_reg_tensor_every_block(src_dt, obs):
    """b16 sources: 16 blocks of 16 bytes, bit i of the block (little-endian) is element i's predicate;
    b32: 32 blocks of 8 bytes. offset defaults to 0."""
    blocks = 16 if obs.bits == 16 else 32
    size = 256 // blocks
    raw = np.random.default_rng(src_dt.bits + len(src_dt.name)).integers(0, 256, 256, dtype=np.uint8)
    x = raw.view(obs.np_dtype).reshape(1, -1)
    offsets = list(range(blocks))
    got = run_rows(gen_body(src_dt, obs, offsets), obs, x, blocks + 1)
    for k, offset in enumerate([0, *offsets]):
        want = np.unpackbits(raw[offset * size:(offset + 1) * size], bitorder="little").astype(obs.np_dtype)
        np.testing.assert_array_equal(got[k], want, err_msg=f"row {k}: offset {offset}")


def gen_b8_view_body(src_dt, offset):
    @pl.vector_function
    def body(ti, to):
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_UINT8)
        s = vf.load_align(ti, 0, dtype=src_dt)
        z = vf.load_align(ti, 256)
        ones = vf.adds(z, 1, full)
        m = vf.mask_gen_with_reg_tensor(s, offset=offset)
        r = vf.select(ones, z, m)  # read at b8: every bit of the mask
        vf.store_align(to, r, full)
    return body


@pytest.mark.parametrize("src_dt,offset", [(pl.DT_FP16, 3), (pl.DT_UINT32, 30)], ids=lambda v: getattr(v, "name", str(v)))
def test_mask_gen_sets_only_the_lowest_bit_of_each_group(src_dt, offset):
    """The page's return value: only the lowest bit of each 2-bit (b16) / 4-bit (b32) group is set, as
    an 8-bit consumer of the mask sees."""
    w = src_dt.bits // 8
    size = 16 if w == 2 else 8  # bytes per block
    raw = np.random.default_rng(offset).integers(0, 256, 256, dtype=np.uint8)
    got = run_rows(gen_b8_view_body(src_dt, offset), pl.DT_UINT8, raw.reshape(1, -1), 1)[0]
    want = np.zeros(256, np.uint8)
    want[::w] = np.unpackbits(raw[offset * size:(offset + 1) * size], bitorder="little")
    np.testing.assert_array_equal(got, want)


def gen_bad_offset():
    @pl.vector_function
    def body(ti, to):
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_UINT16)
        s = vf.load_align(ti, 0)
        m = vf.mask_gen_with_reg_tensor(s, offset=16)  # <- here
        r = vf.select(s, s, m)
        vf.store_align(to, r, full)
    return body, pl.DT_UINT16, "16)", "offset is a compile-time block index 0..15"


def gen_b8_source():
    @pl.vector_function
    def body(ti, to):
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_UINT8)
        s = vf.load_align(ti, 0)
        m = vf.mask_gen_with_reg_tensor(s)  # <- here
        r = vf.select(s, s, m)
        vf.store_align(to, r, full)
    return body, pl.DT_UINT8, "s)", "b16 or b32"


@pytest.mark.parametrize("make", [gen_bad_offset, gen_b8_source], ids=lambda m: m.__name__)
def test_refused_is_a_located_error(make):
    body, dt, token, match = make()
    n = lanes(dt)
    with pytest.raises(CompileError, match=match) as info:
        vf_kernel(body, [(dt, [1, n])], (dt, [1, n])).compile()
    check_location(info.value, *marked_line(body), token)
