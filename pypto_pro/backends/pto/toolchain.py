"""The vendor toolchain (CANN ``bisheng``), used when present to build ``kernel.cpp`` into a
shared object. Absent here (no CANN on these machines): ``maybe_build`` then does nothing and the
kernel runs on the simulator; the emitted C++ is still produced and cached."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from pypto_pro.errors import PyptoError

ARCH_FLAGS = {"a2a3": "dav-c220", "a5": "dav-c310"}  # --cce-aicore-arch values


class ToolchainError(PyptoError):
    """bisheng failed on emitted code (a pypto_pro bug or a toolchain mismatch)."""


def available() -> bool:
    return bool(os.environ.get("ASCEND_HOME_PATH")) and shutil.which("bisheng") is not None


def version() -> str:
    if not available():
        return "none"
    out = subprocess.run(["bisheng", "--version"], capture_output=True, text=True, check=False)
    return (out.stdout or out.stderr).splitlines()[0] if (out.stdout or out.stderr) else "bisheng"


def maybe_build(directory: Path, symbol: str, arch) -> Path | None:
    """Compile ``kernel.cpp`` + ``launcher.cpp`` in ``directory`` into ``lib<symbol>.so`` when the
    toolchain is present; returns its path, or None without a toolchain."""
    if not available():
        return None
    home = Path(os.environ["ASCEND_HOME_PATH"])
    pto = os.environ.get("PTO_ISA_ROOT", str(home / "include"))
    out = directory / f"lib{symbol}.so"
    cmd = ["bisheng", "-std=c++20", "-O2", "-fPIC", "-shared", "-xcce", f"--cce-aicore-arch={ARCH_FLAGS[arch.name]}",
           f"-I{pto}/include", f"-I{home}/include", str(directory / "kernel.cpp"), str(directory / "launcher.cpp"),
           "-o", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ToolchainError(f"bisheng failed building {symbol}:\n{' '.join(cmd)}\n{done.stderr[-4000:]}")
    return out
