"""Simulator speed on the seed Add (8192 x 4096 fp16, 64 blocks): first call (compile + run) and
warm calls, functional-only (``timing=False``), with the timing model and checks off, and with the
timing model and every check on (the default). Prints a table, writes
benchmarks/results/sim_add_<arch>.json. ``--profile`` adds a cProfile summary of one timed warm
call (what dominates the time).

    python benchmarks/sim_add.py [--arch a5|a2a3] [--repeat 3] [--profile]
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from _common import print_table, write_json  # noqa: E402
import add  # noqa: E402
import pypto_pro.language as pl  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="a5")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    m, n = 8192, 4096
    torch.manual_seed(0)
    x = torch.rand([m, n], dtype=torch.float16)
    y = torch.rand([m, n], dtype=torch.float16)
    z = torch.empty([m, n], dtype=torch.float16)
    kernel = pl.jit(add.add_kernel.fn, arch=args.arch)
    t0 = time.perf_counter()
    kernel[None, m // 128](x, y, z)
    first = time.perf_counter() - t0
    exact = bool(torch.equal(z, x + y))
    warm: dict[str, list[float]] = {"functional": [], "timed": [], "timed+checks": []}
    variants = (("functional", kernel.options(timing=False)), ("timed", kernel.options(check="off")),
                ("timed+checks", kernel))
    for _ in range(args.repeat):
        for label, k in variants:
            t0 = time.perf_counter()
            k[None, m // 128](x, y, z)
            warm[label].append(time.perf_counter() - t0)
    exact &= bool(torch.equal(z, x + y))
    t0 = time.perf_counter()
    _ = x + y
    torch_time = time.perf_counter() - t0
    ratio = min(warm["timed+checks"]) / min(warm["functional"])
    rows = [["first call (compile + timed run)", f"{first:.3f}"],
            ["warm call, functional only (best)", f"{min(warm['functional']):.3f}"],
            ["warm call, timing, checks off (best)", f"{min(warm['timed']):.3f}"],
            ["warm call, timing + all checks (best)", f"{min(warm['timed+checks']):.3f}"],
            ["timed / functional", f"{ratio:.2f}x"],
            ["blocks scheduled (the others replayed a schedule)", f"{kernel.last_report.blocks_scheduled} of {m // 128}"],
            ["torch x + y on CPU", f"{torch_time:.3f}"]]
    print(f"seed Add {m}x{n} fp16, {m // 128} blocks, arch {args.arch}; exact: {exact}")
    print(f"modeled: {kernel.last_report.summary()}")
    print_table(["measure", "seconds"], rows)
    path = write_json(f"sim_add_{args.arch}", {"shape": [m, n], "arch": args.arch, "blocks": m // 128,
                                               "first_call_s": first, "warm_s": warm, "timed_over_functional": ratio,
                                               "exact": exact, "torch_add_s": torch_time,
                                               "modeled_us": kernel.last_report.us,
                                               "blocks_scheduled": kernel.last_report.blocks_scheduled})
    print(f"wrote {path}")
    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
        kernel[None, m // 128](x, y, z)
        prof.disable()
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(8)
        print(out.getvalue())
    if not exact:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
