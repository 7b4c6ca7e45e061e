"""Ascend A2/A3 (910B class): arch ``a2a3``. Sources per value; see shared design hardware.md."""
from __future__ import annotations

from pypto_pro.arch.model import ArchModel, L2Model, MemorySpec, PathBandwidth, Sourced
from pypto_pro.language.enums import MemorySpace

_INI = "PyPTO configs/A2A3.ini (Ascend910B1)"
_PRO_DOCS = "PyPTO Pro docs (alignment)"
_PTO_BW = "PTO-ISA costmodel/arch_config.hpp"

A2A3 = ArchModel(
    name="a2a3",
    description="Ascend A2/A3 (910B class): 24 AI cores, 1 AIC + 2 AIV per block, no L0C->UB/UB->L1",
    clock_mhz=Sourced(1850, _INI),
    cube_cores=Sourced(24, _INI),
    vector_cores_per_block=Sourced(2, _INI),
    memories={
        MemorySpace.Vec: MemorySpec(192 * 1024, 32, f"{_INI}; alignment {_PRO_DOCS}"),
        MemorySpace.Mat: MemorySpec(512 * 1024, 32, f"{_INI}; alignment {_PRO_DOCS}"),
        MemorySpace.Left: MemorySpec(64 * 1024, 512, f"{_INI}; alignment {_PRO_DOCS}"),
        MemorySpace.Right: MemorySpec(64 * 1024, 512, f"{_INI}; alignment {_PRO_DOCS}"),
        MemorySpace.Acc: MemorySpec(128 * 1024, 64, f"{_INI}; alignment {_PRO_DOCS}"),
        MemorySpace.Bias: MemorySpec(1024, 64, f"{_INI}; alignment assumed equal to L0C"),
    },
    vector_tile_row_alignment=32,
    event_ids_per_pipe_pair=Sourced(8, "PTO-ISA event.hpp EVENT_ID0-7"),
    mutex_ids=Sourced(32, "PyPTO Pro docs: mutex ids 0-31 (emulated with events on a2a3)"),
    has_buffer_mutex=False,
    cross_core_event_ids=Sourced(16, "PTO-ISA perf_sim config: 16 cross-core semaphore channels"),
    vector_repeat_bytes=Sourced(256, "Ascend vector ISA: 256 B per repeat"),
    paths={
        # The fitted form reproduces the measured TLOAD fp32 128x128 = 776 cycles within 14% (flat: 44%),
        # so GM->Vec uses it; the other fits disagree with the flat table by up to 7x and have no
        # measured sample, so those paths use the flat bandwidth (see docs/simulator.md).
        "GM->Vec": PathBandwidth(100.9, _PTO_BW, 247.16, 30643, use_fit=True),
        "GM->Mat": PathBandwidth(135.0, _PTO_BW, 28.61, 1107),
        "Vec->GM": PathBandwidth(188.46, _PTO_BW, 28.19, 1755),
        "Mat->GM": PathBandwidth(32.0, _PTO_BW),
        "Vec->Vec": PathBandwidth(1024.0, _PTO_BW),
        "Acc->GM": PathBandwidth(70.0, _PTO_BW, 41.25, 29104),
        "Acc->Mat": PathBandwidth(128.0, _PTO_BW),
        "Mat->Left": PathBandwidth(441.0, _PTO_BW),
        "Mat->Right": PathBandwidth(220.5, _PTO_BW),
    },
    direct_cube_vector_paths=False,
    cost={
        "cube_fixed_cycles": Sourced(6, "PTO-ISA costmodel/a2a3/cce_costmodel_cube.hpp"),
        "cube_fp32_factor": Sourced(2, "PTO-ISA costmodel/a2a3/cce_costmodel_cube.hpp"),
        "sync_cycles": Sourced(1, "PTO-ISA cce_costmodel_core.hpp EstimateConstCycles"),
        "issue_cycles": Sourced(1, "assumed: scalar unit dispatches one instruction per cycle"),
    },
    gm_bandwidth_cap_gb_s=Sourced(1600, "not published; whole-chip HBM cap parameter (third-party 0.4-1.6 TB/s)"),
    l2=L2Model(capacity=Sourced(192 * 2**20, "assumed: not in the design sources; overridable"),
               hit_bytes_per_cycle=Sourced(256, "PTO-ISA perf_sim config: L2 256 B/cycle"),
               hit_latency=Sourced(50, "PTO-ISA perf_sim config: L2 hit 50 cycles")),
)
