"""Ascend 950 (A5), arch ``a5``: what PyPTO Pro targets, one model per 950 variant.

Numbers come from hicann/pypto's simulation platform configs ``950*.ini`` (the six 950 variants
agree on everything except AI-core count and DDR rates), PTO-ISA's a5 cost model and buffer limits,
and the real PyPTO Pro API pages. Values no public source gives for a5 reuse a2a3's, marked
``assumed``. ``DEFAULT_VARIANT`` is what ``arch="a5"`` means (see docs/simulator.md for why).
"""
from __future__ import annotations

import dataclasses

from pypto_pro.arch.a2a3 import A2A3, ALIGN, CONFIGS, LIMITS
from pypto_pro.arch.costs_a5 import A5_VECTOR_COSTS, A5_VECTOR_COSTS_BY_WIDTH
from pypto_pro.arch.model import ArchModel, L2Model, MemorySpec, PathBandwidth, Sourced
from pypto_pro.arch.simt import A5_SIMT
from pypto_pro.language.enums import MemorySpace

_ALL = f"{CONFIGS}/950*.ini"   # a key all six 950 configs give the same value
_DOCS = "PyPTO Pro docs/zh/pypto_pro/api/SIMD-API"
CLOCK_MHZ = 1650               # [AICoreSpec] cube_freq = [VectorCoreSpec] vec_freq in every 950 config


@dataclasses.dataclass(frozen=True)
class Variant:
    """What distinguishes one 950 SoC from another in its platform config."""

    soc: str          # [version] SoC_version
    ini: str          # the config file
    cube_cores: int   # [SoCInfo] cube_core_cnt (= ai_core_cnt)
    vector_cores: int  # [SoCInfo] vector_core_cnt
    aiv_ddr_rate: int  # [VectorCoreMemoryRates] ddr_rate, bytes/cycle per vector core


VARIANTS: dict[str, Variant] = {v.soc.removeprefix("Ascend"): v for v in (
    Variant("Ascend950PR_9579", "950PR_957x.ini", 28, 56, 16),
    Variant("Ascend950PR_9589", "950PR_958x.ini", 32, 64, 16),
    Variant("Ascend950DT_9572", "950DT_957x.ini", 28, 56, 40),
    Variant("Ascend950DT_9582", "950DT_958x.ini", 32, 64, 31),
    Variant("Ascend950DT_9581", "950DT_9581.ini", 32, 64, 40),
    Variant("Ascend950DT_9581X", "950DT_9581x.ini", 32, 64, 40),
)}
DEFAULT_VARIANT = "950PR_9589"


def _assumed(value: Sourced) -> Sourced:
    src = f"{value.source} (as on a2a3)" if value.assumed else f"assumed from a2a3: {value.source}"
    return Sourced(value.value, src, assumed=True)


def _assumed_path(bw: PathBandwidth) -> PathBandwidth:
    return dataclasses.replace(bw, source=f"assumed from a2a3: {bw.source}", assumed=True)


def _mem(size: int, key: str, align: int, align_src: str = ALIGN) -> MemorySpec:
    return MemorySpec(size, align, f"{_ALL} [AICoreSpec] {key}; alignment {align_src}")


# [AICoreMemoryRates] of every 950 config, bytes per cycle
_RATES = {"l1_to_l0_a_rate": 256, "l1_to_l0_b_rate": 256, "l0_c_to_ub_rate": 128, "ub_to_l1_rate": 128}


def _rate(key: str) -> PathBandwidth:
    return PathBandwidth.per_cycle(_RATES[key], CLOCK_MHZ, f"{_ALL} [AICoreMemoryRates] {key}")


_MEMORIES = {
    # The UB holds 256 KiB (PTO-ISA buffer_limits.hpp PTO_UBUF_SIZE_BYTES); the platform reports
    # 248 KiB to kernels, and that is what the real compiler and the real docs use.
    MemorySpace.Vec: _mem(253952, "ub_size (docs: 'UB capacity 248KB' on 950PR/950DT)", 32),
    MemorySpace.Mat: _mem(524288, "l1_size", 32),
    MemorySpace.Left: _mem(65536, "l0_a_size", 512),
    MemorySpace.Right: _mem(65536, "l0_b_size", 512),
    MemorySpace.Acc: _mem(262144, "l0_c_size", 64),
    MemorySpace.Bias: _mem(4096, "bt_size", 32, f"{LIMITS} PTO_BIAS_ALIGN_BYTES (the real compiler checks none)"),
    MemorySpace.Scaling: _mem(4096, "fb0_size (FB0, the fixpipe quantisation buffer)", 32,
                              f"{LIMITS} PTO_FBUF_ALIGN_BYTES (the real compiler checks none)"),
    MemorySpace.ScaleLeft: MemorySpec(4096, 32, f"{LIMITS} PTO_SCALELEFT_SIZE_BYTES; {_DOCS}/basic_data_structures/"
                                                f"MemorySpace.md (own 4KB domain); alignment {ALIGN}"),
    MemorySpace.ScaleRight: MemorySpec(4096, 32, f"{LIMITS} PTO_SCALERIGHT_SIZE_BYTES; {_DOCS}/basic_data_structures"
                                                 f"/MemorySpace.md (own 4KB domain); alignment {ALIGN}"),
}

_PATHS = {
    # Per-core GM transfer speed on a5 is not published: the configs' ddr_rate is each core's share
    # of HBM (it times the core count gives the chip's bandwidth), which the GM cap below models.
    **{k: _assumed_path(A2A3.paths[k]) for k in ("GM->Vec", "GM->Mat", "Vec->GM", "Acc->GM", "Vec->Vec",
                                                 "Acc->Mat", "Mat->Bias", "Mat->Scaling")},
    # no "Mat->GM": a5 has no L1 -> GM path (pypto platforminfo.ini 3510; PTO-ISA a5 TStore takes Vec/Acc)
    "Mat->Left": _rate("l1_to_l0_a_rate"),
    "Mat->Right": _rate("l1_to_l0_b_rate"),
    "Acc->Vec": _rate("l0_c_to_ub_rate"),
    "Vec->Mat": _rate("ub_to_l1_rate"),
    "Mat->ScaleLeft": dataclasses.replace(_rate("l1_to_l0_a_rate"), assumed=True, source="assumed: the L0A rate, "
                                          f"{_ALL} [AICoreMemoryRates] l1_to_l0_a_rate = 256 B/cycle"),
    "Mat->ScaleRight": dataclasses.replace(_rate("l1_to_l0_b_rate"), assumed=True, source="assumed: the L0B rate, "
                                           f"{_ALL} [AICoreMemoryRates] l1_to_l0_b_rate = 256 B/cycle"),
}


def _model(v: Variant) -> ArchModel:
    ini = f"{CONFIGS}/{v.ini}"
    cap = v.vector_cores * v.aiv_ddr_rate * CLOCK_MHZ / 1000
    return dataclasses.replace(
        A2A3,
        name="a5",
        soc=v.soc,
        npu_arch="DAV_3510",
        description=(f"{v.soc} (Ascend 950, A5): {v.cube_cores} AI cores, UB 248 KiB, L0C 256 KiB, L0C->UB and "
                     "UB->L1 paths, hardware buffer mutexes"),
        clock_mhz=Sourced(CLOCK_MHZ, f"{_ALL} [AICoreSpec] cube_freq (= [VectorCoreSpec] vec_freq)"),
        cube_cores=Sourced(v.cube_cores, f"{ini} [SoCInfo] cube_core_cnt"),
        vector_cores_per_block=Sourced(v.vector_cores // v.cube_cores,
                                       f"{ini} [SoCInfo] vector_core_cnt {v.vector_cores} / cube_core_cnt"),
        memories=dict(_MEMORIES),
        event_ids_per_pipe_pair=Sourced(16, f"{_DOCS}/operation/synchronization/sync_src_sync_dst.md: event_id 0-15"),
        mutex_ids=Sourced(32, f"{_DOCS}/operation/synchronization/mutex_lock_mutex_unlock.md: mutex_id 0-31"),
        has_buffer_mutex=True,
        cross_core_event_ids=Sourced(16, f"{_DOCS}/operation/synchronization/set_cross_core_wait_cross_core.md: "
                                         "event_id 0-15"),
        vector_repeat_bytes=Sourced(256, f"{_ALL} [VectorCoreSpec] vector_reg_width; PTO-ISA a5/vf_costmodel.hpp "
                                         "kElementsPerRepeatB32 = 64"),
        paths=dict(_PATHS),
        direct_cube_vector_paths=True,
        cost={k: _assumed(c) for k, c in A2A3.cost.items()},
        gm_bandwidth_cap_gb_s=Sourced(cap, f"{ini} [VectorCoreMemoryRates] ddr_rate {v.aiv_ddr_rate} B/cycle x "
                                           f"vector_core_cnt {v.vector_cores} x {CLOCK_MHZ} MHz"),
        l2=L2Model(capacity=Sourced(128 * 2**20, f"{_ALL} [SoCInfo] l2_size"),
                   hit_bytes_per_cycle=Sourced(100, f"{_ALL} [VectorCoreMemoryRates] l2_rate"),
                   hit_latency=_assumed(A2A3.l2.hit_latency)),  # type: ignore[union-attr]
        vector_costs=dict(A5_VECTOR_COSTS),
        vector_costs_by_width=dict(A5_VECTOR_COSTS_BY_WIDTH),
        simt=A5_SIMT,
    )


A5_VARIANTS: dict[str, ArchModel] = {name: _model(v) for name, v in VARIANTS.items()}
A5 = A5_VARIANTS[DEFAULT_VARIANT]
