"""The simulator against the same math in one torch call, measured in one process (issue 15).

Rows (each in its own child process, so its first call really compiles and its peak RSS is its own):

* ``add``       seed Add 8192 x 4096 fp16, 64 blocks (examples/add.py, the default arch a5)
                vs ``torch.add(x, y)`` on the fp16 tensors;
* ``gemm``      GEMM 4096^3 fp16 -> fp32, 24 blocks, a2a3 (examples/matmul.py, benchmarks/matmul.py)
                vs ``torch.mm`` of the fp32 copies of the operands (made before timing);
* ``fa``        flash attention B1 N8 S4096 D128, a5, preload 1 (examples/flash_attention.py,
                benchmarks/flash_attention.py), every check on, vs ``scaled_dot_product_attention`` in fp32;
* ``fa_causal`` the same, causal (every block has its own trip count: no schedule replay), vs SDPA
                with ``is_causal=True``.

Every kernel launch is timed with the timing model and every check on (``check="raise"``, the
default). In each child: the first kernel call (compile + run) is timed against the median torch
time; then ``--repeat`` rounds each run the torch reference and the kernel back to back, and the
row's **ratio** is the median of the per-round ratios (kernel / torch of the same round, so both
saw the same machine load). **Peak RSS** is the process's high-water mark during the kernel's
calls (reset before each with ``/proc/self/clear_refs``) minus its RSS after the imports (the
interpreter, NumPy, torch and pypto_pro), so it counts the tensors themselves plus everything the
simulator holds; it is quoted against the bytes of the kernel's tensors. That figure also counts the
torch reference's own fp32 copies of the inputs (GEMM: 1.0x the kernel's tensors, flash attention 1.35x),
which no simulation needs: the second figure (``kernel_rss_ratio``, "less ref.") leaves them out. Each row also records a
fingerprint (SHA-256 of the outputs and of the launch report) so a faster simulator can be checked
to compute exactly what the slower one did.

What the numbers depend on: the torch build (its CPU kernels and thread count: ``torch`` uses
every core), NumPy's BLAS (float64 matmuls of the Cube), the core count and clock, and above all
the load from other processes on a shared machine (ratios are taken round by round for that).

    python benchmarks/sim_speed.py [--rows add,gemm,fa,fa_causal] [--repeat 3] [--out sim_speed]
    python benchmarks/sim_speed.py --small --lanes 8   # also every round with 8 batched-replay lanes
    python benchmarks/sim_speed.py --small --base /tmp/base  # before (another checkout) / after, one run
    python benchmarks/sim_speed.py --profile fa     # cProfile of one warm call of a row (top 25)
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("PYPTO_PRO_SIM_MEMO", "0")  # time every warm call's simulation (runtime/launch_memo.py)
from sim_fingerprint import _sha, report_digest as _report_digest  # noqa: E402  (one digest for both scripts)
ROWS = ("add", "gemm", "fa", "fa_causal")
SMALL = False  # --small: the same rows on smaller shapes (a quick run on a loaded machine)
GOALS = {"ratio": 2.0, "first_ratio": 3.0, "rss_ratio": 3.0}
REF_BYTES = [0]  # bytes of the torch reference's own inputs (fp32 copies), set by _setup


def _rss_kib(field: str) -> int:
    m = re.search(rf"{field}:\s+(\d+)", Path("/proc/self/status").read_text())
    return int(m.group(1)) if m else 0


def _reset_peak() -> None:
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def _setup(row: str):
    """(kernel launcher, torch reference, output arrays, tensor bytes, description) of a row."""
    sys.path.insert(0, str(HERE.parent / "examples"))
    import numpy as np
    import torch
    if row == "add":
        import add
        import pypto_pro.language as pl
        m, n = (2048, 4096) if SMALL else (8192, 4096)
        torch.manual_seed(0)
        x = torch.rand([m, n], dtype=torch.float16)
        y = torch.rand([m, n], dtype=torch.float16)
        z = torch.empty([m, n], dtype=torch.float16)
        kernel = pl.jit(add.add_kernel.fn)
        return (lambda: kernel[None, m // 128](x, y, z), lambda: torch.add(x, y), [z],
                3 * x.numel() * 2, f"seed Add {m}x{n} fp16, {m // 128} blocks", kernel, lambda: torch.equal(z, x + y))
    if row == "gemm":
        import matmul
        n, blocks = (1024 if SMALL else 4096), 24
        rng = np.random.default_rng(0)
        a = rng.standard_normal((n, n)).astype(np.float16)
        b = rng.standard_normal((n, n)).astype(np.float16)
        c = np.zeros((n, n), np.float32)
        a32, b32 = torch.from_numpy(a.astype(np.float32)), torch.from_numpy(b.astype(np.float32))
        REF_BYTES[0] = a32.numel() * 4 + b32.numel() * 4
        kernel = matmul.make_matmul("a2a3")
        ref = {}

        def close() -> bool:
            r = ref.setdefault("r", (a32 @ b32).numpy())
            return float(np.max(np.abs(c - r)) / np.max(np.abs(r))) < 1e-5
        return (lambda: kernel[None, blocks](a, b, c), lambda: torch.mm(a32, b32), [c],
                a.nbytes + b.nbytes + c.nbytes, f"GEMM {n}^3 fp16->fp32, {blocks} blocks, a2a3", kernel, close)
    if row in ("fa", "fa_causal"):
        import flash_attention as fa
        causal = row == "fa_causal"
        arch, preload, shape = "a5", 1, ((1, 2, 1024, 128) if SMALL else (1, 8, 4096, 128))
        from pypto_pro.arch import get_arch
        blocks = int(get_arch(arch).cube_cores.value)
        rng = np.random.default_rng(0)
        q, k, v = (rng.standard_normal(shape).astype(np.float16) for _ in range(3))
        o = np.zeros_like(q)
        mask = fa.causal_mask()
        ws = fa.workspaces(blocks, shape[-1], preload)
        q32, k32, v32 = (torch.from_numpy(t.astype(np.float32)) for t in (q, k, v))
        REF_BYTES[0] = sum(t.numel() * 4 for t in (q32, k32, v32))
        kernel = fa.make_flash_attention(arch, shape[-1], causal, preload, check="raise")
        sdpa = torch.nn.functional.scaled_dot_product_attention
        nbytes = sum(t.nbytes for t in (q, k, v, o, mask, *ws))

        def close() -> bool:
            r = sdpa(q32, k32, v32, is_causal=causal).numpy()
            return float(np.max(np.abs(o.astype(np.float32) - r))) < 1e-2
        return (lambda: kernel[None, blocks](q, k, v, o, mask, *ws), lambda: sdpa(q32, k32, v32, is_causal=causal),
                [o, *ws], nbytes, f"flash attention B{shape[0]} N{shape[1]} S{shape[2]} D{shape[3]}{' causal' if causal else ''}, a5 preload 1, "
                f"{blocks} blocks", kernel, close)
    raise SystemExit(f"unknown row {row!r} (rows: {', '.join(ROWS)})")


def child(row: str, repeat: int, profile: bool, lanes: int = 0) -> dict:
    """Run one row in this process; return its measurements (``lanes``: also time every round with that
    many batched-replay lanes, ``batch_replay.LANES``, against the default)."""
    import torch  # noqa: F401  (imported before the baseline RSS is taken)
    import numpy as np  # noqa: F401
    import pypto_pro.language  # noqa: F401
    base_kib = _rss_kib("VmRSS")
    launch, ref, outputs, nbytes, what, kernel, close = _setup(row)
    t0 = time.perf_counter()
    ref()
    torch_first = time.perf_counter() - t0
    peaks = []
    _reset_peak()
    t0 = time.perf_counter()
    report = launch()
    first = time.perf_counter() - t0
    peaks.append(_rss_kib("VmHWM"))
    digest = (_sha(*(np.ascontiguousarray(o).tobytes() for o in outputs)), _report_digest(report))
    if profile:
        import cProfile
        import io
        import pstats
        prof = cProfile.Profile()
        prof.enable()
        launch()
        prof.disable()
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(25)
        print(out.getvalue(), file=sys.stderr)
        return {}
    from pypto_pro.backends.sim import batch_replay
    default_lanes = batch_replay.LANES
    lanes = 0 if lanes == default_lanes else lanes
    rounds, lane_rounds, lane_peaks, cpu, lane_cpu = [], [], [], [], []
    if lanes:  # one untimed call builds the lanes (made on first use, batch_replay.Lanes)
        batch_replay.LANES = lanes
        launch()
        batch_replay.LANES = default_lanes
    for i in range(repeat):
        t0 = time.perf_counter()
        r = ref()
        t_ref = time.perf_counter() - t0
        del r
        # with --lanes: the same round also runs the kernel with that many replay lanes, the two in
        # alternating order (so neither always runs first after torch)
        order = [default_lanes, lanes][::(1 if i % 2 == 0 else -1)] if lanes else [default_lanes]
        for n in order:
            batch_replay.LANES = n
            _reset_peak()
            c0, t0 = time.process_time(), time.perf_counter()
            report = launch()
            t_sim, c_sim = time.perf_counter() - t0, time.process_time() - c0
            if n == default_lanes:
                peaks.append(_rss_kib("VmHWM"))
                rounds.append((t_sim, t_ref))
                cpu.append(c_sim)
            else:
                lane_peaks.append(_rss_kib("VmHWM"))
                lane_rounds.append((t_sim, t_ref))
                lane_cpu.append(c_sim)
            same = (_sha(*(np.ascontiguousarray(o).tobytes() for o in outputs)), _report_digest(report))
            if same != digest:
                raise SystemExit(f"{row}: a warm call (lanes {n}) computed something else than the first one")
        batch_replay.LANES = default_lanes
    ratios = [s / r for s, r in rounds]
    torch_med = statistics.median(r for _, r in rounds)
    peak = max(peaks) - base_kib
    extra = {}
    if lanes:
        extra = {"lanes": lanes, "lanes_ratio": statistics.median(s / r for s, r in lane_rounds),
                 "lanes_sim_s": [s for s, _ in lane_rounds],
                 "lanes_speedup": statistics.median(a[0] / b[0] for a, b in zip(rounds, lane_rounds)),
                 "lanes_rss_ratio": (max(lane_peaks) - base_kib) * 1024 / nbytes, "lanes_cpu_s": lane_cpu,
                 "lanes_cpu_speedup": statistics.median(cpu) / statistics.median(lane_cpu)}
    return {"row": row, "what": what, "default_lanes": default_lanes, **extra,
            "ratio": statistics.median(ratios), "ratios": ratios, "sim_cpu_s": cpu,
            "first_s": first, "first_ratio": first / torch_med, "sim_s": [s for s, _ in rounds],
            "torch_s": [r for _, r in rounds], "torch_first_s": torch_first,
            "peak_rss_mib": peak / 1024, "base_rss_mib": base_kib / 1024, "tensor_mib": nbytes / 2**20,
            "rss_ratio": peak * 1024 / nbytes, "ref_mib": REF_BYTES[0] / 2**20,
            "kernel_rss_ratio": (peak * 1024 - REF_BYTES[0]) / nbytes, "modeled_us": report.us, "blocks_scheduled": report.blocks_scheduled,
            "blocks": report.block_num, "instructions": report.instructions, "correct": bool(close()),
            "output_sha": digest[0], "report_sha": digest[1]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", default=",".join(ROWS))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=None,
                    help="JSON name under benchmarks/results/ ('' for none; default sim_speed, sim_speed_small with --small)")
    ap.add_argument("--profile", default=None, metavar="ROW", help="cProfile one warm call of ROW and exit")
    ap.add_argument("--small", action="store_true", help="smaller shapes: add 2048x4096, GEMM 1024^3, FA N2 S1024")
    ap.add_argument("--lanes", type=int, default=0, metavar="N",
                    help="also run every round with N batched-replay lanes (default: the PYPTO_PRO_SIM_LANES "
                         "setting) and report both, with their speedup")
    ap.add_argument("--base", default=None, metavar="TREE",
                    help="also run every row on another checkout's pypto_pro (its directory, first on PYTHONPATH), "
                         "just before this tree's run of the row, and report both: a before / after in one run")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    global SMALL
    SMALL = args.small
    if args.out is None:
        args.out = "sim_speed_small" if SMALL else "sim_speed"
    if args.child:
        print("RESULT " + json.dumps(child(args.child, args.repeat, False, args.lanes)))
        return 0
    if args.profile:
        child(args.profile, 0, True)
        return 0
    sys.path.insert(0, str(HERE))
    from _common import print_table, write_json
    results = []

    def run_child(row: str, lanes: int, tree: str | None) -> dict:
        env = dict(os.environ)
        if tree is not None:
            env["PYTHONPATH"] = os.pathsep.join([str(Path(tree).resolve()), *filter(None, [env.get("PYTHONPATH")])])
        proc = subprocess.run([sys.executable, __file__, "--child", row, "--repeat", str(args.repeat),
                               "--lanes", str(lanes), *(["--small"] if SMALL else [])],
                              capture_output=True, text=True, env=env)
        line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")), None)
        if proc.returncode or line is None:
            sys.stderr.write(proc.stdout + proc.stderr)
            raise SystemExit(f"row {row} failed{f' on {tree}' if tree else ''}")
        return json.loads(line[len("RESULT "):])

    for row in args.rows.split(","):
        base = run_child(row, 0, args.base) if args.base else None
        # with --base, this tree's default run is a child of its own (as the base's is); the lanes comparison
        # then runs in a third child (its rounds run both settings, which share the process's caches)
        results.append(run_child(row, 0 if base is not None else args.lanes, None))
        r = results[-1]
        if base is not None and args.lanes:
            r["lanes_child"] = run_child(row, args.lanes, None)
        if base is not None:
            r["base"] = base
            r["cpu_speedup_vs_base"] = statistics.median(base["sim_cpu_s"]) / statistics.median(r["sim_cpu_s"])
            if (base["output_sha"], base["report_sha"]) != (r["output_sha"], r["report_sha"]):
                raise SystemExit(f"row {row}: the base tree computed something else (outputs or report)")
            print(f"{row} on {args.base}: ratio {base['ratio']:.2f}x, sim {statistics.median(base['sim_s']):.3f} s, "
                  f"CPU {statistics.median(base['sim_cpu_s']):.3f} s", flush=True)
        print(f"{row}: ratio {r['ratio']:.2f}x (rounds {', '.join(f'{x:.2f}' for x in r['ratios'])}), "
              f"first {r['first_ratio']:.2f}x, sim {statistics.median(r['sim_s']):.3f} s, "
              f"torch {statistics.median(r['torch_s']):.3f} s"
              + (f"; with {lr['lanes']} lanes (rounds of one child, default {lr['ratio']:.2f}x): ratio {lr['lanes_ratio']:.2f}x, "
                 f"sim {statistics.median(lr['lanes_sim_s']):.3f} s, speedup {lr['lanes_speedup']:.2f}x (per round, "
                 "default / lanes)" if "lanes" in (lr := r.get("lanes_child", r)) else ""), flush=True)
    load = os.getloadavg()
    print(f"\nmachine: {os.cpu_count()} cores, load average {load[0]:.1f} at the end; "
          f"goals: ratio <= {GOALS['ratio']}x, first call <= {GOALS['first_ratio']}x, "
          f"peak RSS <= {GOALS['rss_ratio']}x the tensors")
    print_table(["row", "ratio", "first-call ratio", "peak RSS (MiB)", "RSS / tensors", "less ref.", "sim s", "torch s",
                 "blocks scheduled", "exact fingerprint"],
                [[r["row"], f"{r['ratio']:.2f}x", f"{r['first_ratio']:.2f}x", f"{r['peak_rss_mib']:.0f}",
                  f"{r['rss_ratio']:.2f}x", f"{r['kernel_rss_ratio']:.2f}x" if "kernel_rss_ratio" in r else "-",
                  f"{statistics.median(r['sim_s']):.3f}",
                  f"{statistics.median(r['torch_s']):.3f}", f"{r['blocks_scheduled']} of {r['blocks']}",
                  f"{r['output_sha']}/{r['report_sha']}"] for r in results])
    if args.base:
        print(f"\nbefore ({args.base}) and after (this tree), each row's pair back to back; CPU: the simulator's own "
              "process time per warm call (median), steadier than wall time on a loaded machine")
        print_table(["row", "ratio before", "ratio after", "CPU s before", "CPU s after", "CPU speedup",
                     "peak RSS MiB before", "after", "same fingerprint"],
                    [[r["row"], f"{r['base']['ratio']:.2f}x", f"{r['ratio']:.2f}x",
                      f"{statistics.median(r['base']['sim_cpu_s']):.3f}", f"{statistics.median(r['sim_cpu_s']):.3f}",
                      f"{r['cpu_speedup_vs_base']:.2f}x", f"{r['base']['peak_rss_mib']:.0f}",
                      f"{r['peak_rss_mib']:.0f}", "yes"] for r in results])
    lanes_rows = [r.get("lanes_child", r) for r in results if "lanes" in r.get("lanes_child", r)]
    if lanes_rows:
        print(f"\nbatched replay (batch_replay.LANES): the default against {args.lanes} lanes, every round both")
        print_table(["row", "ratio (default)", f"ratio ({args.lanes} lanes)", "wall speedup (default / lanes)",
                     "CPU speedup", "RSS / tensors (lanes)"],
                    [[r["row"], f"{r['ratio']:.2f}x", f"{r['lanes_ratio']:.2f}x", f"{r['lanes_speedup']:.2f}x",
                      f"{r['lanes_cpu_speedup']:.2f}x", f"{r['lanes_rss_ratio']:.2f}x"] for r in lanes_rows])
    if args.out:
        import torch
        path = write_json(args.out, {"cores": os.cpu_count(), "load_average_end": load,
                                     "torch": torch.__version__, "torch_threads": torch.get_num_threads(),
                                     "numpy": __import__("numpy").__version__, "platform": platform.platform(),
                                     "goals": GOALS, "repeat": args.repeat, "small": SMALL, "lanes": args.lanes,
                                     "base": args.base,
                                     "rows": results})
        print(f"wrote {path}")
    return 0 if all(r["correct"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
