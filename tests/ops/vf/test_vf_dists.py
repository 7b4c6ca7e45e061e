"""VF load / store distributions, conversions with layouts and round modes, and the fused ops."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.language import Vf as vf

from vf_kernels import ALL, data, run, two_in_kernel

F32, F16, U32 = pl.DT_FP32, pl.DT_FP16, pl.DT_UINT32


def load_body(dt, dist):
    """to = every lane of a load of ta with ``dist``."""
    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=dt)
        x = vf.load_align(ta, 0, dist=dist)
        vf.store_align(to, x, m)
    return body


@pytest.mark.parametrize("dist", ["US_B16", "UNPK_B16", "BRC_B16"])
def test_load_distributions_b16(dist):
    a = data(F16, 128, 30)
    src = a.numpy()[0].view(np.uint16)
    kernel = two_in_kernel(load_body(F16, getattr(pl.LoadDist, dist)), F16)
    out = run(kernel, a, a, torch.float16, 128).numpy()[0].view(np.uint16)
    if dist == "US_B16":
        ref = np.repeat(src[:64], 2)
    elif dist == "UNPK_B16":
        ref = np.zeros(128, np.uint16)
        ref[0::2] = src[:64]  # each b16 element zero-extended into a b32 lane (little-endian)
    else:
        ref = np.full(128, src[0], np.uint16)
    np.testing.assert_array_equal(out, ref)


def test_de_interleave_odd_lane_with_first_element_store():
    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=F32)
        x = vf.load_align(ta, 0)
        vf.store_align(to, x, m)
        vf.mem_bar()
        y = vf.load_align(tb, 0)
        ev, od = vf.de_interleave(x, y)
        vf.store_align(to + 8, od, m, dist=pl.StoreDist.FIRST_ELEMENT)  # only od[0] = x[1] is written

    a, b = data(F32, 64, 31), data(F32, 64, 32)
    out = run(two_in_kernel(body, F32), a, b, torch.float32, 64)
    ref = a.clone()
    ref[0, 8] = a[0, 1]
    assert torch.equal(out, ref)


@pytest.mark.parametrize("mode,fn", [("CAST_RINT", np.rint), ("CAST_FLOOR", np.floor), ("CAST_CEIL", np.ceil),
                                     ("CAST_TRUNC", np.trunc), ("CAST_ROUND", lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5))])
def test_astype_fp32_to_int32_round_modes(mode, fn):
    rm = getattr(pl.VFRoundMode, mode)

    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=F32)
        x = vf.load_align(ta, 0)
        i = vf.astype(x, m, dtype=pl.DT_INT32, round_mode=rm)
        vf.store_align(to, i, m)

    a = torch.tensor([[k * 0.5 - 16 for k in range(64)]], dtype=torch.float32)
    out = run(two_in_kernel(body, F32, pl.DT_INT32), a, a, torch.int32, 64).numpy()[0]
    np.testing.assert_array_equal(out, fn(a.numpy()[0]).astype(np.int32))


@pytest.mark.parametrize("layout", ["ZERO", "ONE"])
def test_astype_fp16_to_fp32_takes_even_or_odd_lanes(layout):
    lay = getattr(pl.CastLayout, layout)

    @pl.vector_function
    def body(ta, tb, to):
        m16 = vf.create_mask(pattern=ALL, dtype=F16)
        m = vf.create_mask(pattern=ALL, dtype=F32)
        x = vf.load_align(ta, 0)
        w = vf.astype(x, m16, dtype=F32, layout=lay)
        w16 = vf.bit_cast(w, dtype=F16)
        vf.store_align(to, w16, m)

    a = data(F16, 128, 33)
    out = run(two_in_kernel(body, F16), a, a, torch.float16, 128).numpy()[0].view(np.float32)
    part = a.numpy()[0][0 if layout == "ZERO" else 1::2].astype(np.float32)
    np.testing.assert_array_equal(out, part)


def test_exp_sub_fp16_sources_give_fp32():
    @pl.vector_function
    def body(ta, tb, to):
        m16 = vf.create_mask(pattern=ALL, dtype=F16)
        x = vf.load_align(ta, 0)
        y = vf.load_align(tb, 0)
        e = vf.exp_sub(x, y, m16, layout=pl.CastLayout.ONE)
        e16 = vf.bit_cast(e, dtype=F16)
        vf.store_align(to, e16, m16)

    a, b = data(F16, 128, 34), data(F16, 128, 35)
    out = run(two_in_kernel(body, F16), a, b, torch.float16, 128).numpy()[0].view(np.float32)
    ref = np.exp(a.numpy()[0][1::2].astype(np.float32) - b.numpy()[0][1::2].astype(np.float32))
    np.testing.assert_allclose(out, ref, rtol=1e-6)


def test_fused_ops_round_once_and_datablock_reduce():
    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=F32)
        x = vf.load_align(ta, 0)
        y = vf.load_align(tb, 0)
        acc = vf.full(1.0, m, dtype=F32)
        acc = vf.mul_add_dst(x, y, m)        # x*y + 1
        acc = vf.axpy(x, 2.0, m)             # 2x + acc
        r = vf.reduce_sum(acc, m, datablock=True)
        vf.store_align(to, r, m)

    a, b = data(F32, 64, 36), data(F32, 64, 37)
    out = run(two_in_kernel(body, F32), a, b, torch.float32, 64).numpy()[0]
    x, y = a.numpy()[0].astype(np.float64), b.numpy()[0].astype(np.float64)
    acc = (x * y + 1).astype(np.float32).astype(np.float64)
    acc = (2 * x + acc).astype(np.float32)
    blocks = acc.reshape(8, 8)  # 32-byte blocks of 8 fp32; the 8 results in lanes 0..7
    np.testing.assert_allclose(out[:8], blocks.sum(axis=1, dtype=np.float32), rtol=1e-5)
    assert (out[8:] == 0).all()


def test_shift_right_is_arithmetic_for_signed():
    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=pl.DT_INT32)
        x = vf.load_align(ta, 0)
        y = vf.shift_right(x, 3, m)
        vf.store_align(to, y, m)

    a = torch.randint(-2**30, 2**30, (1, 64), dtype=torch.int32)
    out = run(two_in_kernel(body, pl.DT_INT32), a, a, torch.int32, 64)
    assert torch.equal(out, a >> 3)


@pytest.mark.parametrize("dist", ["BLK", "E2B_B32", "UNPK4"])
def test_block_and_expanding_loads(dist):
    g = torch.Generator().manual_seed(38)
    a = torch.randint(0, 2**32 - 1, (1, 64), generator=g, dtype=torch.int64).to(torch.uint32)
    out = run(two_in_kernel(load_body(U32, getattr(pl.LoadDist, dist)), U32), a, a, torch.uint32, 64).numpy()[0]
    src = a.numpy()[0]
    if dist == "BLK":
        ref = np.tile(src[:8], 8)
    elif dist == "E2B_B32":
        ref = np.repeat(src[:8], 8)
    else:
        ref = src.view(np.uint8)[:64].astype(np.uint32)
    np.testing.assert_array_equal(out, ref)


def test_subc_borrows():
    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=U32)
        none = vf.create_mask(pattern=pl.MaskPattern.ALLF, dtype=U32)
        x = vf.load_align(ta, 0)
        y = vf.load_align(tb, 0)
        borrow, d = vf.subc(x, y, none, m)
        b = vf.unsqueeze(borrow, dtype=U32)
        s = vf.add(d, b, m)
        vf.store_align(to, s, m)

    g = torch.Generator().manual_seed(39)
    a = torch.randint(0, 2**32 - 1, (1, 64), generator=g, dtype=torch.int64)
    b = torch.randint(0, 2**32 - 1, (1, 64), generator=g, dtype=torch.int64)
    out = run(two_in_kernel(body, U32), a.to(torch.uint32), b.to(torch.uint32), torch.uint32, 64).numpy()[0]
    diff = a.numpy()[0] - b.numpy()[0] - 1  # borrow_in clear: a + ~b + 0 = a - b - 1
    np.testing.assert_array_equal(out.astype(np.int64), ((diff & 0xFFFFFFFF) + (diff < 0)) & 0xFFFFFFFF)
