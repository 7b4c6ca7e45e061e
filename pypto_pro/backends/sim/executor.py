"""The simulator device: runs each block's program on the CPU with NumPy and models its timing.

Timed mode (default): the block's program dispatches instructions into per-pipe queues; the
scheduler runs them with the hardware's sync semantics and the arch's costs, executing numerics
in schedule order; checkers watch every access. Blocks are placed on the arch's physical cores in
waves; each core's share of the chip's GM bandwidth is the cap divided by the cores running.
Functional mode (``timing=False``) runs instructions in program order with no timing or checks.
"""
from __future__ import annotations

import gc
import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from pypto_pro.arch.model import ArchModel
from pypto_pro.backends.sim import tile_ops
from pypto_pro.backends.sim.checks import GlobalChecker, OnChipChecker
from pypto_pro.backends.sim.codegen import ProgramSource
from pypto_pro.backends.sim.cost_model import CostModel
from pypto_pro.backends.sim.inst import PIPES, Inst
from pypto_pro.backends.sim.memory import CoreMemory
from pypto_pro.backends.sim.recorder import BlockStats, Recorder, RecorderPlan
from pypto_pro.backends.sim.report import BlockTiming, LaunchReport, Roofline
from pypto_pro.backends.sim.scheduler import CoreScheduler, Reporter
from pypto_pro.backends.sim.tile_state import SlotState
from pypto_pro.errors import SimulationError
from pypto_pro.ir.nodes import KernelIR, SetValidShape, SyncOp, TileOp
from pypto_pro.language.enums import MemorySpace, SectionKind

POISON = 0xFF  # on-chip bytes at block start: NaN for every float dtype, -1 for ints


@dataclass
class BlockContext:
    """Ids and launch values a block's program reads."""

    block_idx: int
    block_num: int
    subblock_idx: int
    subblock_num: int
    dims: list[tuple[int, ...]]
    scalars: dict[str, Any]


def _prange(start: int, stop: int, step: int) -> range:
    if step <= 0:
        raise SimulationError(f"pl.range step is {step} at run time; it must be positive")
    return range(start, stop, step)


def _noop(*_args: Any) -> None:
    return None


class ProgramRunner:
    """One engine's program, compiled to Python, with its core memory and tile state."""

    def __init__(self, program: KernelIR, arch: ArchModel):
        self.program = program
        spaces = tuple({b.space for b in program.buffers}) or (MemorySpace.Vec,)
        self.memory = CoreMemory(arch, spaces)
        self.states = {b.uid: SlotState.create(b, self.memory.slot_views(b)) for b in program.buffers}
        self.gm = tile_ops.GMBinding(len(program.params))
        gen = ProgramSource(program)
        self.source = gen.generate()
        self.instructions = gen.instructions
        self.dispatchers: list[Callable | None] = [
            tile_ops.build(s, self.states, self.gm) if isinstance(s, (TileOp, SetValidShape)) else None
            for s in gen.instructions]
        self.functional_ops = [self._functional(s, d) for s, d in zip(gen.instructions, self.dispatchers)]
        self.recorder_plan = RecorderPlan(gen.instructions, self.dispatchers)
        namespace: dict[str, Any] = {}
        exec(compile(self.source, f"<pypto_pro sim: {program.name}.{program.kind.value}>", "exec"), namespace)
        self.fn = namespace["program"]

    @staticmethod
    def _functional(stmt, dispatch: Callable | None) -> Callable:
        if isinstance(stmt, SyncOp):
            return _noop
        if isinstance(stmt, SetValidShape):
            return dispatch  # type: ignore[return-value]
        return lambda *args: dispatch(*args).run(False)  # type: ignore[misc]

    def start_block(self, poison: bool) -> None:
        for st in self.states.values():
            st.reset()
        if poison:
            for arr in self.memory.arrays.values():
                arr.fill(POISON)


class SimExecutable:
    """A compiled kernel on the simulator: the per-engine runners and launch logic."""

    def __init__(self, name: str, programs: dict[SectionKind, KernelIR], arch: ArchModel):
        self.name = name
        self.arch = arch
        self.cost = CostModel(arch)
        self.runners = {k: ProgramRunner(p, arch) for k, p in programs.items()}
        self.subblocks = programs[next(iter(programs))].subblocks if programs else 1

    def write_sources(self, directory: Path) -> None:
        for kind, r in self.runners.items():
            (directory / f"sim_program.{kind.value}.py").write_text(r.source)

    @property
    def physical_cores(self) -> int:
        return self.arch.vector_cores if self.subblocks == 1 else int(self.arch.cube_cores.value)

    def launch(self, block_num: int, arrays: list[np.ndarray | None], scalars: dict[str, Any], *,
               timing: bool = True, check: str = "raise", trace: list | None = None) -> LaunchReport:
        cube = self.runners.get(SectionKind.CUBE)
        if cube is not None and any(isinstance(s, TileOp) for s in cube.instructions):
            raise SimulationError(f"{self.name}: the simulator does not execute Cube programs in this release "
                                  "(section_cube() is parsed and type-checked only)")
        cores = self.physical_cores
        report = LaunchReport(self.name, self.arch.name, self.arch.clock_mhz.value, block_num, cores,
                              math.ceil(block_num / cores), timed=timing)
        vec = self.runners.get(SectionKind.VECTOR)
        if vec is None:
            return report
        vec.gm.bind(arrays)
        dims = [tuple(a.shape) if a is not None else () for a in arrays]
        if not timing:
            for b in range(block_num):
                for sub in range(self.subblocks):
                    vec.start_block(False)
                    vec.fn(BlockContext(b, block_num, sub, self.subblocks, dims, scalars), vec.functional_ops, _prange)
            report.instructions = -1
            return report
        was_enabled = gc.isenabled()
        gc.disable()  # the timed run allocates many small, long-lived records: collection only costs time
        try:
            self._timed(vec, report, block_num, dims, scalars, check, trace)
        finally:
            if was_enabled:
                gc.enable()
        return report

    def _timed(self, vec: ProgramRunner, report: LaunchReport, block_num: int, dims, scalars, check: str,
               trace: list | None) -> None:
        reporter = Reporter(check)
        checks = check != "off"
        capacities = {s: a.size for s, a in vec.memory.arrays.items()}
        onchip = OnChipChecker(reporter, capacities) if checks else None
        gmcheck = GlobalChecker(reporter) if checks else None
        stats = BlockStats()
        cores = self.physical_cores
        cap = self.arch.gm_bandwidth_cap_gb_s
        core_free = [0.0] * cores
        pipe_busy = [0.0] * len(PIPES)
        objs = vec.gm.objs
        for b in range(block_num):
            core = b % cores
            wave = b // cores
            active = min(cores, block_num - wave * cores)
            port_bpc = cap.value * 1e9 / active / (self.arch.clock_mhz.value * 1e6) if cap else 0.0
            start = core_free[core]
            end = start
            for sub in range(self.subblocks):
                vec.start_block(True)
                if onchip is not None:
                    onchip.reset_block()
                rec = Recorder(vec.recorder_plan, self.cost, port_bpc, stats,
                               onchip.committed if onchip is not None else None, defer=check != "raise")
                vec.fn(BlockContext(b, block_num, sub, self.subblocks, dims, scalars), rec.ops, _prange)
                insts = rec.finish()
                hook = None
                if checks:
                    def hook(inst: Inst, _b=b) -> None:
                        for acc in inst.accesses:
                            onchip.access(inst, acc)  # type: ignore[union-attr]
                        for pidx, pname, rect, write in inst.gm:
                            gmcheck.access(inst, _b, objs[pidx], pname, rect, write)  # type: ignore[union-attr]
                sched = CoreScheduler(insts, reporter, hook, b, checks, record_flows=trace is not None)
                block_end = sched.run()
                for i, busy in enumerate(sched.busy):
                    pipe_busy[i] += busy
                report.blocks.append(BlockTiming(b, core, start, start + block_end,
                                                 {PIPES[i].name: v for i, v in enumerate(sched.busy) if v}))
                if trace is not None:
                    trace.append((b, core, start, insts, sched.flows))
                end = max(end, start + block_end)
            core_free[core] = end
        report.cycles = max(core_free) if core_free else 0.0
        report.pipe_busy = {PIPES[i].name: v for i, v in enumerate(pipe_busy) if v}
        report.path_bytes = stats.path_bytes
        report.flops = stats.flops
        report.instructions = stats.instructions
        report.roofline = self._roofline(stats, min(cores, block_num))
        for fault in reporter.faults:
            report.faults.append(str(fault))
            warnings.warn(str(fault), RuntimeWarning, stacklevel=4)

    def _roofline(self, stats: BlockStats, active: int) -> Roofline:
        clock = self.arch.clock_mhz.value
        bounds = {}
        cap = self.arch.gm_bandwidth_cap_gb_s
        if stats.gm_bytes and cap:
            bounds["GM bandwidth"] = stats.gm_bytes / (cap.value * 1e3)
        for name, nbytes in stats.path_bytes.items():
            path = self.arch.paths.get(name)
            if path is None or not nbytes:
                continue
            peak = path.fit_peak if path.use_fit and path.fit_peak else path.gib_per_s
            bounds[f"{name} path"] = nbytes / (active * peak * 2**30 / 1e6)
        if stats.vector_ideal_cycles:
            bounds["Vector"] = stats.vector_ideal_cycles / self.physical_cores / clock
        return Roofline(bounds)
