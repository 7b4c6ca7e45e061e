"""VF loads against a NumPy reference of UB bytes (data_movement/load_align.md, load.md, load_unalign*.md,
types/LoadDist.md): every LoadDist into a register of every element width it takes (each dtype of that
width: the bytes are the same, the register only changes the width), the three mask-register dists,
int / [row, col] / address-register offsets, post_update cursors, unaligned starts of vf.load /
vf.load_unalign, and the alignment each dist needs. Inputs are random bytes, so every bit pattern
(NaN payloads, -0.0, subnormals, int min / max) occurs; results are compared bit for bit."""
from __future__ import annotations

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.errors import SimulationError
from pypto_pro.language import Vf as vf

from vf_kernels import ALL, lanes
from vf_mem_kernels import B8, B8_32, B16, B32, B64, bits, io_kernel, rand, run_io, width

COVERED = frozenset({"load_align", "load", "load_unalign", "load_unalign_init", "load_unalign_pre"})

REGS = 3  # the input tile: three registers of bytes, so a 2 * VL dist read from an offset stays inside
LD = pl.LoadDist


def _names(dts):
    return [d.name for d in dts]


# the offset / cursor tests depend on the element width only: one dtype of each width (two sets, so
# every dtype occurs in some of them; the dist tests take every dtype)
WIDTHS_A = [pl.DT_INT8, pl.DT_BF16, pl.DT_FP32, pl.DT_INT64]
WIDTHS_B = [pl.DT_UINT8, pl.DT_FP16, pl.DT_INT32, pl.DT_UINT64]


def ref_load(raw: np.ndarray, dist: str, w: int) -> list[np.ndarray]:
    """The register bytes (one array, two for DINTLV) a load of ``dist`` into a ``w``-byte register makes
    of the UB bytes ``raw`` at its address, from the page's table: the generic dists take the
    register's width (BRC / UNPK: B8 / B16 / B32; US / DS: B8 / B16; E2B: B16 / B32)."""
    generic = {"BRC": {1: 1, 2: 2, 4: 4}, "US": {1: 1, 2: 2}, "DS": {1: 1, 2: 2}, "UNPK": {1: 1, 2: 2, 4: 4},
               "E2B": {2: 2, 4: 4}}
    if dist in generic:
        dw = generic[dist][w]
    elif dist[-3:-1] == "_B" or dist[-4:-2] == "_B":
        dw = int(dist.rsplit("_B", 1)[1]) // 8
    else:
        dw = w
    u = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dw]
    if dist == "NORM":
        return [raw[:256].copy()]
    if dist.startswith("BRC"):
        return [np.tile(raw[:dw], 256 // dw)]
    if dist.startswith("US"):  # VL/2 bytes, each element twice
        return [np.repeat(raw[:128].view(u), 2).view(np.uint8)]
    if dist.startswith("DS"):  # 2 VL bytes, every other element
        return [raw[:512].view(u)[0::2].copy().view(np.uint8)]
    if dist == "UNPK4":  # VL/4 bytes, each followed by three zero bytes
        out = np.zeros(256, np.uint8)
        out[0::4] = raw[:64]
        return [out]
    if dist.startswith("UNPK"):  # VL/2 bytes, each element followed by a zero element
        out = np.zeros(256 // dw, u)
        out[0::2] = raw[:128].view(u)
        return [out.view(np.uint8)]
    if dist == "BLK":  # one 32-byte block, eight times
        return [np.tile(raw[:32], 8)]
    if dist.startswith("E2B"):  # VL/DataBlock = 8 elements, each filling a 32-byte block
        return [np.repeat(raw[:8 * dw].view(u), 32 // dw).view(np.uint8)]
    assert dist.startswith("DINTLV")
    both = raw[:512].view(u)
    return [both[0::2].copy().view(np.uint8), both[1::2].copy().view(np.uint8)]


def _load_kernel(dt, dist, offset):
    """Load ta at ``offset`` with ``dist``; store every lane of the result (DINTLV: both) to to."""
    two = dist.name.startswith("DINTLV")
    L = lanes(dt)

    @pl.vector_function
    def body(ta, to):
        m = vf.create_mask(pattern=ALL, dtype=dt)
        if two:
            ev, od = vf.load_align(ta, offset, dist=dist)
            vf.store_align(to, ev, m)
            vf.store_align(to, od, m, L)
        else:
            x = vf.load_align(ta, offset, dist=dist)
            vf.store_align(to, x, m)
    n = REGS * lanes(dt)
    return io_kernel(body, [(dt, n)], (dt, n))


def _check_load(dt, dist, offset_elems):
    n = REGS * lanes(dt)
    a = rand(dt, n, seed=width(dt) * 100 + list(LD).index(dist))
    sentinel = rand(dt, n, seed=7)
    out = run_io(_load_kernel(dt, dist, offset_elems), a, sentinel)
    raw = bits(a).view(np.uint8)[offset_elems * width(dt):]
    want = bits(sentinel).view(np.uint8).copy()
    regs = ref_load(raw, dist.name, width(dt))
    for k, r in enumerate(regs):
        want[256 * k:256 * (k + 1)] = r
    np.testing.assert_array_equal(bits(out).view(np.uint8), want)


# (dist, the dtypes it takes) per the page's table: explicit widths take registers of that width,
# the generic forms every width they list, NORM / BLK / UNPK4 any register
_CASES = [(LD.NORM, B8_32 + B64), (LD.BRC, B8_32), (LD.BRC_B8, B8), (LD.BRC_B16, B16), (LD.BRC_B32, B32),
          (LD.US, B8 + B16), (LD.US_B8, B8), (LD.US_B16, B16), (LD.DS, B8 + B16), (LD.DS_B8, B8), (LD.DS_B16, B16),
          (LD.UNPK, B8_32), (LD.UNPK_B8, B8), (LD.UNPK_B16, B16), (LD.UNPK_B32, B32), (LD.UNPK4, B8_32),
          (LD.BLK, B8_32), (LD.E2B, B16 + B32), (LD.E2B_B16, B16), (LD.E2B_B32, B32),
          (LD.DINTLV_B8, B8), (LD.DINTLV_B16, B16), (LD.DINTLV_B32, B32)]
_PARAMS = [pytest.param(d, dt, id=f"{d.name}-{dt.name}") for d, dts in _CASES for dt in dts]
# one dtype of each width a dist takes (the offset arithmetic depends on the width only)
_PER_WIDTH = [pytest.param(d, dt, id=f"{d.name}-{dt.name}") for d, dts in _CASES
              for dt in {width(t): t for t in reversed(dts)}.values()]


def test_every_load_dist_is_listed():
    assert {d for d, _ in _CASES} == set(LD)


@pytest.mark.parametrize("dist,dt", _PARAMS)
def test_load_dist_at_offset_zero(dist, dt):
    _check_load(dt, dist, 0)


@pytest.mark.parametrize("dist,dt", _PER_WIDTH)
def test_load_dist_at_a_nonzero_aligned_offset(dist, dt):
    """32 bytes in (every dist's alignment divides 32): the read starts there, not at the tile."""
    _check_load(dt, dist, 32 // width(dt))


@pytest.mark.parametrize("dist", [LD.BRC, LD.BRC_B8, LD.BRC_B16, LD.BRC_B32])
def test_broadcast_from_an_element_aligned_address(dist):
    """BRC needs only the element's alignment (1 / 2 / 4 bytes): element 5 of the tile."""
    dt = {"BRC": pl.DT_FP16, "BRC_B8": pl.DT_INT8, "BRC_B16": pl.DT_BF16, "BRC_B32": pl.DT_FP32}[dist.name]
    _check_load(dt, dist, 5)


@pytest.mark.parametrize("dist,dt,elems,align", [(LD.NORM, pl.DT_FP32, 4, 32), (LD.US_B16, pl.DT_FP16, 8, 32),
                                                 (LD.DS_B8, pl.DT_INT8, 16, 32), (LD.E2B_B16, pl.DT_INT16, 4, 16),
                                                 (LD.E2B_B32, pl.DT_UINT32, 4, 32),
                                                 (LD.DINTLV_B32, pl.DT_INT32, 1, 32)])
def test_a_misaligned_address_is_a_located_simulation_error(dist, dt, elems, align):
    """The page's alignment column: NORM / US / DS / DINTLV 32 bytes, E2B_B16 VL/16, E2B_B32 VL/8."""
    n = REGS * lanes(dt)
    with pytest.raises(SimulationError, match=f"is not {align}-byte aligned"):
        run_io(_load_kernel(dt, dist, elems), rand(dt, n, 1), rand(dt, n, 2))


# ---- offsets: [row, col], post_update, address registers ------------------------------------------------


@pytest.mark.parametrize("dt", WIDTHS_A, ids=_names(WIDTHS_A))
def test_list_offset_is_row_times_columns_plus_col(dt):
    """A [2, 2 * lanes] tile: [1, lanes // 2] is element 2 * lanes + lanes // 2 (a 32-byte multiple)."""
    L = lanes(dt)
    tt = pl.TileType(shape=[2, 2 * L], dtype=dt, target_memory=pl.MemorySpace.Vec)
    to_t = pl.TileType(shape=[1, L], dtype=dt, target_memory=pl.MemorySpace.Vec)

    @pl.vector_function
    def body(ta, to):
        m = vf.create_mask(pattern=ALL, dtype=dt)
        x = vf.load_align(ta, [1, L // 2])
        vf.store_align(to, x, m)

    @pl.jit()
    def kernel(a: pl.Tensor[[2, 2 * L], dt], o: pl.Tensor[[1, L], dt]):
        ta = pl.make_tile(tt, addr=0)
        to = pl.make_tile(to_t, addr=4096)
        with pl.section_vector():
            pl.load(ta, a, [0, 0])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            body(ta, to)
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
            pl.store(o, to, [0, 0])

    a = rand(dt, 4 * L, 11).reshape(2, 2 * L)
    out = run_io(kernel, a, rand(dt, L, 12))
    np.testing.assert_array_equal(bits(out), bits(a)[2 * L + L // 2:3 * L + L // 2])


@pytest.mark.parametrize("dt", WIDTHS_B, ids=_names(WIDTHS_B))
def test_post_update_loads_walk_a_cursor_by_the_offset(dt):
    """post_update=True: the load reads at the cursor, then the cursor moves by the offset (elements;
    for 64-bit types also elements: the real backend doubles the b32 count it emits). Stride lanes / 2:
    registers overlapping by half."""
    L = lanes(dt)

    @pl.vector_function
    def body(ta, to):
        m = vf.create_mask(pattern=ALL, dtype=dt)
        for i in pl.range(0, 3):
            x = vf.load_align(ta, L // 2, post_update=True)
            vf.store_align(to, x, m, i * L)
    n = REGS * L
    a, s = rand(dt, n, 13), rand(dt, n, 14)
    out = run_io(io_kernel(body, [(dt, n)], (dt, n)), a, s)
    want = np.concatenate([bits(a)[i * (L // 2):i * (L // 2) + L] for i in range(3)])
    np.testing.assert_array_equal(bits(out), want)


@pytest.mark.parametrize("dt", WIDTHS_A, ids=_names(WIDTHS_A))
def test_address_register_offsets_of_two_loop_axes(dt):
    """create_addr_reg(i, s0, j, s1, dtype=the tile's): register (i, j) is read at i * s0 + j * s1
    elements and stored there too (the same address register as the store's offset)."""
    L = lanes(dt)

    @pl.vector_function
    def body(ta, to):
        m = vf.create_mask(pattern=ALL, dtype=dt)
        for i in pl.range(0, 2):
            for j in pl.range(0, 2):
                ar = vf.create_addr_reg(i, 2 * L, j, L, dtype=dt)
                x = vf.load_align(ta, ar)
                x2 = vf.load_align(ta, 3 * L)  # an int offset in the same body: element 3 * L
                vf.store_align(to, x, m, ar)
                vf.store_align(to, x2, m, 4 * L)
    n = 5 * L
    a, s = rand(dt, n, 15), rand(dt, n, 16)
    out = run_io(io_kernel(body, [(dt, n)], (dt, n)), a, s)
    want = bits(a).copy()
    want[4 * L:] = bits(a)[3 * L:4 * L]
    np.testing.assert_array_equal(bits(out), want)


# ---- into a mask register -------------------------------------------------------------------------------


@pytest.mark.parametrize("mask_dt", [pl.DT_INT8, pl.DT_FP16, pl.DT_FP32], ids=["b8", "b16", "b32"])
@pytest.mark.parametrize("dist", ["NORM", "US", "DS"])
def test_mask_register_loads(dist, mask_dt):
    """Into a mask (declared by create_mask): NORM 32 bytes of bits, US 16 bytes each bit twice, DS 64
    bytes every other bit; stored back with a NORM mask store (32 bytes, bit i of the bytes = bit i)."""
    d = getattr(LD, dist)

    @pl.vector_function
    def body(ta, to):
        pm = vf.create_mask(pattern=ALL, dtype=mask_dt)
        pm = vf.load_align(ta, dist=d)
        vf.store_align(to, pm)
    a, s = rand(pl.DT_UINT8, 256, 17), rand(pl.DT_UINT8, 256, 18)
    out = run_io(io_kernel(body, [(pl.DT_UINT8, 256)], (pl.DT_UINT8, 256)), a, s)
    b = np.unpackbits(a[0], bitorder="little")
    pred = b[:256] if dist == "NORM" else np.repeat(b[:128], 2) if dist == "US" else b[:512:2]
    want = s[0].copy()
    want[:32] = np.packbits(pred, bitorder="little")
    np.testing.assert_array_equal(out[0], want)


def test_mask_register_load_and_store_through_an_address_register():
    """A mask load / store with an address register (the real pld / pst, as the reference's kernel 92
    uses them): create_addr_reg(i, 8, dtype=pl.DT_UINT32) is 32 bytes per i, one mask's worth."""
    @pl.vector_function
    def body(ta, to):
        for i in pl.range(0, 3):
            ar = vf.create_addr_reg(i, 8, dtype=pl.DT_UINT32)
            pm = vf.create_mask(pattern=ALL, dtype=pl.DT_FP32)
            pm = vf.load_align(ta, ar)
            vf.store_align(to, pm, ar)
    a, s = rand(pl.DT_UINT32, 64, 25), rand(pl.DT_UINT32, 64, 26)
    out = run_io(io_kernel(body, [(pl.DT_UINT32, 64)], (pl.DT_UINT32, 64)), a, s)
    want = bits(s).copy()
    want[:24] = bits(a)[:24]
    np.testing.assert_array_equal(bits(out), want)


# ---- vf.load / vf.load_unalign: any address ------------------------------------------------------------


@pytest.mark.parametrize("dt", WIDTHS_B, ids=_names(WIDTHS_B))
@pytest.mark.parametrize("start", [0, 1, 3])
def test_load_reads_a_register_at_any_element(dt, start):
    """vf.load(tile + k): 256 bytes from element k, no alignment needed (load.md); then with
    post_update the cursor moves by stride elements (here lanes - 1, so the second read is unaligned too)."""
    L = lanes(dt)

    @pl.vector_function
    def body(ta, to):
        m = vf.create_mask(pattern=ALL, dtype=dt)
        x = vf.load(ta + start)
        vf.store_align(to, x, m)
        for i in pl.range(0, 2):
            y = vf.load(ta + start, L - 1, post_update=True)
            vf.store_align(to, y, m, (1 + i) * L)
    n = REGS * L + 32 // width(dt)
    a, s = rand(dt, n, 19), rand(dt, n, 20)
    out = run_io(io_kernel(body, [(dt, n)], (dt, n)), a, s)
    want = bits(s).copy()
    src = bits(a)
    want[:L] = src[start:start + L]
    want[L:2 * L] = src[start:start + L]
    want[2 * L:3 * L] = src[start + L - 1:start + 2 * L - 1]
    np.testing.assert_array_equal(bits(out), want)


@pytest.mark.parametrize("dt", WIDTHS_A, ids=_names(WIDTHS_A))
@pytest.mark.parametrize("start", [0, 5])
def test_load_unalign_sequence_from_an_unaligned_element(dt, start):
    """load_unalign_init + load_unalign_pre(ureg, tile + k) then load_unalign(ureg, tile + k, lanes) in a
    loop: consecutive registers from element k (the page's worked example: stride 256 B / sizeof(T), so
    the stride counts elements although its parameter row says bytes; the example and the C++ vldus
    post-update count elements)."""
    L = lanes(dt)

    @pl.vector_function
    def body(ta, to):
        m = vf.create_mask(pattern=ALL, dtype=dt)
        ureg = vf.load_unalign_init()
        vf.load_unalign_pre(ureg, ta + start)
        for i in pl.range(0, 2):
            x = vf.load_unalign(ureg, ta + start, L)
            vf.store_align(to, x, m, i * L)
        one = vf.load_unalign(ureg, ta + 1)  # no stride: at the pointer, nothing moves
        vf.store_align(to, one, m, 2 * L)
    n = REGS * L + 32 // width(dt)
    a, s = rand(dt, n, 21), rand(dt, n, 22)
    out = run_io(io_kernel(body, [(dt, n)], (dt, n)), a, s)
    want = bits(s).copy()
    src = bits(a)
    want[:2 * L] = src[start:start + 2 * L]
    want[2 * L:3 * L] = src[1:1 + L]
    np.testing.assert_array_equal(bits(out), want)


@pytest.mark.parametrize("dt", [pl.DT_UINT8, pl.DT_FP16, pl.DT_INT32], ids=["UINT8", "FP16", "INT32"])
def test_explicit_norm_data_copy_mode_is_the_contiguous_copy(dt):
    """data_copy_mode=pl.DataCopyMode.NORM (DataCopyMode.md: the default, element by element) on a load
    and a store: the same bytes as without it (DATA_BLOCK_COPY / DATA_BLOCK_LOAD: test_vf_load_blocks.py,
    test_vf_memory_stores.py, test_vf_gather_widths.py)."""
    L = lanes(dt)
    norm = pl.DataCopyMode.NORM

    @pl.vector_function
    def body(ta, to):
        m = vf.create_mask(pattern=ALL, dtype=dt)
        x = vf.load_align(ta, L, data_copy_mode=norm)
        vf.store_align(to, x, m, data_copy_mode=norm)
    a, s = rand(dt, 2 * L, 23), rand(dt, L, 24)
    out = run_io(io_kernel(body, [(dt, 2 * L)], (dt, L)), a, s)
    np.testing.assert_array_equal(bits(out), bits(a)[L:])
