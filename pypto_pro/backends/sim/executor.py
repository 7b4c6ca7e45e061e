"""The simulator device: runs each block's program on the CPU with NumPy.

Functional model: instructions execute in program order per block; blocks run one after the
other, scheduled in waves onto the arch's physical cores (recorded in the launch report).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pypto_pro.arch.model import ArchModel
from pypto_pro.backends.sim import tile_ops
from pypto_pro.backends.sim.codegen import ProgramSource
from pypto_pro.backends.sim.memory import CoreMemory
from pypto_pro.backends.sim.tile_state import SlotState
from pypto_pro.errors import SimulationError
from pypto_pro.ir.nodes import KernelIR, TileOp
from pypto_pro.language.enums import MemorySpace, SectionKind


@dataclass
class BlockContext:
    """Ids and launch values a block's program reads."""

    block_idx: int
    block_num: int
    subblock_idx: int
    subblock_num: int
    dims: list[tuple[int, ...]]
    scalars: dict[str, Any]


@dataclass
class LaunchReport:
    """What one simulated launch did (the timing model adds cycles in a later release)."""

    kernel: str
    arch: str
    block_num: int
    waves: int
    physical_cores: int
    static_instructions: dict[str, int] = field(default_factory=dict)  # per pipe, in the program text

    def summary(self) -> str:
        ins = sum(self.static_instructions.values())
        return (f"{self.kernel} on sim[{self.arch}]: {self.block_num} blocks in {self.waves} wave(s) of "
                f"{self.physical_cores} cores, {ins} static tile instructions")


def _prange(start: int, stop: int, step: int) -> range:
    if step <= 0:
        raise SimulationError(f"pl.range step is {step} at run time; it must be positive")
    return range(start, stop, step)


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
        self.ops = [tile_ops.build(s, self.states, self.gm) for s in gen.instructions]
        self.instructions = gen.instructions
        namespace: dict[str, Any] = {}
        exec(compile(self.source, f"<pypto_pro sim: {program.name}.{program.kind.value}>", "exec"), namespace)
        self.fn = namespace["program"]

    def run_block(self, ctx: BlockContext) -> None:
        for st in self.states.values():
            st.reset()
        self.fn(ctx, self.ops, _prange)


class SimExecutable:
    """A compiled kernel on the simulator: the per-engine runners and launch logic."""

    def __init__(self, name: str, programs: dict[SectionKind, KernelIR], arch: ArchModel):
        self.name = name
        self.arch = arch
        self.runners = {k: ProgramRunner(p, arch) for k, p in programs.items()}
        self.subblocks = programs[next(iter(programs))].subblocks if programs else 1

    def write_sources(self, directory: Path) -> None:
        for kind, r in self.runners.items():
            (directory / f"sim_program.{kind.value}.py").write_text(r.source)

    def launch(self, block_num: int, arrays: list[np.ndarray | None], scalars: dict[str, Any]) -> LaunchReport:
        cube = self.runners.get(SectionKind.CUBE)
        if cube is not None and any(isinstance(s, TileOp) for s in cube.instructions):
            raise SimulationError(f"{self.name}: the simulator does not execute Cube programs in this release "
                                  "(section_cube() is parsed and type-checked only)")
        vec = self.runners.get(SectionKind.VECTOR)
        dims = [tuple(a.shape) if a is not None else () for a in arrays]
        if vec is not None:
            vec.gm.arrays[:] = arrays
            for b in range(block_num):
                for sub in range(self.subblocks):
                    vec.run_block(BlockContext(b, block_num, sub, self.subblocks, dims, scalars))
        physical = self.arch.vector_cores if self.subblocks == 1 else int(self.arch.cube_cores.value)
        counts: dict[str, int] = {}
        for r in self.runners.values():
            for s in r.instructions:
                if isinstance(s, TileOp):
                    counts[s.pipe.name] = counts.get(s.pipe.name, 0) + 1
        return LaunchReport(self.name, self.arch.name, block_num, math.ceil(block_num / physical), physical, counts)
