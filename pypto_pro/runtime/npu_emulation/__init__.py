"""NPU scripts on the simulator: an emulation of ``torch_npu`` (devices, streams, events, synchronize,
device queries) and of ``pypto.options``, so that a PyPTO Pro script or pytest suite written for an NPU
runs unchanged with ``pypto-pro run``. There is no device: tensors "on the NPU" are host tensors, and
kernels run on the simulator. See ``docs/npu_scripts.md``.

``plan(mode)`` decides what to emulate (``auto``: ``torch_npu`` unless a real one is importable, ``pypto``
unless a real one is importable); ``install(plan, arch)`` puts the emulation into this process and, via
the environment, into the Python processes it starts (``environment_for_children``).
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from pypto_pro.runtime.npu_emulation.devices import ARCH_ENV, DEFAULT, DEVICES, EmulatedDevice, lookup
from pypto_pro.runtime.npu_emulation.errors import NotEmulatedError, NotEmulatedImportError
from pypto_pro.runtime.npu_emulation.state import STATE

__all__ = ["ARCH_ENV", "DEVICES", "EmulatedDevice", "NotEmulatedError", "NotEmulatedImportError", "Plan",
           "active_device", "default_kernel_arch", "install", "install_from_environment", "plan"]

CHILD_ENV = "PYPTO_PRO_NPU_EMULATION"   # set by pypto-pro run for the processes the script starts
MODES = ("auto", "emulate", "real")
SITE_DIR = Path(__file__).resolve().parent / "child_site"   # holds the sitecustomize child processes run

_ACTIVE: EmulatedDevice | None = None


@dataclass(frozen=True)
class Plan:
    torch_npu: bool   # emulate torch_npu (and torch's "npu" device)
    pypto: bool       # emulate pypto (pypto.options)
    note: str | None  # what to tell the user (a real torch_npu found, ...)


def _importable(name: str) -> bool:
    """Whether a real ``name`` can be imported (this emulation's own finder, installed in a child
    process of ``pypto-pro run``, does not count)."""
    from pypto_pro.runtime.npu_emulation.hook import EmulationFinder
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        if isinstance(finder, EmulationFinder) or find is None:
            continue
        try:
            if find(name, None) is not None:
                return True
        except (ImportError, ValueError):
            continue
    return False


def plan(mode: str = "auto") -> Plan:
    """What ``pypto-pro run --npu MODE`` emulates. ``auto``: each of torch_npu / pypto unless a real one
    is importable; ``emulate``: both, even over real ones; ``real``: neither."""
    if mode not in MODES:
        raise ValueError(f"--npu must be one of {', '.join(MODES)}, got {mode!r}")
    if mode == "real":
        return Plan(False, False, None)
    if mode == "emulate":
        return Plan(True, True, None)
    real_npu = _importable("torch_npu")
    note = ("a real torch_npu is installed: running against it (NPU tensors launch through the CANN toolchain); "
            "--npu emulate runs on the simulator instead") if real_npu else None
    return Plan(not real_npu, not _importable("pypto"), note)


def install(what: Plan, arch: str | None = None) -> EmulatedDevice | None:
    """Install the emulation ``what`` asks for into this process; returns the emulated device (None if
    nothing of torch_npu is emulated). ``arch``: a key of ``DEVICES`` (default ``$PYPTO_PRO_NPU_ARCH``, else a5)."""
    global _ACTIVE
    device = lookup(arch or os.environ.get(ARCH_ENV) or DEFAULT)
    if not (what.torch_npu or what.pypto):
        return None
    from pypto_pro.runtime.npu_emulation.hook import install_finder
    STATE.device = device
    install_finder(what.torch_npu, what.pypto)
    if what.torch_npu:
        _ACTIVE = device
    return _ACTIVE


def environment_for_children(what: Plan, device: EmulatedDevice | None, arch: str) -> dict[str, str]:
    """Environment entries that give Python processes started by the script the same emulation (a
    sitecustomize on PYTHONPATH reads them): pytest-xdist workers, multiprocessing spawn, subprocesses."""
    words = [arch] + [name for name, on in (("torch_npu", what.torch_npu), ("pypto", what.pypto)) if on]
    path = os.environ.get("PYTHONPATH")
    return {CHILD_ENV: " ".join(words), "PYTHONPATH": str(SITE_DIR) + (os.pathsep + path if path else "")}


def install_from_environment() -> EmulatedDevice | None:
    """Called by the sitecustomize of a child process of ``pypto-pro run``."""
    words = os.environ.get(CHILD_ENV, "").split()
    if not words:
        return None
    return install(Plan("torch_npu" in words[1:], "pypto" in words[1:], None), words[0])


def default_kernel_arch() -> str | None:
    """The arch of a ``pl.jit`` kernel that names none: the emulated NPU's (``pypto-pro run --arch``), else
    None (``pypto_pro.arch.resolve_arch``: ``$PYPTOPRO_JIT_ARCH``, else a5). The real jit likewise
    compiles for the device it finds."""
    return _ACTIVE.arch if _ACTIVE is not None else None


def active_device() -> EmulatedDevice | None:
    """The emulated NPU of this process, or None when torch_npu is not emulated."""
    return _ACTIVE
