"""The Ascend 950 (a5) SIMT engine: the numbers ``pl.simt`` launches are checked and priced with.

Sources: the real PyPTO Pro's ``simt.launch`` type rule (``framework/src/interface/ir/op/simt_ops.cpp``:
at most 2048 threads per launch), PTO-ISA's a5 SIMT kernels (``include/pto/npu/a5/MGather.hpp``:
``WARP_SIZE`` 32) and its SIMT case study, measured on the A5 cycle-accurate model
(``kernels/manual/a5/engram_simt/README.md``: 4 warp schedulers per core, 32-lane warps, a 128 KiB
data cache of 128-byte lines, hit ~19 cycles, cold miss ~550 cycles, a GM bus ceiling of ~25 B per
cycle, ~1,100 cycles of launch overhead). The issue rate and the UB load latency are not published:
marked ``assumed``.
"""
from __future__ import annotations

from pypto_pro.arch.model import SimtModel, Sourced

_OPS = "hicann/pypto framework/src/interface/ir/op/simt_ops.cpp"
_ENGRAM = "PTO-ISA kernels/manual/a5/engram_simt/README.md"

A5_SIMT = SimtModel(
    max_threads=Sourced(2048, f"{_OPS}: 'simt.launch total thread count must not exceed 2048'"),
    warp_size=Sourced(32, f"{_ENGRAM} §3 'Warp Width 32 threads'; PTO-ISA include/pto/npu/a5/MGather.hpp "
                          "WARP_SIZE"),
    schedulers=Sourced(4, f"{_ENGRAM} §3 'Warp Schedulers per Core 4 (round-robin)'"),
    issue_per_cycle=Sourced(1, "assumed: one warp-instruction per scheduler per cycle (not published)", assumed=True),
    launch_cycles=Sourced(1100, f"{_ENGRAM} §7.2/§8.1 'SIMT launch overhead (~1,100 cycles for warp configuration "
                                "+ barrier + D-cache cold startup)'"),
    cacheline_bytes=Sourced(128, f"{_ENGRAM} §3 'Cacheline Size 128 bytes'"),
    gm_hit_latency=Sourced(19, f"{_ENGRAM} §3 'D-cache HIT Latency ~19 cycles'"),
    gm_miss_latency=Sourced(550, f"{_ENGRAM} §3 'Cold MISS Latency ~550 cycles'"),
    gm_bytes_per_cycle=Sourced(25, f"{_ENGRAM} §1 'GM bus ceiling (~25 B/cy)'"),
    ub_latency=Sourced(19, "assumed: a UB load by a thread costs a data-cache hit (not published)", assumed=True),
)
