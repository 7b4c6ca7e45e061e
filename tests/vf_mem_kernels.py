"""Shared by the VF data-movement tests (test_vf_memory_*.py): a kernel whose output tile is loaded from
the output tensor before the vector function runs (so a test sees which UB bytes a store left alone),
the dtype groups (B8 ... B64; the NumPy types are vf_kernels.NP), random bytes as any dtype (every bit pattern: NaN payloads, -0.0,
subnormals, int min / max) and the byte view the tests compare."""
from __future__ import annotations

import numpy as np

import pypto_pro.language as pl

from vf_kernels import NP, vf_kernel

UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}

B8 = [pl.DT_INT8, pl.DT_UINT8]
B16 = [pl.DT_INT16, pl.DT_UINT16, pl.DT_FP16, pl.DT_BF16]
B32 = [pl.DT_INT32, pl.DT_UINT32, pl.DT_FP32]
B64 = [pl.DT_INT64, pl.DT_UINT64]
B8_32 = B8 + B16 + B32


def width(dt) -> int:
    return dt.bits // 8


def rand(dt, n: int, seed: int) -> np.ndarray:
    """``[1, n]`` of ``dt`` made of random bytes (so every bit pattern of the type can occur)."""
    raw = np.random.default_rng(seed).integers(0, 256, n * width(dt), dtype=np.uint8)
    return raw.view(NP[dt]).reshape(1, n)


def bits(x: np.ndarray) -> np.ndarray:
    """The unsigned-integer view of ``x`` (one element per element), flattened: compares NaN payloads and -0.0."""
    return np.ascontiguousarray(x).reshape(-1).view(UINT[x.dtype.itemsize])


def io_kernel(body, ins, out, addrs=None):
    """A kernel of the tensors ``*ins, out`` (one to three inputs; each ``(dtype, n)``, a ``[1, n]`` tensor
    and tile) whose output tile is loaded from the output tensor first (so bytes a store does not write
    keep the tensor's): ``vf_kernel`` with ``preload_out``."""
    return vf_kernel(body, [(dt, [1, n]) for dt, n in ins], (out[0], [1, out[1]]), addrs=addrs, preload_out=True)


def run_io(kernel, *arrays: np.ndarray) -> np.ndarray:
    """Run ``kernel`` on copies of ``arrays`` (the last is the output's initial contents); the output."""
    args = [a.copy() for a in arrays]
    kernel[None, 1](*args)
    return args[-1]
