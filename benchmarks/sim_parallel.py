"""Serial against two-process blocks (the prototype benchmarks/sim_parallel_blocks.py) on the rows of
sim_speed.py (issue 15; the design was measured here and rejected: docs/simulator.md "Parallel blocks").

For each row, in one process: a first call (compile), then ``--repeat`` rounds that each run the
warm launch with ``PYPTO_PRO_SIM_FORK_BLOCKS=1`` and with ``=N`` back to back (the order alternating
round by round, so both see the same machine load). A row's **speedup** is the median of the
per-round ratios serial / parallel wall time (and each against the row's torch reference, timed in
the same round, as sim_speed.py's ratio); its **CPU critical-path speedup** the median of serial
CPU seconds over the parallel launch's critical path in CPU seconds (the parent's, plus what its
slowest child spent beyond the parent's own share of the blocks): what the wall-clock speedup would
be on an otherwise idle machine, where each process has a core. Every run's fingerprint (outputs and report, as sim_speed.py
prints it) must be the serial one; the row fails otherwise. Also printed: the 1-minute load
average before each round (the machine is shared: with no idle core a second process cannot win,
which is why the automatic mode looks at it), and what the parallel module did with the launch.

    python benchmarks/sim_parallel.py [--small] [--rows add,gemm,fa,fa_causal] [--repeat 5] [--workers 2]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import sim_parallel_blocks as parallel_blocks  # noqa: E402
import sim_speed  # noqa: E402
from sim_fingerprint import _sha, report_digest  # noqa: E402


def row_run(row: str, repeat: int, workers: int) -> dict:
    import numpy as np
    parallel_blocks.install()
    launch, ref, outputs, _, what, _, _ = sim_speed._setup(row)

    def timed(mode: str) -> tuple[float, float, tuple, dict]:
        os.environ[parallel_blocks.ENV] = mode
        for o in outputs:
            o[...] = 0
        c0, t0 = time.process_time(), time.perf_counter()
        report = launch()
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        digest = (_sha(*(np.ascontiguousarray(o).tobytes() for o in outputs)), report_digest(report))
        return wall, cpu, digest, dict(parallel_blocks.last)

    _, _, want, _ = timed("1")
    rounds = []
    for i in range(repeat):
        load = os.getloadavg()[0]
        order = ("1", str(workers)) if i % 2 == 0 else (str(workers), "1")
        t0 = time.perf_counter()
        ref()  # the same math in one torch call, this round (sim_speed.py's reference)
        torch_s = time.perf_counter() - t0
        got = {mode: timed(mode) for mode in order}
        for mode, (_, _, digest, _) in got.items():
            if digest != want:
                raise SystemExit(f"{row}: PYPTO_PRO_SIM_FORK_BLOCKS={mode} computed something else than the serial run")
        par = got[str(workers)]
        did = par[3]
        # on an idle machine the parallel launch would take about its critical path in CPU seconds: the
        # parent's, plus the time it waited for the slowest child beyond its own share
        ahead = did.get("cpu_wait", 0.0) - did.get("cpu_fork", 0.0)
        idle = par[1] + max([0.0] + [c - ahead for c in did.get("cpu_children", [])])
        rounds.append({"load": load, "torch_s": torch_s, "serial_s": got["1"][0], "parallel_s": par[0], "serial_cpu_s": got["1"][1],
                       "parallel_parent_cpu_s": par[1], "parallel_critical_cpu_s": idle,
                       "children_cpu_s": did.get("cpu_children", []), "ranges": did["ranges"],
                       "children": did["children"]})
    return {"row": row, "what": what, "workers": workers, "fingerprint": "/".join(want),
            "speedup": statistics.median(r["serial_s"] / r["parallel_s"] for r in rounds),
            "cpu_speedup": statistics.median(r["serial_cpu_s"] / r["parallel_critical_cpu_s"] for r in rounds),
            "serial_ratio": statistics.median(r["serial_s"] / r["torch_s"] for r in rounds),
            "parallel_ratio": statistics.median(r["parallel_s"] / r["torch_s"] for r in rounds),
            "rounds": rounds}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", default=",".join(sim_speed.ROWS))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--small", action="store_true", help="sim_speed.py's smaller shapes")
    ap.add_argument("--out", default=None, help="JSON name under benchmarks/results/ (default sim_parallel[_small])")
    args = ap.parse_args()
    sim_speed.SMALL = args.small
    from _common import print_table, write_json
    results = [row_run(row, args.repeat, args.workers) for row in args.rows.split(",")]
    for r in results:
        rs = r["rounds"]

        def col(key: str, fmt: str = ".3f", rs=rs) -> str:
            return ", ".join(format(x[key], fmt) for x in rs)
        print(f"{r['row']}: speedup {r['speedup']:.2f}x; serial {col('serial_s')} s; parallel {col('parallel_s')} s; "
              f"load {col('load', '.1f')}; CPU: serial {col('serial_cpu_s')} s, parallel critical path "
              f"{col('parallel_critical_cpu_s')} s; {rs[-1]['ranges']} {rs[-1]['children']}")
    print(f"\nmachine: {os.cpu_count()} cores")
    print_table(["row", "wall speedup", "serial s", "parallel s", "vs torch: serial", "parallel",
                 "CPU critical-path speedup", "load", "split", "fingerprint (every run)"],
                [[r["row"], f"{r['speedup']:.2f}x", f"{statistics.median(x['serial_s'] for x in r['rounds']):.3f}",
                  f"{statistics.median(x['parallel_s'] for x in r['rounds']):.3f}", f"{r['serial_ratio']:.1f}x",
                  f"{r['parallel_ratio']:.1f}x", f"{r['cpu_speedup']:.2f}x",
                  f"{statistics.median(x['load'] for x in r['rounds']):.1f}",
                  " ".join(f"{lo}-{hi - 1}" for lo, hi in r["rounds"][-1]["ranges"]) or "serial",
                  r["fingerprint"]] for r in results])
    out = args.out if args.out is not None else ("sim_parallel_small" if args.small else "sim_parallel")
    if out:
        print(f"wrote {write_json(out, {'cores': os.cpu_count(), 'small': args.small, 'rows': results})}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
