"""vf.gather from a tile: the register takes the tile's type; an 8-bit tile with 16-bit indices gives
the bytes zero-extended to 16 bits, a 16-bit tile with 32-bit indices gives each element in the low
half of a 32-bit lane; any other width pair is a located error."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.errors import CompileError
from pypto_pro.language import Vf as vf

from vf_kernels import ALL, vf_kernel


def _kernel(src_dt, n_src, idx_dt, n_idx, out_dt, n_out, mask_dt, dist=None, copy_mode=None):
    @pl.vector_function
    def body(src, index, dst):
        m = vf.create_mask(pattern=ALL, dtype=mask_dt)
        ix = vf.load_align(index, 0, dtype=idx_dt)
        if copy_mode is None:
            g = vf.gather(src, ix, m)
        else:
            g = vf.gather(src, ix, m, data_copy_mode=copy_mode)
        if dist is None:
            vf.store_align(dst, g, m)
        else:
            vf.store_align(dst, g, m, dist=dist)

    return vf_kernel(body, [(src_dt, [1, n_src]), (idx_dt, [1, n_idx])], (out_dt, [1, n_out]),
                     addrs=(0, 0x400, 0x800))


def test_int8_tile_zero_extends_to_int16():
    rng = np.random.default_rng(1)
    a = rng.integers(-128, 128, (1, 256), dtype=np.int8)
    idx = rng.permutation(256)[:128].astype(np.uint16).reshape(1, 128)
    out = np.full((1, 128), 7, np.int16)
    _kernel(pl.DT_INT8, 256, pl.DT_UINT16, 128, pl.DT_INT16, 128, pl.DT_INT16)[None, 1](a, idx, out)
    np.testing.assert_array_equal(out[0], a[0].view(np.uint8)[idx[0]].astype(np.int16))  # -1 -> 255


def test_fp16_tile_with_uint32_indices_fills_even_lanes():
    a = torch.randn(1, 128, dtype=torch.float16)
    idx = np.arange(63, -1, -1, dtype=np.uint32).reshape(1, 64)
    out = torch.full((1, 128), 7.0, dtype=torch.float16)
    _kernel(pl.DT_FP16, 128, pl.DT_UINT32, 64, pl.DT_FP16, 128, pl.DT_FP16,
            pl.StoreDist.NORM_B16)[None, 1](a, idx, out)
    ref = torch.zeros(1, 128, dtype=torch.float16)
    ref[0, ::2] = a[0, :64].flip(0)
    assert torch.equal(out, ref)


def test_fp32_tile_with_uint16_indices_is_a_located_error():
    k = _kernel(pl.DT_FP32, 64, pl.DT_UINT16, 128, pl.DT_FP32, 64, pl.DT_FP32)
    with pytest.raises(CompileError, match="the index width must be the element width"):
        k.compile()


def _block_kernel():
    return _kernel(pl.DT_FP32, 128, pl.DT_UINT32, 64, pl.DT_FP32, 64, pl.DT_FP32,
                   copy_mode=pl.DataCopyMode.DATA_BLOCK_LOAD)


def test_data_block_load_takes_32_byte_blocks_at_the_first_eight_byte_offsets():
    a = torch.arange(128, dtype=torch.float32).reshape(1, 128)
    blocks = [15, 0, 7, 3, 3, 9, 1, 12]                  # of the tile's 16 blocks of 8 floats
    idx = np.zeros((1, 64), np.uint32)
    idx[0, :8] = [b * 32 for b in blocks]
    idx[0, 8:] = 999                                     # lanes past the 8th are not read
    out = torch.zeros(1, 64)
    _block_kernel()[None, 1](a, idx, out)
    ref = torch.cat([a[0, b * 8:(b + 1) * 8] for b in blocks])
    assert torch.equal(out[0], ref)


def test_data_block_load_misaligned_offset_is_a_located_simulation_error():
    from pypto_pro.errors import SimulationError
    idx = np.zeros((1, 64), np.uint32)
    idx[0, 2] = 40
    with pytest.raises(SimulationError, match="byte offset 40 of block 2 is not a 32-byte aligned block"):
        _block_kernel()[None, 1](torch.zeros(1, 128), idx, torch.zeros(1, 64))
