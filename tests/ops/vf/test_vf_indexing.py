"""VF index generation, compaction, packing, mask logic and the other later ops, end to end."""
from __future__ import annotations

import numpy as np
import torch

import pypto_pro.language as pl
from pypto_pro.language import Vf as vf

from vf_kernels import ALL, data, run, two_in_kernel

F32 = pl.DT_FP32


def test_arange_squeeze_and_store_unalign_from_ar():
    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=F32)
        x = vf.load_align(ta, 0)
        pos = vf.gt(x, 0.0, m)
        zero = vf.full(-1.0, m, dtype=F32)
        vf.store_align(to, zero, m)
        vf.mem_bar()
        packed = vf.squeeze(x, pos, gather_mode=pl.SqueezeMode.STORE_REG)
        ureg = vf.unalign_reg_for_store()
        vf.store_unalign(to, packed, ureg)
        vf.store_unalign_post(to, ureg)

    a = data(F32, 64, 20)
    out = run(two_in_kernel(body, F32), a, a, torch.float32, 64)
    kept = a[0][a[0] > 0]
    assert torch.equal(out[0, :kept.numel()], kept)
    assert (out[0, kept.numel():] == -1).all()


def test_arange_descending_int32_and_unsqueeze():
    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=pl.DT_INT32)
        idx = vf.arange(100, dtype=pl.DT_INT32, index_order=pl.IndexOrder.DECREASE_ORDER)
        x = vf.load_align(ta, 0)
        odd = vf.create_mask(pattern=pl.MaskPattern.VL8, dtype=pl.DT_INT32)
        ones = vf.unsqueeze(odd, dtype=pl.DT_INT32)
        s = vf.add(idx, ones, m)
        vf.store_align(to, s, m)

    a = torch.zeros(1, 64, dtype=torch.int32)
    out = run(two_in_kernel(body, pl.DT_INT32), a, a, torch.int32, 64)
    ref = 100 + 63 - np.arange(64) + (np.arange(64) < 8)  # DECREASE_ORDER counts down to start (VCI)
    np.testing.assert_array_equal(out.numpy()[0], ref)


def test_mask_logic_select_and_move():
    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=F32)
        x = vf.load_align(ta, 0)
        y = vf.load_align(tb, 0)
        pa = vf.ge(x, 0.0, m)
        pb = vf.ge(y, 0.0, m)
        both = vf.and_(pa, pb, m)
        either = vf.or_(pa, pb, m)
        one = vf.xor(pa, pb, m)
        none = vf.not_(either, m)
        pick = vf.select(both, one, pa)  # pa ? both : one
        moved = vf.move(pick, m)
        s1 = vf.full(1.0, moved, dtype=F32)
        s2 = vf.full(10.0, none, dtype=F32)
        r = vf.add(s1, s2, m)
        vf.store_align(to, r, m)

    a, b = data(F32, 64, 21), data(F32, 64, 22)
    out = run(two_in_kernel(body, F32), a, b, torch.float32, 64).numpy()[0]
    pa, pb = a.numpy()[0] >= 0, b.numpy()[0] >= 0
    pick = np.where(pa, pa & pb, pa ^ pb)
    none = ~(pa | pb)
    np.testing.assert_array_equal(out, pick * 1.0 + none * 10.0)


def test_pack_unpack_and_mull():
    """(vf.pair_reduce_sum takes FP16 / FP32 only, its page and the real backend: it is tested in
    test_vf_reduce.py; here mull's low half is added directly.)"""
    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=pl.DT_UINT32)
        x = vf.load_align(ta, 0)
        y = vf.load_align(tb, 0)
        lo, hi = vf.mull(x, y, m)
        h16 = vf.pack(hi, part=pl.PackPart.UPPER, dtype=pl.DT_UINT16)    # low 16 bits of hi into lanes 64..127 (as uint16)
        back = vf.unpack(h16, part=pl.PackPart.UPPER, dtype=pl.DT_UINT32)
        s = vf.add(back, lo, m)
        vf.store_align(to, s, m)

    g = torch.Generator().manual_seed(23)
    a = torch.randint(0, 2**31 - 1, (1, 64), generator=g, dtype=torch.int64)
    b = torch.randint(0, 2**31 - 1, (1, 64), generator=g, dtype=torch.int64)
    out = run(two_in_kernel(body, pl.DT_UINT32), a.to(torch.uint32), b.to(torch.uint32), torch.uint32, 64)
    an, bn = a.numpy()[0].astype(object), b.numpy()[0].astype(object)
    prod = an * bn
    lo = np.array([int(q) & 0xFFFFFFFF for q in prod], dtype=np.uint64)
    hi16 = np.array([(int(q) >> 32) & 0xFFFF for q in prod], dtype=np.uint64)
    np.testing.assert_array_equal(out.numpy()[0].astype(np.uint64), (hi16 + lo) & 0xFFFFFFFF)


def test_gather_scatter_truncate():
    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=F32)
        mu = vf.create_mask(pattern=ALL, dtype=pl.DT_UINT32)
        rev = vf.arange(0, dtype=pl.DT_UINT32, index_order=pl.IndexOrder.DECREASE_ORDER)  # 63 .. 0
        g = vf.gather(ta, rev, mu)          # a reversed (uint32 bits of the fp32 data)
        f = vf.bit_cast(g, dtype=F32)
        t = vf.truncate(f, m)
        vf.scatter(to, t, rev, m)           # reversed again: to = trunc(a)

    a = data(F32, 64, 24)
    out = run(two_in_kernel(body, F32), a, a, torch.float32, 64)
    assert torch.equal(out, torch.trunc(a))


def test_muls_cast_rounds_once_into_even_lanes():
    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=F32)
        m16 = vf.create_mask(pattern=ALL, dtype=pl.DT_FP16)
        x = vf.load_align(ta, 0)
        h = vf.muls_cast(x, 0.5, m, dtype=pl.DT_FP16)
        vf.store_align(to, h, m16)

    a = data(F32, 64, 25)
    out = run(two_in_kernel(body, F32, pl.DT_FP16), a, a, torch.float16, 128).numpy()[0]
    np.testing.assert_array_equal(out[0::2], (a.numpy()[0].astype(np.float64) * 0.5).astype(np.float16))
    assert (out[1::2] == 0).all()


def test_unified_load_store_addc_and_mask_gen():
    U32 = pl.DT_UINT32

    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=U32)
        none = vf.create_mask(pattern=pl.MaskPattern.ALLF, dtype=U32)
        x = vf.load(ta)
        y = vf.load_align(tb, 0)
        carry, s = vf.addc(x, y, none, m)
        c1 = vf.unsqueeze(carry, dtype=U32)
        bits = vf.mask_gen_with_reg_tensor(y, offset=0)   # bits of y[0], y[1] -> 64 lanes
        one = vf.full(1, m, dtype=U32)
        picked = vf.select(one, c1, bits)
        vf.store(to, s, 32)                      # first 32 sums at to[0..32)
        vf.store(to + 32, picked, 32)            # then 32 lanes of picked

    g = torch.Generator().manual_seed(26)
    a = torch.randint(0, 2**32 - 1, (1, 64), generator=g, dtype=torch.int64)
    b = torch.randint(0, 2**32 - 1, (1, 64), generator=g, dtype=torch.int64)
    out = run(two_in_kernel(body, U32), a.to(torch.uint32), b.to(torch.uint32), torch.uint32, 64).numpy()[0]
    x = a.numpy()[0].astype(np.uint64)
    y = b.numpy()[0].astype(np.uint64)
    total = x + y
    np.testing.assert_array_equal(out[:32], (total & 0xFFFFFFFF)[:32])
    bits = np.unpackbits(b.numpy()[0, :2].astype(np.uint32).view(np.uint8), bitorder="little")[:32]
    carry = (total >> 32)[:32]
    np.testing.assert_array_equal(out[32:], np.where(bits, 1, carry))


def test_mask_store_and_load_round_trip():
    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=F32)
        few = vf.create_mask(pattern=pl.MaskPattern.VL8, dtype=F32)
        vf.store_align(tb, few)                  # 256 predicate bits -> tb's first 32 bytes
        vf.mem_bar(mode=pl.MemBarMode.VST_VLD)
        back = vf.create_mask(pattern=pl.MaskPattern.ALLF, dtype=F32)
        back = vf.load_align(tb, 0)              # a mask target: the bits come back
        x = vf.load_align(ta, 0)
        y = vf.abs(x, back)
        vf.store_align(to, y, m)

    a = data(F32, 64, 27)
    b = torch.zeros(1, 64)
    out = run(two_in_kernel(body, F32), a, b, torch.float32, 64)
    assert torch.equal(out[0, :8], a[0, :8].abs()) and (out[0, 8:] == 0).all()


def test_mask_interleave_pack_unpack():
    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=F32)
        low = vf.create_mask(pattern=pl.MaskPattern.H, dtype=F32)      # lanes 0..31
        m3 = vf.create_mask(pattern=pl.MaskPattern.M3, dtype=F32)      # lanes 0, 3, 6, ...
        i0, i1 = vf.interleave(low, m3)                                # i0[2k] = low[k], i0[2k+1] = m3[k]
        packed = vf.pack(i0, part=pl.PackPart.LOWER)
        back = vf.unpack(packed, part=pl.PackPart.LOWER)               # pack then unpack: i0's even bits doubled
        x = vf.load_align(ta, 0)
        y = vf.abs(x, i0)
        z = vf.neg(x, back)
        s = vf.add(y, z, m)
        vf.store_align(to, s, m)

    a = data(F32, 64, 28)
    out = run(two_in_kernel(body, F32), a, a, torch.float32, 64).numpy()[0]
    k = np.arange(64)
    low, m3 = k < 32, k % 3 == 0
    i0 = np.empty(64, bool)
    i0[0::2], i0[1::2] = low[:32], m3[:32]
    bits = np.repeat(i0, 4)                 # b32 granularity: 4 bits per element
    back = np.repeat(bits[0::2][:128], 2)[0::4]
    x = a.numpy()[0]
    np.testing.assert_array_equal(out, np.where(i0, np.abs(x), 0) + np.where(back, -x, 0))


def test_get_mask_spr_is_all_active_without_set_vec_mask():
    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=F32)
        spr = vf.get_mask_spr(width=pl.MaskWidth.B32)
        x = vf.load_align(ta, 0)
        y = vf.neg(x, spr)
        vf.store_align(to, y, m)

    a = data(F32, 64, 29)
    out = run(two_in_kernel(body, F32), a, a, torch.float32, 64)
    assert torch.equal(out, -a)


def test_load_unalign_post_update_walks_a_cursor():
    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=F32)
        ureg = vf.load_unalign_init()
        vf.load_unalign_pre(ureg, ta)
        x = vf.load_unalign(ureg, ta, 0, post_update=True)   # stride 0: the cursor stays
        y = vf.load_unalign(ureg, ta, 0, post_update=True)
        s = vf.add(x, y, m)
        vf.store_align(to, s, m)

    a = data(F32, 64, 40)
    out = run(two_in_kernel(body, F32), a, a, torch.float32, 64)
    assert torch.equal(out, a + a)
