"""Shared by the VF tests: a kernel that loads two [1, lanes] tiles, runs a vector function on them and
stores a third, plus seeded input data."""
from __future__ import annotations

import torch

import pypto_pro.language as pl

ALL = pl.MaskPattern.ALL
TORCH = {pl.DT_FP32: torch.float32, pl.DT_FP16: torch.float16, pl.DT_INT32: torch.int32,
         pl.DT_UINT32: torch.uint32, pl.DT_INT16: torch.int16, pl.DT_BF16: torch.bfloat16}


def lanes(dt) -> int:
    return 256 // (dt.bits // 8)


def tile_type(dt, n=1):
    return pl.TileType(shape=[n, lanes(dt)], dtype=dt, target_memory=pl.MemorySpace.Vec)


def two_in_kernel(body, dt, out_dt=None):
    """A kernel: load a, b ([1, lanes] of dt), run ``body(ta, tb, to)``, store out ([1, lanes] of out_dt)."""
    out_dt = out_dt or dt
    tt, to_t = tile_type(dt), tile_type(out_dt)

    @pl.jit()
    def kernel(a: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], dt], b: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], dt],
               out: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], out_dt]):
        ta = pl.make_tile(tt, addr=0, size=256)
        tb = pl.make_tile(tt, addr=256, size=256)
        to = pl.make_tile(to_t, addr=512, size=256)
        with pl.section_vector():
            pl.load(ta, a, [0, 0])
            pl.load(tb, b, [0, 0])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            body(ta, tb, to)
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
            pl.store(out, to, [0, 0])
    return kernel


def run(kernel, a, b, out_dtype, n):
    out = torch.full((1, n), 7, dtype=out_dtype)
    kernel[None, 1](a, b, out)
    return out


def data(dt, n, seed, positive=False):
    g = torch.Generator().manual_seed(seed)
    if dt.is_float():
        x = torch.rand((1, n), generator=g) * 4 + 0.25 if positive else torch.randn((1, n), generator=g) * 3
        return x.to(TORCH[dt])
    return torch.randint(-1000 if dt.name.startswith("DT_INT") else 0, 1000, (1, n), generator=g).to(TORCH[dt])
