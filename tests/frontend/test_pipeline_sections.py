"""The real form of a pipeline stage call: ``with pl.section_vector(): stage(...)`` in the loop body
(the stage itself holds no section), next to our form where the stage holds its section."""
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.errors import CompileError

TM, TN, NT = 16, 64, 4
VT = pl.TileType(shape=[TM, TN], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
X = pl.Tensor[[TM * NT, TN], pl.DT_FP16]


@pl.pipeline.stage
def double_rows(k, a, out, g):
    tile = g[0]
    if k == 1:
        tile = g[1]
    elif k >= 2:
        tile = g[k]
    pl.load(tile, a, [k * TM, 0])
    pl.add(tile, tile, tile)
    pl.store(out, tile, [k * TM, 0])


@pl.jit(arch="a5", auto_mutex=True, pipeline=pl.pipeline.PipelineConfig(preload=1))
def stage_in_section(a: X, out: X):
    g = pl.make_tile_group(type=VT, addrs=0x0000, mutex_ids=[20, 21, 22, 23])
    for k in pl.range(0, NT):
        with pl.section_vector():
            double_rows(k, a, out, g)


def test_a_stage_called_inside_a_section_runs():
    a = torch.rand(TM * NT, TN).half()
    out = torch.zeros_like(a)
    stage_in_section(a, out)
    torch.testing.assert_close(out.float(), a.float() * 2, rtol=3e-3, atol=3e-3)


@pl.pipeline.stage
def holds_its_section(k, a, out, g):
    with pl.section_vector():
        tile = g[0]
        pl.load(tile, a, [k * TM, 0])
        pl.store(out, tile, [k * TM, 0])


def test_a_stage_with_its_own_section_called_inside_one_is_an_error():
    @pl.jit(arch="a5", auto_mutex=True, pipeline=pl.pipeline.PipelineConfig(preload=1))
    def kernel(a: X, out: X):
        g = pl.make_tile_group(type=VT, addrs=0x0000, mutex_ids=[0])
        for k in pl.range(0, NT):
            with pl.section_vector():
                holds_its_section(k, a, out, g)
    with pytest.raises(CompileError, match="holds its own section and is also called inside"):
        kernel.compile()
