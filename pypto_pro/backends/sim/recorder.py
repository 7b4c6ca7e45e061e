"""Records one block's dispatched instructions as :class:`Inst` records for the scheduler.

The generated program calls ``ops[k](...)`` in program order; here each call becomes an
instruction in its pipe's queue. Sync instructions that sit right before an op in the same pipe
(``wait_flag``, ``lock``) or right after it (``set_flag``, ``unlock``) are fused into that op's
record: same queue order, same semantics, far fewer records to schedule.
"""
from __future__ import annotations

from typing import Callable

from pypto_pro.backends.sim.cost_model import CostModel
from pypto_pro.backends.sim.inst import BARRIER, OP, PIPE_INDEX, SET, Inst, SyncSpec
from pypto_pro.errors import SimulationError
from pypto_pro.language.enums import PipeType
from pypto_pro.ir.nodes import SetValidShape, SyncOp, TileOp, TileRef
from pypto_pro.ops.registry import OPS

_PRE = ("wait_flag", "lock", "xwait")
SYNC_ALL_EVENT = 1 << 20  # event numbers of the flags a sync_all expands into (apart from user ids)


class L2Tracker:
    """How often each global-memory window is read, and written, during the launch. Cores run
    concurrently, so a window read n times costs one HBM fetch shared by its n reads: each read is
    priced as the expected cost with miss fraction 1/n (fewer hits when the unique bytes exceed
    L2's capacity). L2 is write-back, so a window written n times (a Cube<->Vector workspace slot)
    reaches HBM once: each write lands in L2 and carries 1/n of the write-back. A window written
    once (an output) pays the full HBM cost, as before. Source for the write-back behaviour:
    PTO-ISA's flash-attention notes (kernels/manual/common/flash_atten/README.md) on the
    intermediate FIFO buffers and their L2 write-back."""

    def __init__(self, model) -> None:
        self.model = model
        self.uses: dict = {}   # (GM object, rect, is_write) -> reads or writes of that window
        self.sizes: dict = {}

    def count(self, window, nbytes: int) -> None:
        self.uses[window] = self.uses.get(window, 0) + 1
        self.sizes[window] = nbytes

    def price(self, insts, stats: "BlockStats") -> None:
        """Set the cycles and GM-port share of recorded GM reads and writes (``insts``: the records
        with an ``l2`` entry) from their windows' reuse."""
        if self.model is None:
            return
        unique = sum(self.sizes.values())
        resident = min(1.0, self.model.capacity.value / unique) if unique else 1.0
        fractions: dict = {}  # window -> fraction of its accesses that reach HBM
        for inst in insts:
            window, miss, miss_port, hit = inst.l2
            miss_frac = fractions.get(window)
            if miss_frac is None:
                miss_frac = fractions[window] = 1.0 - resident * (1.0 - 1.0 / self.uses[window])
            inst.cycles += miss_frac * miss + (1.0 - miss_frac) * hit - miss
            inst.port = miss_frac * miss_port
            stats.gm_bytes += miss_frac * inst.nbytes
            stats.l2_hit_bytes += (1.0 - miss_frac) * inst.nbytes


class BlockStats:
    """Traffic and work of the recorded instructions (summed over the launch)."""

    def __init__(self) -> None:
        self.path_bytes: dict[str, int] = {}
        self.flops = 0
        self.vector_ideal_cycles = 0.0
        self.cube_ideal_cycles = 0.0
        self.gm_bytes = 0          # bytes that reached HBM (L2 misses and stores)
        self.l2_hit_bytes = 0
        self.instructions = 0


class RecorderPlan:
    """Per-program static part of recording: what each ``ops[k]`` call is (built once)."""

    def __init__(self, instructions: list, dispatchers: list[Callable | None]):
        self.entries: list[tuple] = []
        for stmt, d in zip(instructions, dispatchers):
            if isinstance(stmt, SetValidShape):
                self.entries.append(("valid", stmt, d, None))
            elif isinstance(stmt, SyncOp):
                self.entries.append(("sync", stmt, None, None))
            else:  # info: static cost class, pipe index, and a per-instruction cost cache by size
                self.entries.append(("op", stmt, d, (_static_cost_info(stmt), PIPE_INDEX[stmt.pipe], {})))


def _static_cost_info(stmt: TileOp) -> tuple:
    if stmt.op in ("load", "store"):
        tile = stmt.dst if stmt.op == "load" else stmt.srcs[0]
        space = tile.buffer.space
        path = f"GM->{space.name}" if stmt.op == "load" else f"{space.name}->GM"
        return ("move", path)
    if stmt.op in ("extract", "fixpipe", "ub_to_l1"):
        return ("xfer", f"{stmt.srcs[0].buffer.space.name}->{stmt.dst.buffer.space.name}")
    if stmt.op in ("matmul", "matmul_acc"):
        lhs = stmt.srcs[0].tile_type.dtype
        return ("cube", lhs.itemsize, lhs.is_float)
    spec = OPS[stmt.op]
    items = [t.tile_type.dtype.itemsize for t in (stmt.dst, *stmt.srcs) if isinstance(t, TileRef)]
    return ("vector", spec.kind, max(items), stmt.attrs.get("dim"))


class Recorder:
    def __init__(self, plan: RecorderPlan, cost: CostModel, port_bytes_per_cycle: float, stats: BlockStats,
                 on_commit: Callable | None, defer: bool = True, core: int = 0, aivs: int = 0,
                 l2: L2Tracker | None = None, gm_objs: list[int] | None = None, core_base: int = 0,
                 barrier_size: int = 0):
        self.core_base = core_base        # first core of this block (kernels with sync_all number all cores)
        self.barrier_size = barrier_size  # cores taking part in pl.system.sync_all
        self.barriers = 0
        self.l2 = l2
        self.gm_objs = gm_objs
        self.core = core          # core_base + 0: the AIC (or the only core of a vector-only block); +1..: AIVs
        self.aivs = aivs          # Vector cores in the block (0 for a vector-only kernel)
        self.qbase = core * len(PIPE_INDEX)
        self.defer = defer
        self.cost = cost
        self.port_bpc = port_bytes_per_cycle
        self.stats = stats
        self.on_commit = on_commit
        self.insts: list[Inst] = []
        self.l2_insts: list[Inst] = []  # GM accesses priced by the L2 model once the launch is recorded
        # what the scheduler and the on-chip checker depend on, per dispatched instruction: the id
        # of an op's (statement, size) cost entry and its tile slots; a sync's statement id and
        # event (schedule_cache). Ids of live objects are distinct, so equal token lists mean
        # equal call sequences.
        self.tokens: list = []
        self.pending: list[list[tuple]] = [[] for _ in PIPE_INDEX]
        self.last: list[Inst | None] = [None] * len(PIPE_INDEX)
        self.dispatched = 0
        self.sync_cycles = cost.sync
        self.issue_cycles = cost.issue
        self.ops = [self._recorder(*e) for e in plan.entries]

    def _recorder(self, kind: str, stmt, dispatch: Callable | None, info) -> Callable:
        if kind == "valid":
            return dispatch  # type: ignore[return-value]  # scalar-side state only
        if kind == "sync":
            add_sync = self.add_sync
            return lambda ev: add_sync(stmt, ev)
        add_op = self.add_op
        slots = sum(isinstance(t, TileRef) for t in (stmt.dst, *stmt.srcs))  # the first call arguments
        return lambda *args: add_op(stmt, dispatch(*args), info, args[:slots])

    # ---- ops ----------------------------------------------------------------------------

    def _cost(self, stmt: TileOp, prep, info: tuple, hit: bool = False) -> tuple:
        """(cycles, port cycles, flops, ideal vector cycles) of an instruction of this size."""
        if info[0] == "move" and hit:
            l2 = self.cost.arch.l2
            return l2.hit_latency.value + prep.nbytes / l2.hit_bytes_per_cycle.value, 0.0, 0, 0.0, 0.0, 0.0
        if info[0] == "move":
            cycles = self.cost.path(info[1], prep.nbytes)
            port = prep.nbytes / self.port_bpc if self.port_bpc else 0.0
            return max(cycles, port), port, 0, 0.0, 0.0, 0.0
        if info[0] == "xfer":
            return self.cost.path(info[1], prep.nbytes), 0.0, 0, 0.0, 0.0, 0.0
        if info[0] == "cube":
            _, item, is_float = info
            m, n, k = prep.rows, prep.cols, prep.k
            cycles = self.cost.cube(m, n, k, item, is_float)
            return cycles, 0.0, 2 * m * n * k, cycles - self.cost.arch.cost["cube_fixed_cycles"].value, 0.0, 0.0
        _, kind, item, dim = info
        head, body, tail = self.cost.vector_parts(stmt.op, kind, prep.rows, prep.cols, item, prep.full_cols, dim)
        flops = 0 if kind in ("move", "cast", "fill") else prep.rows * prep.cols
        return body, 0.0, flops, body, head, tail

    def add_op(self, stmt: TileOp, prep, plan_info: tuple, slots: tuple = ()) -> None:
        info, pipe, by_size = plan_info
        stats = self.stats
        size = (self.port_bpc, prep.rows, prep.cols, prep.full_cols, prep.k)
        costed = by_size.get(size)
        if costed is None:
            hit_cost = self._cost(stmt, prep, info, True) if info[0] == "move" else None
            costed = by_size[size] = (self._cost(stmt, prep, info), hit_cost)
        tokens = self.tokens
        tokens.append(id(costed))  # costed entries live as long as the program: ids stay unique
        tokens += slots
        (cycles, port, flops, ideal, head, tail), hit = costed
        l2 = None
        if hit is not None and self.l2 is not None:
            pidx, _, rect, write = prep.gm[0]
            l2 = ((self.gm_objs[pidx], rect, write), cycles, port, hit[0])
            self.l2.count(l2[0], prep.nbytes)
        if info[0] in ("move", "xfer"):
            path = info[1]
            stats.path_bytes[path] = stats.path_bytes.get(path, 0) + prep.nbytes
            if info[0] == "move" and l2 is None:
                stats.gm_bytes += prep.nbytes
        elif info[0] == "cube":
            path = None
            stats.flops += flops
            stats.cube_ideal_cycles += ideal
        else:
            path = None
            stats.flops += flops
            stats.vector_ideal_cycles += ideal
        pre = self.pending[pipe]
        spec = None
        if pre:
            if len(pre) == 1:  # the common case: one wait or one lock before the op
                kind, k, _ = pre[0]
                spec = SyncSpec((k,) if kind == "wait_flag" else (), (k,) if kind == "lock" else (),
                                xwaits=(k,) if kind == "xwait" else ())
            else:
                spec = SyncSpec(tuple(k for kind, k, _ in pre if kind == "wait_flag"),
                                tuple(k for kind, k, _ in pre if kind == "lock"),
                                xwaits=tuple(k for kind, k, _ in pre if kind == "xwait"))
            spec.origins = pre  # the (kind, key, statement) triples, in order; a fresh list follows
            cycles += len(pre) * self.sync_cycles
            self.pending[pipe] = []
        inst = Inst(len(self.insts), self.qbase + pipe, OP, cycles, stmt, stmt.op, None, prep.accesses, prep.gm,
                    prep.run, prep.nbytes, flops, path)
        if self.on_commit is not None:
            inst.commits = prep.commits  # marked written when the instruction ends
        inst.extra = spec
        inst.port = port
        if l2 is not None:
            inst.l2 = l2
            self.l2_insts.append(inst)
        inst.head, inst.tail = head, tail
        inst.t_issue = self.dispatched * self.issue_cycles
        self.dispatched += 1
        self.insts.append(inst)
        self.last[pipe] = inst
        stats.instructions += 1

    # ---- sync ---------------------------------------------------------------------------

    def add_sync(self, stmt: SyncOp, ev: int) -> None:
        self.tokens += (id(stmt), ev)
        pipe = PIPE_INDEX[stmt.pipe]
        kind = stmt.kind
        if kind in ("set_flag", "wait_flag"):
            key = (self.qbase + PIPE_INDEX[stmt.src], self.qbase + PIPE_INDEX[stmt.dst], ev)
        elif kind in ("lock", "unlock"):
            key = ev if self.core == 0 else (self.core, ev)
        elif kind == "xwait":
            aic = self.core == self.core_base
            key = ((self.core, ev), self.aivs if aic and self.aivs else 1)
        elif kind == "xset":
            base = self.core_base
            key = tuple((base + k, ev) for k in range(1, self.aivs + 1)) if self.core == base else ((base, ev),)
        elif kind == "sync_all":
            self._sync_all(stmt)
            return
        else:
            key = None
        self.dispatched += 1
        self.stats.instructions += 1
        if kind in _PRE:
            self.pending[pipe].append((kind, key, stmt))
            return
        last = self.last[pipe]
        if kind != "barrier" and not self.pending[pipe] and last is not None and last.kind == OP:
            spec = last.extra
            if spec is None:
                spec = SyncSpec()
            if kind == "set_flag":
                spec.sets = spec.sets + (key,)
            elif kind == "xset":
                spec.xsets = spec.xsets + key
                for k in key:
                    spec.origins.append(("xset", k, stmt))
            else:
                spec.releases = spec.releases + (key,)
            spec.origins.append((kind, key, stmt))
            last.extra = spec
            last.cycles += self.cost.sync
            return
        self._flush(pipe)
        spec = SyncSpec(sets=(key,) if kind == "set_flag" else (), releases=(key,) if kind == "unlock" else (),
                        xsets=key if kind == "xset" else ())
        spec.origins.append((kind, key, stmt))
        for k in key if kind == "xset" else ():
            spec.origins.append(("xset", k, stmt))
        self._standalone(pipe, SET if kind != "barrier" else BARRIER, stmt, kind, spec)

    def _sync_all(self, stmt: SyncOp) -> None:
        """pl.system.sync_all as the hardware does it: every pipe of this core drains into S; S joins
        the launch-wide barrier (one signal from each core); then S releases every pipe."""
        if not self.barrier_size:
            where = f"{stmt.loc.path}:{stmt.loc.line}: " if stmt.loc else ""
            raise SimulationError(where + "pl.system.sync_all needs the launch's blocks simulated together")
        n = SYNC_ALL_EVENT + self.barriers
        self.barriers += 1
        s = PIPE_INDEX[PipeType.S]
        others = [p for p in range(len(PIPE_INDEX)) if p != s]
        q = self.qbase
        for p in range(len(PIPE_INDEX)):
            self._flush(p)
        for p in others:
            self._standalone(p, SET, stmt, "sync_all drain", SyncSpec(sets=((q + p, q + s, n),)))
        # each core's arrival signals every participant, so each one's wait sees every core
        self._standalone(s, SET, stmt, "sync_all arrive",
                         SyncSpec(waits=tuple((q + p, q + s, n) for p in others),
                                  xsets=tuple((-2 - r, n) for r in range(self.barrier_size))))
        self._standalone(s, SET, stmt, "sync_all wait",
                         SyncSpec(xwaits=(((-2 - self.core, n), self.barrier_size),),
                                  sets=tuple((q + s, q + p, n) for p in others)))
        for p in others:
            self._standalone(p, SET, stmt, "sync_all resume", SyncSpec(waits=((q + s, q + p, n),)))
        self.dispatched += 1

    def _standalone(self, pipe: int, kind: int, stmt, name: str, spec: SyncSpec | None) -> Inst:
        inst = Inst(len(self.insts), self.qbase + pipe, kind, self.cost.sync, stmt, name)
        inst.extra = spec if spec else None
        inst.t_issue = self.dispatched * self.cost.issue
        self.insts.append(inst)
        self.last[pipe] = inst
        return inst

    def _flush(self, pipe: int) -> None:
        for kind, key, stmt in self.pending[pipe]:
            spec = SyncSpec(waits=(key,) if kind == "wait_flag" else (), acquires=(key,) if kind == "lock" else (),
                            xwaits=(key,) if kind == "xwait" else ())
            spec.origins.append((kind, key, stmt))
            self._standalone(pipe, SET, stmt, kind, spec)
        self.pending[pipe] = []

    def finish(self) -> list[Inst]:
        for p in range(len(self.pending)):
            if self.pending[p]:
                self._flush(p)
        insts, self.insts = self.insts, []
        self.ops = []  # its closures hold this recorder: drop the cycle so records die by refcount
        self.last = []
        return insts

