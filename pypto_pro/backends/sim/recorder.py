"""Records one block's dispatched instructions as :class:`Inst` records for the scheduler.

The generated program calls ``ops[k](...)`` in program order; here each call becomes an
instruction in its pipe's queue. Sync instructions that sit right before an op in the same pipe
(``wait_flag``, ``lock``) or right after it (``set_flag``, ``unlock``) are fused into that op's
record: same queue order, same semantics, far fewer records to schedule.
"""
from __future__ import annotations

from collections import Counter
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
            else:  # info: static cost class, pipe index, and cost entries by GM bandwidth share and size
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
    """Turns one block's ``ops[k](...)`` calls into :class:`Inst` records for one core.

    Each call site gets its own recording closure, built once per block with everything static
    about the statement bound in (pipe, kind, sync key layout, cost cache), so the per-call work
    is the dynamic part only. Launch statistics are summed per cost entry in :meth:`finish`.
    """

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
        self.used: list[tuple] = []  # the cost entry of every recorded op (statistics, in finish)
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
            return self._sync_recorder(stmt)
        return self._op_recorder(stmt, dispatch, info)  # type: ignore[arg-type]

    # ---- ops ----------------------------------------------------------------------------

    def _entry(self, stmt: TileOp, prep, info: tuple) -> tuple:
        """Cost entry of an instruction of this size: (cycles, GM-port cycles, flops, ideal cycles,
        vector head, vector tail, L2-hit cycles or None, bytes, path or None, cost class)."""
        cls = info[0]
        nbytes = prep.nbytes
        if cls == "move":
            cycles = self.cost.path(info[1], nbytes)
            port = nbytes / self.port_bpc if self.port_bpc else 0.0
            l2 = self.cost.arch.l2
            hit = l2.hit_latency.value + nbytes / l2.hit_bytes_per_cycle.value if l2 is not None else None
            return max(cycles, port), port, 0, 0.0, 0.0, 0.0, hit, nbytes, info[1], cls
        if cls == "xfer":
            return self.cost.path(info[1], nbytes), 0.0, 0, 0.0, 0.0, 0.0, None, nbytes, info[1], cls
        if cls == "cube":
            _, item, is_float = info
            m, n, k = prep.rows, prep.cols, prep.k
            cycles = self.cost.cube(m, n, k, item, is_float)
            ideal = cycles - self.cost.arch.cost["cube_fixed_cycles"].value
            return cycles, 0.0, 2 * m * n * k, ideal, 0.0, 0.0, None, nbytes, None, cls
        _, kind, item, dim = info
        head, body, tail = self.cost.vector_parts(stmt.op, kind, prep.rows, prep.cols, item, prep.full_cols, dim)
        flops = 0 if kind in ("move", "cast", "fill") else prep.rows * prep.cols
        return body, 0.0, flops, body, head, tail, None, nbytes, None, cls

    def _op_recorder(self, stmt: TileOp, dispatch: Callable, info: tuple) -> Callable:
        static, pipe, caches = info
        by_size = caches.setdefault(self.port_bpc, {})  # (rows, cols, full_cols, k) -> cost entry
        nslots = sum(isinstance(t, TileRef) for t in (stmt.dst, *stmt.srcs))  # the first call arguments
        tokens, used, pending, last, insts = self.tokens, self.used, self.pending, self.last, self.insts
        queue, name, sync_cycles, issue = self.qbase + pipe, stmt.op, self.sync_cycles, self.issue_cycles
        tracker = self.l2 if static[0] == "move" else None
        uses, sizes = (tracker.uses, tracker.sizes) if tracker is not None else ({}, {})
        gm_objs, l2_insts = self.gm_objs, self.l2_insts
        commits = self.on_commit is not None  # written regions are tracked only with the checker
        entry_of = self._entry

        def record(*args) -> None:
            prep = dispatch(*args)
            size = (prep.rows, prep.cols, prep.full_cols, prep.k)
            entry = by_size.get(size)
            if entry is None:
                entry = by_size[size] = entry_of(stmt, prep, static)
            tokens.append(id(entry))  # entries live as long as the program: their ids stay unique
            tokens.extend(args[:nslots])
            used.append(entry)
            cycles, port, flops, _, head, tail, hit, nbytes, path, _ = entry
            pre = pending[pipe]
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
                pending[pipe] = []
                inst = Inst(len(insts), queue, OP, cycles + len(pre) * sync_cycles, stmt, name, None, prep.accesses,
                            prep.gm, prep.run, nbytes, flops, path, spec, port, head, tail,
                            self.dispatched * issue, prep.commits if commits else ())
            else:
                inst = Inst(len(insts), queue, OP, cycles, stmt, name, None, prep.accesses, prep.gm, prep.run,
                            nbytes, flops, path, None, port, head, tail, self.dispatched * issue,
                            prep.commits if commits else ())
            if hit is not None and tracker is not None:
                pidx, _, rect, write = prep.gm[0]
                window = (gm_objs[pidx], rect, write)
                inst.l2 = (window, cycles, port, hit)
                uses[window] = uses.get(window, 0) + 1
                sizes[window] = nbytes
                l2_insts.append(inst)
            self.dispatched += 1
            insts.append(inst)
            last[pipe] = inst
        return record

    # ---- sync ---------------------------------------------------------------------------

    def _sync_key(self, stmt: SyncOp) -> Callable[[int], object] | None:
        """How the resource a sync statement names is keyed, from its event (None: the event itself)."""
        kind, q = stmt.kind, self.qbase
        if kind in ("set_flag", "wait_flag"):
            src, dst = q + PIPE_INDEX[stmt.src], q + PIPE_INDEX[stmt.dst]
            return lambda ev: (src, dst, ev)
        if kind in ("lock", "unlock"):
            core = self.core
            return None if core == 0 else (lambda ev: (core, ev))
        if kind == "xwait":
            core = self.core
            count = self.aivs if core == self.core_base and self.aivs else 1
            return lambda ev: ((core, ev), count)
        if kind == "xset":
            base, aivs = self.core_base, self.aivs
            if self.core == base:
                return lambda ev: tuple((base + k, ev) for k in range(1, aivs + 1))
            return lambda ev: ((base, ev),)
        return lambda ev: None

    def _sync_recorder(self, stmt: SyncOp) -> Callable[[int], None]:
        kind = stmt.kind
        tokens, sid = self.tokens, id(stmt)
        if kind == "sync_all":
            def record_sync_all(ev: int) -> None:
                tokens.append(sid)
                tokens.append(ev)
                self._sync_all(stmt)
            return record_sync_all
        pipe = PIPE_INDEX[stmt.pipe]
        key_of = self._sync_key(stmt)
        pending, last = self.pending, self.last
        if kind in _PRE:  # wait_flag, lock, xwait: fused into the next op of the pipe
            def record_before(ev: int) -> None:
                tokens.append(sid)
                tokens.append(ev)
                self.dispatched += 1
                pending[pipe].append((kind, ev if key_of is None else key_of(ev), stmt))
            return record_before
        sync_cycles = self.sync_cycles

        def record_after(ev: int) -> None:  # set_flag, unlock, xset: fused into the previous op; barrier
            tokens.append(sid)
            tokens.append(ev)
            self.dispatched += 1
            key = ev if key_of is None else key_of(ev)
            prev = last[pipe]
            if kind != "barrier" and not pending[pipe] and prev is not None and prev.kind == OP:
                spec = prev.extra
                if spec is None:
                    spec = prev.extra = SyncSpec()
                if kind == "set_flag":
                    spec.sets = spec.sets + (key,)
                elif kind == "xset":
                    spec.xsets = spec.xsets + key
                    for k in key:
                        spec.origins.append(("xset", k, stmt))
                else:
                    spec.releases = spec.releases + (key,)
                spec.origins.append((kind, key, stmt))
                prev.cycles += sync_cycles
                return
            self._flush(pipe)
            spec = SyncSpec(sets=(key,) if kind == "set_flag" else (), releases=(key,) if kind == "unlock" else (),
                            xsets=key if kind == "xset" else ())
            spec.origins.append((kind, key, stmt))
            for k in key if kind == "xset" else ():
                spec.origins.append(("xset", k, stmt))
            self._standalone(pipe, SET if kind != "barrier" else BARRIER, stmt, kind, spec)
        return record_after

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
        """Flush pending syncs, add this block's work to the launch statistics, hand over the records."""
        for p in range(len(self.pending)):
            if self.pending[p]:
                self._flush(p)
        stats = self.stats
        stats.instructions += self.dispatched - self.barriers  # a sync_all counts as no instruction
        for entry, n in Counter(self.used).items():  # equal entries add equal amounts: merging them is exact
            _, _, flops, ideal, _, _, hit, nbytes, path, cls = entry
            if path is not None:
                stats.path_bytes[path] = stats.path_bytes.get(path, 0) + n * nbytes
                if cls == "move" and (hit is None or self.l2 is None):
                    stats.gm_bytes += n * nbytes  # with an L2 model, pricing counts what reaches HBM
            elif cls == "cube":
                stats.flops += n * flops
                stats.cube_ideal_cycles += n * ideal
            else:
                stats.flops += n * flops
                stats.vector_ideal_cycles += n * ideal
        self.used = []
        insts, self.insts = self.insts, []
        self.ops = []  # its closures hold this recorder: drop the cycle so records die by refcount
        self.last = []
        return insts

