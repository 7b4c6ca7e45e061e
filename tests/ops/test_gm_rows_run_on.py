"""A GM window whose rows run past their tensor axis continues by that axis' stride into the next
index of the outer axis (the chip's GM view has no per-axis bound): a [8, 16] tile of merged (S, N)
rows from a [2, 4, 16] tensor with order=[1, 2]; past the tensor's bytes it is still an error."""
from __future__ import annotations

import pytest
import torch

import pypto_pro.language as pl
from pypto_pro import OutOfBoundsError

TT = pl.TileType(shape=[8, 16], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)


@pl.jit()
def copy_rows(x: pl.Tensor[[2, 4, 16], pl.DT_FP32], z: pl.Tensor[[2, 4, 16], pl.DT_FP32], s: pl.DT_INT32):
    t = pl.make_tile(TT, addr=0)
    with pl.section_vector():
        pl.load(t, x, [0, s, 0], order=[1, 2])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.store(z, t, [0, s, 0], order=[1, 2])


def test_rows_continue_into_the_next_outer_index():
    x = torch.randn(2, 4, 16)
    z = torch.zeros(2, 4, 16)
    copy_rows[None, 1](x, z, 0)
    assert torch.equal(z, x)


def test_rows_past_the_tensor_bytes_are_out_of_bounds():
    x = torch.randn(2, 4, 16)
    z = torch.zeros(2, 4, 16)
    with pytest.raises(OutOfBoundsError):
        copy_rows[None, 1](x, z, 1)
