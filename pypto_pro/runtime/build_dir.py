"""Where a kernel's stage dumps go: ``./build/<kernel>/`` or ``$PYPTO_PRO_BUILD_DIR/<kernel>/``; and the
C-safe symbol a kernel name becomes.

``@pl.jit(name=...)`` takes any non-empty string, as the real one does (its tests name kernels
``ct_float_scale_2.0``). The name the user gave stays the kernel's ``name``; its C symbol and build
directory use :func:`safe_symbol`: the name itself when it is already a C identifier, otherwise the
name with every other character replaced by ``_`` plus 8 hex digits of its SHA-1, so that two names
differing only in such characters (``s_2.0`` / ``s_2_0``) never share a symbol or a directory.

Each launch also leaves its report there (``launch_report.json``: modeled time, per-pipe busy cycles,
bytes per path, roofline fraction, bottleneck, notes), so a script or test suite that only calls
kernels still leaves every kernel's figures behind, as the chip's profiler would.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pypto_pro.backends.sim.report import LaunchReport

_C_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def safe_symbol(name: str) -> str:
    """A C identifier for a kernel name (the name itself when it already is one)."""
    if _C_IDENT.fullmatch(name):
        return name
    cleaned = re.sub(r"[^A-Za-z0-9_]", "_", name)
    if not cleaned or cleaned[0].isdigit():
        cleaned = "k_" + cleaned
    return f"{cleaned}_{hashlib.sha1(name.encode('utf-8')).hexdigest()[:8]}"


def kernel_build_dir(kernel_name: str, override: str | None = None) -> Path:
    root = override or os.environ.get("PYPTO_PRO_BUILD_DIR") or "build"
    return Path(root) / safe_symbol(kernel_name)


def write_launch_report(directory: Path, report: "LaunchReport") -> None:
    """Write the last launch's report next to the kernel's dumps (best effort: a read-only or full
    disk must not fail a launch that has already produced its outputs)."""
    data = {**report.to_dict(), "timed": report.timed, "summary": report.summary(), "notes": list(report.notes),
            "faults": list(report.faults)}
    try:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "launch_report.json").write_text(json.dumps(data, indent=1, default=str))
    except OSError:
        pass
