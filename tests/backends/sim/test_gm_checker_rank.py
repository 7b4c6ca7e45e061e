"""GM windows of rank 3 and 4 (BSND / SND layouts, a tile stored along a leading axis): two blocks whose
windows overlap on a leading axis race, and the checker's cells are where it finds them, so any two
overlapping windows must share a cell (leading axes are bucketed, never keyed by their start)."""
import itertools

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import pypto_pro.language as pl
from pypto_pro import RaceError
from pypto_pro.backends.sim import gm_checker
from pypto_pro.backends.sim.gm_checker import GM_CELL_COLS, GM_CELL_ROWS

TT = pl.TileType(shape=[128, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
P = pl.PipeType


@pl.jit()
def store_bsnd(x: pl.Tensor[[256, 64], pl.DT_FP32], z: pl.Tensor[[1, 256, 2, 64], pl.DT_FP32], step: int):
    t = pl.make_tile(TT, addr=0)
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=0)
        pl.store(z, t, [0, pl.get_block_idx() * step, 0, 0], order=[1, 3])


@pl.jit()
def store_snd(x: pl.Tensor[[256, 64], pl.DT_FP32], z: pl.Tensor[[256, 1, 64], pl.DT_FP32], step: int):
    t = pl.make_tile(TT, addr=0)
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=0)
        pl.store(z, t, [pl.get_block_idx() * step, 0, 0], order=[0, 2])


@pytest.mark.parametrize("kernel,shape,span", [(store_bsnd, (1, 256, 2, 64), "64:128"),
                                               (store_snd, (256, 1, 64), "64:128")])
def test_blocks_overlapping_on_a_leading_axis_race(kernel, shape, span):
    z = torch.zeros(shape)
    with pytest.raises(RaceError) as err:
        kernel[None, 2](torch.randn(256, 64), z, 64)
    assert "two blocks write the same bytes" in str(err.value) and span in str(err.value)


@pytest.mark.parametrize("kernel,shape", [(store_bsnd, (1, 256, 2, 64)), (store_snd, (256, 1, 64))])
def test_disjoint_leading_windows_do_not_race(kernel, shape):
    x = torch.randn(256, 64)
    z = torch.zeros(shape)
    kernel[None, 2](x, z, 128)
    got = z.reshape(256, -1)[:, :64]
    assert torch.equal(got[:128], x[:128]) and torch.equal(got[128:], x[:128])


def _window(rank: int):
    edge = st.integers(0, 3 * GM_CELL_ROWS)
    axis = st.tuples(edge, st.integers(1, 2 * GM_CELL_ROWS)).map(lambda t: (t[0], t[0] + t[1]))
    col = st.tuples(st.integers(0, 3 * GM_CELL_COLS), st.integers(1, 2 * GM_CELL_COLS)).map(
        lambda t: (t[0], t[0] + t[1]))
    return st.tuples(*([axis] * (rank - 1)), col)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 4).flatmap(lambda r: st.tuples(_window(r), _window(r))))
def test_overlapping_windows_share_a_cell(pair):
    a, b = pair
    if gm_checker._overlap(a, b):
        assert set(gm_checker._cells(a)) & set(gm_checker._cells(b))


def test_cells_cover_the_window():
    rect = ((3, 260), (0, 1), (120, 130), (500, 530))
    cells = set(gm_checker._cells(rect))
    for p in itertools.product((3, 127, 128, 259), (0,), (120, 129), (500, 511, 512, 529)):
        cell = (tuple(v // GM_CELL_ROWS for v in p[:2]), p[2] // GM_CELL_ROWS, p[3] // GM_CELL_COLS)
        assert cell in cells
    assert len(cells) == 3 * 1 * 2 * 2  # nothing outside it: 3 buckets of axis 0, 2 of the rows, 2 of the columns
