"""A run-time valid extent of 0 (a tail split between the two Vector cores that leaves one of them
nothing to store): the chip's transfer descriptors take it and move no byte, so the store writes
nothing, even at an offset one past the tensor's end. A negative extent, or a window that starts past
the end, is still a located fault."""
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.errors import SimulationError
from pypto_pro.errors_sim import OutOfBoundsError

TT = pl.TileType(shape=[16, 16], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec, valid_shape=[-1, -1])


@pl.jit()
def store_cols(x: pl.Tensor[[16, 16], pl.DT_FP32], out: pl.Tensor[[16, 16], pl.DT_FP32],
               cols: pl.DT_INT64, at: pl.DT_INT64):
    with pl.section_vector():
        if pl.get_subblock_idx() == 0:
            a = pl.make_tile(TT, addr=0x0, size=1024)
            pl.load(a, x, [0, 0])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.set_validshape(a, [16, cols])
            pl.store(out, a, [0, at])


def test_a_zero_width_store_writes_nothing():
    x = torch.randn(16, 16)
    out = torch.zeros(16, 16)
    store_cols(x, out, 0, 16)  # offset 16 == the tensor's width: an empty window at the end
    assert torch.count_nonzero(out) == 0
    store_cols(x, out, 0, 3)
    assert torch.count_nonzero(out) == 0


def test_a_negative_extent_is_a_fault():
    with pytest.raises(SimulationError, match=r"set_validshape\(\[16, -1\]\) is outside"):
        store_cols(torch.randn(16, 16), torch.zeros(16, 16), -1, 0)


def test_an_empty_window_past_the_end_is_a_fault():
    with pytest.raises(OutOfBoundsError, match="offset 17 on axis 1"):
        store_cols(torch.randn(16, 16), torch.zeros(16, 16), 0, 17)
