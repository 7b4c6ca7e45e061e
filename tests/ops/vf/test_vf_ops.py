"""VF operations end to end on the simulator: each kernel loads one 256-byte register's worth of
data, runs one ``vf.*`` instruction under a mask and stores every lane, so both the active lanes
(against a NumPy reference) and the inactive ones (zeroed, or kept with MERGING) are checked."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.language import Vf as vf

from vf_kernels import ALL, TORCH, data, lanes, run, tile_type, to_mte3, to_v, two_in_kernel


def binary_body(op, dt, pattern):
    fn = getattr(vf, op)

    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=pattern, dtype=dt)
        full = vf.create_mask(pattern=ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        y = vf.load_align(tb, 0)
        z = fn(x, y, m)
        vf.store_align(to, z, full)
    return body


def unary_body(fn, dt, pattern):
    """to = fn(ta) on the lanes of ``pattern`` (mask ``m``), every lane stored (the inactive ones as fn left them)."""
    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=pattern, dtype=dt)
        full = vf.create_mask(pattern=ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        y = fn(x, m)
        vf.store_align(to, y, full)
    return body


BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum, "min": np.minimum,
          "div": np.divide}


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("dt", [pl.DT_FP32, pl.DT_FP16, pl.DT_INT32])
def test_binary_masked_and_unmasked_lanes(op, dt):
    if op == "div" and not dt.is_float():
        pytest.skip("integer division truncates: test_int32_div_truncates_toward_zero")
    n = lanes(dt)
    a, b = data(dt, n, 1), data(dt, n, 2, positive=op == "div")
    out = run(two_in_kernel(binary_body(op, dt, pl.MaskPattern.VL8), dt), a, b, TORCH[dt], n)
    ref = BINARY[op](a.numpy(), b.numpy()).astype(a.numpy().dtype)
    got = out.numpy()
    np.testing.assert_array_equal(got[0, :8], ref[0, :8])
    assert (got[0, 8:] == 0).all(), "inactive lanes must be zeroed (MergeMode.ZEROING)"


def test_bf16_add_rounds_once():
    dt = pl.DT_BF16
    n = lanes(dt)
    a, b = data(dt, n, 3), data(dt, n, 4)
    out = run(two_in_kernel(binary_body("add", dt, ALL), dt), a, b, torch.bfloat16, n)
    ref = (a.float() + b.float()).to(torch.bfloat16)
    assert torch.equal(out, ref)


def test_merging_keeps_destination():
    dt = pl.DT_FP32

    @pl.vector_function
    def body(ta, tb, to):
        full = vf.create_mask(pattern=ALL, dtype=dt)
        half = vf.create_mask(pattern=pl.MaskPattern.H, dtype=dt)
        x = vf.load_align(ta, 0)
        y = vf.load_align(tb, 0)
        x = vf.add(x, y, half, mode=pl.MergeMode.MERGING)
        vf.store_align(to, x, full)

    a, b = data(dt, 64, 5), data(dt, 64, 6)
    out = run(two_in_kernel(body, dt), a, b, torch.float32, 64)
    assert torch.equal(out[0, :32], a[0, :32] + b[0, :32])
    assert torch.equal(out[0, 32:], a[0, 32:])


UNARY = {"abs": np.abs, "exp": np.exp, "sqrt": np.sqrt, "relu": lambda x: np.maximum(x, 0), "neg": np.negative,
         "ln": np.log}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_fp32(op):
    dt = pl.DT_FP32
    a = data(dt, 64, 7, positive=op in ("sqrt", "ln"))
    kernel = two_in_kernel(unary_body(getattr(vf, op), dt, pl.MaskPattern.VL16), dt)
    out = run(kernel, a, a, torch.float32, 64).numpy()
    ref = UNARY[op](a.numpy()).astype(np.float32)
    np.testing.assert_allclose(out[0, :16], ref[0, :16], rtol=1e-6)
    assert (out[0, 16:] == 0).all()


def test_scalar_ops_and_update_mask():
    dt = pl.DT_FP32

    @pl.vector_function
    def body(ta, tb, to):
        m = vf.update_mask(20, dtype=dt)
        full = vf.create_mask(pattern=ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        y = vf.muls(x, 3.0, m)
        y = vf.adds(y, 1.5, m)
        vf.store_align(to, y, full)

    a = data(dt, 64, 8)
    out = run(two_in_kernel(body, dt), a, a, torch.float32, 64)
    assert torch.equal(out[0, :20], a[0, :20] * 3.0 + 1.5)
    assert (out[0, 20:] == 0).all()


def test_bitwise_and_shifts_uint32():
    dt = pl.DT_UINT32

    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        y = vf.load_align(tb, 0)
        z = vf.or_(x, y, m)
        z = vf.shift_left(z, 2, m)
        z = vf.not_(z, m)
        vf.store_align(to, z, m)

    a = torch.randint(0, 2**20, (1, 64), dtype=torch.int64)
    b = torch.randint(0, 2**20, (1, 64), dtype=torch.int64)
    out = run(two_in_kernel(body, dt), a.to(torch.uint32), b.to(torch.uint32), torch.uint32, 64)
    ref = (~(((a.numpy() | b.numpy()) << 2)) & 0xFFFFFFFF).astype(np.uint32)
    np.testing.assert_array_equal(out.numpy(), ref)


@pytest.mark.parametrize("kind", ["reduce_sum", "reduce_max", "reduce_min"])
def test_reductions_write_lane0_only(kind):
    """The result in lane 0; reduce_max / reduce_min also the first index of the extreme in lane 1 (an
    unsigned integer, their pages' dst[1]); every other lane 0."""
    dt = pl.DT_FP32
    a = data(dt, 64, 9)
    kernel = two_in_kernel(unary_body(getattr(vf, kind), dt, pl.MaskPattern.VL32), dt)
    out = run(kernel, a, a, torch.float32, 64).numpy()
    x = a.numpy()[0, :32]
    ref = {"reduce_sum": x.sum(), "reduce_max": x.max(), "reduce_min": x.min()}[kind]
    np.testing.assert_allclose(out[0, 0], ref, rtol=1e-6)
    if kind == "reduce_sum":
        assert (out[0, 1:] == 0).all()
    else:
        assert out[0, 1:2].view(np.uint32)[0] == (x.argmax() if kind == "reduce_max" else x.argmin())
        assert (out[0, 2:] == 0).all()


def test_reduce_sum_is_a_binary_tree():
    from pypto_pro.ops.vf.reduce import tree_sum
    x = np.array([[1e8, 1.0, -1e8, 1.0]], np.float32)
    assert tree_sum(x, np.dtype(np.float32))[0] == np.float32(np.float32(1e8 + 1.0) + np.float32(-1e8 + 1.0))


def test_compare_select_and_broadcast():
    dt = pl.DT_FP32

    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        y = vf.load_align(tb, 0)
        gt = vf.gt(x, y, m)
        big = vf.select(x, y, gt)
        r = vf.reduce_max(big, m)
        b = vf.full(r, m)
        z = vf.full(0.5, m, dtype=pl.DT_FP32)
        s = vf.sub(b, z, m)
        vf.store_align(to, s, m)

    a, b = data(dt, 64, 10), data(dt, 64, 11)
    out = run(two_in_kernel(body, dt), a, b, torch.float32, 64)
    ref = torch.maximum(a, b).max() - 0.5
    assert torch.equal(out, torch.full((1, 64), ref.item()))


def test_exp_sub_and_astype_to_fp16():
    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=pl.DT_FP32)
        x = vf.load_align(ta, 0)
        y = vf.load_align(tb, 0)
        e = vf.exp_sub(x, y, m)
        h = vf.astype(e, m, dtype=pl.DT_FP16)
        m16 = vf.create_mask(pattern=ALL, dtype=pl.DT_FP16)
        vf.store_align(to, h, m16)

    a, b = data(pl.DT_FP32, 64, 12), data(pl.DT_FP32, 64, 13)
    out = run(two_in_kernel(body, pl.DT_FP32, pl.DT_FP16), a, b, torch.float16, 128)
    ref = np.exp(a.numpy() - b.numpy()).astype(np.float32).astype(np.float16)
    np.testing.assert_allclose(out.numpy()[0, 0::2].astype(np.float32), ref[0].astype(np.float32), rtol=1e-3)
    assert (out.numpy()[0, 1::2] == 0).all(), "narrowing with layout ZERO fills the even fp16 lanes only"


def test_brc_load_and_loop_accumulator():
    dt = pl.DT_FP32

    @pl.vector_function
    def body(ta, tb, to, n: pl.DT_INT64):
        m = vf.create_mask(pattern=ALL, dtype=dt)
        acc = vf.full(0.0, m, dtype=pl.DT_FP32)
        for i in pl.range(0, n):
            s = vf.load_align(ta, i, dist=pl.LoadDist.BRC_B32)
            acc = vf.add(acc, s, m)
        vf.store_align(to, acc, m)

    tt = tile_type(dt)

    @pl.jit()
    def kernel(a: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32], out: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32],
               n: pl.DT_INT64):
        ta = pl.make_tile(tt, addr=0, size=256)
        to = pl.make_tile(tt, addr=512, size=256)
        with pl.section_vector():
            pl.load(ta, a, [0, 0])
            to_v()
            body(ta, ta, to, n)
            to_mte3()
            pl.store(out, to, [0, 0])

    a = torch.arange(64, dtype=torch.float32).reshape(1, 64)
    out = torch.zeros(1, 64)
    kernel[None, 1](a, out, 5)
    assert torch.equal(out, torch.full((1, 64), 0.0 + 1 + 2 + 3 + 4))


def test_post_update_store_and_data_block_copy():
    dt = pl.DT_FP32
    tt = tile_type(dt)
    big = pl.TileType(shape=[4, 64], dtype=dt, target_memory=pl.MemorySpace.Vec)

    @pl.vector_function
    def body(ta, to, tb):
        m = vf.create_mask(pattern=ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        for i in pl.range(0, 3):
            y = vf.adds(x, 1.0, m)
            x = vf.muls(y, 1.0, m)
            vf.store_align(to, x, m, 64, post_update=True)  # rows 0, 1, 2 of the [4, 64] tile
        # 8 blocks of 8 fp32, 2 blocks apart: the even blocks of rows 0..1 hold the register's blocks
        vf.store_align(tb, x, m, block_stride=2, data_copy_mode=pl.DataCopyMode.DATA_BLOCK_COPY)

    @pl.jit()
    def kernel(a: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32], out: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32],
               out2: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32]):
        ta = pl.make_tile(tt, addr=0, size=256)
        to = pl.make_tile(big, addr=1024, size=1024)
        tb = pl.make_tile(big, addr=2048, size=1024)
        with pl.section_vector():
            pl.load(ta, a, [0, 0])
            pl.load(to, out, [0, 0])
            pl.load(tb, out2, [0, 0])
            to_v()
            body(ta, to, tb)
            to_mte3()
            pl.store(out, to, [0, 0])
            pl.store(out2, tb, [0, 0])

    a = torch.arange(64, dtype=torch.float32).reshape(1, 64)
    out = torch.full((4, 64), -1.0)
    out2 = torch.full((4, 64), -1.0)
    kernel[None, 1](a, out, out2)
    for i in range(3):
        assert torch.equal(out[i], a[0] + i + 1)
    assert (out[3] == -1).all()
    flat = out2.reshape(-1, 8)  # 32 blocks of 8 fp32
    assert torch.equal(flat[0:16:2], (a[0] + 3).reshape(8, 8))
    assert (flat[1:16:2] == -1).all() and (flat[16:] == -1).all()


def test_store_unalign_packs_lane0_of_each_register_and_mask_load():
    dt = pl.DT_FP32

    @pl.vector_function
    def body(ta, tb, to):
        full = vf.create_mask(pattern=ALL, dtype=dt)
        sel = vf.create_mask(pattern=ALL, dtype=pl.DT_UINT32)
        ureg = vf.unalign_reg_for_store()
        minus = vf.full(-1.0, full, dtype=dt)
        vf.store_align(to, minus, full)
        vf.mem_bar(mode=pl.MemBarMode.VST_VST)
        for i in pl.range(0, 5):
            x = vf.load_align(ta, 0)
            x = vf.adds(x, i * 1.0, full)
            r = vf.reduce_max(x, full)
            vf.store_unalign(to, r, ureg, 1, post_update=True)
        vf.store_unalign_post(to, ureg, 0, post_update=True)
        vf.mem_bar(mode=pl.MemBarMode.VST_VLD)
        sel = vf.load_align(tb, 0, dist=pl.LoadDist.NORM)  # 32 bytes = 256 predicate bits
        first = vf.load_align(to, 0, dist=pl.LoadDist.BRC_B32)  # post_update moved a cursor, not `to`
        vf.store_align(to + 6, first, full, dist=pl.StoreDist.FIRST_ELEMENT)

    a = data(dt, 64, 14)
    out = torch.full((1, 64), -1.0)
    b = torch.zeros(1, 64)
    two_in_kernel(body, dt)[None, 1](a, b, out)
    mx = a.max().item()
    assert torch.equal(out[0, :5], torch.tensor([mx + i for i in range(5)]))
    assert out[0, 5] == -1 and (out[0, 7:] == -1).all(), "only the counted elements are stored"
    assert out[0, 6] == mx


def test_de_interleave_and_interleave_round_trip():
    dt = pl.DT_FP32

    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        y = vf.load_align(tb, 0)
        ev, od = vf.de_interleave(x, y)
        z = vf.sub(ev, od, m)
        vf.store_align(to, z, m)

    a, b = data(dt, 64, 15), data(dt, 64, 16)
    out = run(two_in_kernel(body, dt), a, b, torch.float32, 64)
    both = torch.cat([a[0], b[0]])
    assert torch.equal(out[0], both[0::2] - both[1::2])


def test_int32_div_truncates_toward_zero():
    dt = pl.DT_INT32
    a = torch.tensor([[-7, 7, -7, 7] * 16], dtype=torch.int32)
    b = torch.tensor([[2, -2, -2, 2] * 16], dtype=torch.int32)
    out = run(two_in_kernel(binary_body("div", dt, ALL), dt), a, b, torch.int32, 64)
    assert torch.equal(out, torch.tensor([[-3, -3, 3, 3] * 16], dtype=torch.int32))


# vf.and_ / or_ / xor / not_ on float registers: the lanes' bit patterns (the real pages list FP16, BF16 and
# FP32; the FA kernels OR the even and odd fp16 halves of a cast), zeroed lanes outside the mask
BITWISE = {"and_": np.bitwise_and, "or_": np.bitwise_or, "xor": np.bitwise_xor}


@pytest.mark.parametrize("op", sorted(BITWISE))
@pytest.mark.parametrize("dt, tdt, udt", [(pl.DT_FP16, torch.float16, np.uint16), (pl.DT_FP32, torch.float32, np.uint32)])
def test_bitwise_of_float_registers(op, dt, tdt, udt):
    n = 256 // np.dtype(udt).itemsize
    a = torch.randn(1, n).to(tdt)
    b = torch.randn(1, n).to(tdt)
    out = run(two_in_kernel(binary_body(op, dt, pl.MaskPattern.VL16), dt), a, b, tdt, n)
    bits = BITWISE[op](a.numpy().view(udt), b.numpy().view(udt))
    np.testing.assert_array_equal(out.numpy()[0, :16].view(udt), bits[0, :16])
    assert (out.numpy()[0, 16:].view(udt) == 0).all()  # inactive lanes zeroed


def test_not_of_fp32_register():
    dt = pl.DT_FP32
    a = torch.randn(1, 64)
    out = run(two_in_kernel(unary_body(vf.not_, dt, ALL), dt), a, a, torch.float32, 64)
    np.testing.assert_array_equal(out.numpy().view(np.uint32), ~a.numpy().view(np.uint32))
