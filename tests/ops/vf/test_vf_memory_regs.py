"""VF register fills and moves, address registers, barriers and the tile gather against NumPy
(data_movement/full.md, move.md, create_addr_reg.md, mem_bar.md, gather.md): vf.full of scalars (NaN,
+-inf, -0.0, subnormals, fp16 overflow, int min / max and wrap-around) and of a register's lowest /
highest lane, ZEROING and MERGING under a partial mask; vf.move of registers (MERGING only) and masks;
address registers counting elements of their own dtype; every MemBarMode; gather of every type pair of
the page's table under partial and full masks. Results are compared bit for bit."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.errors import CompileError
from pypto_pro.language import Vf as vf

from vf_kernels import ALL, NP, lanes
from vf_mem_kernels import B8_32, bits, io_kernel, rand, run_io, width

COVERED = frozenset({"full", "move", "create_addr_reg", "mem_bar", "gather"})

U8 = pl.DT_UINT8
MM = pl.MergeMode
INF, NAN = float("inf"), float("nan")


def _names(dts):
    return [d.name for d in dts]


def mask_bytes(dt, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A [1, 256] uint8 tile of predicate bits for ``dt`` lanes (each element's bits equal; lane 0 off,
    lane 1 on, the rest random) and the element predicate."""
    act = np.random.default_rng(seed).random(lanes(dt)) < 0.5
    act[0], act[1] = False, True
    out = np.zeros((1, 256), np.uint8)
    out[0, :32] = np.packbits(np.repeat(act, width(dt)), bitorder="little")
    return out, act


def device_literal(v: float) -> float:
    """A float constant as the device gets it: the real backend writes it with std::to_string (six
    decimals) then ``f`` (docs/vf.md; pypto_pro.ir.expr.literal_value), so 1e-7 runs as 0."""
    return v if v != v or v in (INF, -INF) else float(f"{v:f}")


def as_dtype(v, dt) -> np.ndarray:
    """The scalar ``v`` in ``dt`` (floats: the six-decimal literal rounded once to fp32, then to ``dt``
    with round-to-nearest-even, overflow to inf; ints: modulo 2**bits), one element."""
    if dt.is_float():
        f32 = np.float32(device_literal(v))
        return np.array([f32], np.float32).astype(NP[dt])
    return np.array([int(v) % (1 << dt.bits)], np.uint64).astype(np.dtype(f"u{width(dt)}")).view(NP[dt])


_F = [-0.0, NAN, -INF, INF, 65520.0, 70000.0, 3e-5, 1e-7, 0.1, -2.5]  # 65520 / 70000: fp16 overflow to inf
_SCALARS = {pl.DT_FP16: _F, pl.DT_BF16: _F + [1e38, 3.5e38], pl.DT_FP32: _F + [1e-40, 3.4028235e38],
            pl.DT_INT8: [-128, 127, 200, -1], pl.DT_UINT8: [0, 255, 256, -1], pl.DT_INT16: [-32768, 32767, 40000],
            pl.DT_UINT16: [65535, 65536, -1], pl.DT_INT32: [-2**31, 2**31 - 1, 2**31], pl.DT_UINT32: [2**32 - 1, -1],
            pl.DT_INT64: [-2**63, 2**63 - 1, 2**63 + 5], pl.DT_UINT64: [2**64 - 1, -1]}  # 64-bit: the real backend's vdup takes them


# every value under the default mode (the conversion does not depend on the mode), and per dtype two
# values under explicit ZEROING / MERGING (the masked-off lanes do not depend on the value)
_FULL = [pytest.param(dt, v, None, id=f"{dt.name}-{v!r}-default") for dt, vs in _SCALARS.items() for v in vs] + \
        [pytest.param(dt, v, mode, id=f"{dt.name}-{v!r}-{mode.name}") for dt, vs in _SCALARS.items()
         for v in vs[:2] for mode in (MM.ZEROING, MM.MERGING)]


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")  # the reference's fp16 overflow to inf
@pytest.mark.parametrize("dt,v,mode", _FULL)
def test_full_scalar_under_a_partial_mask(dt, v, mode):
    """vf.full(v, mask, dtype, mode): v in every active lane; a masked-off lane is 0 (ZEROING, the
    default) or keeps the register's value (MERGING: the destination held the loaded data). Without a
    mask, every lane."""
    L = lanes(dt)

    @pl.vector_function
    def body(ta, tm, to):
        full = vf.create_mask(pattern=ALL, dtype=dt)
        pm = vf.create_mask(pattern=ALL, dtype=dt)
        pm = vf.load_align(tm)
        x = vf.load_align(ta, 0)
        if mode is None:
            x = vf.full(v, pm, dtype=dt)
        else:
            x = vf.full(v, pm, dtype=dt, mode=mode)
        y = vf.full(v, dtype=dt)
        vf.store_align(to, x, full)
        vf.store_align(to, y, full, L)
    a, s = rand(dt, L, 61), rand(dt, 2 * L, 62)
    mb, act = mask_bytes(dt, 63)
    out = run_io(io_kernel(body, [(dt, L), (U8, 256), ], (dt, 2 * L)), a, mb, s)
    one = bits(as_dtype(v, dt))[0]
    rest = bits(a) if mode is MM.MERGING else np.zeros(L, bits(a).dtype)
    np.testing.assert_array_equal(bits(out)[:L], np.where(act, one, rest))
    np.testing.assert_array_equal(bits(out)[L:], np.full(L, one))


@pytest.mark.parametrize("mode", [MM.ZEROING, MM.MERGING], ids=["ZEROING", "MERGING"])
@pytest.mark.parametrize("pos", [pl.DuplicatePos.LOWEST, pl.DuplicatePos.HIGHEST], ids=["LOWEST", "HIGHEST"])
@pytest.mark.parametrize("dt", B8_32, ids=_names(B8_32))
def test_full_from_a_register_lane(dt, pos, mode):
    """Tensor mode: the source's lowest (default) or highest element in every active lane; masked-off
    lanes 0 (ZEROING) or the destination's value (MERGING)."""
    L = lanes(dt)

    @pl.vector_function
    def body(ta, tm, to):
        full = vf.create_mask(pattern=ALL, dtype=dt)
        pm = vf.create_mask(pattern=ALL, dtype=dt)
        pm = vf.load_align(tm)
        src = vf.load_align(ta, 0)
        x = vf.load_align(ta, L)
        if pos is None and mode is None:
            x = vf.full(src, pm)
        else:
            x = vf.full(src, pm, mode=mode, pos=pos)
        vf.store_align(to, x, full)
    a, s = rand(dt, 2 * L, 64), rand(dt, L, 65)
    mb, act = mask_bytes(dt, 66)
    out = run_io(io_kernel(body, [(dt, 2 * L), (U8, 256)], (dt, L)), a, mb, s)
    one = bits(a)[L - 1 if pos is pl.DuplicatePos.HIGHEST else 0]
    rest = bits(a)[L:] if mode is MM.MERGING else np.zeros(L, bits(a).dtype)
    np.testing.assert_array_equal(bits(out), np.where(act, one, rest))


@pytest.mark.parametrize("dt", [pl.DT_FP8E4M3FN, pl.DT_FP8E5M2, pl.DT_HF8], ids=lambda d: d.name)
def test_full_from_a_register_lane_of_8_bit_floats(dt):
    """Tensor mode takes the 8-bit float types too (full.md): the register read as dt from a UINT8
    tile, its highest byte in every active lane, 0 elsewhere."""
    @pl.vector_function
    def body(ta, tm, to):
        full = vf.create_mask(pattern=ALL, dtype=U8)
        pm = vf.create_mask(pattern=ALL, dtype=dt)
        pm = vf.load_align(tm)
        src = vf.load_align(ta, 0, dtype=dt)
        x = vf.full(src, pm, pos=pl.DuplicatePos.HIGHEST)
        xb = vf.bit_cast(x, dtype=U8)
        vf.store_align(to, xb, full)
    a, s = rand(U8, 256, 82), rand(U8, 256, 83)
    mb, act = mask_bytes(U8, 84)
    out = run_io(io_kernel(body, [(U8, 256), (U8, 256)], (U8, 256)), a, mb, s)
    np.testing.assert_array_equal(out[0], np.where(act, a[0, 255], 0).astype(np.uint8))


@pytest.mark.parametrize("dt", [pl.DT_INT8, pl.DT_BF16, pl.DT_UINT32], ids=["INT8", "BF16", "UINT32"])
def test_full_from_a_register_lane_defaults_to_lowest_and_zeroing(dt):
    test_full_from_a_register_lane(dt, None, None)


def test_full_of_a_register_needs_a_mask():
    @pl.vector_function
    def body(ta, to):
        src = vf.load_align(ta, 0)
        x = vf.full(src)  # <- here
        vf.store_align(to, x, vf.create_mask(pattern=ALL, dtype=pl.DT_FP32))
    with pytest.raises(CompileError, match="mask") as e:
        io_kernel(body, [(pl.DT_FP32, 64)], (pl.DT_FP32, 64)).compile()
    assert "vf.full(src)" in str(e.value)


# ---- move -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("masked", [True, False], ids=["partial", "unmasked"])
@pytest.mark.parametrize("dt", B8_32, ids=_names(B8_32))
def test_move_register_merges(dt, masked):
    """vf.move(src, mask): the active lanes from src, the others keep the destination's value (MERGING,
    the default and the only mode); without a mask a plain copy."""
    L = lanes(dt)

    @pl.vector_function
    def body(ta, tm, to):
        full = vf.create_mask(pattern=ALL, dtype=dt)
        pm = vf.create_mask(pattern=ALL, dtype=dt)
        pm = vf.load_align(tm)
        src = vf.load_align(ta, 0)
        x = vf.load_align(ta, L)
        if masked:
            x = vf.move(src, pm)
        else:
            x = vf.move(src)
        vf.store_align(to, x, full)
    a, s = rand(dt, 2 * L, 67), rand(dt, L, 68)
    mb, act = mask_bytes(dt, 69)
    out = run_io(io_kernel(body, [(dt, 2 * L), (U8, 256)], (dt, L)), a, mb, s)
    want = np.where(act, bits(a)[:L], bits(a)[L:]) if masked else bits(a)[:L]
    np.testing.assert_array_equal(bits(out), want)


@pytest.mark.parametrize("masked", [True, False], ids=["masked", "unmasked"])
def test_move_mask_keeps_the_selected_bits(masked):
    """A mask register: the source's bits under the mask, 0 elsewhere; without a mask a copy."""
    @pl.vector_function
    def body(ta, to):
        src = vf.create_mask(pattern=ALL, dtype=pl.DT_INT8)
        sel = vf.create_mask(pattern=ALL, dtype=pl.DT_INT8)
        src = vf.load_align(ta)
        sel = vf.load_align(ta, 32)
        if masked:
            d = vf.move(src, sel)
        else:
            d = vf.move(src)
        vf.store_align(to, d)
    a, s = rand(U8, 256, 70), rand(U8, 256, 71)
    out = run_io(io_kernel(body, [(U8, 256)], (U8, 256)), a, s)
    want = s[0].copy()
    want[:32] = a[0, :32] & a[0, 32:64] if masked else a[0, :32]
    np.testing.assert_array_equal(out[0], want)


@pytest.mark.parametrize("case", ["zeroing", "int64"])
def test_move_refuses_zeroing_and_64_bit_registers(case):
    """move.md: MERGING is the only mode (ZEROING is not supported) and 64-bit types are not listed."""
    dt = pl.DT_INT64 if case == "int64" else pl.DT_FP32

    @pl.vector_function
    def body(ta, to):
        m = vf.create_mask(pattern=ALL, dtype=pl.DT_FP32)
        src = vf.load_align(ta, 0)
        if case == "zeroing":
            x = vf.move(src, m, mode=pl.MergeMode.ZEROING)  # <- here
        else:
            x = vf.move(src, m)  # <- here
        vf.store_align(to, x, m)
    with pytest.raises(CompileError, match="vf.move") as e:
        io_kernel(body, [(dt, lanes(dt))], (dt, lanes(dt))).compile()
    assert ("MERGING" in str(e.value)) if case == "zeroing" else ("DT_INT64" in str(e.value))


# ---- create_addr_reg ------------------------------------------------------------------------------------


@pytest.mark.parametrize("tile_dt,addr_dt,stride", [(pl.DT_FP16, None, 64), (pl.DT_INT8, pl.DT_UINT16, 128),
                                                    (pl.DT_BF16, pl.DT_INT64, 32), (pl.DT_FP32, pl.DT_FP32, 64),
                                                    (pl.DT_UINT8, pl.DT_UINT8, 256), (pl.DT_INT16, pl.DT_INT32, 64)])
def test_address_register_counts_elements_of_its_dtype(tile_dt, addr_dt, stride):
    """create_addr_reg(i, stride, dtype=...) moves i * stride elements of ITS dtype (default DT_FP32,
    the real backend's vag_b32): on an FP16 tile create_addr_reg(i, 64) is 256 bytes per i, one
    register. Here every case steps one register (256 bytes) per i."""
    L = lanes(tile_dt)

    @pl.vector_function
    def body(ta, to):
        m = vf.create_mask(pattern=ALL, dtype=tile_dt)
        for i in pl.range(0, 3):
            if addr_dt is None:
                ar = vf.create_addr_reg(i, stride)
            else:
                ar = vf.create_addr_reg(i, stride, dtype=addr_dt)
            x = vf.load_align(ta, ar)
            vf.store_align(to, x, m, ar)
    n = 3 * L
    a, s = rand(tile_dt, n, 72), rand(tile_dt, n, 73)
    out = run_io(io_kernel(body, [(tile_dt, n)], (tile_dt, n)), a, s)
    np.testing.assert_array_equal(bits(out), bits(a))


def test_four_axis_address_register():
    """offset = i0 * s0 + i1 * s1 + i2 * s2 + i3 * s3 (elements): four nested loops copy 16 blocks."""
    dt, L = pl.DT_FP32, 64

    @pl.vector_function
    def body(ta, to):
        m = vf.create_mask(pattern=ALL, dtype=dt)
        for i0 in pl.range(0, 2):
            for i1 in pl.range(0, 2):
                for i2 in pl.range(0, 2):
                    for i3 in pl.range(0, 2):
                        ar = vf.create_addr_reg(i0, 8 * L, i1, 4 * L, i2, 2 * L, i3, L, dtype=dt)
                        x = vf.load_align(ta, ar)
                        vf.store_align(to, x, m, ar)
    n = 16 * L
    a, s = rand(dt, n, 74), rand(dt, n, 75)
    out = run_io(io_kernel(body, [(dt, n)], (dt, n)), a, s)
    np.testing.assert_array_equal(bits(out), bits(a))


@pytest.mark.parametrize("case", ["narrower", "bad_dtype"])
def test_address_register_errors(case):
    """A register counting 1-byte elements on an FP32 tile is no whole number of its elements; a dtype
    outside the page's list (DT_FP8E4M3FN) is refused."""
    addr_dt = pl.DT_INT8 if case == "narrower" else pl.DT_FP8E4M3FN

    @pl.vector_function
    def body(ta, to):
        m = vf.create_mask(pattern=ALL, dtype=pl.DT_FP32)
        for i in pl.range(0, 1):
            ar = vf.create_addr_reg(i, 256, dtype=addr_dt)
            x = vf.load_align(ta, ar)
            vf.store_align(to, x, m)
    with pytest.raises(CompileError, match="DT_INT8|DT_FP8E4M3FN"):
        io_kernel(body, [(pl.DT_FP32, 64)], (pl.DT_FP32, 64)).compile()


# ---- mem_bar --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", [None, *pl.MemBarMode], ids=["default", *[m.name for m in pl.MemBarMode]])
def test_mem_bar_every_mode_orders_a_store_then_a_load(mode):
    """Each of the twelve MemBarMode values (and the default, VST_VLD) compiles; a load after the
    barrier sees the store before it."""
    dt = pl.DT_INT32

    @pl.vector_function
    def body(ta, to):
        m = vf.create_mask(pattern=ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        vf.store_align(to, x, m, 64)
        if mode is None:
            vf.mem_bar()
        else:
            vf.mem_bar(mode=mode)
        y = vf.load_align(to, 64)
        vf.store_align(to, y, m)
    a, s = rand(dt, 64, 76), rand(dt, 128, 77)
    out = run_io(io_kernel(body, [(dt, 64)], (dt, 128)), a, s)
    np.testing.assert_array_equal(bits(out), np.concatenate([bits(a), bits(a)]))


def test_mem_bar_mode_must_be_a_mem_bar_mode():
    @pl.vector_function
    def body(ta, to):
        vf.mem_bar(mode=pl.MergeMode.MERGING)  # <- here
    with pytest.raises(CompileError, match="MemBarMode"):
        io_kernel(body, [(pl.DT_FP32, 64)], (pl.DT_FP32, 64)).compile()


# ---- gather from a tile ---------------------------------------------------------------------------------

# gather.md's NORM table for 8 / 16 / 32-bit tiles: (tile, index) -> the register's type
_GATHER = [(pl.DT_INT8, pl.DT_UINT16, pl.DT_INT16), (pl.DT_UINT8, pl.DT_UINT16, pl.DT_UINT16),
           (pl.DT_INT16, pl.DT_UINT16, pl.DT_INT16), (pl.DT_UINT16, pl.DT_UINT16, pl.DT_UINT16),
           (pl.DT_FP16, pl.DT_UINT16, pl.DT_FP16), (pl.DT_BF16, pl.DT_UINT16, pl.DT_BF16),
           (pl.DT_INT32, pl.DT_UINT32, pl.DT_INT32), (pl.DT_UINT32, pl.DT_UINT32, pl.DT_UINT32),
           (pl.DT_FP32, pl.DT_UINT32, pl.DT_FP32), (pl.DT_INT16, pl.DT_UINT32, pl.DT_INT16),
           (pl.DT_UINT16, pl.DT_UINT32, pl.DT_UINT16), (pl.DT_FP16, pl.DT_UINT32, pl.DT_FP16),
           (pl.DT_BF16, pl.DT_UINT32, pl.DT_BF16)]


@pytest.mark.parametrize("full", [False, True], ids=["partial", "all"])
@pytest.mark.parametrize("src_dt,idx_dt,dst_dt", _GATHER, ids=[f"{s.name}-{i.name}" for s, i, _ in _GATHER])
def test_gather_from_a_tile(src_dt, idx_dt, dst_dt, full):
    """Lane i (one per index) = tile[index[i]] zero-extended to the index width (8-bit tiles to 16 bits,
    16-bit tiles with 32-bit indices into the low half of a 32-bit lane); indices may repeat. The mask
    is read at the index width; a masked-off lane is 0 (the page does not say; ours zeroes, as vgather2
    writes only the lanes it gathers into a fresh register)."""
    n_idx = lanes(idx_dt)
    n_src = 2 * lanes(src_dt)

    @pl.vector_function
    def body(ta, ti, tm, to):
        pm = vf.create_mask(pattern=ALL, dtype=idx_dt)
        if not full:
            pm = vf.load_align(tm)
        all_ = vf.create_mask(pattern=ALL, dtype=pl.DT_UINT8)
        ix = vf.load_align(ti, 0)
        g = vf.gather(ta, ix, pm)
        gb = vf.bit_cast(g, dtype=pl.DT_UINT8)
        vf.store_align(to, gb, all_)
    rng = np.random.default_rng(78)
    idx = rng.integers(0, n_src, n_idx).astype(NP[idx_dt]).reshape(1, n_idx)
    a = rand(src_dt, n_src, 79)
    mb, act = mask_bytes(idx_dt, 80)
    act = np.ones(n_idx, bool) if full else act
    kernel = io_kernel(body, [(src_dt, n_src), (idx_dt, n_idx), (U8, 256)], (U8, 256))
    out = run_io(kernel, a, idx, mb, rand(U8, 256, 81))
    lane = np.dtype(f"u{width(idx_dt)}")
    want = np.where(act, bits(a)[idx[0].astype(np.int64)].astype(lane), 0).astype(lane)
    np.testing.assert_array_equal(out[0].view(lane), want)
    assert dst_dt is not None and ml_dtypes  # the register's dtype is the table's (checked by bit_cast above)


@pytest.mark.parametrize("src_dt,idx_dt", [(pl.DT_FP32, pl.DT_UINT16), (pl.DT_INT8, pl.DT_UINT8),
                                           (pl.DT_FP16, pl.DT_INT16), (pl.DT_INT32, pl.DT_INT32)])
def test_gather_index_type_outside_the_table_is_a_located_error(src_dt, idx_dt):
    @pl.vector_function
    def body(ta, ti, to):
        m = vf.create_mask(pattern=ALL, dtype=idx_dt)
        ix = vf.load_align(ti, 0)
        g = vf.gather(ta, ix, m)  # <- here
        vf.store_align(to, g, m)
    kernel = io_kernel(body, [(src_dt, lanes(src_dt)), (idx_dt, lanes(idx_dt))], (src_dt, lanes(src_dt)))
    with pytest.raises(CompileError, match="vf.gather") as e:
        kernel.compile()
    assert "vf.gather(ta, ix, m)" in str(e.value)
