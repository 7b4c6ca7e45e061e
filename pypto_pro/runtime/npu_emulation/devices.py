"""Which NPU the emulation pretends to be, as data.

``pypto-pro run --arch NAME`` (or ``$PYPTO_PRO_NPU_ARCH``) picks a row. The row gives the name
``torch.npu.get_device_name()`` answers (real tests skip A5-only cases unless it contains
``"Ascend950"``), the number ``torch_npu.npu.get_soc_version()`` answers (the real test suite's root
conftest keeps ``@pytest.mark.soc("950")`` cases only when it is 260), and the pypto_pro arch whose
machine model gives the core counts of ``get_device_properties``.

Sources: SoC names from the real PyPTO framework's simulation platform configs
(``framework/src/platform/parser/simulation_platform/platform_config/950PR_958x.ini``:
``SoC_version=Ascend950PR_9589``; ``A2A3.ini``: ``SoC_version=Ascend910B1``); the A3 name and all SoC
version numbers from torch_npu's ``c10_npu::SocVersion`` enum (``torch_npu/csrc/core/npu/NpuVariables.h``:
Ascend910B1 = 220, Ascend910_9391 = 250, Ascend950 = 260).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EmulatedDevice:
    """One emulated NPU model."""

    name: str          # what torch.npu.get_device_name() answers
    soc_version: int   # what torch_npu.npu.get_soc_version() answers
    arch: str          # the pypto_pro arch (pypto_pro.arch.ARCHS) of its machine model
    product: str


DEVICES: dict[str, EmulatedDevice] = {
    "a5": EmulatedDevice("Ascend950PR_9589", 260, "a5", "Ascend 950PR (A5)"),
    "a2a3": EmulatedDevice("Ascend910B1", 220, "a2a3", "Atlas A2 (Ascend 910B1)"),
    "a2": EmulatedDevice("Ascend910B1", 220, "a2a3", "Atlas A2 (Ascend 910B1)"),
    "a3": EmulatedDevice("Ascend910_9391", 250, "a2a3", "Atlas A3 (Ascend 910_9391)"),
}
DEFAULT = "a5"
ARCH_ENV = "PYPTO_PRO_NPU_ARCH"   # the user's choice when --arch is not given
DEVICE_COUNT = 1                  # one emulated device: npu:0


def lookup(name: str) -> EmulatedDevice:
    """The emulated device called ``name``; ``ValueError`` lists the known ones."""
    try:
        return DEVICES[name.strip().lower()]
    except KeyError:
        raise ValueError(f"unknown NPU arch {name!r} for the emulation; choose one of {', '.join(DEVICES)}") from None
