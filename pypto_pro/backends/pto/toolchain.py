"""The vendor toolchain (CANN ``bisheng``), used when present to build ``kernel.cpp`` into a
shared object. Absent here (no CANN on these machines): ``maybe_build`` then does nothing and the
kernel runs on the simulator; the emitted C++ is still produced and cached."""
from __future__ import annotations

import functools
import hashlib
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
    """What the emitted artifacts depend on besides the kernel: the emitter's own code (so an edited
    backend, e.g. in an editable install, never serves a stale cached kernel.cpp) and bisheng's version."""
    if not available():
        return f"none+{backend_digest()}"
    out = subprocess.run(["bisheng", "--version"], capture_output=True, text=True, check=False)
    name = (out.stdout or out.stderr).splitlines()[0] if (out.stdout or out.stderr) else "bisheng"
    return f"{name}+{backend_digest()}"


@functools.lru_cache(maxsize=1)
def backend_digest() -> str:
    """SHA-256 (16 hex digits) of the C++ backend's sources and the op modules holding the C++ spellings."""
    root = Path(__file__).resolve().parents[2]  # the pypto_pro package
    h = hashlib.sha256()
    for path in sorted([*(root / "backends" / "pto").glob("*.py"), *(root / "ops").rglob("*.py")]):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


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
