"""Which machine model an ``arch`` name selects: the real PyPTO Pro names and ours.

- ``"a5"``: the default Ascend 950 variant (``a5.DEFAULT_VARIANT``), or the one ``$PYPTO_PRO_SOC``
  names, so a real script that says ``arch="a5"`` can be simulated on another 950 unchanged;
- ``"a2"``, ``"a3"``, ``"a2a3"``: the A2/A3 model (their public configs agree on every number);
- a 950 variant by its SoC version, with or without ``Ascend`` (``"950DT_9581"``);
- ``None``, ``""`` or ``"auto"``: ``$PYPTOPRO_JIT_ARCH`` (the real variable) if set, else ``"a5"``. The real
  runtime would next ask the NPU for its SoC and fall back to ``"a3"``; the simulator is the device,
  and it is a 950 (docs/simulator.md explains the choice).

Names are case-insensitive and stripped, as in the real ``_normalize_arch``.
"""
from __future__ import annotations

import os

from pypto_pro.arch.a2a3 import A2A3
from pypto_pro.arch.a5 import A5_VARIANTS, DEFAULT_VARIANT
from pypto_pro.arch.model import ArchModel
from pypto_pro.errors import CompileError

ARCH_ENV = "PYPTOPRO_JIT_ARCH"   # the real runtime's variable
SOC_ENV = "PYPTO_PRO_SOC"        # ours: which 950 variant "a5" means
DEFAULT_ARCH = "a5"
FAMILY_NAMES = ("a2", "a3", "a5", "a2a3")


class UnknownArchError(CompileError, ValueError):
    """An ``arch`` name no model answers to (a ``ValueError``, as the real runtime raises)."""


def accepted_names() -> list[str]:
    """Every name ``resolve_arch`` accepts besides ``None``/``"auto"``."""
    return [*FAMILY_NAMES, *A5_VARIANTS]


def _variant(name: str) -> ArchModel | None:
    key = name.lower().removeprefix("ascend")
    return next((m for v, m in A5_VARIANTS.items() if v.lower() == key), None)


def _lookup(value: str, what: str) -> ArchModel:
    name = value.strip().lower()
    if name in ("a2", "a3", "a2a3"):
        return A2A3
    if name == "a5":
        soc = os.environ.get(SOC_ENV, "").strip()
        if not soc:
            return A5_VARIANTS[DEFAULT_VARIANT]
        model = _variant(soc)
        if model is None:
            raise UnknownArchError(f"${SOC_ENV}={soc!r} is not an Ascend 950 variant; "
                                   f"choose one of {', '.join(A5_VARIANTS)}")
        return model
    model = _variant(name)
    if model is None:
        raise UnknownArchError(f"unknown arch {value!r}{what}; choose one of {', '.join(accepted_names())}, "
                               "or None / 'auto'")
    return model


def resolve_arch(arch: str | None, kernel: str | None = None) -> ArchModel:
    """The machine model ``pl.jit(arch=arch)`` compiles for; ``UnknownArchError`` lists the names."""
    what = f" for kernel '{kernel}'" if kernel else ""
    if arch is not None and not isinstance(arch, str):
        raise UnknownArchError(f"arch{what} must be a string or None, got {arch!r}")
    if not arch or arch.strip().lower() == "auto":  # "" counts as None, as in the real rule
        env = os.environ.get(ARCH_ENV, "").strip()
        if not env:
            return _lookup(DEFAULT_ARCH, what)
        return _lookup(env, f" (from ${ARCH_ENV}){what}")
    return _lookup(arch, what)
