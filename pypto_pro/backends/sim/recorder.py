"""Records one block's dispatched instructions for the scheduler, in two steps.

**Logging** (while the block's program runs): each ``ops[k](...)`` call dispatches its
instruction, looks up its cost entry, and appends to a log; it also produces the block's
*tokens* (what its schedule depends on, see schedule_cache), the numerics of every op in order
(``preps``), the GM windows the L2 model prices, and the launch statistics. That is all a block
needs when it replays an identical block's schedule.

**Building** (only for blocks the scheduler runs): the log becomes :class:`Inst` records in each
pipe's queue. Sync instructions that sit right before an op in the same pipe (``wait_flag``,
``lock``, ``wait_cross_core``) or right after it (``set_flag``, ``unlock``, ``set_cross_core``)
are fused into that op's record: same queue order, same semantics, far fewer records to schedule.
"""
from __future__ import annotations

from collections import Counter
from typing import Callable

from pypto_pro.arch.pipes import cross_core_wait_blocks_su
from pypto_pro.backends.sim.cost_model import CostModel
from pypto_pro.backends.sim.cross_core import cross_core_key, participants
from pypto_pro.backends.sim.inst import BARRIER, OP, PIPE_INDEX, SET, Inst, SyncSpec
from pypto_pro.backends.sim.launch_stats import BlockStats, L2Tracker
from pypto_pro.backends.sim.su_wait import su_wait_builder
from pypto_pro.errors import SimulationError
from pypto_pro.errors_sim import SyncError
from pypto_pro.ir.printer import sync_str
from pypto_pro.language.enums import PipeType, SyncCoreType
from pypto_pro.ir.nodes import SetValidShape, SyncOp, TileOp, TileRef

_PRE = ("wait_flag", "lock", "xwait")
SYNC_ALL_EVENT = 1 << 20  # event numbers of the flags a sync_all expands into (apart from user ids)
BAR_ALL_EVENT = 1 << 21   # event numbers of the flags a bar_all expands into


def _read_now(dispatch: Callable) -> Callable:
    def read(*args):
        prep = dispatch(*args)
        prep.run(False)
        return prep.result
    return read


class RecorderPlan:
    """Per-program static part of recording: what each ``ops[k]`` call is (built once). ``live_gm``:
    the GM tensors the kernel writes (a ``getval`` of any other tensor is read at dispatch)."""

    def __init__(self, instructions: list, dispatchers: list[Callable | None], live_gm: frozenset[str] = frozenset()):
        self.entries: list[tuple] = []
        self.live = False  # whether a scalar read waits for the schedule (live.py)
        for stmt, d in zip(instructions, dispatchers):
            if isinstance(stmt, SetValidShape):
                self.entries.append(("valid", stmt, d, None))
            elif isinstance(stmt, SyncOp):
                self.entries.append(("sync", stmt, None, None))
            elif stmt.op == "getval" and not isinstance(stmt.srcs[0], TileRef) and \
                    getattr(stmt.srcs[0].param, "base", stmt.srcs[0].param).name not in live_gm:
                self.entries.append(("read", stmt, d, None))
            else:  # info: static cost class, pipe index, and cost entries by GM bandwidth share and size
                self.live = self.live or "result" in stmt.attrs  # getval, ssbuf_load
                self.entries.append(("op", stmt, d, (_static_cost_info(stmt), PIPE_INDEX[stmt.pipe], {})))


def _static_cost_info(stmt: TileOp) -> tuple:
    """The static part of an instruction's price, from its declaration's cost class."""
    from pypto_pro.ops import INSTRUCTIONS
    cost = INSTRUCTIONS[stmt.op].cost
    if cost.kind == "gm":
        tile = stmt.dst if isinstance(stmt.dst, TileRef) else stmt.srcs[0]
        space = tile.buffer.space.name
        return ("move", f"GM->{space}" if isinstance(stmt.dst, TileRef) else f"{space}->GM")
    if cost.kind == "path":
        return ("xfer", f"{stmt.srcs[0].buffer.space.name}->{stmt.dst.buffer.space.name}")
    if cost.kind == "cube":
        lhs = stmt.srcs[0].tile_type.dtype
        return ("cube", lhs.itemsize, lhs.is_float())
    if cost.kind == "scalar":
        return ("scalar",)
    if cost.kind == "simt":  # priced by its dispatcher from what its threads execute (Prepared.priced)
        return ("simt",)
    if cost.kind == "vf":  # a VF call: its dispatch counts the cycles of the body it runs (prep.k)
        return ("vf",)
    items = [t.tile_type.dtype.itemsize for t in (stmt.dst, *stmt.srcs) if isinstance(t, TileRef)]
    return ("vector", cost, max(items))


class Recorder:
    """Logs one core's ``ops[k](...)`` calls for one block, and builds its :class:`Inst` records.

    Each call site gets its own logging closure, built once per block with everything static
    about the statement bound in (pipe, kind, sync key layout, cost cache), so the per-call work
    is the dynamic part only; the matching builder turns the logged call into records.
    """

    def __init__(self, plan: RecorderPlan, cost: CostModel, port_bytes_per_cycle: float,
                 on_commit: Callable | None, core: int = 0, aivs: int = 0,
                 l2: L2Tracker | None = None, gm_objs: list[int] | None = None, core_base: int = 0,
                 barrier_size: int = 0):
        self.core_base = core_base        # first core of this block (kernels with sync_all number all cores)
        self.barrier_size = barrier_size  # cores of the launch when its blocks run together (sync_all)
        self.barriers = 0
        self.bar_alls = 0
        self.faults: list[Exception] = []  # found while logging (reported by the executor)
        self.l2 = l2
        self.gm_objs = gm_objs
        self.core = core          # core_base + 0: the AIC (or the only core of a vector-only block); +1..: AIVs
        self.aivs = aivs          # Vector cores in the block (0 for a vector-only kernel)
        self.qbase = core * len(PIPE_INDEX)
        self.cost = cost
        self.port_bpc = port_bytes_per_cycle
        self.on_commit = on_commit
        # logging, in flat lists (a block holds its whole log until it runs, and the logs of a launch's
        # blocks are all held at once: a list slot per item, no tuple made per call). ``log``: per call,
        # an op's call site or a sync's (call site, event, statement id), one tuple per site and event
        # (its builder is made on first build). ``tokens``: what the scheduler and the on-chip checker
        # depend on, per call: the id of an op's (statement, size) cost entry and its tile slots, a
        # sync's (site, event, statement id) (schedule_cache; ids of live objects are distinct, so equal
        # token lists mean equal call sequences). Each op's numerics and cost entry, in call order; the
        # L2-priced windows.
        self.log: list = []
        self.tokens: list = []  # bytes once pooled (schedule_cache.TokenPool), with its hash:
        self.tokens_hash: int | None = None
        self.preps: list = []
        self.used: list[tuple] = []  # the cost entry of every logged op (statistics, building)
        self.windows: list = []
        self.sync_alls = 0  # pl.system.sync_all calls logged
        self.sync_origins: dict[int, dict] = {}  # site -> event -> its origin (shared by the detached blocks)
        # building
        self.insts: list[Inst] = []
        self.l2_insts: list[Inst] = []  # records of the L2-priced windows, in order
        self.op_insts: list[Inst] = []  # the record of each logged op, in order (preps[j] -> op_insts[j])
        self.pending: list[list[tuple]] = [[] for _ in PIPE_INDEX]
        self.pending_at: list[list[float]] = [[] for _ in PIPE_INDEX]  # the dispatch index of each pending sync
        self.last: list[Inst | None] = [None] * len(PIPE_INDEX)
        # a2a3: a cross-core wait stalls the scalar unit (su_wait.py); the last such wait built so far
        self.su_wait = cross_core_wait_blocks_su(cost.arch.name)
        self.gate: Inst | None = None
        self.dispatched = 0
        self.built = 0      # log entries already built (a live block builds as it goes: live.py)
        self.cursor: tuple[Callable, Callable] | None = None  # the next prep and cost entry to build
        self.live: Callable | None = None  # (recorder, prepared read) -> value, in a live block
        self.sync_cycles = cost.sync
        self.issue_cycles = cost.issue
        self.plan = plan
        # builders per call site, made only when a log is built: a block that replays another's
        # schedule (schedule_cache) is never built, and most blocks of an SPMD launch replay
        self.builders: list[Callable | None] = [None] * len(plan.entries)
        self.ops = [self._logger(k, *e) for k, e in enumerate(plan.entries)]

    def _logger(self, k: int, kind: str, stmt, dispatch: Callable | None, info) -> Callable:
        if kind == "valid":
            return dispatch  # type: ignore[return-value]  # scalar-side state only
        if kind == "sync":
            return self._sync_logger(k, stmt)
        if kind == "read":  # a getval of a GM tensor no instruction writes: read at dispatch
            return _read_now(dispatch)  # type: ignore[arg-type]
        log_op = self._op_logger(k, stmt, dispatch, info)  # type: ignore[arg-type]
        if "result" not in stmt.attrs:
            return log_op
        preps = self.preps

        def log_read(*args):  # an S-pipe read: the scalar program waits for its value (live.py)
            log_op(*args)
            if self.live is None:
                raise SimulationError("internal: a getval instruction outside a live block")
            return self.live(self, preps[-1])
        return log_read

    def _builder(self, k: int) -> Callable:
        """The builder of call site ``k`` (made once per recorder)."""
        kind, stmt, _, info = self.plan.entries[k]
        if kind == "op":
            b = self._op_builder(stmt, info[0], info[1])
        elif stmt.kind == "sync_all":
            b = lambda used: self._sync_all(stmt, used)  # noqa: E731
        elif stmt.kind == "barrier" and stmt.src is PipeType.ALL:
            b = lambda _ev: self._bar_all(stmt)  # noqa: E731
        else:
            b = self._sync_builder(stmt, k)
        self.builders[k] = b
        return b

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
        if cls == "simt":
            cycles, ideal, _ = prep.priced
            return cycles, 0.0, 0, ideal, 0.0, 0.0, None, nbytes, None, cls
        if cls == "scalar":  # one S-pipe instruction (assumed: as long as an issue slot, arch issue_cycles)
            return self.issue_cycles, 0.0, 0, 0.0, 0.0, 0.0, None, nbytes, None, cls
        if cls == "vf":
            return prep.k, 0.0, prep.cols, prep.k, 0.0, 0.0, None, nbytes, None, cls
        _, cost, item = info
        head, body, tail = self.cost.vector_parts(cost, prep.rows, prep.cols, item, prep.full_cols)
        flops = prep.rows * prep.cols if cost.flops else 0
        return body, 0.0, flops, body, head, tail, None, nbytes, None, cls

    def _op_logger(self, k: int, stmt: TileOp, dispatch: Callable, info: tuple) -> Callable:
        static, pipe, caches = info
        by_size = caches.setdefault(self.port_bpc, {})  # (rows, cols, full_cols, k) -> cost entry
        nslots = sum(isinstance(t, TileRef) for t in (stmt.dst, *stmt.srcs))  # the first call arguments
        if stmt.attrs.get("access_scalars"):  # run-time operands that move its on-chip window (an offset)
            nslots = None
        tokens, used, preps, windows, log = self.tokens, self.used, self.preps, self.windows, self.log
        token, more_tokens, use, keep, log_it = tokens.append, tokens.extend, used.append, preps.append, log.append
        site = k
        tracker = self.l2 if static[0] == "move" else None
        counted = tracker.windows if tracker is not None else {}
        gm_objs = self.gm_objs
        entry_of = self._entry

        def log_op(*args) -> None:
            prep = dispatch(*args)
            got = prep.logged  # a record handed out again by its rule's memo (prep_memo) knows its entry
            if got is None or got[0] is not by_size:
                size = (prep.rows, prep.cols, prep.full_cols, prep.k) if prep.priced is None else prep.priced
                entry = by_size.get(size)
                if entry is None:
                    entry = by_size[size] = entry_of(stmt, prep, static)
                got = prep.logged = (by_size, entry, id(entry))  # entries live as long as the program: ids unique
            entry = got[1]
            token(got[2])
            more_tokens(args[:nslots])
            use(entry)
            keep(prep)
            log_it(site)
            if tracker is None or entry[6] is None:
                return
            pidx, _, rect, write = prep.gm[0]  # a GM access the L2 model prices
            window = (gm_objs[pidx], rect, bool(write))
            seen = counted.get(window)
            if seen is None:
                counted[window] = [1, entry[7]]
            else:
                seen[0] += 1
            windows.append(window)
        return log_op

    def _op_builder(self, stmt: TileOp, static: tuple, pipe: int) -> Callable[[], None]:
        pending, last, insts, l2_insts, op_insts = self.pending, self.last, self.insts, self.l2_insts, self.op_insts
        queue, name, sync_cycles, issue = self.qbase + pipe, stmt.op, self.sync_cycles, self.issue_cycles
        commits = self.on_commit is not None  # written regions are tracked only with the checker
        next_prep, next_entry = self.cursor  # type: ignore[misc]
        priced = self.l2 is not None and static[0] == "move"  # logged with an L2 window when it has a hit price

        def build_op() -> None:
            prep, entry = next_prep(), next_entry()
            cycles, port, flops, _, head, tail, hit, nbytes, path, _ = entry
            pre = pending[pipe]
            spec = None
            if len(pre) > 1 and any(kind == "xwait" for kind, _, _ in pre[1:]):
                # a cross-core wait may block long: the syncs before it are instructions of their own,
                # each consumed as soon as it can be (a flag set for this pipe must not stay pending
                # behind the cross-core signal, as one fused record would keep it)
                pending[pipe] = pre[:-1]
                at = self.pending_at[pipe]
                self.pending_at[pipe] = at[:-1]
                self._flush(pipe)
                pending[pipe] = pre = pre[-1:]
                self.pending_at[pipe] = at[-1:]
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
                spec.pre_at = tuple(self.pending_at[pipe])
                pending[pipe] = []
                self.pending_at[pipe] = []
                total = cycles + len(pre) * sync_cycles
            else:
                total = cycles
            inst = Inst(len(insts), queue, OP, total, stmt, name, None, prep.accesses, prep.gm, prep.run, nbytes,
                        flops, path, spec, port, head, tail, self.dispatched * issue, prep.commits if commits else ())
            inst.at = self.dispatched
            inst.gate = self.gate
            if priced and hit is not None:
                inst.l2 = (cycles, port, hit)
                l2_insts.append(inst)
            self.dispatched += 1
            insts.append(inst)
            op_insts.append(inst)
            last[pipe] = inst
        return build_op

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
        if kind in ("xset", "xwait"):
            return cross_core_key(kind, stmt.attrs.get("sync_mode"), self.core, self.core_base, self.aivs,
                                  self.barrier_size)
        return lambda ev: None

    def _sync_logger(self, k: int, stmt: SyncOp) -> Callable[[int], None]:
        tokens, log, sid = self.tokens, self.log, id(stmt)
        known: dict[int, tuple] = {}  # event -> this site's log item (int events: other types get their own)

        def item(ev) -> tuple:
            if ev.__class__ is not int:
                return (k, ev, sid)
            got = known.get(ev)
            if got is None:
                got = known[ev] = (k, ev, sid)
            return got
        if stmt.kind == "sync_all":
            core_type = stmt.attrs.get("core_type")
            missing = None
            if not self.aivs and core_type is not SyncCoreType.AIV_ONLY and self.core == 0:
                where = f"{stmt.loc.path}:{stmt.loc.line}" if stmt.loc else "<unknown>"
                missing = SyncError(  # reported once, by the first core of the launch, when it runs
                    f"pl.system.sync_all(core_type={core_type.name if core_type else 'MIX'}) at {where} in a "
                    "vector-only kernel: it waits for Cube cores this launch does not have (a device error on the "
                    "chip, sync_all.md); use core_type=pl.SyncCoreType.AIV_ONLY")

            def log_sync_all(ev: int) -> None:
                if missing is not None and missing not in self.faults:
                    self.faults.append(missing)
                tokens.append(sid)
                tokens.append(ev)
                self.sync_alls += 1
                log.append(item(ev))
            return log_sync_all
        if stmt.kind == "barrier" and stmt.src is PipeType.ALL:
            def log_bar_all(ev: int) -> None:
                tokens.append(sid)
                log.append(item(ev))
            return log_bar_all
        candidates = stmt.attrs.get("candidates") if stmt.kind in ("lock", "unlock") else None
        if candidates is not None:  # a run-time buffer id: the real code compares it with each candidate
            def log_dynamic_id(ev: int) -> None:
                tokens.append(sid)
                tokens.append(ev)
                if ev in candidates:
                    log.append(item(ev))
                    return
                where = f"{stmt.loc.path}:{stmt.loc.line}" if stmt.loc else "<unknown>"
                self.faults.append(SyncError(
                    f"{sync_str(stmt).split('] ')[-1]} at {where}: run-time buffer id {ev} is not among the "
                    f"candidates {list(candidates)} (mutex_ids / max_mutex_id), so the generated if-chain "
                    f"{'acquires' if stmt.kind == 'lock' else 'releases'} nothing"))
            return log_dynamic_id

        token, log_it = tokens.append, log.append

        def log_sync(ev: int) -> None:  # the common case, inlined: its log item is its token
            got = known.get(ev) if ev.__class__ is int else None
            if got is None:
                got = item(ev)
            token(got)
            log_it(got)
        return log_sync

    def _sync_builder(self, stmt: SyncOp, site: int = -1) -> Callable[[int], None]:
        kind = stmt.kind
        pipe = PIPE_INDEX[stmt.pipe]
        key_of = self._sync_key(stmt)
        pending, last = self.pending, self.last
        if kind == "xwait" and self.su_wait:  # a2a3: a record of its own on S that gates the core
            return su_wait_builder(self, stmt, key_of)
        # a sync's (kind, key, statement) origin (and for an xset, the origins of its flags), made once
        # per int event: the key is a pure function of the event (and of this core's place, the same for
        # every block its logger logs), and the records of the launch's blocks share them
        made: dict[int, tuple] = self.sync_origins.setdefault(site, {}) if site >= 0 else {}

        def origin(ev) -> tuple:
            got = made.get(ev) if ev.__class__ is int else None
            if got is None:
                key = ev if key_of is None else key_of(ev)
                got = (kind, key, stmt)
                if kind == "xset":
                    got = (got, tuple(("xset", k, stmt) for k in key))
                if ev.__class__ is int:
                    made[ev] = got
            return got
        if kind in _PRE:  # wait_flag, lock, xwait: fused into the next op of the pipe
            def build_before(ev: int) -> None:
                self.pending_at[pipe].append(self.dispatched)
                self.dispatched += 1
                pending[pipe].append(origin(ev))
            return build_before
        sync_cycles = self.sync_cycles

        def build_after(ev: int) -> None:  # set_flag, unlock, xset: fused into the previous op; barrier
            at = self.dispatched
            self.dispatched += 1
            own = origin(ev)
            flags: tuple = ()
            if kind == "xset":
                own, flags = own
            key = own[1]
            prev = last[pipe]
            if kind != "barrier" and not pending[pipe] and prev is not None and prev.kind == OP:
                spec = prev.extra
                if spec is None:
                    spec = prev.extra = SyncSpec()
                if kind == "set_flag":
                    spec.sets = spec.sets + (key,)
                elif kind == "xset":
                    spec.xsets = spec.xsets + key
                    spec.xat = spec.xat + (at,) * len(key)
                    spec.origins.extend(flags)
                else:
                    spec.releases = spec.releases + (key,)
                spec.origins.append(own)
                prev.cycles += sync_cycles
                return
            self._flush(pipe)
            spec = SyncSpec(sets=(key,) if kind == "set_flag" else (), releases=(key,) if kind == "unlock" else (),
                            xsets=key if kind == "xset" else ())
            spec.origins.append(own)
            spec.origins.extend(flags)
            if kind == "xset":
                spec.xat = (at,) * len(key)
            self._standalone(pipe, SET if kind != "barrier" else BARRIER, stmt, kind, spec, at)
        return build_after

    def _drain(self, stmt: SyncOp, n: int, what: str, xsets: tuple = (), xwaits: tuple = ()) -> None:
        """Every pipe of this core drains into S (flag ``n`` each); S optionally signals ``xsets`` and
        waits for ``xwaits`` (the cross-core part of a barrier); then S releases every pipe."""
        s = PIPE_INDEX[PipeType.S]
        others = [p for p in range(len(PIPE_INDEX)) if p != s]
        q = self.qbase
        for p in range(len(PIPE_INDEX)):
            self._flush(p)
        for p in others:
            self._standalone(p, SET, stmt, f"{what} drain", SyncSpec(sets=((q + p, q + s, n),)))
        if xsets or xwaits:
            self._standalone(s, SET, stmt, f"{what} arrive",
                             SyncSpec(waits=tuple((q + p, q + s, n) for p in others), xsets=xsets))
            self._standalone(s, SET, stmt, f"{what} wait",
                             SyncSpec(xwaits=xwaits, sets=tuple((q + s, q + p, n) for p in others)))
        else:
            self._standalone(s, SET, stmt, f"{what} drain",
                             SyncSpec(waits=tuple((q + p, q + s, n) for p in others),
                                      sets=tuple((q + s, q + p, n) for p in others)))
        for p in others:
            self._standalone(p, SET, stmt, f"{what} resume", SyncSpec(waits=((q + s, q + p, n),)))

    def _bar_all(self, stmt: SyncOp) -> None:
        """pl.system.bar_all (pipe_barrier(PIPE_ALL)): every pipe of this core drains before any goes on."""
        n = BAR_ALL_EVENT + self.bar_alls
        self.bar_alls += 1
        self._drain(stmt, n, "bar_all")
        self.dispatched += 1

    def _sync_all(self, stmt: SyncOp, used: int) -> None:
        """pl.system.sync_all as PTO-ISA's SYNCALL does it: pipe_barrier(PIPE_ALL) (every pipe of this
        core drains into S); then, on a core of ``core_type``, S joins the launch-wide barrier (one
        signal from each participating core); then S releases every pipe. A core of another kind only
        drains (SYNCALL<AICOnly> on a Vector core is the bar_all alone)."""
        if not self.barrier_size:
            where = f"{stmt.loc.path}:{stmt.loc.line}: " if stmt.loc else ""
            raise SimulationError(where + "pl.system.sync_all needs the launch's blocks simulated together")
        n = SYNC_ALL_EVENT + self.barriers
        self.barriers += 1
        who = participants(stmt.attrs.get("core_type"), self.aivs, self.barrier_size, used)
        if self.core in who:  # each core's arrival signals every participant: each wait sees every core
            self._drain(stmt, n, "sync_all", xsets=tuple((-2 - r, n) for r in who),
                        xwaits=(((-2 - self.core, n), len(who)),))
        else:
            self._drain(stmt, n, "sync_all")
        self.dispatched += 1

    def _standalone(self, pipe: int, kind: int, stmt, name: str, spec: SyncSpec | None,
                    at: float | None = None) -> Inst:
        inst = Inst(len(self.insts), self.qbase + pipe, kind, self.cost.sync, stmt, name)
        inst.extra = spec if spec else None
        inst.t_issue = self.dispatched * self.cost.issue
        inst.at = self.dispatched if at is None else at
        inst.gate = self.gate
        self.insts.append(inst)
        self.last[pipe] = inst
        return inst

    def _flush(self, pipe: int) -> None:
        for origin, at in zip(self.pending[pipe], self.pending_at[pipe]):
            kind, key, stmt = origin
            spec = SyncSpec(waits=(key,) if kind == "wait_flag" else (), acquires=(key,) if kind == "lock" else (),
                            xwaits=(key,) if kind == "xwait" else ())
            spec.origins.append(origin)
            self._standalone(pipe, SET, stmt, kind, spec, at)
        self.pending[pipe] = []
        self.pending_at[pipe] = []

    def account(self, stats: BlockStats) -> None:
        """Add this block's logged work to the launch statistics (HBM bytes of L2-priced accesses
        are added when they are priced)."""
        stats.instructions += len(self.log) - self.sync_alls  # a sync_all counts as no instruction
        for entry, n in Counter(self.used).items():  # equal entries add equal amounts: merging them is exact
            _, _, flops, ideal, _, _, hit, nbytes, path, cls = entry
            if path is not None:
                stats.path_bytes[path] = stats.path_bytes.get(path, 0) + n * nbytes
                if cls == "move" and (hit is None or self.l2 is None):
                    stats.gm_bytes += n * nbytes  # not priced by the L2 model: all of it reaches HBM
            elif cls == "cube":
                stats.flops += n * flops
                stats.cube_ideal_cycles += n * ideal
            else:
                stats.flops += n * flops
                stats.vector_ideal_cycles += n * ideal

    def build(self, final: bool = True) -> list[Inst]:
        """The logged calls as records (fused syncs, pending waits flushed), in dispatch order. A live
        block builds in steps (``final=False``: the calls logged since the last step, with the waits
        before a not yet dispatched op kept pending; no later sync is fused into what was built, which
        the scheduler may already have run); it returns the records of the step."""
        builders, make = self.builders, self._builder
        if self.cursor is None:  # the op builders read the logged numerics and cost entries in order
            self.cursor = (iter(self.preps).__next__, iter(self.used).__next__)
        first = len(self.insts)
        for item in self.log[self.built:] if self.built else self.log:
            if item.__class__ is int:  # an op's call site
                b = builders[item]
                if b is None:
                    b = make(item)
                b()
            else:  # a sync's (site, event, statement id)
                b = builders[item[0]]
                if b is None:
                    b = make(item[0])
                b(item[1])
        self.built = len(self.log)
        if final:
            for p in range(len(self.pending)):
                if self.pending[p]:
                    self._flush(p)
        else:
            self.last[:] = [None] * len(self.last)
        return self.insts[first:] if first else self.insts

    def stall_until(self, t: float) -> None:
        """The scalar unit waited for a read that ended at ``t``: later instructions issue after it."""
        if self.issue_cycles and t > self.dispatched * self.issue_cycles:
            self.dispatched = t / self.issue_cycles

    def detach(self) -> "Recorder":
        """The block just logged, as a recorder of its own (to account, build or replay), and this
        one emptied for the next block on the same core and wave: its logging closures append to
        the same lists, so they are made once per launch instead of once per block (making them
        cost more than logging a small block). The result is what a fresh recorder would have."""
        out = object.__new__(Recorder)
        out.__dict__.update(self.__dict__)
        out.log, out.tokens, out.preps, out.windows, out.used = (
            self.log[:], self.tokens[:], self.preps[:], self.windows[:], self.used[:])
        out.cursor = out.tokens_hash = None
        out.faults = self.faults[:]
        out.ops = []
        out.builders = [None] * len(self.plan.entries)
        out.insts, out.l2_insts, out.op_insts = [], [], []  # building state: its own
        out.pending = [[] for _ in PIPE_INDEX]
        out.pending_at = [[] for _ in PIPE_INDEX]
        out.last = [None] * len(PIPE_INDEX)
        out.gate = None
        out.dispatched = out.barriers = out.bar_alls = 0
        for got in (self.log, self.tokens, self.preps, self.windows, self.used, self.faults):
            got.clear()
        self.sync_alls = 0
        return out

    def release(self) -> None:
        """Drop the closures (they hold this recorder) so the records die by reference counting."""
        self.ops = []
        self.builders = []
        self.log = []
        self.last = []


def build_block(recs: list[Recorder], fractions: tuple[float, ...]) -> tuple[list[Inst], list[Inst]]:
    """A block's records from its cores' logs, numbered in block order and priced with the L2 miss
    fraction of each GM access; also the record of each logged op (in the order of the preps)."""
    insts: list[Inst] = []
    l2_insts: list[Inst] = []
    op_insts: list[Inst] = []
    for rec in recs:
        insts.extend(rec.build())
        l2_insts.extend(rec.l2_insts)
        op_insts.extend(rec.op_insts)
    for i, inst in enumerate(insts):
        inst.seq = i
    L2Tracker.apply(l2_insts, fractions)
    return insts, op_insts
