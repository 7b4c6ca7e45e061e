"""Modeled time of the seed Add (8192 x 4096 fp16, 64 blocks) with double vs single buffering on
both arch models: modeled microseconds, fraction of the bandwidth roofline, per-pipe utilisation.
Goal: double buffering reaches >= 0.9 of the roofline; single buffering is visibly slower. A second,
smaller launch (a quarter of the rows, an eighth of the blocks) shows the regime where the chip's GM
cap does not bind and per-core transfer latency must be hidden by the second buffer.

    python benchmarks/add_buffering.py [--m 8192 --n 4096 --blocks 64]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from _common import print_table, write_json  # noqa: E402
import add_tiled  # noqa: E402  (the seed Add with the ring depth as a TilingKey field)
import pypto_pro.language as pl  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=8192)
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--blocks", type=int, default=64)
    args = ap.parse_args()
    ok = True
    results = []
    # the seed launch (chip GM cap binds), and a small launch where per-core transfer latency shows
    for m, blocks in ((args.m, args.blocks), (args.m // 4, max(1, args.blocks // 8))):
        ok &= run_config(m, args.n, blocks, results)
    print(f"wrote {write_json('add_buffering', {'runs': results})}")
    return 0 if ok else 1


def run_config(m: int, n: int, blocks: int, results: list) -> bool:
    rng = np.random.default_rng(0)
    x = rng.random((m, n)).astype(np.float16)
    y = rng.random((m, n)).astype(np.float16)
    rows, ok = [], True
    for arch in ("a2a3", "a5"):
        kernel = pl.jit(add_tiled.add_tiled.fn, arch=arch, tiling_key=add_tiled.AddKey)
        times = {}
        for depth, label in ((2, "double"), (1, "single")):
            z = np.zeros_like(x)
            report = kernel[None, blocks, {"TILE_M": 128, "DEPTH": depth}](x, y, z)
            assert np.array_equal(z, x + y)
            util = report.utilisation()
            times[label] = report.us
            rows.append([arch, label, f"{report.us:.1f}", f"{report.roofline.bound_us:.1f}",
                         f"{report.roofline_fraction:.2f}", report.roofline.limiter,
                         " ".join(f"{p}:{u:.0%}" for p, u in util.items())])
            results.append({"arch": arch, "shape": [m, n], "buffering": label, **report.to_dict()})
        slowdown = times["single"] / times["double"]
        rows.append([arch, "single/double", f"{slowdown:.2f}x", "", "", "", ""])
        ok &= slowdown > 1.05
    print(f"\nAdd {m}x{n} fp16, {blocks} blocks (modeled)")
    print_table(["arch", "buffering", "us", "roofline us", "fraction", "limiter", "pipe utilisation"], rows)
    return ok


if __name__ == "__main__":
    sys.exit(main())
