"""vf.get_mask_spr reads the {MASK1, MASK0} the scalar unit set with pl.set_vec_mask (per core,
in program order), in norm and counter mode; pl.reset_mask restores every bit."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.language import Vf as vf

from vf_kernels import ALL, data, to_mte3, to_v

COVERED = frozenset({"get_mask_spr"})


def _kernel(dt, width, setup, n):
    """load a ([1, n] of dt); setup() of the mask SPRs; out = abs(a) under get_mask_spr, 0 elsewhere;
    then the same after pl.reset_mask() into out2."""
    tt = pl.TileType(shape=[1, n], dtype=dt, target_memory=pl.MemorySpace.Vec)

    @pl.vector_function
    def body(src, dst):
        m = vf.create_mask(pattern=ALL, dtype=dt)
        spr = vf.get_mask_spr(width=width)
        x = vf.load_align(src, 0)
        y = vf.abs(x, spr)
        vf.store_align(dst, y, m)

    @pl.jit()
    def kernel(a: pl.Tensor[[1, n], dt], out: pl.Tensor[[1, n], dt], out2: pl.Tensor[[1, n], dt]):
        ta = pl.make_tile(tt, addr=0, size=256)
        to = pl.make_tile(tt, addr=256, size=256)
        to2 = pl.make_tile(tt, addr=512, size=256)
        with pl.section_vector():
            pl.load(ta, a, [0, 0])
            to_v()
            setup()
            body(ta, to)
            pl.reset_mask()
            body(ta, to2)
            to_mte3()
            pl.store(out, to, [0, 0])
            pl.store(out2, to2, [0, 0])
    return kernel


def _run(kernel, a, timing):
    out, out2 = torch.full_like(a, 7), torch.full_like(a, 7)
    (kernel if timing else kernel.options(timing=False))[None, 1](a, out, out2)  # scheduled / functional paths
    return out, out2


@pytest.mark.parametrize("timing", [True, False])
def test_b32_reads_mask0_bit_per_lane(timing):
    lo = 0x0000_00F0_0000_FFFF  # lanes 0..15 and 36..39

    @pl.inline
    def setup():
        pl.set_mask_norm()
        pl.set_vec_mask(0xFFFF, lo)  # MASK1 is not read for 32-bit lanes

    a = data(pl.DT_FP32, 64, 3)
    out, out2 = _run(_kernel(pl.DT_FP32, pl.MaskWidth.B32, setup, 64), a, timing)
    sel = np.array([(lo >> i) & 1 for i in range(64)], bool)
    x = a.numpy()[0]
    np.testing.assert_array_equal(out.numpy()[0], np.where(sel, np.abs(x), 0))
    np.testing.assert_array_equal(out2.numpy()[0], np.abs(x))  # after reset_mask: every lane


def test_b16_reads_both_words():
    hi, lo = 0x8000_0000_0000_0001, 0x3

    @pl.inline
    def setup():
        pl.set_vec_mask(hi, lo)

    a = data(pl.DT_FP16, 128, 4)
    out, out2 = _run(_kernel(pl.DT_FP16, pl.MaskWidth.B16, setup, 128), a, True)
    sel = np.zeros(128, bool)
    sel[[0, 1, 64, 127]] = True
    x = a.numpy()[0]
    np.testing.assert_array_equal(out.numpy()[0], np.where(sel, np.abs(x), 0))
    np.testing.assert_array_equal(out2.numpy()[0], np.abs(x))


def test_counter_mode_selects_the_first_mask0_lanes():
    @pl.inline
    def setup():
        pl.set_mask_count()
        pl.set_vec_mask(0, 20)

    a = data(pl.DT_FP32, 64, 5)
    out, _ = _run(_kernel(pl.DT_FP32, pl.MaskWidth.B32, setup, 64), a, True)
    x = a.numpy()[0]
    np.testing.assert_array_equal(out.numpy()[0], np.where(np.arange(64) < 20, np.abs(x), 0))


@pytest.mark.parametrize("dt", [pl.DT_INT32, pl.DT_UINT32, pl.DT_FP32, pl.DT_INT16, pl.DT_UINT16, pl.DT_FP16,
                                pl.DT_BF16], ids=lambda d: d.name)
def test_every_type_of_each_width_reads_the_norm_mask_bits(dt):
    """get_mask_spr.md: B32 for the 32-bit types (MASK0, one bit per lane), B16 for the 16-bit ones
    ({MASK1, MASK0}); vf.move under the mask keeps the destination's lanes where a bit is 0, so the
    lane pattern shows in any dtype's bytes."""
    n = 256 // (dt.bits // 8)
    width = pl.MaskWidth.B32 if dt.bits == 32 else pl.MaskWidth.B16
    hi, lo = 0x8421_0000_F00F_0001, 0x0000_0000_FFFF_8001
    tt = pl.TileType(shape=[1, n], dtype=dt, target_memory=pl.MemorySpace.Vec)

    @pl.vector_function
    def body(src, dst):
        m = vf.create_mask(pattern=ALL, dtype=dt)
        spr = vf.get_mask_spr(width=width)
        x = vf.load_align(src, 0)
        y = vf.load_align(src, n)
        y = vf.move(x, spr)
        vf.store_align(dst, y, m)

    @pl.jit()
    def kernel(a: pl.Tensor[[1, 2 * n], dt], out: pl.Tensor[[1, n], dt]):
        ta = pl.make_tile(pl.TileType(shape=[1, 2 * n], dtype=dt, target_memory=pl.MemorySpace.Vec), addr=0)
        to = pl.make_tile(tt, addr=512)
        with pl.section_vector():
            pl.load(ta, a, [0, 0])
            to_v()
            pl.set_mask_norm()
            pl.set_vec_mask(hi, lo)
            body(ta, to)
            to_mte3()
            pl.store(out, to, [0, 0])

    raw = np.random.default_rng(6).integers(0, 256, 2 * 256, dtype=np.uint8)
    u = {16: np.uint16, 32: np.uint32}[dt.bits]
    a = torch.from_numpy(raw.view(u).astype(np.int64)).reshape(1, 2 * n)
    a = a.to(torch.int32) if dt.bits == 32 else a.to(torch.int16)
    a = a.view(TORCH_OF[dt])
    out = torch.zeros(1, n, dtype=TORCH_OF[dt])
    kernel[None, 1](a, out)
    sel = np.array([((lo if i < 64 else hi) >> (i % 64)) & 1 for i in range(n)], bool)
    src = raw.view(u)
    np.testing.assert_array_equal(out.view(torch.int32 if dt.bits == 32 else torch.int16).numpy()[0].view(u),
                                  np.where(sel, src[:n], src[n:]))


TORCH_OF = {pl.DT_INT32: torch.int32, pl.DT_UINT32: torch.uint32, pl.DT_FP32: torch.float32, pl.DT_INT16: torch.int16,
            pl.DT_UINT16: torch.uint16, pl.DT_FP16: torch.float16, pl.DT_BF16: torch.bfloat16}
