"""What a simulated launch did and how long it took on the modeled chip, and why.

``kernel.last_report`` (also returned by every launch) is a :class:`LaunchReport`:
``report.summary()`` is a one-line digest, ``report.table()`` a per-pipe breakdown.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class BlockTiming:
    block: int
    core: int
    start: float        # cycles, on the whole-kernel clock
    end: float
    busy: dict[str, float]  # pipe -> busy cycles


@dataclass
class Roofline:
    """Lower bound on the kernel's time from each resource, and the binding one."""

    bounds_us: dict[str, float]

    @property
    def bound_us(self) -> float:
        return max(self.bounds_us.values(), default=0.0)

    @property
    def limiter(self) -> str:
        return max(self.bounds_us, key=self.bounds_us.get) if self.bounds_us else "-"


@dataclass
class LaunchReport:
    """Timing and traffic of one launch on the simulator (cycles at the arch clock)."""

    kernel: str
    arch: str
    clock_mhz: float
    block_num: int
    physical_cores: int
    waves: int
    timed: bool = True
    cycles: float = 0.0
    blocks: list[BlockTiming] = field(default_factory=list)
    pipe_busy: dict[str, float] = field(default_factory=dict)   # summed over blocks
    path_bytes: dict[str, int] = field(default_factory=dict)    # e.g. "GM->Vec"
    l2_hit_bytes: float = 0.0                                    # GM reads served by L2 and rewrites it absorbed (expected bytes)
    flops: int = 0
    instructions: int = 0
    blocks_scheduled: int = 0  # blocks the scheduler ran; the others replayed an identical block's schedule
    roofline: Roofline | None = None
    faults: list[str] = field(default_factory=list)
    trace_files: list[str] = field(default_factory=list)
    device_log: str = ""  # what pl.printf / pl.dump_data / failed pl.pto_assert printed, per core (debug_log)
    assert_failures: list[str] = field(default_factory=list)  # each failed pl.pto_assert: where, which core, text
    traps: list[str] = field(default_factory=list)            # each pl.trap that stopped a core
    notes: list[str] = field(default_factory=list)  # benign findings of the checks (simulator.md#benign-overlaps)

    @property
    def us(self) -> float:
        return self.cycles / self.clock_mhz

    @property
    def core_time(self) -> float:
        return sum(b.end - b.start for b in self.blocks) or 1.0

    def utilisation(self) -> dict[str, float]:
        """Busy fraction of each pipe over the time its cores were running blocks."""
        return {p: busy / self.core_time for p, busy in sorted(self.pipe_busy.items()) if busy}

    @property
    def bottleneck(self) -> str:
        util = self.utilisation()
        return max(util, key=util.get) if util else "-"

    @property
    def roofline_fraction(self) -> float:
        if not self.roofline or not self.us:
            return 0.0
        return self.roofline.bound_us / self.us

    def summary(self) -> str:
        if not self.timed:
            return f"{self.kernel} on sim[{self.arch}]: {self.block_num} blocks, functional run (untimed)"
        util = self.utilisation()
        top = ", ".join(f"{p} {u:.0%}" for p, u in sorted(util.items(), key=lambda kv: -kv[1])[:3])
        roof = (f", {self.roofline_fraction:.0%} of the {self.roofline.limiter} roofline "
                f"({self.roofline.bound_us:.1f} us)") if self.roofline else ""
        return (f"{self.kernel} on sim[{self.arch}]: {self.us:.1f} us ({self.cycles:.0f} cycles @ {self.clock_mhz:.0f} MHz), "
                f"{self.block_num} blocks in {self.waves} wave(s) on {self.physical_cores} cores{roof}; "
                f"busiest pipes: {top}; bottleneck {self.bottleneck}")

    def table(self) -> str:
        lines = [self.summary(), "", f"{'pipe':6}{'busy cycles':>14}{'utilisation':>13}"]
        for p, u in self.utilisation().items():
            lines.append(f"{p:6}{self.pipe_busy[p]:14.0f}{u:13.1%}")
        if self.path_bytes:
            lines += ["", f"{'path':10}{'bytes':>14}"]
            lines += [f"{k:10}{v:14d}" for k, v in sorted(self.path_bytes.items())]
            if self.l2_hit_bytes:
                lines.append(f"{'(L2 hits)':10}{self.l2_hit_bytes:14.0f}")
        if self.roofline:
            lines += ["", "roofline bounds (us): " + ", ".join(f"{k} {v:.2f}" for k, v in self.roofline.bounds_us.items())]
        if self.flops:
            lines.append(f"FLOPs: {self.flops}")
        if self.notes:
            lines += ["", "notes:"] + [f"  {n}" for n in self.notes]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {
            "kernel": self.kernel, "arch": self.arch, "us": self.us, "cycles": self.cycles,
            "blocks": self.block_num, "waves": self.waves, "cores": self.physical_cores,
            "utilisation": self.utilisation(), "pipe_busy_cycles": self.pipe_busy, "path_bytes": self.path_bytes, "l2_hit_bytes": self.l2_hit_bytes,
            "flops": self.flops, "instructions": self.instructions, "blocks_scheduled": self.blocks_scheduled,
            "roofline_us": self.roofline.bounds_us if self.roofline else {},
            "roofline_fraction": self.roofline_fraction, "bottleneck": self.bottleneck,
        }
