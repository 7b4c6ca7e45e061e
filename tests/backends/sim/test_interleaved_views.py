"""The race checker on tiles over one buffer: two slots whose valid regions interleave by rows (each
touches its own half of every row) share no byte and do not race; two that do share bytes race."""
import warnings

import pytest
import torch

import pypto_pro.language as pl
from pypto_pro import MemoryOverlapWarning
from pypto_pro.backends.sim.checks import _strided_disjoint
from pypto_pro.errors_sim import RaceError

TT = pl.TileType(shape=[16, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
X = pl.Tensor[[16, 128], pl.DT_FP32]


def _halves(shift: int):
    @pl.jit(arch="a5", auto_mutex=True)
    def kernel(x: X, out: X):
        g = pl.make_tile_group(type=TT, addrs=[0x0, shift], mutex_ids=[0, 1])  # two ids: nothing orders the slots
        with pl.section_vector():
            ping = g[0]
            pl.set_validshape(ping, [16, 64])
            pl.load(ping, x, [0, 0])
            pl.adds(ping, ping, 1.0)
            pl.store(out, ping, [0, 0])
            pong = g[1]
            pl.set_validshape(pong, [16, 64])
            pl.load(pong, x, [0, 64])
            pl.adds(pong, pong, 3.0)
            pl.store(out, pong, [0, 64])
    return kernel


def test_slots_interleaved_by_rows_do_not_race():
    x = torch.rand(16, 128)
    out = torch.zeros_like(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MemoryOverlapWarning)
        _halves(256).options(check="raise")(x, out)  # pong starts half a row (64 fp32) into ping
    want = x.clone()
    want[:, :64] += 1
    want[:, 64:] += 3
    torch.testing.assert_close(out, want)


def test_slots_that_share_bytes_still_race():
    x = torch.rand(16, 128)
    out = torch.zeros_like(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MemoryOverlapWarning)
        with pytest.raises(RaceError, match="g\\[1\\]"):
            _halves(128).options(check="raise")(x, out)  # a quarter row in: the halves overlap


@pytest.mark.parametrize("lo1,g1,lo2,g2,apart", [
    (0, (16, 512, 256), 256, (16, 512, 256), True),
    (0, (16, 512, 256), 128, (16, 512, 256), False),
    (0, (2, 512, 256), 1024, (1, 64, 64), True),    # after the last row
    (0, (2, 512, 256), 300, (1, 64, 64), True),     # inside the gap of row 0
    (0, (2, 512, 256), 480, (1, 64, 64), False),    # runs from the gap into row 1
])
def test_strided_disjointness(lo1, g1, lo2, g2, apart):
    assert _strided_disjoint(lo1, g1, lo2, g2) is apart
    assert _strided_disjoint(lo2, g2, lo1, g1) is apart
