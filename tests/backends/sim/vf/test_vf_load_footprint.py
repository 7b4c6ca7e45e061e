"""A VF load's footprint is the bytes that reach an active lane: a tail tile read under
vf.update_mask(n) (the real FA kernels' pattern) does not count as reading the never-written bytes past
lane n, while a reader under a wider mask still is an UninitializedReadError with its line."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.errors_sim import UninitializedReadError
from pypto_pro.language import Vf as vf

from vf_kernels import to_mte3, to_v

TT = pl.TileType(shape=[1, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)


def _kernel(n_used):
    @pl.vector_function
    def use(src, dst):
        m = vf.update_mask(n_used, dtype=pl.DT_FP32)
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
        x = vf.load_align(src, 0)
        y = vf.adds(x, 1.0, m)  # zeroing: lanes >= n are 0
        vf.store_align(dst, y, full)

    @pl.jit()
    def k(a: pl.Tensor[[1, 16], pl.DT_FP32], out: pl.Tensor[[1, 64], pl.DT_FP32]):
        ta = pl.make_tile(TT, addr=0, size=256)
        to = pl.make_tile(TT, addr=512, size=256)
        with pl.section_vector():
            pl.set_validshape(ta, [1, 16])
            pl.load(ta, a, [0, 0])  # elements 0..15 only
            pl.set_validshape(ta, [1, 64])
            to_v()
            use(ta, to)
            to_mte3()
            pl.store(out, to, [0, 0])
    return k


def test_masked_tail_load_reads_only_what_reaches_a_lane():
    a = torch.randn(1, 16, generator=torch.Generator().manual_seed(4))
    out = torch.full((1, 64), 9.0)
    _kernel(16)[None, 1](a, out)
    ref = np.zeros(64, np.float32)
    ref[:16] = a.numpy()[0] + 1
    np.testing.assert_array_equal(out.numpy()[0], ref)


def test_a_wider_mask_still_reads_never_written_bytes():
    with pytest.raises(UninitializedReadError, match="test_vf_load_footprint.py"):
        _kernel(17)[None, 1](torch.randn(1, 16), torch.zeros(1, 64))
