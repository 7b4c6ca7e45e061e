"""Every fp16 operand pair through NumPy and through torch, byte-compared (backends/sim/torch_engine).

The simulator sends a large fp16 tile's ``+`` and ``/`` to torch only because this finds no pair
(of all 2^32, NaN payloads, signed zeros, subnormals and infinities included) where the bytes
differ. Other ops are listed for the record: ``sub``/``mul`` differ in which NaN they return when
both operands are NaN, ``max``/``min`` in returning a canonical NaN.

    python benchmarks/fp16_torch_exact.py                 # add,div (the ops torch_engine uses)
    python benchmarks/fp16_torch_exact.py --ops add,sub,mul,div,max,min
    python benchmarks/fp16_torch_exact.py --sample 1048576  # random pairs only (a quick look)

Takes one to three minutes of CPU per op (2^32 pairs in chunks of 2^24); exit status 1 if an op
that torch_engine uses differs anywhere.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import torch

OPS = {"add": (np.add, torch.add), "sub": (np.subtract, torch.sub), "mul": (np.multiply, torch.mul),
       "div": (np.divide, torch.div), "max": (np.maximum, torch.maximum), "min": (np.minimum, torch.minimum)}
CHUNK = 256  # values of the first operand per chunk (x 65536 of the second)


def compare(op: str, sample: int = 0) -> int:
    """How many operand pairs give other bytes (all pairs, or ``sample`` random ones)."""
    nf, tf = OPS[op]
    if sample:
        rng = np.random.default_rng(0)
        a, b = (rng.integers(0, 1 << 16, sample, dtype=np.uint16).view(np.float16) for _ in range(2))
        with np.errstate(all="ignore"):
            want = nf(a, b)
        got = tf(torch.from_numpy(a), torch.from_numpy(b)).numpy()
        return int((want.view(np.uint16) != got.view(np.uint16)).sum())
    every = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    want = np.empty((CHUNK, 1 << 16), np.float16)
    got = np.empty_like(want)
    lhs = np.empty_like(want)
    tb, tgot, tlhs = torch.from_numpy(every)[None, :], torch.from_numpy(got), torch.from_numpy(lhs)
    bad = 0
    for a0 in range(0, 1 << 16, CHUNK):
        lhs[...] = np.arange(a0, a0 + CHUNK, dtype=np.uint16).view(np.float16)[:, None]
        with np.errstate(all="ignore"):
            nf(lhs, every[None, :], out=want)
        tf(tlhs, tb, out=tgot)
        diff = want.view(np.uint16) != got.view(np.uint16)
        if diff.any():
            if not bad:
                i, j = np.argwhere(diff)[0]
                print(f"  {op}: first difference a=0x{a0 + i:04x} b=0x{j:04x}: NumPy 0x{want.view(np.uint16)[i, j]:04x}, "
                      f"torch 0x{got.view(np.uint16)[i, j]:04x}")
            bad += int(diff.sum())
    return bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ops", default="add,div")
    ap.add_argument("--sample", type=int, default=0, help="random pairs instead of all 2^32")
    args = ap.parse_args()
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1]))
    from pypto_pro.backends.sim import torch_engine
    used = set(torch_engine._OPS.values())
    torch.set_num_threads(1)
    status = 0
    for op in args.ops.split(","):
        t0 = time.perf_counter()
        bad = compare(op, args.sample)
        print(f"{op}: {bad} differing pairs of {args.sample or 1 << 32} ({time.perf_counter() - t0:.0f} s)"
              f"{'  <- used by torch_engine' if op in used else ''}", flush=True)
        if bad and op in used:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
