"""Tiles whose slots share an address range (a tile group with shifted addresses, aliased tiles)
are compared by the bytes each access touched (start, rows, row pitch, bytes per row), not by
their whole slots: two unordered accesses to disjoint parts of the shared range are no race; two
that share a byte still are."""
import random

import pytest
import torch

import pypto_pro.language as pl
from pypto_pro import RaceError
from pypto_pro.backends.sim.checks import _meets

R, W = 16, 128                      # [16, 128] fp32 tiles: 512-byte rows
V, MTE2, MTE3 = pl.PipeType.V, pl.PipeType.MTE2, pl.PipeType.MTE3
F32 = pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32]


def _kernel(cols: int):
    """Two tiles at byte 0 and byte 256 of one range (columns 0.. and 64.. of the same rows), each
    ``cols`` valid columns wide: the muls into the first and the load into the second are not
    ordered (no V -> MTE2 sync)."""
    tt = pl.TileType(shape=[R, W], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec, valid_shape=[R, cols])

    def shifted(x: F32, z: F32):
        a = pl.make_tile(tt, addr=0)
        b = pl.make_tile(tt, addr=256)
        with pl.section_vector():
            pl.load(a, x, [0, 0])
            pl.system.sync_src(set_pipe=MTE2, wait_pipe=V, event_id=0)
            pl.system.sync_dst(set_pipe=MTE2, wait_pipe=V, event_id=0)
            pl.muls(a, a, 2.0)
            pl.load(b, x, [0, 64])
            pl.system.sync_src(set_pipe=V, wait_pipe=MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=V, wait_pipe=MTE3, event_id=0)
            pl.system.sync_src(set_pipe=MTE2, wait_pipe=MTE3, event_id=1)
            pl.system.sync_dst(set_pipe=MTE2, wait_pipe=MTE3, event_id=1)
            pl.store(z, a, [0, 0])
    return pl.jit(shifted, auto_mutex=False)


def test_disjoint_parts_of_shifted_tiles_do_not_race():
    x = torch.rand(R, W)
    z = torch.zeros(R, W)
    _kernel(64)[None, 1](x, z)
    assert torch.equal(z[:, :64], x[:, :64] * 2)


def test_overlapping_parts_of_shifted_tiles_still_race():
    with pytest.raises(RaceError, match=r"data race on Vec bytes .*write / write"):
        _kernel(96)[None, 1](torch.rand(R, 2 * W), torch.zeros(R, W))


def test_footprint_meeting_matches_a_brute_force_count():
    def cells(f):
        lo, n, s, u = f
        return {lo + r * s + i for r in range(n) for i in range(u)}
    rnd = random.Random(7)
    for _ in range(3000):
        s = rnd.choice([8, 32, 512])
        a = (rnd.randrange(0, 3 * s), rnd.randint(1, 4), s, rnd.randint(1, s))
        b = (rnd.randrange(0, 3 * s), rnd.randint(1, 4), s, rnd.randint(1, s))
        assert _meets(a, b) == bool(cells(a) & cells(b)), (a, b)
    assert not _meets((0, 2, 8, 4), (4, 1, 16, 4))      # other pitches: exact too (row 0's gap)
    assert _meets((0, 2, 8, 4), (6, 1, 16, 4))
