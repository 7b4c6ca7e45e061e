"""Loads and stores of the float types without a torch dtype (HF8 here) move the bytes as they are:
a uint8 host tensor in, the same bytes out. (The fixpipe's conversion into HF8 applies only to a
result of another dtype, tests/ops/test_matrix.py.)"""
from __future__ import annotations

import torch

import pypto_pro.language as pl


@pl.jit()
def hf8_copy(a: pl.Tensor[[2, 256], pl.DT_HF8], out: pl.Tensor[[2, 256], pl.DT_HF8]):
    tt = pl.TileType(shape=[2, 256], dtype=pl.DT_HF8, target_memory=pl.MemorySpace.Vec)
    t = pl.make_tile(tt, addr=0, size=512)
    with pl.section_vector():
        pl.load(t, a, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.store(out, t, [0, 0])


def test_hf8_tile_round_trip_keeps_every_byte():
    a = torch.arange(512, dtype=torch.int32).remainder(256).to(torch.uint8).reshape(2, 256)  # all 256 patterns
    out = torch.zeros_like(a)
    hf8_copy[None, 1](a, out)
    assert torch.equal(out, a)
