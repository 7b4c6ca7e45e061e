"""vf.load_align in DataBlock mode (vsldb): register block j is the tile's 32 bytes at j * block_stride
blocks when the mask sets any of that block's 32 bits, else 0; the mask sits in the offset position."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.errors import CompileError
from pypto_pro.language import Vf as vf

from vf_kernels import ALL, vf_kernel

TT = pl.TileType(shape=[4, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
TO = pl.TileType(shape=[1, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)


def _kernel(body):
    return vf_kernel(body, [(pl.DT_FP32, TT.shape)], (pl.DT_FP32, TO.shape))


@pytest.mark.parametrize("mode", [pl.DataCopyMode.DATA_BLOCK_COPY, pl.DataCopyMode.DATA_BLOCK_LOAD])
@pytest.mark.parametrize("stride,pattern,active", [(3, ALL, 8), (0, ALL, 8), (4, pl.MaskPattern.VL16, 2)])
def test_block_load(mode, stride, pattern, active):
    @pl.vector_function
    def body(ta, to):
        m = vf.create_mask(pattern=pattern, dtype=pl.DT_FP32)
        full = vf.create_mask(pattern=ALL, dtype=pl.DT_FP32)
        x = vf.load_align(ta, m, data_copy_mode=mode, block_stride=stride)
        vf.store_align(to, x, full)
    a = torch.arange(256, dtype=torch.float32).reshape(4, 64)
    out = torch.full((1, 64), -1.0)
    _kernel(body)[None, 1](a, out)
    flat = a.numpy().reshape(-1)
    ref = np.concatenate([flat[8 * j * stride:8 * j * stride + 8] if j < active else np.zeros(8, np.float32)
                          for j in range(8)])
    np.testing.assert_array_equal(out.numpy()[0], ref)


def test_block_load_needs_a_mask():
    @pl.vector_function
    def body(ta, to):
        full = vf.create_mask(pattern=ALL, dtype=pl.DT_FP32)
        x = vf.load_align(ta, 0, data_copy_mode=pl.DataCopyMode.DATA_BLOCK_COPY, block_stride=1)
        vf.store_align(to, x, full)
    with pytest.raises(CompileError, match="the second argument is the mask register"):
        _kernel(body).compile()
