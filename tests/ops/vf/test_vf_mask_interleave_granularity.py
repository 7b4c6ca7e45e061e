"""vf.de_interleave / vf.interleave of mask registers permute predicates at the granularity dtype= names
(pdintlv_b16 for DT_UINT16 ...; default b32), not at the masks' own dtype: the real FA-with-mask kernels
de-interleave two b32 comparison masks as b16 to build a 128-column predicate."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro import CompileError
from pypto_pro.language import Vf as vf

TI = pl.TileType(shape=[1, 128], dtype=pl.DT_INT16, target_memory=pl.MemorySpace.Vec)


def _kernel(body):
    @pl.jit()
    def k(out: pl.Tensor[[1, 128], pl.DT_INT16]):
        to = pl.make_tile(TI, addr=0, size=256)
        with pl.section_vector():
            body(to)
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.store(out, to, [0, 0])
    return k


@pl.vector_function
def b16_of_b32(dst):
    m0 = vf.update_mask(3, dtype=pl.DT_FP32)   # b32 lanes 0..2: predicate bits 0..11
    m1 = vf.update_mask(64, dtype=pl.DT_FP32)  # every lane
    even, odd = vf.de_interleave(m0, m1, dtype=pl.DT_UINT16)
    one = vf.full(1, dtype=pl.DT_INT16)
    zero = vf.full(0, dtype=pl.DT_INT16)
    full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_INT16)
    y = vf.select(one, zero, even)
    vf.store_align(dst, y, full)


def test_mask_de_interleave_works_at_the_dtype_granularity():
    out = torch.full((1, 128), 7, dtype=torch.int16)
    _kernel(b16_of_b32)[None, 1](out)
    # b16 elements of m0: j < 6 set; of m1: all; the even ones of the 256: m0's 0, 2, 4 then m1's
    ref = np.zeros(128, np.int16)
    ref[:3] = 1
    ref[64:] = 1
    np.testing.assert_array_equal(out.numpy()[0], ref)


def test_mask_de_interleave_rejects_a_64_bit_granularity():
    @pl.vector_function
    def bad(dst):
        m0 = vf.update_mask(3, dtype=pl.DT_FP32)
        even, odd = vf.de_interleave(m0, m0, dtype=pl.DT_INT64)
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_INT16)
        one = vf.full(1, dtype=pl.DT_INT16)
        y = vf.select(one, one, even)
        vf.store_align(dst, y, full)

    with pytest.raises(CompileError, match="b8 / b16 / b32"):
        _kernel(bad)[None, 1](torch.zeros(1, 128, dtype=torch.int16))
