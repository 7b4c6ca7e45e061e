"""The simulator rule of a VF call (``VfCall``): one V-pipe instruction that runs a VF body.

The body (scalar statements plus :class:`pypto_pro.ir.vf.VfInstr`) is generated once as Python, as
the kernel's own scalar code is (``backends/sim/codegen.py``); each VF instruction becomes a call
``T((k, (scalars...)))`` that appends to a *trace*. At dispatch (program order) the body runs on its
scalar arguments only, so the trace is the sequence of VF instructions the core will execute, with
their run-time scalars: from it come the UB footprint (bounds, the race / stale / never-written
checks, the schedule) and the cycle count (``arch/costs_a5_vf.py``). The numerics replay the trace
on the core's register file and UB bytes when the instruction runs; with ``defer`` they run on a
copy of UB and the bytes the body stores are written back at the commit (the instruction's end).

The register file (``regfile.py``) is one per VF call site and core: registers keep what the
previous run of the same call left in them, as the hardware does; a register never written holds
the poison byte 0xFF.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from pypto_pro.arch.costs_a5_vf import VF_COSTS, VF_START
from pypto_pro.backends.sim.batch_replay import memory_of
from pypto_pro.backends.sim.codegen import ProgramSource, var_name
from pypto_pro.backends.sim.kit import Prepared, SimEnv, TileAccess, fault
from pypto_pro.backends.sim.scalar_math import HELPERS
from pypto_pro.backends.sim.undefined import SelfCarry
from pypto_pro.backends.sim.vf import batch, defined
from pypto_pro.backends.sim.numerics import _ignore as quiet
from pypto_pro.backends.sim.vf.regfile import VL, RegFile, active
from pypto_pro.ir.nodes import Stmt
from pypto_pro.ir.vf import ALIGN, MASK, VREG, VfCall, VfInstr, walk_instrs


class VfSource(ProgramSource):
    """Python source of one VF body: ``body(T, <scalar params>)``; VF instructions append to ``T``."""

    def __init__(self, call: VfCall):
        super().__init__(None)  # type: ignore[arg-type]
        self.call = call
        self.vf_instrs: list[VfInstr] = []

    def generate(self) -> str:
        helpers = ", ".join(f"{h} as _{h}" for h in HELPERS)
        params = ", ".join(var_name(v) for v in self.call.params)
        self.lines = [f"# VF body of {self.call.attrs.get('vf')} (pypto_pro/backends/sim/vf/call.py)",
                      f"from pypto_pro.backends.sim.scalar_math import {helpers}",
                      f"def body(T{', ' + params if params else ''}):"]
        self.block(self.call.body, 1)
        self.lines.append("    return None")
        return "\n".join(self.lines) + "\n"

    def statement(self, s: Stmt, pad: str, loc: str) -> bool:
        if not isinstance(s, VfInstr):
            return False
        k = len(self.vf_instrs)
        self.vf_instrs.append(s)
        args = "".join(f"{self.expr(e)}, " for e in s.scalar_exprs())
        self.lines.append(f"{pad}T(({k}, ({args})))  # vf.{s.op}{loc[3:] and ' @ ' + loc[4:]}")
        return True


_ALL = (1 << 256) - 1  # every bit of a 256-bit predicate / every byte of a register


class _LoadUse:
    """Which bytes of each NORM ``vlds`` the rest of the body can use: a register byte matters when a
    later instruction reads it in an active lane (a lane-wise instruction or NORM store: its mask's lanes
    at its dtype's width; any other reader: every byte) before the register is overwritten (a MERGING
    instruction into it keeps the inactive lanes: every byte). Masks known
    at dispatch (``create_mask`` patterns, ``update_mask`` counts) are exact; any other mask counts as
    all lanes; what a load's register still holds at the body's end is unused (each run of the body
    writes a register before it reads it, unless it is a loop-carried accumulator, which no load
    fills). So the footprint of a load whose
    masked-off lanes pick up bytes nothing wrote (a tail tile under ``update_mask(n)``, as the real FA
    kernels do) is the part that reaches a result, not the whole register: the chip reads garbage
    there, and it never matters. (A masked NORM store still counts as writing its whole register: the
    exact active-lane write set would flag the FA kernels' harmless garbage rows, computed from tail
    bytes and never stored, as reads of never-written bytes.)"""

    def __init__(self, instrs: list, decls: list) -> None:
        from pypto_pro.backends.sim.vf.regfile import set_active, width
        from pypto_pro.ops.vf.memory import pattern_lanes
        self.info = []
        self.active = any(i.op == "vlds" and i.attrs.get("dist") == "NORM" for i in instrs)
        for i, d in zip(instrs, decls):
            reads = [(a.reg.uid, width(a.dtype or a.reg.dtype)) for a in i.args
                     if getattr(a, "reg", None) is not None and a.reg.kind == VREG]
            mk = next((a.reg.uid for a in i.args if getattr(a, "reg", None) is not None and a.reg.kind == MASK), None)
            lw = mk is not None and d.is_lanewise(i)
            lw_w = width(i.attrs["dtype"]) if lw and i.attrs.get("dtype") is not None else 0
            mdst = [r.uid for r in i.dsts if r.kind == MASK]
            static = None
            if i.op == "pset" and mdst:
                bits = np.zeros(256, np.bool_)
                set_active(bits, pattern_lanes(i.attrs["pattern"], 256 // width(i.attrs["dtype"])), i.attrs["dtype"])
                static = int.from_bytes(np.packbits(bits, bitorder="little").tobytes(), "little")
            plt_w = width(i.attrs["dtype"]) if i.op == "plt" else 0
            load = bool(i.op == "vlds" and i.attrs.get("dist") == "NORM" and len(i.dsts) == 1)
            vdst = [r.uid for r in i.dsts if r.kind == VREG]
            keeps = bool(i.attrs.get("merging")) and mk is not None  # MERGING: inactive lanes keep the old bytes
            self.info.append((reads, mk, lw_w, mdst, static, plt_w, load, vdst, keeps))

    def windows(self, trace: list) -> dict[int, tuple[int, int]]:
        """trace position of a NORM load -> (first, end) register byte that matters."""
        if not self.active:
            return {}
        masks: dict[int, int] = {}
        pending: dict[int, list] = {}  # register -> [trace position of its load, bytes used]
        out: dict[int, tuple[int, int]] = {}

        def close(uid: int) -> None:
            pos, bits = pending.pop(uid)
            out[pos] = (0, 0) if not bits else ((bits & -bits).bit_length() - 1, bits.bit_length())

        for pos, (k, sc) in enumerate(trace):
            reads, mk, lw_w, mdst, static, plt_w, load, vdst, keeps = self.info[k]
            if reads:
                use = _ALL
                if lw_w:
                    m = masks.get(mk, _ALL)
                    use = _bytes_of_lanes(m, lw_w) if m != _ALL else _ALL
                for uid, w in reads:
                    p = pending.get(uid)
                    if p is not None:
                        p[1] |= use if (lw_w and w == lw_w) else _ALL
            for uid in mdst:
                if static is not None:
                    masks[uid] = static
                elif plt_w:
                    n = min(sc[0] & 0xFFFFFFFF, 256 // plt_w)
                    masks[uid] = (1 << (n * plt_w)) - 1
                else:
                    masks.pop(uid, None)  # data-dependent: all lanes
            for uid in vdst:
                if uid in pending:
                    if keeps:  # the load's bytes live on in the lanes the mask leaves
                        pending[uid][1] |= _ALL
                    close(uid)
                if load:
                    pending[uid] = [pos, 0]
        for uid in list(pending):  # the body's registers are its own: what it did not read by its end is unused
            close(uid)
        return out


_LANE_BYTES: dict[tuple[int, int], int] = {}


def _bytes_of_lanes(mask: int, w: int) -> int:
    """The register bytes of the lanes (``w`` bytes each) whose predicate bit ``w * i`` is set."""
    key = (mask, w)
    r = _LANE_BYTES.get(key)
    if r is None:
        r = 0
        lane = (1 << w) - 1
        for i in range(0, 256, w):
            if mask >> i & 1:
                r |= lane << i
        if len(_LANE_BYTES) < 4096:
            _LANE_BYTES[key] = r
    return r


def _mask_writers(instrs: list) -> list:
    """Per instruction: the mask registers it writes, and whether its value is a function of its
    scalars alone (``pset`` / ``plt``: the predicate is known when the body is analysed)."""
    out = []
    for i in instrs:
        mdst = [d.uid for d in i.dsts if d.kind == MASK]
        reads_reg = any(getattr(a, "reg", None) is not None for a in i.args)
        out.append((mdst, bool(mdst) and i.op in _STATIC_MASKS and not reads_reg))
    return out


_STATIC_MASKS = frozenset({"pset", "plt"})  # mask producers that read no register (only attrs and scalars)


def _plan(trace: list, runs: list, masks_of: list) -> list:
    """The (numerics, scalars) steps of one trace. An instruction whose predicate is provably all
    active at its position takes its ``full`` form (the same bytes without the per-lane merge): the
    predicate was set in this body by ``pset`` / ``plt``, computed here by their own numerics on a
    scratch register file; masks the body did not set (left by an earlier run) count as unknown."""
    known: dict[int, np.ndarray] = {}
    scratch = RegFile()
    plan = []
    for k, sc in trace:
        f = runs[k]
        full = getattr(f, "full", None) if FAST else None
        if full is not None:
            uid, dt = f.full_mask
            m = known.get(uid)
            if m is not None and active(m, dt).all():
                f = full
        plan.append((f, sc))
        mdst, static = masks_of[k]
        for uid in mdst:
            known.pop(uid, None)
        if static:
            for uid in mdst:
                scratch.m[uid] = np.zeros(VL, np.bool_)
            runs[k](scratch, None, None, *sc)
            for uid in mdst:
                known[uid] = scratch.m.pop(uid)
    return plan


FAST = True  # the memoized analysis and the all-active forms; False: analyse every dispatch, merge every lane
# (the same bytes either way: tests/backends/sim/vf/test_vf_fast_paths.py compares the two)
TRACE_MEMO = True  # load windows and plan kept per trace across slots and scalars that give the same trace
_MEMO_MAX = 1024  # footprint analyses kept per VF call site (a body whose scalars vary more re-analyses)


def _scalar_key(x) -> tuple:
    """A memo key of one scalar argument that tells apart what ``==`` does not: ``-0.0`` / ``0.0``,
    ``True`` / ``1`` / ``1.0`` (NaN never equals itself, so it never hits: it re-analyses)."""
    if isinstance(x, float):
        return (float, x, math.copysign(1.0, x))
    return (type(x), x)


def rule(op: VfCall, env: SimEnv) -> Callable:
    """The dispatcher of one VF call site (see module docstring)."""
    from pypto_pro.ops.vf.decl import VF_INSTRS
    gen = VfSource(op)
    source = gen.generate()
    namespace: dict = {}
    exec(compile(source, f"<pypto_pro sim VF: {op.attrs.get('vf')}>", "exec"), namespace)  # noqa: S102
    body = namespace["body"]
    instrs = gen.vf_instrs
    decls = [VF_INSTRS[i.op] for i in instrs]
    runs = [d.sim(i) for d, i in zip(decls, instrs)]
    foots = [d.mem(i) if d.mem is not None else None for d, i in zip(decls, instrs)]
    costs = [VF_COSTS[d.cost_key(i)].value for d, i in zip(decls, instrs)]
    lanes = [i.attrs.get("lanes", 0) for i in instrs]
    accs = [TileAccess(env.states[t.buffer.uid]) for t in op.tiles]
    ntiles = len(accs)
    ub = memory_of(accs[0].views[0])  # (a replay lane's: its carved UB, not the lanes buffer)
    rf = RegFile()
    regs = {r.uid: r for i in instrs for r in i.dsts}
    for i in instrs:
        for a in i.args:
            r = getattr(a, "reg", None)
            if r is not None:
                regs.setdefault(r.uid, r)
    rf.prepare([u for u, r in regs.items() if r.kind == VREG], [u for u, r in regs.items() if r.kind == MASK],
               [u for u, r in regs.items() if r.kind == ALIGN])
    core = accs[0].st.core
    fname = op.attrs.get("vf")
    spr = env.spr
    load_use = _LoadUse(instrs, decls)
    masks_of = _mask_writers(instrs)
    footprints = defined.Footprints(foots, [a.st.buffer.slot_bytes for a in accs])
    static = [batch.Static(i) for i in instrs]  # for the batched plan (batch.py)
    for st, f in zip(static, foots):
        if getattr(f, "stateful", False):
            st.cls = "barrier"
    arenas = [np.empty((0, VL), np.uint8), np.empty((0, VL), np.bool_)]  # the batched plans' register rows
    steps: list = []  # the definedness rules (defined.py), built when a run first reads undefined bytes
    outs: list = []  # per instruction: the registers it writes
    ub_key = (core, accs[0].space)

    by_trace: dict = {}  # trace (scalars keyed) -> its load windows and plan: the same for any slots (TRACE_MEMO)
    shapes: dict = {}  # plan shapes of this call site's traces across tile placements (plan_shapes.py)
    memo: dict = {}  # footprint analysis of one (slots, scalars, valid shapes): a pure function of them

    def dispatch(*args) -> Prepared:
        slots, scalars = args[:ntiles], args[ntiles:]
        key = (slots, tuple(_scalar_key(x) for x in scalars), tuple(tuple(t.valid[s]) for t, s in zip(accs, slots)))
        got = memo.get(key) if FAST else None
        if got is None:
            got = analyse(slots, scalars)
            if FAST and len(memo) < _MEMO_MAX:
                memo[key] = got
        return prepared(slots, *got)

    def analyse(slots: tuple, scalars: tuple) -> tuple:
        """The trace, UB footprint and cycle count of one run of the body (a pure function of its arguments)."""
        trace: list = []
        body(trace.append, *scalars)
        bases = [t.addrs[s] for t, s in zip(accs, slots)]
        boxes: dict[tuple[int, bool], list[int]] = {}  # (tile, write) -> [row0, row1, byte0, byte1]
        own: dict[int, np.ndarray] = {}  # tile -> bytes this body has stored so far
        cycles = VF_START.value
        work = 0
        nbytes = 0
        tkey = tuple((k, tuple(_scalar_key(x) for x in sc)) for k, sc in trace) if FAST and TRACE_MEMO else None
        of_trace = by_trace.get(tkey) if tkey is not None else None  # (windows, plan): functions of the trace
        narrow = of_trace[0] if of_trace is not None else load_use.windows(trace)
        state: dict = {}  # for stateful footprint rules (the AR stream of vf.store_unalign: ops/vf/unaligned.py)
        for pos, (k, sc) in enumerate(trace):
            cycles += costs[k]
            work += lanes[k]
            f = foots[k]
            if f is None:
                continue
            for tile, off, n, write in (f(state, *sc) if getattr(f, "stateful", False) else f(*sc)):
                if n is None:  # a footprint bounded by the tile: to the end of its slot
                    n = max(0, accs[tile].st.buffer.slot_bytes - off)
                w = narrow.get(pos)
                if w is not None:  # a NORM load of which only bytes w[0]..w[1] reach an active lane
                    if w[1] <= w[0]:
                        continue
                    off, n = off + w[0], w[1] - w[0]
                t = accs[tile]
                base = bases[tile]
                if base + off < 0 or base + off + n > ub.size:  # past a tile is fine (the chip does it), past UB not
                    where = instrs[k]
                    raise fault(where, f"vf.{where.attrs.get('api', where.op)} in '{fname}' accesses UB bytes "
                                       f"{base + off}..{base + off + n} (tile '{t.label}' + {off}), outside the "
                                       f"{ub.size}-byte UB")
                nbytes += n
                done = own.get(tile)
                if write:
                    if done is None:
                        done = own[tile] = np.zeros(t.st.buffer.slot_bytes, np.bool_)
                    if off + n > done.size:
                        done = own[tile] = np.concatenate([done, np.zeros(off + n - done.size, np.bool_)])
                    done[max(0, off):off + n] = True
                elif done is not None and off + n <= done.size and done[off:off + n].all():
                    continue  # reads back what this body stored: not a read of what others wrote
                rb = t.row_bytes
                r0, r1 = off // rb, (off + n - 1) // rb + 1
                b0, b1 = (off % rb, off % rb + n) if r1 - r0 == 1 else (0, rb)
                box = boxes.get((tile, write))
                if box is None:
                    boxes[(tile, write)] = [r0, r1, b0, b1]
                else:
                    box[0], box[1], box[2], box[3] = min(box[0], r0), max(box[1], r1), min(box[2], b0), max(box[3], b1)
        accesses = []
        commits = []
        written = []
        for (i, write), (r0, r1, b0, b1) in boxes.items():
            t, s = accs[i], slots[i]
            rb = t.row_bytes
            if not write:  # a load reads whole registers: what it may read unwritten is the tile's padding
                vr, vc = t.valid[s]
                r1, b1 = min(r1, max(vr, r0 + 1)), min(b1, max(vc * t.item, b0 + 1))
            lo = t.addrs[s] + r0 * rb + b0
            rows, used = r1 - r0, b1 - b0
            key = (t.space, lo, lo + (rows - 1) * rb + used, core)
            accesses.append((key, write, t.labels[s], rows, rb, used))
            if write:
                commits.append(((core, t.space), lo, rows, rb, used))
                written.append((lo, lo + (rows - 1) * rb + used))
        plan = of_trace[1] if of_trace is not None else _plan(trace, runs, masks_of)
        if tkey is not None and of_trace is None and len(by_trace) < _MEMO_MAX:
            by_trace[tkey] = (narrow, plan)
        batched = batch.build(trace, plan, static, foots, bases, [a.st.buffer.slot_bytes for a in accs], ub.size,
                              shapes, tkey) if FAST else None
        return (trace, plan, batched, bases, tuple(accesses), tuple(commits), tuple(written), nbytes,
                max(1, work), int(round(cycles)))

    def prepared(slots: tuple, trace: list, plan: list, batched, bases: list, accesses: tuple, commits, written: tuple,
                 nbytes: int, work: int, cycles: int) -> Prepared:
        masks = spr.snapshot() if spr is not None else None  # {MASK1, MASK0} as the scalar unit left them
        # the VF call carries undefined bytes on (undefined.py): the checker arms it when it reads some
        armed = defined.Armed(len(commits)) if commits else None
        if armed is not None:
            carry = SelfCarry(armed.undefined, armed.arm)
            commits = [(*w, carry) for w in commits]

        def execute(mem: np.ndarray) -> None:
            rf.spr_mask = masks
            if spr is not None:  # AR is the core's, not the call site's
                rf.ar = spr.ar
            written = armed.take() if armed is not None else None
            if written is None:
                with quiet():  # one errstate for the whole body (the instructions do not each enter one)
                    if batched is not None and batch.BATCH:  # the trace's instructions grouped by depth (batch.py)
                        batched.run(rf, mem, bases, arenas)
                    else:
                        for f, sc in plan:
                            f(rf, mem, bases, *sc)
            else:
                _run_defined(rf, mem, written, trace, plan)
            if spr is not None:
                spr.ar = rf.ar

        def _run_defined(rf: RegFile, mem: np.ndarray, written, trace: list, plan: list) -> None:
            """The numerics with the definedness of every lane beside them (defined.py)."""
            if not steps:
                steps.extend(defined.rule_of(i, d, r, footprints, k)
                             for k, (i, d, r) in enumerate(zip(instrs, decls, runs)))
                outs.extend(defined.writes_of(i) for i in instrs)
            sh = defined.Shadow(np.where(written[ub_key], np.uint8(0), defined.U), rf)
            footprints.state = {}
            # registers whose shadow may hold an undefined byte (a fresh shadow has none): a pure rule
            # whose operands and destinations are all clean would write all-defined results, so it is
            # skipped (FAST; the same shadow bytes either way)
            dirty: set = set()
            with quiet():
                for (k, sc), (f, _) in zip(trace, plan):
                    st = steps[k]
                    reads = getattr(st, "reads", None) if FAST else None
                    if reads is None or not dirty.isdisjoint(reads):
                        st(rf, sh, bases, sc)
                        for kind, uid in outs[k]:
                            if defined.still_undefined(sh, kind, uid):
                                dirty.add((kind, uid))
                            else:
                                dirty.discard((kind, uid))
                    f(rf, mem, bases, *sc)
            armed.done([defined.region_undefined(sh, lo, rows, rb, used) for _, lo, rows, rb, used, _ in commits])

        def run(defer: bool):
            if not defer:
                execute(ub)
                return None
            before = ub.copy()
            scratch = before.copy()
            execute(scratch)

            def commit() -> None:  # only the bytes the body changed (another pipe may write the rest)
                for a, b in written:
                    changed = scratch[a:b] != before[a:b]
                    ub[a:b][changed] = scratch[a:b][changed]
            return commit
        return Prepared(1, work, True, accesses, (), nbytes, run, tuple(commits), k=cycles)
    dispatch.vf_source = source  # type: ignore[attr-defined]
    return dispatch


__all__ = ["rule", "VfSource", "walk_instrs"]
