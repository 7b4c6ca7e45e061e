"""``get_platform_info()``: the NPU a host script is about to launch on, as the real
``pypto_pro.runtime.platform`` reports it.

The device here is the simulator, so the answer is the machine model the ``arch=None`` rule selects
(``$PYPTOPRO_JIT_ARCH``, else ``"a5"``; ``$PYPTO_PRO_SOC`` picks the 950 variant): its SoC as the
runtime names it (``DAV_3510`` for the 950, ``DAV_2201`` for A2/A3), its AI-core count (the
limit for Cube or mixed kernels' ``block_dim``) and its Cube and Vector core counts (the limit for
Vector-only kernels). Typical use::

    info = get_platform_info()
    kernel[None, min(info.vector_core_num, tiles)](x, y, z)
"""
from __future__ import annotations

from dataclasses import dataclass

from pypto_pro.arch import resolve_arch

# SoC (NPUArch string) -> compile arch, as the real runtime maps it; other SoCs count as "a3"
_ARCH_BY_SOC = {"DAV_1001": "a3", "DAV_2201": "a3", "DAV_3510": "a5"}


@dataclass
class PlatformInfo:
    """NPU platform information: SoC version and core counts (0 / "" when unknown)."""

    soc_version: str = ""
    core_num: int = 0
    cube_core_num: int = 0
    vector_core_num: int = 0

    @property
    def arch(self) -> str:
        """The compile arch of this SoC: ``"a5"`` for DAV_3510 (950), ``"a3"`` for DAV_2201/DAV_1001 and
        any other known SoC, ``""`` when the SoC is unknown."""
        if not self.soc_version:
            return ""
        return _ARCH_BY_SOC.get(self.soc_version, "a3")


def get_platform_info(force_refresh: bool = False) -> PlatformInfo:
    """The simulated NPU's SoC and core counts. Read afresh on every call (the selection follows the
    environment variables), so ``force_refresh`` changes nothing; it is accepted as the real one is."""
    model = resolve_arch(None)
    cube = int(model.cube_cores.value)
    return PlatformInfo(soc_version=model.npu_arch, core_num=cube, cube_core_num=cube,
                        vector_core_num=model.vector_cores)
