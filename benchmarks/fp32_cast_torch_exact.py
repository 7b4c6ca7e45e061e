"""Every fp32 value through NumPy's and torch's casts to fp16 / bf16, byte-compared (backends/sim/torch_cast).

The batched VF casts go to torch only because this finds no non-NaN fp32 input (of all 2^32: signed
zeros, subnormals, ties, the overflow threshold, infinities) whose fp16 / bf16 bytes differ from NumPy's
(ml_dtypes' for bf16); NaN inputs are converted by NumPy itself there, so they are only counted here.
It also compares all 2^16 fp16 / bf16 values widened to fp32 (NaNs counted apart, likewise).

    python benchmarks/fp32_cast_torch_exact.py            # both narrow types
    python benchmarks/fp32_cast_torch_exact.py --types f16

About one to three minutes of CPU per type (chunks of 2^24 values); exit status 1 on any non-NaN difference.
"""
from __future__ import annotations

import argparse
import sys
import time

import ml_dtypes
import numpy as np
import torch

from pypto_pro.backends.sim.torch_cast import _torch_view

TYPES = {"f16": np.dtype(np.float16), "bf16": np.dtype(ml_dtypes.bfloat16)}
CHUNK = 1 << 24


def narrowing(dt: np.dtype) -> tuple[int, int]:
    """(non-NaN inputs that differ, NaN inputs that differ) over every fp32 bit pattern."""
    bad = nan_bad = 0
    bits = np.empty(CHUNK, np.uint32)
    got = np.empty(CHUNK, dt)
    tx, tgot = _torch_view(torch, bits.view(np.float32)), _torch_view(torch, got)
    for start in range(0, 1 << 32, CHUNK):
        bits[...] = np.arange(start, start + CHUNK, dtype=np.uint64).astype(np.uint32)
        x = bits.view(np.float32)
        with np.errstate(all="ignore"):
            want = x.astype(dt)
        tgot.copy_(tx)
        diff = want.view(np.uint16) != got.view(np.uint16)
        if diff.any():
            nan = np.isnan(x)
            bad += int((diff & ~nan).sum())
            nan_bad += int((diff & nan).sum())
    return bad, nan_bad


def widening(dt: np.dtype) -> tuple[int, int]:
    x = np.arange(1 << 16, dtype=np.uint16).view(dt)
    with np.errstate(all="ignore"):
        want = x.astype(np.float32)
    got = np.empty(x.shape, np.float32)
    _torch_view(torch, got).copy_(_torch_view(torch, x))
    diff = want.view(np.uint32) != got.view(np.uint32)
    nan = np.isnan(want)
    return int((diff & ~nan).sum()), int((diff & nan).sum())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--types", default="f16,bf16")
    args = ap.parse_args()
    torch.set_num_threads(1)
    failed = False
    for name in args.types.split(","):
        dt = TYPES[name]
        t0 = time.process_time()
        nb, nn = narrowing(dt)
        wb, wn = widening(dt)
        print(f"fp32 -> {name}: {nb} non-NaN inputs differ, {nn} NaN inputs differ (NumPy's there); "
              f"{name} -> fp32: {wb} non-NaN, {wn} NaN differ; {time.process_time() - t0:.0f} s CPU", flush=True)
        failed |= bool(nb or wb)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
