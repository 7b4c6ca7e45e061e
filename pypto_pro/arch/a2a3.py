"""Ascend A2/A3 (910B / 910C class): arch ``a2a3``, which the real names ``"a2"`` and ``"a3"`` select.

Sources per value. ``A2A3.ini`` (Ascend910B1, the A2) and ``910PR_9363.ini`` (Ascend910C4, the A3)
in hicann/pypto's simulation platform configs (``framework/src/platform/parser/simulation_platform/
platform_config/``, "pypto platform_config" in the sources below) agree on every number used here (they differ only in
HBM size), so one model serves both.
"""
from __future__ import annotations

from pypto_pro.arch.model import ArchModel, L2Model, MemorySpec, PathBandwidth, Sourced
from pypto_pro.language.enums import MemorySpace

# hicann/pypto framework/src/platform/parser/simulation_platform/platform_config/
CONFIGS = "pypto platform_config"
_INI = f"{CONFIGS}/A2A3.ini"
ALIGN = "PyPTO Pro make_tile.md / ir/op/block_ops.py _MEMORY_ALIGNMENT"
LIMITS = "PTO-ISA include/pto/common/buffer_limits.hpp"
_PTO_BW = "PTO-ISA costmodel/arch_config.hpp"


def _mem(size: int, key: str, align: int, align_src: str = ALIGN) -> MemorySpec:
    return MemorySpec(size, align, f"{_INI} [AICoreSpec] {key}; alignment {align_src}")


A2A3 = ArchModel(
    name="a2a3",
    description="Ascend A2/A3 (910B/910C class): 24 AI cores, 1 AIC + 2 AIV per block, no L0C->UB/UB->L1",
    npu_arch="DAV_2201",
    clock_mhz=Sourced(1850, f"{_INI} [AICoreSpec] cube_freq"),
    cube_cores=Sourced(24, f"{_INI} [SoCInfo] cube_core_cnt"),
    vector_cores_per_block=Sourced(2, f"{_INI} [SoCInfo] vector_core_cnt 48 / cube_core_cnt 24"),
    memories={
        MemorySpace.Vec: _mem(192 * 1024, "ub_size", 32),
        MemorySpace.Mat: _mem(512 * 1024, "l1_size", 32),
        MemorySpace.Left: _mem(64 * 1024, "l0_a_size", 512),
        MemorySpace.Right: _mem(64 * 1024, "l0_b_size", 512),
        MemorySpace.Acc: _mem(128 * 1024, "l0_c_size", 64),
        MemorySpace.Bias: _mem(1024, "bt_size", 32, f"{LIMITS} PTO_BIAS_ALIGN_BYTES (the real compiler checks none)"),
        MemorySpace.Scaling: _mem(2048, "fb0_size (FB0, the fixpipe quantisation buffer)", 32,
                                  f"{LIMITS} PTO_FBUF_ALIGN_BYTES (the real compiler checks none)"),
        MemorySpace.ScaleLeft: MemorySpec(0, 32, f"none on A2/A3: {LIMITS} PTO_SCALELEFT_SIZE_BYTES = 0"),
        MemorySpace.ScaleRight: MemorySpec(0, 32, f"none on A2/A3: {LIMITS} PTO_SCALERIGHT_SIZE_BYTES = 0"),
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
        "Mat->Bias": PathBandwidth(32.0, f"{_PTO_BW} L1_TO_BT"),
        "Mat->Scaling": PathBandwidth(32.0, f"{_PTO_BW} L1_TO_FB"),
    },
    direct_cube_vector_paths=False,
    cost={
        "cube_fixed_cycles": Sourced(6, "PTO-ISA costmodel/a2a3/cce_costmodel_cube.hpp"),
        "cube_fp32_factor": Sourced(2, "PTO-ISA costmodel/a2a3/cce_costmodel_cube.hpp"),
        "sync_cycles": Sourced(1, "PTO-ISA cce_costmodel_core.hpp EstimateConstCycles"),
        "issue_cycles": Sourced(1, "assumed: scalar unit dispatches one instruction per cycle", assumed=True),
    },
    gm_bandwidth_cap_gb_s=Sourced(1600, "assumed: whole-chip HBM cap, not published as such (third-party "
                                        f"0.4-1.6 TB/s; {_INI} ddr_rate 32 B/cycle x 24 cores x 1850 MHz "
                                        "would give 1421 GB/s)", assumed=True),
    l2=L2Model(capacity=Sourced(192 * 2**20, f"{_INI} [SoCInfo] l2_size"),
               hit_bytes_per_cycle=Sourced(256, "PTO-ISA perf_sim config: L2 256 B/cycle"),
               hit_latency=Sourced(50, "PTO-ISA perf_sim config: L2 hit 50 cycles")),
)
