"""pl.div / pl.divs on integer tiles (real div.md: 16 / 32 / 64-bit integers; a5 TDIV): C division,
truncated toward zero; a zero divisor is a located error (the chip's result is undefined)."""
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.errors import CompileError, SimulationError


def _kernel(dtype, scalar):
    T = pl.Tensor[[8, 64], dtype]
    tt = pl.TileType(shape=[8, 64], dtype=dtype, target_memory=pl.MemorySpace.Vec)

    @pl.jit(auto_mutex=True)
    def kernel(a: T, b: T, o: T):
        ga = pl.make_tile_group(type=tt, addrs=0, mutex_ids=[0])
        gb = pl.make_tile_group(type=tt, addrs=0x1000, mutex_ids=[1])
        with pl.section_vector():
            x = ga.next()
            y = gb.next()
            pl.load(x, a, [0, 0])
            pl.load(y, b, [0, 0])
            pl.div(x, x, y)
            pl.div(x, x, scalar)
            pl.store(o, x, [0, 0])
    return kernel


@pytest.mark.parametrize("dtype,tdt", [(pl.DT_INT32, torch.int32), (pl.DT_INT16, torch.int16)])
def test_signed_division_truncates_toward_zero(dtype, tdt):
    a = torch.randint(-3000, 3000, (8, 64), dtype=tdt)
    b = torch.randint(1, 9, (8, 64), dtype=tdt) * torch.where(torch.rand(8, 64) < 0.5, -1, 1).to(tdt)
    o = torch.zeros_like(a)
    _kernel(dtype, -3)(a, b, o)
    want = torch.div(torch.div(a, b, rounding_mode="trunc"), -3, rounding_mode="trunc")
    assert torch.equal(o, want)  # floor division would differ on every negative inexact quotient


def test_a_zero_divisor_is_a_located_error():
    a = torch.ones(8, 64, dtype=torch.int32)
    b = torch.ones(8, 64, dtype=torch.int32)
    b[2, 3] = 0
    with pytest.raises(SimulationError, match="integer division by zero"):
        _kernel(pl.DT_INT32, 2)(a, b, torch.zeros_like(a))


def test_int8_is_not_a_div_dtype():
    with pytest.raises(CompileError, match="pl.div does not support DT_INT8"):
        _kernel(pl.DT_INT8, 2).compile()
