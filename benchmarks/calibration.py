"""Cost-model calibration against PTO-ISA's cost-model system-test samples.

a2a3: measured on 910B hardware for TADD/TLOAD (``tests/costmodel/st``); exact formula values for
TMATMUL. Goal: every issue row within 20%. a5: cycles measured on Ascend 950 in PTO-ISA's
``tests/costmodel/st_a5_fit`` (tadd_fit, tmul_fit, texp_fit), the data its a5 formulas were fitted to;
the rows check that our a5 table evaluates those formulas as PTO-ISA does. Goal: within 10% (the
fits' own error on these samples reaches 6.5%, TMUL 10x640: PTO-ISA's precision 0.9346).

    python benchmarks/calibration.py
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import print_table, write_json  # noqa: E402
from pypto_pro.arch import get_arch  # noqa: E402
from pypto_pro.backends.sim.cost_model import CostModel  # noqa: E402
from pypto_pro.ops import INSTRUCTIONS  # noqa: E402


def samples_a2a3(cm: CostModel) -> list[tuple[str, float, float]]:
    return [
        ("TADD fp32 64x64", cm.vector(INSTRUCTIONS["add"].cost, 64, 64, 4, True), 132),
        ("TLOAD fp32 128x128 (GM->UB)", cm.path("GM->Vec", 128 * 128 * 4), 776),
        ("TMATMUL fp16 m40 k50 n60", cm.cube(40, 60, 50, 2, True), 54),
        ("TMATMUL fp32 m120 k110 n50", cm.cube(120, 50, 110, 4, True), 902),
        ("TROWSUM fp32 64x64", cm.vector(INSTRUCTIONS["row_sum"].cost, 64, 64, 4, True), 492),
        ("TCOLSUM fp32 64x64", cm.vector(INSTRUCTIONS["col_sum"].cost, 64, 64, 4, True), 1188),
    ]


def samples_a5(cm: CostModel) -> list[tuple[str, float, float]]:
    # (rows, valid cols, contiguous): a tile with more columns than valid ones is the strided form
    return [
        ("TADD fp32 1x1280", cm.vector(INSTRUCTIONS["add"].cost, 1, 1280, 4, True), 80),
        ("TADD fp32 20x1312 valid 20x1280", cm.vector(INSTRUCTIONS["add"].cost, 20, 1280, 4, False), 869),
        ("TMUL fp32 10x672 valid 10x640", cm.vector(INSTRUCTIONS["mul"].cost, 10, 640, 4, False), 245),
        ("TEXP fp16 1x1280", cm.vector(INSTRUCTIONS["exp"].cost, 1, 1280, 2, True), 103),
        ("TEXP fp16 10x1344 valid 10x1280", cm.vector(INSTRUCTIONS["exp"].cost, 10, 1280, 2, False), 463),
    ]


def _check(title: str, samples: list[tuple[str, float, float]], skip: tuple[str, ...] = ()) -> tuple[float, list]:
    rows, out, worst = [], [], 0.0
    for name, model, ref in samples:
        err = abs(model - ref) / ref
        if not any(s in name for s in skip):
            worst = max(worst, err)
        rows.append([name, f"{model:.0f}", ref, f"{err:+.1%}" if model >= ref else f"{-err:+.1%}"])
        out.append({"sample": name, "model_cycles": model, "reference_cycles": ref, "rel_error": err})
    print(title)
    print_table(["sample", "model", "reference", "error"], rows)
    return worst, out


def main() -> int:
    worst, out = _check("a2a3 cost model vs PTO-ISA cost-model system-test samples (cycles)",
                        samples_a2a3(CostModel(get_arch("a2a3"))), skip=("TROW", "TCOL"))
    print(f"worst error on the four issue samples: {worst:.1%} (goal: within 20%)\n")
    worst5, out5 = _check("a5 cost model vs PTO-ISA st_a5_fit measurements on Ascend 950 (cycles)",
                          samples_a5(CostModel(get_arch("a5"))))
    print(f"worst a5 error: {worst5:.1%} (goal: within 10%)")
    print(f"wrote {write_json('calibration', {'samples': out, 'worst_issue_sample_error': worst, 'a5_samples': out5, 'a5_worst_error': worst5})}")
    return 0 if worst <= 0.20 and worst5 <= 0.10 else 1


if __name__ == "__main__":
    sys.exit(main())
