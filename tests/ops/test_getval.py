"""pl.getval / x[i, j] on a GM tensor: the read value drives addresses and scalar operands (reads of
tiles and of tensors the kernel writes: test_tile_element.py)."""
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.errors_sim import OutOfBoundsError

VEC = pl.MemorySpace.Vec


@pl.jit
def pick_row(x: pl.Tensor[[4, 64], pl.DT_FP32], idx: pl.Tensor[[1, 8], pl.DT_INT32], out: pl.Tensor[[1, 64], pl.DT_FP32]):
    t = pl.make_tile(pl.TileType(shape=[1, 64], dtype=pl.DT_FP32, target_memory=VEC), addr=0, size=256)
    with pl.section_vector():
        r = idx[0, 3]
        v = pl.getval(idx, 5)
        pl.load(t, x, [r, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.add(t, t, v)
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.store(out, t, [0, 0])


@pytest.mark.parametrize("row,add", [(2, 7), (0, -3)])
def test_getval_values_drive_the_load_offset_and_a_scalar_operand(row, add):
    x = torch.randn(4, 64)
    idx = torch.tensor([[0, 0, 0, row, 0, add, 0, 0]], dtype=torch.int32)
    out = torch.zeros(1, 64)
    pick_row(x, idx, out)
    assert torch.equal(out[0], x[row] + add)


def test_getval_drives_a_load_out_of_bounds_fault():
    idx = torch.tensor([[0, 0, 0, 9, 0, 0, 0, 0]], dtype=torch.int32)
    with pytest.raises(OutOfBoundsError):
        pick_row(torch.zeros(4, 64), idx, torch.zeros(1, 64))


@pl.jit
def row_from_1d(x: pl.Tensor[[4, 64], pl.DT_FP32], idx: pl.Tensor[[8], pl.DT_INT32], out: pl.Tensor[[1, 64], pl.DT_FP32]):
    t = pl.make_tile(pl.TileType(shape=[1, 64], dtype=pl.DT_FP32, target_memory=VEC), addr=0, size=256)
    r = idx[3]  # before any section, as the real docs do
    with pl.section_vector():
        pl.load(t, x, [r, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.store(out, t, [0, 0])


def test_getval_before_any_section_on_a_1d_tensor():
    x = torch.randn(4, 64)
    out = torch.zeros(1, 64)
    row_from_1d(x, torch.tensor([0, 0, 0, 1, 0, 0, 0, 0], dtype=torch.int32), out)
    assert torch.equal(out[0], x[1])
