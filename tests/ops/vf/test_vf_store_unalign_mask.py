"""vf.store_unalign of a mask register (pstu): one bit per element of the mask's type, bit i of the
packed bytes = element i (a b32 mask: 8 bytes), written at the tile address; nothing else changes."""
from __future__ import annotations

import numpy as np
import torch

import pypto_pro.language as pl
from pypto_pro.language import Vf as vf

from vf_kernels import ALL, to_mte3, to_v


@pl.vector_function
def body(src, dst):
    m = vf.create_mask(pattern=ALL, dtype=pl.DT_FP32)
    x = vf.load_align(src, 0)
    ge = vf.ge(x, 0.0, m)
    ureg = vf.unalign_reg_for_store()
    vf.store_unalign(dst, ge, ureg)
    vf.store_unalign_post(dst, ureg)


@pl.jit()
def kernel(a: pl.Tensor[[1, 64], pl.DT_FP32], out: pl.Tensor[[1, 64], pl.DT_UINT32]):
    ta = pl.make_tile(pl.TileType(shape=[1, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec), addr=0)
    to = pl.make_tile(pl.TileType(shape=[1, 64], dtype=pl.DT_UINT32, target_memory=pl.MemorySpace.Vec), addr=256)
    with pl.section_vector():
        pl.load(ta, a, [0, 0])
        pl.load(to, out, [0, 0])
        to_v()
        body(ta, to)
        to_mte3()
        pl.store(out, to, [0, 0])


def test_b32_mask_packs_to_eight_bytes():
    a = torch.randn(1, 64, generator=torch.Generator().manual_seed(5))
    out = np.full((1, 64), 0xA5A5A5A5, np.uint32)
    kernel[None, 1](a, out)
    bits = (a.numpy()[0] >= 0)
    want = np.packbits(bits, bitorder="little").view(np.uint32)  # 2 words
    np.testing.assert_array_equal(out[0, :2], want)
    assert (out[0, 2:] == 0xA5A5A5A5).all()
