"""Ascend 950 (A5): arch ``a5``, what PyPTO Pro targets. Values not published for A5 reuse a2a3's
and are marked ``assumed``."""
from __future__ import annotations

import dataclasses

from pypto_pro.arch.a2a3 import A2A3
from pypto_pro.arch.model import MemorySpec, PathBandwidth, Sourced
from pypto_pro.language.enums import MemorySpace

_MEM = "PTO-ISA include/pto/cpu/NPUMemoryModel.hpp"


def _assumed(value: Sourced) -> Sourced:
    return Sourced(value.value, f"assumed from a2a3: {value.source}", assumed=True)


A5 = dataclasses.replace(
    A2A3,
    name="a5",
    description="Ascend 950 (A5): UB 256 KiB, L0C 256 KiB, L0C->UB and UB->L1 paths, hardware buffer mutexes",
    clock_mhz=_assumed(A2A3.clock_mhz),
    cube_cores=_assumed(A2A3.cube_cores),
    vector_cores_per_block=Sourced(2, "PTO-ISA ISA docs: cross-core flags reach AIV0 and AIV1"),
    memories={
        **A2A3.memories,
        MemorySpace.Vec: MemorySpec(256 * 1024, 32, _MEM),
        MemorySpace.Acc: MemorySpec(256 * 1024, 64, _MEM),
    },
    mutex_ids=Sourced(32, "PTO-ISA get_buf/rls_buf buffer ids 0-31"),
    has_buffer_mutex=True,
    paths={
        **A2A3.paths,
        "Acc->Vec": PathBandwidth(128.0, "assumed: a2a3 L0C->L1 bandwidth (PTO-ISA arch_config.hpp)"),
        "Vec->Mat": PathBandwidth(188.46, "assumed: a2a3 UB->GM bandwidth (PTO-ISA arch_config.hpp)"),
    },
    direct_cube_vector_paths=True,
)
