"""pl.div on 64-bit integer tiles (real div.md: 16/32/64-bit integers; PTO-ISA a5 TDivS / TDiv take
int64 / uint64 through Int64Div): C division, the quotient truncated toward zero, exact over the whole
64-bit range (no float rounding)."""
import pytest
import torch

import pypto_pro.language as pl

VEC = pl.MemorySpace.Vec


def _kernel(dt, scalar):
    @pl.jit(auto_mutex=True)
    def k(a: pl.Tensor[[8, 32], dt], b: pl.Tensor[[8, 32], dt], out: pl.Tensor[[8, 32], dt]):
        tt = pl.TileType(shape=[8, 32], dtype=dt, target_memory=VEC)
        ga = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
        gb = pl.make_tile_group(type=tt, addrs=0x0800, mutex_ids=[1])
        go = pl.make_tile_group(type=tt, addrs=0x1000, mutex_ids=[2])
        with pl.section_vector():
            x = ga.current()
            y = gb.current()
            o = go.current()
            pl.load(x, a, [0, 0])
            if pl.constexpr(scalar):
                pl.div(o, x, -3)
            else:
                pl.load(y, b, [0, 0])
                pl.div(o, x, y)
            pl.store(out, o, [0, 0])
    return k


def _trunc_div(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.div(a, b, rounding_mode="trunc")


@pytest.mark.parametrize("scalar", [True, False])
def test_int64_div_truncates_toward_zero_exactly(scalar):
    g = torch.Generator().manual_seed(11)
    a = torch.randint(-(2**62), 2**62, (8, 32), generator=g, dtype=torch.int64)
    a[0, :4] = torch.tensor([-7, 7, 2**62 + 1, -(2**62) - 1])
    b = torch.randint(1, 2**31, (8, 32), generator=g, dtype=torch.int64) * torch.where(
        torch.rand(8, 32, generator=g) < 0.5, -1, 1)
    out = torch.zeros_like(a)
    _kernel(pl.DT_INT64, scalar)(a, b, out)
    want = _trunc_div(a, torch.full_like(a, -3) if scalar else b)
    assert torch.equal(out, want)
    if scalar:
        assert out[0, :2].tolist() == [2, -2]  # -7 / -3 = 2.33 -> 2; 7 / -3 -> -2 (not floor's -3)
