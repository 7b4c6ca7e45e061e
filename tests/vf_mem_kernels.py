"""Shared by the VF data-movement tests (test_vf_memory_*.py): a kernel whose output tile is loaded from
the output tensor before the vector function runs (so a test sees which UB bytes a store left alone),
the NumPy type of each dtype, random bytes as any dtype (every bit pattern: NaN payloads, -0.0,
subnormals, int min / max) and the byte view the tests compare."""
from __future__ import annotations

import ml_dtypes
import numpy as np

import pypto_pro.language as pl

from vf_kernels import to_mte3, to_v

NP = {pl.DT_INT8: np.int8, pl.DT_UINT8: np.uint8, pl.DT_INT16: np.int16, pl.DT_UINT16: np.uint16,
      pl.DT_FP16: np.float16, pl.DT_BF16: ml_dtypes.bfloat16, pl.DT_INT32: np.int32, pl.DT_UINT32: np.uint32,
      pl.DT_FP32: np.float32, pl.DT_INT64: np.int64, pl.DT_UINT64: np.uint64}
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}

B8 = [pl.DT_INT8, pl.DT_UINT8]
B16 = [pl.DT_INT16, pl.DT_UINT16, pl.DT_FP16, pl.DT_BF16]
B32 = [pl.DT_INT32, pl.DT_UINT32, pl.DT_FP32]
B64 = [pl.DT_INT64, pl.DT_UINT64]
B8_32 = B8 + B16 + B32


def width(dt) -> int:
    return dt.bits // 8


def n_lanes(dt) -> int:
    return 256 // width(dt)


def rand(dt, n: int, seed: int) -> np.ndarray:
    """``[1, n]`` of ``dt`` made of random bytes (so every bit pattern of the type can occur)."""
    raw = np.random.default_rng(seed).integers(0, 256, n * width(dt), dtype=np.uint8)
    return raw.view(NP[dt]).reshape(1, n)


def bits(x: np.ndarray) -> np.ndarray:
    """The unsigned-integer view of ``x`` (one element per element), flattened: compares NaN payloads and -0.0."""
    return np.ascontiguousarray(x).reshape(-1).view(UINT[x.dtype.itemsize])


def io_kernel(body, ins, out, addrs=None):
    """A kernel of the tensors ``*ins, out`` (one to three inputs; each ``(dtype, n)``, a ``[1, n]`` tensor and tile): loads
    every one into its tile (the output's too, so bytes a store does not write keep the tensor's), runs
    ``body(*in_tiles, out_tile)`` and stores the output tile back. Tiles sit one after the other (each
    start rounded up to 256 bytes) unless ``addrs`` gives them."""
    specs = [*ins, out]
    tts = [pl.TileType(shape=[1, n], dtype=dt, target_memory=pl.MemorySpace.Vec) for dt, n in specs]
    if addrs is None:
        addrs, at = [], 0
        for tt in tts:
            addrs.append(at)
            at += -(-tt.nbytes // 256) * 256
    T = [pl.Tensor[[1, n], dt] for dt, n in specs]
    if len(ins) == 1:
        A, O = T

        def kernel(a: A, o: O):
            ta = pl.make_tile(tts[0], addr=addrs[0])
            to = pl.make_tile(tts[1], addr=addrs[1])
            with pl.section_vector():
                pl.load(ta, a, [0, 0])
                pl.load(to, o, [0, 0])
                to_v()
                body(ta, to)
                to_mte3()
                pl.store(o, to, [0, 0])
    elif len(ins) == 2:
        A, B, O = T

        def kernel(a: A, b: B, o: O):
            ta = pl.make_tile(tts[0], addr=addrs[0])
            tb = pl.make_tile(tts[1], addr=addrs[1])
            to = pl.make_tile(tts[2], addr=addrs[2])
            with pl.section_vector():
                pl.load(ta, a, [0, 0])
                pl.load(tb, b, [0, 0])
                pl.load(to, o, [0, 0])
                to_v()
                body(ta, tb, to)
                to_mte3()
                pl.store(o, to, [0, 0])
    elif len(ins) == 3:
        A, B, C, O = T

        def kernel(a: A, b: B, c: C, o: O):
            ta = pl.make_tile(tts[0], addr=addrs[0])
            tb = pl.make_tile(tts[1], addr=addrs[1])
            tc = pl.make_tile(tts[2], addr=addrs[2])
            to = pl.make_tile(tts[3], addr=addrs[3])
            with pl.section_vector():
                pl.load(ta, a, [0, 0])
                pl.load(tb, b, [0, 0])
                pl.load(tc, c, [0, 0])
                pl.load(to, o, [0, 0])
                to_v()
                body(ta, tb, tc, to)
                to_mte3()
                pl.store(o, to, [0, 0])
    else:
        raise ValueError(f"io_kernel takes one to three inputs, got {len(ins)}")
    return pl.jit()(kernel)


def run_io(kernel, *arrays: np.ndarray) -> np.ndarray:
    """Run ``kernel`` on copies of ``arrays`` (the last is the output's initial contents); the output."""
    args = [a.copy() for a in arrays]
    kernel[None, 1](*args)
    return args[-1]
