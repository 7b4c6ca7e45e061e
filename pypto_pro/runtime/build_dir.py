"""Where a kernel's stage dumps go: ``./build/<kernel>/`` or ``$PYPTO_PRO_BUILD_DIR/<kernel>/``."""
from __future__ import annotations

import os
from pathlib import Path


def kernel_build_dir(kernel_name: str, override: str | None = None) -> Path:
    root = override or os.environ.get("PYPTO_PRO_BUILD_DIR") or "build"
    return Path(root) / kernel_name
