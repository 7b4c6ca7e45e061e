"""The machine-model schema: every hardware number the compiler and simulator use.

Each number is data with the public source it came from (see ``arch/a2a3.py`` and ``arch/a5.py``);
no other module holds hardware literals. ``assumed=True`` marks a value no public source gives for
that arch (copied from another arch, or a modelling choice).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from pypto_pro.arch.costs import VECTOR_COSTS, LinearCost
from pypto_pro.language.enums import MemorySpace, PipeType


@dataclass(frozen=True)
class Sourced:
    """A value plus where it came from (``assumed`` marks values copied from another arch)."""

    value: float
    source: str
    assumed: bool = False


@dataclass(frozen=True)
class MemorySpec:
    """One on-chip memory: capacity and address alignment, both in bytes (capacity 0: the arch has none)."""

    capacity: int
    alignment: int
    source: str
    assumed: bool = False


@dataclass(frozen=True)
class PathBandwidth:
    """A data path's per-core bandwidth in GiB/s at the arch clock, plus the fitted
    size-dependent form ``bw(B) = fit_peak * B / (fit_k + B)`` where published."""

    gib_per_s: float
    source: str
    fit_peak: float | None = None
    fit_k: float | None = None
    use_fit: bool = False  # model transfers with the fitted form (latency K / peak, then peak)
    assumed: bool = False

    @classmethod
    def per_cycle(cls, bytes_per_cycle: float, clock_mhz: float, source: str) -> "PathBandwidth":
        """A path given in bytes per cycle at ``clock_mhz`` (the platform-config unit), held in GiB/s."""
        return cls(bytes_per_cycle * clock_mhz * 1e6 / 2**30, f"{source} = {bytes_per_cycle:g} B/cycle")

    def cycles(self, nbytes: int, clock_mhz: float) -> float:
        """Cycles to move ``nbytes`` on this path at ``clock_mhz``."""
        if self.use_fit and self.fit_peak and self.fit_k is not None:
            per_cycle = self.fit_peak * 2**30 / (clock_mhz * 1e6)
            return (self.fit_k + nbytes) / per_cycle
        return nbytes / (self.gib_per_s * 2**30 / (clock_mhz * 1e6))


@dataclass(frozen=True)
class L2Model:
    """The chip's shared L2 in front of HBM: a read of GM bytes already brought in during the launch
    hits it, and rewrites of the same bytes are absorbed by it (write-back); working sets under
    ``capacity`` stay resident; no eviction is modeled."""

    capacity: Sourced            # bytes
    hit_bytes_per_cycle: Sourced  # per core
    hit_latency: Sourced          # cycles


@dataclass(frozen=True)
class SimtModel:
    """The Vector core's SIMT engine (``pl.simt``): launch limits and the numbers its cost model uses
    (``backends/sim/simt/cost.py``). An arch without one (``ArchModel.simt is None``) cannot launch
    SIMT functions."""

    max_threads: Sourced           # threads of one launch, all dimensions together
    warp_size: Sourced             # threads that issue one instruction together
    schedulers: Sourced            # warp schedulers per core (each issues one warp-instruction a cycle)
    issue_per_cycle: Sourced       # warp-instructions one scheduler issues per cycle
    launch_cycles: Sourced         # fixed cost of one launch: warp set-up, the final barrier, cold caches
    cacheline_bytes: Sourced       # the SIMT data cache's line
    gm_hit_latency: Sourced        # a GM load that hits the data cache (cycles)
    gm_miss_latency: Sourced       # a GM load that misses (the round trip to GM)
    gm_bytes_per_cycle: Sourced    # the core's SIMT GM bus ceiling
    ub_latency: Sourced            # a UB load by a SIMT thread


@dataclass(frozen=True)
class ArchModel:
    """One architecture: core counts, clock, memories, sync resources, data paths, costs.

    ``name`` is the family the compiler and backends switch on (``"a2a3"``, ``"a5"``); ``soc`` the
    chip variant the numbers describe (an ``Ascend950...`` SoC version for a5); ``npu_arch`` what
    the real runtime reports as the SoC (``get_platform_info().soc_version``)."""

    name: str
    description: str
    clock_mhz: Sourced
    cube_cores: Sourced
    vector_cores_per_block: Sourced
    memories: dict[MemorySpace, MemorySpec]
    vector_tile_row_alignment: int  # bytes: cols * sizeof(T) of a Vec tile must be a multiple
    event_ids_per_pipe_pair: Sourced
    mutex_ids: Sourced
    has_buffer_mutex: bool
    cross_core_event_ids: Sourced
    vector_repeat_bytes: Sourced
    paths: dict[str, PathBandwidth] = field(default_factory=dict)
    direct_cube_vector_paths: bool = False
    cost: dict[str, Sourced] = field(default_factory=dict)
    gm_bandwidth_cap_gb_s: Sourced | None = None
    l2: L2Model | None = None
    vector_costs: dict[str, LinearCost] = field(default_factory=lambda: dict(VECTOR_COSTS))
    vector_costs_by_width: dict[tuple[str, int], LinearCost] = field(default_factory=dict)
    soc: str = ""
    npu_arch: str = ""
    simt: SimtModel | None = None  # the Vector core's SIMT engine (a5 only)

    @property
    def vector_cores(self) -> int:
        return int(self.cube_cores.value * self.vector_cores_per_block.value)

    @property
    def label(self) -> str:
        """``a5 (Ascend950PR_9589)``: the family and the chip variant."""
        return f"{self.name} ({self.soc})" if self.soc else self.name

    def memory(self, space: MemorySpace) -> MemorySpec:
        return self.memories[space]

    def vector_cost(self, op: str, itemsize: int) -> LinearCost:
        """Cost form of vector ``op`` on elements of ``itemsize`` bytes (a dtype-specific row if any)."""
        return self.vector_costs_by_width.get((op, itemsize)) or self.vector_costs[op]

    def pipes(self) -> tuple[PipeType, ...]:
        return tuple(p for p in PipeType if p is not PipeType.ALL)
