"""Shared by the VF tests: the one builder of their kernels (``vf_kernel``: loads one to three tiles,
optionally the output tile too, runs a vector function on them and stores the output tile;
``two_in_kernel`` for [1, lanes] tiles), the MTE2 -> V and V -> MTE3
hand-offs as inlined helpers (``to_v``, ``to_mte3``), plus seeded input data."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import torch

import pypto_pro.language as pl

ALL = pl.MaskPattern.ALL
TORCH = {pl.DT_FP32: torch.float32, pl.DT_FP16: torch.float16, pl.DT_INT32: torch.int32,
         pl.DT_UINT32: torch.uint32, pl.DT_INT16: torch.int16, pl.DT_BF16: torch.bfloat16}

NP = {pl.DT_INT8: np.dtype(np.int8), pl.DT_UINT8: np.dtype(np.uint8), pl.DT_INT16: np.dtype(np.int16),
      pl.DT_UINT16: np.dtype(np.uint16), pl.DT_INT32: np.dtype(np.int32), pl.DT_UINT32: np.dtype(np.uint32),
      pl.DT_INT64: np.dtype(np.int64), pl.DT_UINT64: np.dtype(np.uint64), pl.DT_FP16: np.dtype(np.float16),
      pl.DT_BF16: np.dtype(ml_dtypes.bfloat16), pl.DT_FP32: np.dtype(np.float32)}
"""The NumPy dtype of each VF lane type (the one table of the VF tests)."""


def lanes(dt) -> int:
    return 256 // (dt.bits // 8)


def tile_type(dt, n=1):
    return pl.TileType(shape=[n, lanes(dt)], dtype=dt, target_memory=pl.MemorySpace.Vec)


def to_v(event: int = 0) -> None:
    """MTE2 -> V hand-off (inlined into a kernel): V goes on once the loads before it are done."""
    pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=event)
    pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=event)


def to_mte3(event: int = 1) -> None:
    """V -> MTE3 hand-off (inlined into a kernel): the store waits for the vector work before it."""
    pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=event)
    pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=event)


def _packed(tts) -> list[int]:
    """Tile addresses one after the other, each start rounded up to 256 bytes."""
    addrs, at = [], 0
    for tt in tts:
        addrs.append(at)
        at += -(-tt.nbytes // 256) * 256
    return addrs


def vf_kernel(body, ins, out, addrs=None, dynamic=False, preload_out=False, scalars=None, **jit_options):
    """The VF tests' one kernel builder: load each input tensor into a Vec tile, hand off to V, run
    ``body(*input_tiles, out_tile)``, hand off to MTE3 and store the out tile.

    ``ins`` (one to three) and ``out`` are ``(dtype, [rows, cols])``; the tensors are typed with those
    shapes (``dynamic``: ``[DYNAMIC, DYNAMIC]``). The tiles sit at ``addrs`` (default: one after the
    other, each start rounded up to 256 bytes). ``preload_out``: the out tile is loaded from the out
    tensor before the body runs, so bytes the body does not write keep the tensor's (a sentinel fill of
    the out tensor makes them observable). ``scalars`` (None, 1 or 2): the kernel takes two INT64
    scalars ``n, s`` after ``out`` and the body gets ``n`` (1) or ``n, s`` (2) after the out tile.
    ``jit_options`` go to ``pl.jit``."""
    specs = [*ins, out]
    tts = [pl.TileType(shape=list(shape), dtype=dt, target_memory=pl.MemorySpace.Vec) for dt, shape in specs]
    addrs = _packed(tts) if addrs is None else addrs
    T = [pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC] if dynamic else list(shape), dt] for dt, shape in specs]
    both = scalars == 2
    if len(ins) == 1 and scalars is None:
        A, O = T

        def kernel(a: A, out: O):
            ta, to = pl.make_tile(tts[0], addr=addrs[0]), pl.make_tile(tts[1], addr=addrs[1])
            with pl.section_vector():
                pl.load(ta, a, [0, 0])
                if preload_out:
                    pl.load(to, out, [0, 0])
                to_v()
                body(ta, to)
                to_mte3()
                pl.store(out, to, [0, 0])
    elif len(ins) == 1:
        A, O = T

        def kernel(a: A, out: O, n: pl.DT_INT64, s: pl.DT_INT64):
            ta, to = pl.make_tile(tts[0], addr=addrs[0]), pl.make_tile(tts[1], addr=addrs[1])
            with pl.section_vector():
                pl.load(ta, a, [0, 0])
                if preload_out:
                    pl.load(to, out, [0, 0])
                to_v()
                if both:
                    body(ta, to, n, s)
                else:
                    body(ta, to, n)
                to_mte3()
                pl.store(out, to, [0, 0])
    elif len(ins) == 2 and scalars is None:
        A, B, O = T

        def kernel(a: A, b: B, out: O):
            ta, tb = pl.make_tile(tts[0], addr=addrs[0]), pl.make_tile(tts[1], addr=addrs[1])
            to = pl.make_tile(tts[2], addr=addrs[2])
            with pl.section_vector():
                pl.load(ta, a, [0, 0])
                pl.load(tb, b, [0, 0])
                if preload_out:
                    pl.load(to, out, [0, 0])
                to_v()
                body(ta, tb, to)
                to_mte3()
                pl.store(out, to, [0, 0])
    elif len(ins) == 2:
        A, B, O = T

        def kernel(a: A, b: B, out: O, n: pl.DT_INT64, s: pl.DT_INT64):
            ta, tb = pl.make_tile(tts[0], addr=addrs[0]), pl.make_tile(tts[1], addr=addrs[1])
            to = pl.make_tile(tts[2], addr=addrs[2])
            with pl.section_vector():
                pl.load(ta, a, [0, 0])
                pl.load(tb, b, [0, 0])
                if preload_out:
                    pl.load(to, out, [0, 0])
                to_v()
                if both:
                    body(ta, tb, to, n, s)
                else:
                    body(ta, tb, to, n)
                to_mte3()
                pl.store(out, to, [0, 0])
    elif len(ins) == 3 and scalars is None:
        A, B, C, O = T

        def kernel(a: A, b: B, c: C, out: O):
            ta, tb = pl.make_tile(tts[0], addr=addrs[0]), pl.make_tile(tts[1], addr=addrs[1])
            tc, to = pl.make_tile(tts[2], addr=addrs[2]), pl.make_tile(tts[3], addr=addrs[3])
            with pl.section_vector():
                pl.load(ta, a, [0, 0])
                pl.load(tb, b, [0, 0])
                pl.load(tc, c, [0, 0])
                if preload_out:
                    pl.load(to, out, [0, 0])
                to_v()
                body(ta, tb, tc, to)
                to_mte3()
                pl.store(out, to, [0, 0])
    else:
        raise ValueError(f"vf_kernel takes one to three inputs (scalars: one or two), got {len(ins)}, {scalars}")
    return pl.jit(**jit_options)(kernel)


def two_in_kernel(body, dt, out_dt=None):
    """A kernel: load a, b ([1, lanes] of dt), run ``body(ta, tb, to)``, store out ([1, lanes] of out_dt)."""
    out_dt = out_dt or dt
    return vf_kernel(body, [(dt, [1, lanes(dt)])] * 2, (out_dt, [1, lanes(out_dt)]), dynamic=True)


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
