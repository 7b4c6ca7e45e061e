"""Flash attention forward on the simulator: modeled time, fraction of the roofline and per-pipe
utilisation for preload 0, 1 and 2 on both arch models, plus the kernel's cold compile time
(parse + pipeline transform + passes). Goal: >= 0.8 of the roofline with preload.

    python benchmarks/flash_attention.py [--batch 1 --heads 8 --seq 4096 --dim 128] [--causal] [--archs a2a3,a5]
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
import flash_attention as fa  # noqa: E402
from pypto_pro.arch import get_arch  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--seq", type=int, default=4096)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--blocks", type=int, default=None, help="default: each arch's AI-core count")
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--archs", default="a2a3,a5")
    ap.add_argument("--preloads", default="0,1,2")
    ap.add_argument("--check", default="off", help="simulator checks (off by default for speed; 'raise' works)")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    shape = (args.batch, args.heads, args.seq, args.dim)
    q, k, v = (rng.standard_normal(shape).astype(np.float16) for _ in range(3))
    rows, results = [], []
    for arch in args.archs.split(","):
        blocks = args.blocks or int(get_arch(arch).cube_cores.value)
        for preload in (int(p) for p in args.preloads.split(",")):
            kern = fa.make_flash_attention(arch, args.dim, args.causal, preload, check=args.check)
            t0 = time.perf_counter()
            kern.compile()
            compile_s = time.perf_counter() - t0
            o = np.zeros_like(q)
            t0 = time.perf_counter()
            report = kern[None, blocks](q, k, v, o, fa.causal_mask(), *fa.workspaces(blocks, args.dim, preload))
            wall = time.perf_counter() - t0
            util = report.utilisation()
            cube = max((u for p, u in util.items() if p.endswith(".M")), default=0.0)
            vec = max((u for p, u in util.items() if p.endswith(".V")), default=0.0)
            rows.append([arch, blocks, preload, f"{report.us:.1f}", f"{report.roofline.bound_us:.1f}",
                         report.roofline.limiter, f"{report.roofline_fraction:.2f}", f"{cube:.0%}", f"{vec:.0%}",
                         f"{compile_s:.2f}", f"{wall:.1f}"])
            results.append({"arch": arch, "blocks": blocks, "preload": preload, "compile_s": compile_s, "wall_s": wall,
                            **report.to_dict()})
    print(f"flash attention B={args.batch} N={args.heads} S={args.seq} D={args.dim} causal={args.causal} (modeled)")
    print_table(["arch", "blocks", "preload", "us", "roofline us", "limiter", "fraction", "Cube M busy", "Vector V busy",
                 "compile s", "sim wall s"], rows)
    print(f"wrote {write_json('flash_attention', {'shape': list(shape), 'causal': args.causal, 'runs': results})}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
