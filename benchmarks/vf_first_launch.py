"""First-launch CPU time of a VF flash-attention kernel of the real system tests, two trees in one run.

The real FA perf tests (``frontend/fa/*vf_bufid*`` ...) relaunch one kernel 20 times; the launch memo
answers launches 2..20, so their first launch is what meets the conformance harness's limit. This
runs one first launch (compile + timed run, every check on, memo off) of the kernel
``fa_perf_tkv_preload_dn_kernel(q, k, v, o)`` of a test file on a smaller shape, once per tree, each
in its own child process, and prints CPU seconds (``time.process_time``: the 2-core machine is
shared, wall time moves 2x with the load), the before / after ratio and a fingerprint of the output
and the whole launch report (they must be equal). The test file comes from a harness run
(``.conformance/src/st/...``); nothing of it is kept in the project.

    python benchmarks/vf_first_launch.py --file <test.py> --base /tmp/base [--shape 2048,2048,16] [--repeat 2]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHIM = "/work/shared/conformance/shim"

CHILD = r"""
import hashlib, importlib.util, json, os, sys, time, warnings
os.environ["PYPTO_PRO_SIM_MEMO"] = "0"
sys.path.insert(0, sys.argv[5])
path, sq, skv, cores = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
import torch
warnings.simplefilter("ignore")
spec = importlib.util.spec_from_file_location("m", path); m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
from sim_fingerprint import report_digest
torch.manual_seed(42)
q, k, v = (torch.rand((n, 128), dtype=torch.float16) for n in (sq, skv, skv))
o = torch.zeros((sq, 128), dtype=torch.float16)
c0 = time.process_time()
m.fa_perf_tkv_preload_dn_kernel[None, cores](q, k, v, o)
c1 = time.process_time()
rep = m.fa_perf_tkv_preload_dn_kernel.last_report
print(json.dumps({"cpu_s": round(c1 - c0, 3), "out": hashlib.sha256(o.numpy().tobytes()).hexdigest()[:16],
                  "report": report_digest(rep)}))
"""


def run(tree: str, file: str, shape: list[int]) -> dict:
    env = dict(os.environ, PYTHONPATH=f"{SHIM}:{tree}", PYPTO_PRO_BUILD_DIR=f"/tmp/vf_first_launch_{os.getpid()}")
    out = subprocess.run([sys.executable, "-c", CHILD, file, *map(str, shape), str(HERE)], env=env,
                         capture_output=True, text=True, check=True, cwd="/tmp")  # not this tree by sys.path[0]
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--file", required=True)
    ap.add_argument("--base", required=True, help="a checkout of the tree to compare with (git archive <rev>)")
    ap.add_argument("--shape", default="2048,2048,16", help="sq,skv,cores")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--out", default=str(HERE / "results" / "vf_first_launch.json"))
    a = ap.parse_args()
    shape = [int(x) for x in a.shape.split(",")]
    rows = {"base": [], "this": []}
    for _ in range(a.repeat):  # alternate, so both trees see the same load
        rows["base"].append(run(a.base, a.file, shape))
        rows["this"].append(run(str(HERE.parent), a.file, shape))
    best = {k: min(r["cpu_s"] for r in v) for k, v in rows.items()}
    prints = {k: sorted({(r["out"], r["report"]) for r in v}) for k, v in rows.items()}
    print(f"{'tree':6} {'CPU s (runs)':30} {'best':>7}  fingerprint (out/report)")
    for k, v in rows.items():
        print(f"{k:6} {', '.join(str(r['cpu_s']) for r in v):30} {best[k]:7.2f}  {prints[k]}")
    print(f"before / after (best CPU): {best['base'] / best['this']:.2f}x; "
          f"same bytes: {prints['base'] == prints['this']}")
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps({"file": Path(a.file).name, "shape": shape, "runs": rows, "best_cpu_s": best,
                                       "ratio": best["base"] / best["this"],
                                       "same_bytes": prints["base"] == prints["this"]}, indent=1))


if __name__ == "__main__":
    main()
