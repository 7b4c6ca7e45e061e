"""Modeled Cube efficiency of the example GEMM (fp16 in, fp32 out) and the simulator's wall time.
Goal (issue): 4096^3 on a2a3 reaches >= 0.9 of the modeled Cube peak; the simulation takes minutes.
Anchors: a measured A3 GEMM at 6144^3 reaches ~0.85 of peak; Triton's CPU interpreter needs ~4.2 s
for 1024^3 with no timing model (~270 s extrapolated to 4096^3).

    python benchmarks/matmul.py [--size 4096] [--arch a2a3] [--blocks N (default: the arch's AI cores)] [--trace DIR] [--check raise]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from _common import print_table, write_json  # noqa: E402
import matmul  # noqa: E402
from pypto_pro.arch import get_arch  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--arch", default="a2a3")
    ap.add_argument("--blocks", type=int, default=None, help="default: the arch's AI-core count")
    ap.add_argument("--trace", default=None)
    ap.add_argument("--check", default="raise")
    args = ap.parse_args()
    n = args.size
    if args.blocks is None:
        args.blocks = int(get_arch(args.arch).cube_cores.value)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(np.float16)
    b = rng.standard_normal((n, n)).astype(np.float16)
    c = np.zeros((n, n), np.float32)
    kernel = matmul.make_matmul(args.arch).options(check=args.check, trace=args.trace)
    t0 = time.perf_counter()
    report = kernel[None, args.blocks](a, b, c)
    wall = time.perf_counter() - t0
    ref = a.astype(np.float32) @ b.astype(np.float32)
    err = float(np.max(np.abs(c - ref)) / np.max(np.abs(ref)))
    clock = report.clock_mhz * 1e6
    tflops = report.flops / (report.us * 1e-6) / 1e12
    cube_bound = report.roofline.bounds_us.get("Cube", 0.0)
    peak_fraction = cube_bound / report.us if report.us else 0.0
    util = report.utilisation()
    print(f"GEMM {n}^3 fp16 -> fp32 on {args.arch}, {args.blocks} blocks (modeled)")
    print_table(["measure", "value"], [
        ["modeled time", f"{report.us:.1f} us ({report.cycles:.0f} cycles @ {clock / 1e6:.0f} MHz)"],
        ["achieved", f"{tflops:.1f} TFLOP/s"],
        ["fraction of Cube peak", f"{peak_fraction:.3f}"],
        ["roofline limiter", f"{report.roofline.limiter} ({report.roofline.bound_us:.1f} us)"],
        ["pipe utilisation", " ".join(f"{p}:{u:.0%}" for p, u in sorted(util.items()))],
        ["max rel. error vs numpy", f"{err:.2e}"],
        ["simulator wall time", f"{wall:.1f} s (check={args.check})"],
        ["trace", ", ".join(report.trace_files) or "(pass --trace DIR)"],
    ])
    print(f"wrote {write_json(f'matmul_{args.arch}_{n}', {'size': n, 'arch': args.arch, 'blocks': args.blocks, 'wall_s': wall, 'tflops': tflops, 'peak_fraction': peak_fraction, 'rel_error': err, **report.to_dict()})}")
    return 0 if err < 1e-2 else 1


if __name__ == "__main__":
    sys.exit(main())
