"""Shared helpers for benchmark scripts: a results folder and table printing."""
from __future__ import annotations

import json
import os
import platform
from pathlib import Path
from typing import Any

# The benchmarks time the simulation itself: an identical relaunch must simulate again, not be
# answered by the launch memo (pypto_pro/runtime/launch_memo.py).
os.environ.setdefault("PYPTO_PRO_SIM_MEMO", "0")

RESULTS = Path(__file__).resolve().parent / "results"


def write_json(name: str, payload: dict[str, Any]) -> Path:
    RESULTS.mkdir(exist_ok=True)
    payload = {"machine": platform.machine(), "python": platform.python_version(), **payload}
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(payload, indent=2))
    return path


def print_table(headers: list[str], rows: list[list[Any]]) -> None:
    cells = [[str(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths)))
    print("  ".join("-" * w for w in widths))
    for r in cells:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
