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
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from pypto_pro.arch.model import ArchModel
from pypto_pro.backends.sim import batch_replay, check_hooks, debug_log, gm_views, numerics, parallel_replay, tile_ops
from pypto_pro.backends.sim.blas_threads import one_blas_thread
from pypto_pro.backends.sim.block_sequence import POISON, SequentialLaunch
from pypto_pro.backends.sim.checks import OnChipChecker
from pypto_pro.backends.sim.gm_checker import GlobalChecker
from pypto_pro.backends.sim.codegen import ProgramSource
from pypto_pro.backends.sim.cost_model import CostModel
from pypto_pro.backends.sim.inst import PIPES, Inst, queue_name
from pypto_pro.backends.sim.kit import GMBinding
from pypto_pro.backends.sim.live import LiveBlock, LivePricing
from pypto_pro.backends.sim.memory import CoreMemory
from pypto_pro.backends.sim.launch_stats import BlockStats, L2Tracker
from pypto_pro.backends.sim.recorder import Recorder, RecorderPlan, _read_now, build_block
from pypto_pro.backends.sim.report import BlockTiming, LaunchReport, Roofline
from pypto_pro.backends.sim.schedule_cache import RecordedSchedule, TokenPool, schedule_signature
from pypto_pro.backends.sim.scheduler import CoreScheduler, Reporter
from pypto_pro.backends.sim.tile_state import SlotState
from pypto_pro.backends.sim.vec_mask import VecMaskSPR
from pypto_pro.errors import SimulationError
from pypto_pro.errors_sim import DeadlockError
from pypto_pro.ir.nodes import KernelIR, SetValidShape, SyncOp, TileOp, walk_stmts
from pypto_pro.language.enums import CrossCoreSyncMode, MemorySpace, SectionKind
from pypto_pro.ops import getval, ssbuf


def _gm_region(runners: list) -> Callable[[int, tuple], np.ndarray | None]:
    """GM bytes of a checker access (``GMBinding.region``) from the program that has the binding."""
    def region(pidx: int, rect: tuple) -> np.ndarray | None:
        for r in runners:
            if any(v.gm_index == pidx for v in r.gm.views):
                return r.gm.region(pidx, rect)
        return runners[0].gm.region(pidx, rect)
    return region


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
    """One engine's program compiled to Python, bound to the memories of the core that runs it.

    ``memories`` maps each memory space to (memory, core id): a Vector core's program sees its own
    UB and, on a5, the block's L1; the Cube program sees L1/L0 and, for Acc -> Vec moves, the UB
    of the Vector core given by ``remote(subblock)``.
    """

    def __init__(self, program: KernelIR, memories: dict[MemorySpace, tuple[CoreMemory, int]], core: int,
                 remote: Callable[[int], dict] | None = None, live_gm: frozenset[str] = frozenset(),
                 block: dict | None = None):
        self.program = program
        self.core = core
        self.states = {}
        for b in program.buffers:
            mem, owner = memories[b.space]
            if not b.joins:
                self.states[b.uid] = SlotState.create(b, mem.slot_views(b), owner,
                                                      b.tile_type.effective_layout(mem.arch_name))
        for b in program.buffers:  # a join of tiles (if / helper return): its members' slots and valid shapes
            if b.joins:
                parts = [self.states[m.uid] for m in b.joins]
                self.states[b.uid] = SlotState([v for s in parts for v in s.views], [v for s in parts for v in s.valid],
                                               b, parts[0].core, parts[0].initial)
        self.gm = tile_ops.GMBinding(len(program.params), gm_views.program_views(program))
        self.spr = VecMaskSPR()
        gen = ProgramSource(program, live_gm)
        self.source = gen.generate()
        self.instructions = gen.instructions
        self.dispatchers: list[Callable | None] = [
            tile_ops.build(s, self.states, self.gm, remote, program.kind, block, self.spr)
            if isinstance(s, (TileOp, SetValidShape))
            else None
            for s in gen.instructions]
        self.functional_ops = [self._functional(s, d) for s, d in zip(gen.instructions, self.dispatchers)]
        self.recorder_plan = RecorderPlan(gen.instructions, self.dispatchers, live_gm)
        namespace: dict[str, Any] = dict(gen.namespace)  # the program's helpers (struct field access)
        namespace["_gm_read"] = getval.reader(self.gm.arrays)  # pl.getval on a GM tensor
        exec(compile(self.source, f"<pypto_pro sim: {program.name}.{program.kind.value}>", "exec"), namespace)
        self.fn = namespace["program"]

    @staticmethod
    def _functional(stmt, dispatch: Callable | None) -> Callable:
        if isinstance(stmt, SyncOp):
            return _noop
        if isinstance(stmt, SetValidShape):
            return dispatch  # type: ignore[return-value]
        if "result" in stmt.attrs:  # a scalar read (getval, ssbuf_load): its value
            return _read_now(dispatch)  # type: ignore[arg-type]
        return lambda *args: dispatch(*args).run(False)  # type: ignore[misc]

    def reset(self) -> None:
        for st in self.states.values():
            st.reset()
        self.spr.reset()
        self.gm.strides.clear()  # each block starts with the tensors' default descriptors (pl.set_stride)


class SimExecutable:
    """A compiled kernel on the simulator: the block's cores, their memories and programs.

    A vector-only kernel's block is one Vector core (core 0). A kernel with Cube code has blocks
    of one Cube core (core 0) and the arch's Vector cores (cores 1..n), simulated together.
    """

    reuse_schedules = True  # replay a block's schedule for blocks that time the same (schedule_cache)

    def __init__(self, name: str, programs: dict[SectionKind, KernelIR], arch: ArchModel):
        self.name = name
        self.arch = arch
        self.cost = CostModel(arch)
        cube = programs.get(SectionKind.CUBE)
        # a Cube section, even an empty one, makes the real jit build a MIX kernel: each block is the AIC
        # and its Vector cores (an empty Cube program then runs nothing)
        self.mixed = cube is not None
        self.subblocks = int(arch.vector_cores_per_block.value) if self.mixed else 1
        self.programs = programs
        # every block resident at once, in one scheduler: a sync_all, or cross-core flags between blocks
        self.has_sync_all = any(isinstance(st, SyncOp) and (st.kind == "sync_all" or (
            st.kind in ("xset", "xwait") and st.attrs.get("sync_mode") is CrossCoreSyncMode.INTER_BLOCK))
            for p in programs.values() for st in walk_stmts(p.body))
        self.live_gm = getval.written_tensors(programs.values())  # a getval of these waits for the schedule
        self.memories, self.runners = self._make_block(0)
        self.live = any(r.recorder_plan.live for r in self.runners)  # live.py
        self._dispatched: Callable[[], None] | None = None  # this launch's `dispatched` callback (launch)

    def _make_block(self, base: int, carve: Callable | None = None) -> tuple[list[CoreMemory], list[ProgramRunner]]:
        """Memories and program runners of one block whose cores are numbered from ``base`` (``carve``:
        where the memories' bytes come from, for a replay lane: batch_replay.Lanes)."""
        arch, programs = self.arch, self.programs
        cube = programs.get(SectionKind.CUBE)
        vec = programs.get(SectionKind.VECTOR)
        shared: dict = {"base": base}  # what the block's cores share (the SSBUF: ops/ssbuf.py)
        if self.mixed:
            cube_spaces = {b.space for p in programs.values() for b in p.buffers if b.space is not MemorySpace.Vec}
            aic = CoreMemory(arch, tuple(cube_spaces) or (MemorySpace.Mat,), carve)
            aivs = [CoreMemory(arch, (MemorySpace.Vec,), carve) for _ in range(self.subblocks)]
            mats = {s: (aic, base) for s in cube_spaces}
            vec_runners = [ProgramRunner(vec, {**mats, MemorySpace.Vec: (aivs[k], base + k + 1)}, base + k + 1,
                                         live_gm=self.live_gm, block=shared)
                           for k in range(self.subblocks)] if vec is not None else []
            for k, r in enumerate(vec_runners):  # a UB tile only the Cube section names (an Acc -> Vec move's
                for b in cube.buffers if cube is not None else ():  # dst): its slots in each Vector core's UB
                    if b.space is MemorySpace.Vec and not b.joins and b.uid not in r.states:
                        r.states[b.uid] = SlotState.create(b, aivs[k].slot_views(b), base + k + 1,
                                                           b.tile_type.effective_layout(aivs[k].arch_name))
            remote = (lambda sub: vec_runners[sub].states) if vec_runners else None
            cube_runner = ProgramRunner(cube, {**mats, MemorySpace.Vec: (aivs[0], base + 1)}, base, remote,
                                        self.live_gm, shared)
            return [aic, *aivs], [cube_runner, *vec_runners]
        if vec is not None:
            spaces = tuple({b.space for b in vec.buffers}) or (MemorySpace.Vec,)
            mem = CoreMemory(arch, spaces, carve)
            return [mem], [ProgramRunner(vec, {s: (mem, base) for s in MemorySpace}, base, live_gm=self.live_gm,
                                         block=shared)]
        return [], []

    def write_sources(self, directory: Path) -> None:
        for r in self.runners[: 2 if self.mixed else 1]:
            (directory / f"sim_program.{r.program.kind.value}.py").write_text(r.source)

    @property
    def physical_cores(self) -> int:
        return int(self.arch.cube_cores.value) if self.mixed else self.arch.vector_cores

    def _contexts(self, b: int, block_num: int, dims, scalars) -> list[BlockContext]:
        """The ids each core of block ``b`` reads, as the real runtime answers them (the real
        backend's get_block_idx / get_subblock_num): the AIC of a mixed block sees block ``b`` and one
        subblock; AIV ``k`` sees the flattened ``b * subblocks + k`` and ``subblocks``."""
        if not self.mixed:
            return [BlockContext(b, block_num, 0, 1, dims, scalars)]
        out = []
        for r in self.runners:
            k = r.core - 1  # runner 0 is the AIC, 1.. the AIVs
            out.append(BlockContext(b, block_num, 0, 1, dims, scalars) if k < 0 else
                       BlockContext(b * self.subblocks + k, block_num, k, self.subblocks, dims, scalars))
        return out

    def launch(self, block_num: int, arrays: list[np.ndarray | None], scalars: dict[str, Any], *,
               timing: bool = True, check: str = "raise", trace: list | None = None,
               dispatched: Callable[[], None] | None = None) -> LaunchReport:
        """Run the launch; the device prints (pl.printf, pl.dump_data, failed pl.pto_assert) are shown
        when it ends, per core (``debug_log``), and kept in the report. ``dispatched`` is called once
        every block is dispatched and before any numerics ran (no argument byte has changed yet) in
        launches whose blocks are scheduled after dispatch (the launch memo keys slow ones there)."""
        self._dispatched = dispatched
        with debug_log.capture(block_num) as log:
            report = self._launch_released(block_num, arrays, scalars, timing=timing, check=check, trace=trace)
            report.device_log = log.text()
            report.assert_failures = list(log.asserts)
            report.traps = list(log.traps)
        return report

    def _launch_released(self, block_num: int, arrays: list[np.ndarray | None], scalars: dict[str, Any], *,
                         timing: bool = True, check: str = "raise", trace: list | None = None) -> LaunchReport:
        cores = self.physical_cores
        report = LaunchReport(self.name, self.arch.name, self.arch.clock_mhz.value, block_num, cores,
                              math.ceil(block_num / cores), timed=timing)
        if not self.runners:
            return report
        try:
            # small matmuls: threads only contend (blas_threads); one errstate for every op (numerics)
            with one_blas_thread(), numerics.launch_errstate():
                return self._run_launch(report, block_num, arrays, scalars, timing, check, trace)
        finally:  # the executable outlives the launch: it must not keep the launch's tensors alive
            lanes = getattr(self, "_lane_set", None)
            for r in self.runners + [r for _, rs in (lanes.blocks if lanes is not None else ()) for r in rs]:
                r.gm.release()

    def _run_launch(self, report: LaunchReport, block_num: int, arrays: list[np.ndarray | None], scalars: dict[str, Any],
                timing: bool, check: str, trace: list | None) -> LaunchReport:
        for r in self.runners:
            r.gm.bind(arrays)
        dims = [tuple(a.shape) if a is not None else () for a in arrays]
        if not timing and not self.mixed:  # mixed blocks need the scheduler to order their cores
            run = self.runners[0]
            for b in range(block_num):
                run.reset()
                run.fn(self._contexts(b, block_num, dims, scalars)[0], run.functional_ops, _prange)
            report.instructions = -1
            return report
        was_enabled = gc.isenabled()
        gc.disable()  # the timed run allocates many small, long-lived records: collection only costs time
        try:
            mode = check if timing or check == "off" else "off"
            if self.has_sync_all:
                if self.live:
                    raise SimulationError(f"{self.name}: pl.getval of a tile or of a tensor the kernel writes, in a "
                                          "kernel whose blocks run together (sync_all), is not supported yet")
                self._timed_together(report, block_num, arrays, dims, scalars, mode, trace)
            elif self.live:
                self._timed_live(report, block_num, dims, scalars, mode, trace)
            else:
                self._timed(report, block_num, dims, scalars, mode, trace)
        finally:
            if was_enabled:
                gc.enable()
            for mem in self.memories:  # every timed block poisons its memories first: hand the pages back
                mem.release()
            if getattr(self, "_lane_set", None) is not None:
                self._lane_set.release()
        report.timed = timing
        return report

    def _checkers(self, check: str) -> tuple:
        """Reporter, on-chip and global checkers (None with check='off') and the commit hook of a
        launch whose blocks run one after another on this executable's memories."""
        reporter = Reporter(check)
        checks = check != "off"
        capacities = {(i, s): a.size for i, mem in enumerate(self.memories)  # memory i: core i of the block
                      for s, a in mem.arrays.items()}
        capacities[ssbuf.checker_memory(0)] = ssbuf.SSBUF_BYTES
        gmcheck = GlobalChecker(reporter, arch=self.arch.name, region=_gm_region(self.runners)) if checks else None
        arrays = {(i, s): a for i, mem in enumerate(self.memories) for s, a in mem.arrays.items()}
        onchip = OnChipChecker(reporter, capacities, self.arch.name, arrays,
                               gmcheck.same if gmcheck is not None else None, check == "raise") if checks else None
        return reporter, checks, onchip, gmcheck, onchip.committed if onchip is not None else None

    def _lanes(self, block_num: int, trace: list | None) -> batch_replay.Lanes | None:
        """The replay lanes of a launch (batch_replay), made on first use; None where blocks cannot run in
        lockstep (one block, replay off, a trace, ``pl.make_tensor`` views)."""
        if block_num < 2 or not self.reuse_schedules or trace is not None or batch_replay.LANES < 2 or \
                any(r.gm.views for r in self.runners):
            return None
        count = min(batch_replay.LANES, block_num)
        lanes = getattr(self, "_lane_set", None)
        if lanes is None and not getattr(self, "_lanes_wanted", False):
            return None  # made once a launch has shown blocks that would run in lockstep (see _timed)
        if lanes is None or lanes.count < count:
            row = sum((a.size + 63) // 64 * 64 for mem in self.memories for a in mem.arrays.values())
            lanes = self._lane_set = batch_replay.Lanes(lambda carve: self._make_block(0, carve), count, row)
            for _, runners in lanes.blocks:  # one cost entry per (statement, size) for every lane: the
                for r, main in zip(runners, self.runners):  # schedule signatures hold their ids
                    plan = r.recorder_plan
                    plan.entries = [(kind, stmt, d, mine[3]) for (kind, stmt, d, _), mine in
                                    zip(plan.entries, main.recorder_plan.entries)]
        return lanes

    def _timed(self, report: LaunchReport, block_num: int, dims, scalars, check: str, trace: list | None) -> None:
        reporter, checks, onchip, gmcheck, on_commit = self._checkers(check)
        seq = SequentialLaunch(self, report, block_num)
        stats, objs, l2 = seq.stats, seq.objs, seq.l2
        watch, landed = (gmcheck.pending, gmcheck.landed) if gmcheck is not None else (None, None)
        lanes = self._lanes(block_num, trace)
        blocks = lanes.blocks if lanes is not None else [(self.memories, self.runners)]
        nlanes = len(blocks)
        for _, runners in blocks[1:] if lanes is None else blocks:
            for r, main in zip(runners, self.runners):
                r.gm.arrays[:], r.gm.objs[:] = main.gm.arrays, main.gm.objs
        logged: list[list[Recorder]] = []
        loggers: dict[tuple[int, int, float], Recorder] = {}  # (lane, core, GM port share) -> its logging recorder
        pool = TokenPool() if self.reuse_schedules else None  # one copy of each distinct token sequence
        try:
            for b in range(block_num):  # log every block first: L2 reuse is priced over the launch
                port_bpc = seq.port_share(b)
                lane = b % nlanes  # block b runs on this lane's memories (batch_replay)
                recs = []
                for r, ctx in zip(blocks[lane][1], self._contexts(b, block_num, dims, scalars)):
                    r.reset()
                    logger = loggers.get((lane, r.core, port_bpc))
                    if logger is None:
                        logger = loggers[(lane, r.core, port_bpc)] = Recorder(
                            r.recorder_plan, self.cost, port_bpc, on_commit, core=r.core,
                            aivs=self.subblocks if self.mixed else 0, l2=l2, gm_objs=objs)
                    r.fn(ctx, logger.ops, _prange)
                    rec = logger.detach()  # this block's log (the logger goes on, emptied)
                    if pool is not None:
                        pool.intern(rec)
                    rec.account(stats)
                    for fault in rec.faults:
                        reporter.report(fault)
                    recs.append(rec)
                logged.append(recs)
        finally:
            for logger in loggers.values():
                logger.release()
        pool = None  # the shared logs live as long as their blocks
        if self._dispatched is not None:
            self._dispatched()
        fractions_of = [l2.miss_fractions([w for rec in recs for w in rec.windows], stats) for recs in logged]
        sigs = [schedule_signature(recs, f) if self.reuse_schedules else None for recs, f in zip(logged, fractions_of)]
        free = batch_replay.independent_blocks(logged, objs) if lanes is not None else set()
        if lanes is None and self.reuse_schedules and trace is None and block_num > 2 and \
                not getattr(self, "_lanes_wanted", False) and len(set(sigs)) < block_num - 1:
            # blocks replay a schedule: the next launch runs them on lanes, in lockstep where they are
            # independent (the first launch is not slowed by building the lanes)
            self._lanes_wanted = True
        checked = onchip.arrays if onchip is not None else None  # (memory, space) -> bytes: the block's lane
        schedules: dict[tuple, RecordedSchedule] = {}  # signature -> a block scheduled that way
        # blocks still to come with each signature: a schedule is recorded only if a later block may
        # replay it, and dropped (its records with it) after the last one
        later = Counter(sigs) if self.reuse_schedules else None
        done: set[int] = set()  # blocks already replayed with an earlier one (batch_replay.replay_chunk)
        child: parallel_replay.Child | None = None
        attempt = parallel_replay.Attempt()
        try:
            for b, recs in enumerate(logged):
                if child is not None and b == child.lo:  # blocks b.. ran in a forked child
                    if child.join():
                        parallel_replay.take(child, logged, seq, gmcheck, objs)
                        break
                    child = None  # not usable: they replay here, from the serial run's state
                lane = b % nlanes
                sig = sigs[b]
                known = schedules.get(sig) if sig is not None else None
                if sig is not None:
                    later[sig] -= 1  # type: ignore[index]
                    if not later[sig]:  # type: ignore[index]
                        schedules.pop(sig, None)
                if b in done:
                    seq.block_done(b, recs, known.end_time, known.busy, trace, [], None)  # type: ignore[union-attr]
                    logged[b] = []
                    continue
                fractions = fractions_of[b]
                chunk = [b]
                if known is not None and b in free:
                    while len(chunk) < nlanes - lane and b + len(chunk) < block_num and sigs[b + len(chunk)] == sig \
                            and b + len(chunk) in free:
                        chunk.append(b + len(chunk))
                if lanes is not None:
                    lanes.poison(lane, len(chunk), POISON)
                else:
                    seq.poison()
                insts: list[Inst] = []  # (and the last block's records die here, not while this one is built)
                op_insts: list[Inst] = []
                if known is None or trace is not None:  # records are needed to schedule, or for the trace
                    insts, op_insts = build_block(recs, fractions)
                if known is not None and len(chunk) > 1:  # blocks b.. replay one schedule in lockstep
                    gm_checks = [check_hooks.gm_check(gmcheck, objs, lambda inst, _c=c: _c) for c in chunk] \
                        if gmcheck is not None else None
                    batch_replay.replay_chunk(known, [[p for rec in logged[c] for p in rec.preps] for c in chunk],
                                              lanes.stacker(len(chunk)), gm_checks, check != "raise", watch, landed)
                    done.update(chunk[1:])
                    block_end, busy, flows = known.end_time, known.busy, None
                elif known is not None:
                    # timed exactly like an earlier, fault-free block, with the same on-chip accesses:
                    # replay its schedule; only global memory (other addresses) needs checking
                    if attempt.open and child is None:  # the rest of the launch's replays on another core
                        child = attempt.start(self.runners, objs, logged, b, sigs, schedules, trace, lanes,
                                              watch, check != "raise", seq.poison)
                    preps = [prep for rec in recs for prep in rec.preps]
                    known.replay(preps, check_hooks.gm_check(gmcheck, objs, lambda inst, _b=b: _b), check != "raise",
                                 watch, landed)
                    block_end, busy = known.end_time, known.busy
                    flows = known.assign(insts) if trace is not None else None
                else:
                    if onchip is not None:
                        onchip.reset_block()
                        if lanes is not None:
                            for i, mem in enumerate(blocks[lane][0]):
                                for space, arr in mem.arrays.items():
                                    checked[(i, space)] = arr  # type: ignore[index]
                    hook = check_hooks.check_hook(onchip, gmcheck, objs, lambda inst, _b=b: _b)
                    faults = len(reporter.faults)
                    wanted = sig is not None and later[sig] > 0  # type: ignore[index]  # a later block may replay it
                    sched = CoreScheduler(insts, reporter, hook, b, checks, record_flows=trace is not None,
                                          cores=seq.ncores_block, defer=check != "raise", on_commit=on_commit,
                                          record_steps=wanted, watch=watch, landed=landed)
                    block_end = sched.run()
                    report.blocks_scheduled += 1
                    busy, flows = sched.busy, sched.flows
                    if wanted and len(reporter.faults) == faults:
                        schedules[sig] = RecordedSchedule(insts, op_insts, sched.steps or [], busy, block_end, flows)
                    sched = hook = None  # its queues and clocks hold this block's records: free them with the block
                seq.block_done(b, recs, block_end, busy, trace, insts, flows)
                logged[b] = []  # free the block's log as soon as it has run
        finally:
            if child is not None:
                child.kill()
        seq.finish(reporter, gmcheck)

    def _timed_live(self, report: LaunchReport, block_num: int, dims, scalars, check: str, trace: list | None) -> None:
        """Kernels whose scalar code reads what the pipes write: each block is dispatched and scheduled
        together (live.py); no schedule replay."""
        reporter, checks, onchip, gmcheck, on_commit = self._checkers(check)
        seq = SequentialLaunch(self, report, block_num)
        pricing = LivePricing(seq.l2, seq.stats)
        watch, landed = (gmcheck.pending, gmcheck.landed) if gmcheck is not None else (None, None)
        for b in range(block_num):
            port_bpc = seq.port_share(b)
            seq.poison()
            if onchip is not None:
                onchip.reset_block()
            hook = check_hooks.check_hook(onchip, gmcheck, seq.objs, lambda inst, _b=b: _b)
            sched = CoreScheduler([], reporter, hook, b, checks, record_flows=trace is not None,
                                  cores=seq.ncores_block, defer=check != "raise", on_commit=on_commit, watch=watch,
                                  landed=landed)
            block = LiveBlock(sched, pricing)
            jobs = []
            for r, ctx in zip(self.runners, self._contexts(b, block_num, dims, scalars)):
                r.reset()
                rec = Recorder(r.recorder_plan, self.cost, port_bpc, on_commit, core=r.core,
                               aivs=self.subblocks if self.mixed else 0, l2=seq.l2, gm_objs=seq.objs)
                jobs.append((rec, lambda _r=r, _ctx=ctx, _rec=rec: _r.fn(_ctx, _rec.ops, _prange)))
            block.dispatch(jobs)
            recs = [rec for rec, _ in jobs]
            for rec in recs:
                rec.account(seq.stats)
                for fault in rec.faults:
                    reporter.report(fault)
            block_end = block.finish()
            report.blocks_scheduled += 1
            seq.block_done(b, recs, block_end, sched.busy, trace, block.insts, sched.flows)
        seq.finish(reporter, gmcheck)

    def _timed_together(self, report: LaunchReport, block_num: int, arrays, dims, scalars, check: str,
                        trace: list | None) -> None:
        """Kernels with pl.system.sync_all: every block is resident at once (else the barrier could
        never complete) and all blocks share one scheduler, each with its own on-chip memories."""
        cores = self.physical_cores
        if block_num > cores:
            raise DeadlockError(f"{self.name}: pl.system.sync_all waits for every block, but {block_num} blocks do not "
                                f"fit on the {cores} cores at once: blocks of later waves would never start")
        per_block = max(1, len(self.memories))
        blocks = [self._make_block(b * per_block) for b in range(block_num)]
        memories = [m for mems, _ in blocks for m in mems]
        reporter = Reporter(check)
        checks = check != "off"
        capacities = {(i, s): a.size for i, m in enumerate(memories) for s, a in m.arrays.items()}
        capacities.update({ssbuf.checker_memory(b * per_block): ssbuf.SSBUF_BYTES for b in range(block_num)})
        gmcheck = GlobalChecker(reporter, shared_clock=True, arch=self.arch.name, region=_gm_region(blocks[0][1]),
                                in_flight=check != "raise") if checks else None
        onchip = OnChipChecker(reporter, capacities, self.arch.name,
                               {(i, s): a for i, m in enumerate(memories) for s, a in m.arrays.items()},
                               gmcheck.same if gmcheck is not None else None, check == "raise") if checks else None
        on_commit = onchip.committed if onchip is not None else None
        stats = BlockStats()
        cap = self.arch.gm_bandwidth_cap_gb_s
        port_bpc = cap.value * 1e9 / block_num / (self.arch.clock_mhz.value * 1e6) if cap else 0.0
        l2 = L2Tracker(self.arch.l2)
        for m in memories:
            for arr in m.arrays.values():
                arr.fill(POISON)
        insts: list[Inst] = []
        priced: list[Inst] = []
        windows: list = []
        owner: list[int] = []
        for b, (_, runners) in enumerate(blocks):
            for r in runners:
                r.gm.bind(arrays)
            for r, ctx in zip(runners, self._contexts(b, block_num, dims, scalars)):
                r.reset()
                rec = Recorder(r.recorder_plan, self.cost, port_bpc, on_commit, core=r.core,
                               aivs=self.subblocks if self.mixed else 0, l2=l2, gm_objs=r.gm.objs,
                               core_base=b * per_block, barrier_size=block_num * per_block)
                r.fn(ctx, rec.ops, _prange)
                rec.account(stats)
                for fault in rec.faults:
                    reporter.report(fault)
                got = rec.build()
                insts.extend(got)
                priced.extend(rec.l2_insts)
                windows.extend(rec.windows)
                owner.extend([b] * len(got))
                rec.release()
        for i, inst in enumerate(insts):
            inst.seq = i
        L2Tracker.apply(priced, l2.miss_fractions(windows, stats))
        objs = GMBinding.launch_objs([r.gm for r in blocks[0][1]])
        block_of = {id(inst): b for inst, b in zip(insts, owner)}
        hook = check_hooks.check_hook(onchip, gmcheck, objs, lambda inst: block_of[id(inst)])
        sched = CoreScheduler(insts, reporter, hook, -1, checks, record_flows=trace is not None,
                              cores=block_num * per_block, defer=check != "raise", on_commit=on_commit,
                              watch=gmcheck.pending if gmcheck is not None else None,
                              landed=gmcheck.landed if gmcheck is not None else None)
        report.cycles = sched.run()
        report.blocks_scheduled = block_num  # all together, in one scheduler
        nq = len(PIPES) * per_block
        for b in range(block_num):
            mine = [inst for inst, o in zip(insts, owner) if o == b]
            busy = {queue_name(q % nq, self.mixed): sched.busy[q] for q in range(b * nq, (b + 1) * nq) if sched.busy[q]}
            report.blocks.append(BlockTiming(b, b, 0.0, max((i.end for i in mine), default=0.0), busy))
        totals: dict[str, float] = {}
        for bt in report.blocks:
            for p, v in bt.busy.items():
                totals[p] = totals.get(p, 0.0) + v
        report.pipe_busy = totals
        if trace is not None:
            trace.append((0, 0, 0.0, insts, sched.flows))
        self._fill_report(report, stats, reporter, block_num, gmcheck)

    def _fill_report(self, report: LaunchReport, stats: BlockStats, reporter: Reporter, active: int,
                     gmcheck: GlobalChecker | None = None) -> None:
        """Traffic, work, roofline, faults and notes of a finished launch."""
        seen: dict[str, int] = {}
        for note in reporter.notes:  # every block's scheduler finds the same: once, with a count
            seen[note] = seen.get(note, 0) + 1
        report.notes = [n + (f"\n  (in {c} blocks)" if c > 1 else "") for n, c in seen.items()]
        if gmcheck is not None:
            report.notes += gmcheck.notes()
        report.path_bytes = stats.path_bytes
        report.l2_hit_bytes = stats.l2_hit_bytes
        report.flops = stats.flops
        report.instructions = stats.instructions
        report.roofline = self._roofline(stats, active)
        for fault in reporter.faults:
            report.faults.append(str(fault))
            warnings.warn(str(fault), RuntimeWarning, stacklevel=5)

    def _roofline(self, stats: BlockStats, active: int) -> Roofline:
        clock = self.arch.clock_mhz.value
        bounds = {}
        cap = self.arch.gm_bandwidth_cap_gb_s
        if stats.gm_bytes and cap:
            bounds["GM bandwidth"] = stats.gm_bytes / (cap.value * 1e3)
        for name, nbytes in stats.path_bytes.items():
            path = self.arch.paths.get(name)
            if path is None or not nbytes or name.startswith("GM->"):
                continue  # GM reads may hit L2, which is faster than the path's HBM bandwidth
            peak = path.fit_peak if path.use_fit and path.fit_peak else path.gib_per_s
            bounds[f"{name} path"] = nbytes / (active * peak * 2**30 / 1e6)
        if stats.vector_ideal_cycles:
            vec_units = active * (self.subblocks if self.mixed else 1)
            bounds["Vector"] = stats.vector_ideal_cycles / vec_units / clock
        if stats.cube_ideal_cycles:
            bounds["Cube"] = stats.cube_ideal_cycles / active / clock
        return Roofline(bounds)

