"""Batched execution of a VF trace: the nodes of one instruction kind at one depth run as one NumPy call.

A trace (``call.py``) is straight-line code. Renaming every register write to a new *version* makes it a
DAG: an instruction depends on the versions it reads (and, when it does not overwrite its whole
destination, on the destination's previous version), and UB accesses are ordered by their byte ranges (a
load after a store of overlapping bytes, a store after a load or store of overlapping bytes). Its *level*
is one more than the deepest of those. Instructions of one level with the same numerics (``Spec.key``:
the operation, dtypes, modes and, for most, the scalars) form a group: the unrolled iterations of a
softmax loop's loads, ``muls``, ``exp_sub``, casts, the four accumulators of a max chain. A group runs as
one kernel over ``[N, 256]`` stacks of whole registers (rows of an *arena*, one per version; a consumer
that reads its producers' rows in order reads a view of them), so the per-lane arithmetic is the same
element-wise NumPy code on the same element layout as one register at a time: the same bytes.

Instructions without a batched form run one at a time on a scratch register file bound to their
versions' rows (``SINGLE_OPS``: they touch only their register operands and their UB footprint; an
instruction without a batched form counts as a partial write of its destination); any other instruction
(the AR form of an unaligned store, squeeze, SPRs, ...) is a *barrier*: every register is written back
to the register file, it runs there in program order with everything before it done and nothing after
it started, and its results are read back. At the end the last version of every register is written
back, so the register file ends as a one-by-one run leaves it. A trace whose UB accesses would fault
(a misaligned address) is not batched: the one-by-one run raises at the same instruction.

``BATCH = False`` runs every trace one instruction at a time (``tests/backends/sim/vf/test_vf_batch.py``
compares the two).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from pypto_pro.backends.sim.vf import batch_scan, plan_shapes
from pypto_pro.backends.sim.vf.bind import bound_step, gathered_step
from pypto_pro.backends.sim.vf.regfile import VL, RegFile, rows_of
from pypto_pro.ir.vf import MASK, VREG, RegRead

BATCH = True
GRID = True  # a load / store group whose addresses form a grid reads / writes one [I, J, n] view (MemRows)
BIND = True  # groups whose kernel binds its arena rows once (``kernel.bind``, bind.py) run that bound call
_WORTH = 0.8  # batch a trace only when its steps are at most this fraction of its instructions

# instructions that touch only their register operands (RegRead arguments and destinations) and the UB
# bytes of their footprint: safe to run out of program order on a scratch register file
SINGLE_OPS = frozenset({
    "vabs", "vabs_sub", "vadd", "vadds", "vand", "vaxpy", "vdiv", "vexp", "vln", "vlog", "vlog10", "vlog2",
    "vlrelu", "vmax", "vmaxs", "vmin", "vmins", "vmul", "vmul_add_dst", "vmul_dst_add", "vmuls", "vneg", "vnot",
    "vor", "vprelu", "vrelu", "vshift_left_s", "vshift_left_v", "vshift_right_s", "vshift_right_v", "vsqrt",
    "vsub", "vsubs", "vtrc", "vxor", "pand", "por", "pxor", "pnot", "psel", "pset", "plt", "pdintlv", "pintlv",
    "vexpsub", "vcvt", "vdintlv", "vintlv", "vlds", "vsts", "vsldb", "vsstb", "vdup", "vdup_reg", "vsel",
    "vcmp", "vcmps", "vcadd", "vcmax", "vcmin", "vmov", "pmov", "vmulscvt", "vmull", "plds", "psts", "vstsx2",
    "vstus"})  # vstus: the counted form only (an AR store, after a squeeze, reads AR: a barrier)
NOPS = frozenset({"mem_bar", "vstas"})  # no effect on registers or UB (the order mem_bar asks for is kept by
# byte ranges; vstas: each counted vstus wrote its bytes itself, ops/vf/unaligned.py)
_ALIGNED = {"vlds", "vsts", "plds", "psts", "vsldb", "vsstb", "vstsx2"}  # run checks bases[tile] + sc[0]


class Spec:
    """The batched form of one instruction's numerics, attached to its run function as ``f.batched``.

    ``key``: nodes with equal keys compute the same function of their operands (with ``shared``, also of
    equal scalars). ``make(bases, scalars_per_node, ub_size)`` returns ``kernel(ins, outs, mem)`` or None (the
    group runs one node at a time): ``ins`` are ``[N or 1, 256]`` stacks (uint8 registers, bool
    predicates) of the RegRead arguments in argument order, ``outs`` the ``[N, 256]`` stacks of the
    destinations; with ``overwrites`` False the outputs start as the destinations' previous values."""

    __slots__ = ("key", "make", "overwrites", "shared")

    def __init__(self, key, make: Callable, overwrites: bool = True, shared: bool = True) -> None:
        self.key, self.make, self.overwrites, self.shared = key, make, overwrites, shared


def merge_rows(dst: np.ndarray, res, act: np.ndarray, merging: bool) -> None:
    """``regfile.merge`` over stacks: ``act`` may be one row for all. Zeroing: the result, then a zero of
    the destination's type into the inactive lanes (one masked copy; none when every lane is active)."""
    if merging:
        np.copyto(dst, res, where=act)
    else:
        np.copyto(dst, res)
        if not act.all():
            np.copyto(dst, dst.dtype.type(0), where=~act)


class MemRows:
    """``n`` UB bytes at each of ``addrs``, as ``[N, n]`` rows: a view when the addresses step evenly, a
    ``[I, J, n]`` strided view when they form a grid (``a0 + i * outer + j * inner``, both steps positive:
    the FA DN bodies' loads of four column blocks per iteration), a few such pieces one after another
    (``parts``: two loops' loads of one tile in one group), else an index array."""

    __slots__ = ("a0", "step", "n", "count", "idx", "mode", "grid", "parts")

    def __init__(self, addrs: list[int], n: int, size: int, pieces: bool = True) -> None:
        self.a0, self.n, self.count, self.idx, self.grid, self.parts = addrs[0], n, len(addrs), None, None, None
        steps = {b - a for a, b in zip(addrs, addrs[1:])}
        self.step = steps.pop() if len(steps) == 1 else None
        if self.count == 1:
            self.mode = "one"
        elif self.step is not None and self.step >= n and self.a0 + self.count * self.step <= size:
            self.mode = "reshape"
        elif self.step is not None and self.step > 0:
            self.mode = "strided"
        elif GRID and (grid := _grid(addrs, n, size)) is not None:
            self.mode, self.grid = "grid", grid
        elif GRID and pieces and (cuts := _cuts(addrs, n, size)) is not None:
            self.mode = "parts"
            self.parts = [(r0, r1, MemRows(addrs[r0:r1], n, size, False)) for r0, r1 in zip(cuts, cuts[1:])]
        else:
            self.mode = "index"
            self.idx = np.asarray(addrs, np.int64)[:, None] + np.arange(n)

    def _grid_view(self, mem: np.ndarray) -> np.ndarray:
        i, j, outer, inner = self.grid
        return np.lib.stride_tricks.as_strided(mem[self.a0:], (i, j, self.n), (outer, inner, 1))

    def view(self, mem: np.ndarray) -> np.ndarray | None:
        """The rows as one array (a view; for a grid or parts a copy in row order), None for an index array."""
        if self.mode == "one":
            return mem[self.a0:self.a0 + self.n].reshape(1, self.n)
        if self.mode == "reshape":
            return mem[self.a0:self.a0 + self.count * self.step].reshape(self.count, self.step)[:, :self.n]
        if self.mode == "strided":
            return np.lib.stride_tricks.as_strided(mem[self.a0:], (self.count, self.n), (self.step, 1))
        if self.mode == "grid":
            return self._grid_view(mem).reshape(self.count, self.n)
        if self.mode == "parts":
            out = np.empty((self.count, self.n), mem.dtype)
            self.read(mem, out)
            return out
        return None

    def read(self, mem: np.ndarray, out: np.ndarray) -> None:
        if self.mode == "grid":
            i, j = self.grid[:2]
            np.copyto(out.reshape(i, j, self.n), self._grid_view(mem))
            return
        if self.mode == "parts":
            for r0, r1, part in self.parts:
                part.read(mem, out[r0:r1])
            return
        v = self.view(mem)
        if v is None:
            np.take(mem, self.idx, out=out)
        else:
            out[...] = v

    def write(self, mem: np.ndarray, vals: np.ndarray, t: np.dtype | None = None, where=None) -> None:
        """Store rows (distinct bytes: a group never holds two overlapping stores); ``where``: per element
        of dtype ``t``."""
        if self.mode == "parts":
            per_row = where is not None and where.shape[0] == self.count and self.count > 1
            for r0, r1, part in self.parts:
                part.write(mem, vals[r0:r1], t, where[r0:r1] if per_row else where)
            return
        if self.mode == "grid":
            i, j = self.grid[:2]
            v = self._grid_view(mem)
            if where is None:
                v[...] = vals.reshape(i, j, self.n)
            else:
                w = where.reshape(i, j, -1) if where.shape[0] == self.count and self.count > 1 else where
                np.copyto(v.view(t), vals.reshape(i, j, self.n).view(t), where=w)
            return
        v = self.view(mem) if self.mode != "strided" else None
        if v is None:
            idx = self.idx if self.idx is not None else (self.a0 + self.step * np.arange(self.count)[:, None]
                                                          + np.arange(self.n))
            if where is None:
                mem[idx] = vals
                return
            cur = mem[idx]
            np.copyto(cur.view(t), vals.view(t), where=where)
            mem[idx] = cur
        elif where is None:
            v[...] = vals
        else:
            np.copyto(v.view(t), vals.view(t), where=where)


_MAX_PARTS = 8  # more pieces than this: one index gather is cheaper than a copy per piece


def _grid(addrs: list[int], n: int, size: int) -> tuple[int, int, int, int] | None:
    """``(I, J, outer, inner)`` when ``addrs[i * J + j] == addrs[0] + i * outer + j * inner`` for every
    ``i < I``, ``j < J`` (``I, J >= 2``, both steps positive, every row inside ``size``), else None."""
    a0, count = addrs[0], len(addrs)
    if count < 4:
        return None
    inner = addrs[1] - a0
    if inner <= 0:
        return None
    j = 1
    while j < count and addrs[j] - addrs[j - 1] == inner:
        j += 1
    if j < 2 or j == count or count % j:
        return None
    outer = addrs[j] - a0
    if outer <= 0 or a0 + (count // j - 1) * outer + (j - 1) * inner + n > size:
        return None
    for k, a in enumerate(addrs):
        if a != a0 + (k // j) * outer + (k % j) * inner:
            return None
    return count // j, j, outer, inner


def _cuts(addrs: list[int], n: int, size: int) -> list[int] | None:
    """Row boundaries ``[0, ..., N]`` of at most ``_MAX_PARTS`` pieces (and no more than a quarter of the
    rows), each an even run of positive step inside ``size`` or a grid (:func:`_grid`), taken greedily
    from the front; None past that."""
    cuts, s, count = [0], 0, len(addrs)
    while s < count:
        if len(cuts) > _MAX_PARTS:
            return None
        e = s + 1
        if e < count and addrs[e] > addrs[s]:
            step = addrs[e] - addrs[s]
            while e < count and addrs[e] - addrs[e - 1] == step:
                e += 1
            run = e - s
            if run >= 2 and e < count:  # grow a grid of that run while whole runs repeat at one outer step
                outer, g = addrs[e] - addrs[s], e
                while g + run <= count and all(addrs[g + k] == addrs[s] + ((g - s) // run) * outer + k * step
                                               for k in range(run)):
                    g += run
                if g > e and outer > 0:
                    e = g
        if max(addrs[s:e]) + n > size:
            return None
        cuts.append(e)
        s = e
    return cuts if 4 * (len(cuts) - 1) <= count else None  # pieces of four rows on average at least


def _rows(rows: list[int]):
    """How a group reads one operand from the arena: a slice (rows in order), one row (broadcast), or an
    index array (a gather)."""
    r0 = rows[0]
    if all(r == r0 for r in rows):
        return slice(r0, r0 + 1)
    if rows == list(range(r0, r0 + len(rows))):
        return slice(r0, r0 + len(rows))
    return np.asarray(rows, np.intp)


class Static:
    """What the batched plan needs of each static instruction of a call site."""

    __slots__ = ("reads", "writes", "cls", "tile", "align")

    def __init__(self, instr) -> None:
        self.reads = [(a.reg.kind, a.reg.uid) for a in instr.args
                      if isinstance(a, RegRead) and a.reg.kind in (VREG, MASK)]
        self.writes = [(d.kind, d.uid) for d in instr.dsts]
        aligns = any(isinstance(a, RegRead) and a.reg.kind not in (VREG, MASK) for a in instr.args)
        simple = (instr.op in SINGLE_OPS and not aligns and not instr.attrs.get("from_ar")
                  and all(k in (VREG, MASK) for k, _ in self.writes)
                  and len(set(self.writes)) == len(self.writes))
        self.cls = "nop" if instr.op in NOPS else "single" if simple else "barrier"
        self.tile = self.align = None
        if instr.op in _ALIGNED:
            self.tile = next(a.tile for a in instr.args if hasattr(a, "tile") and not isinstance(a, RegRead))
            self.align = instr.attrs.get("align", 32)


class Plan:
    """The batched program of one trace (see module docstring): built once per memoized analysis."""

    __slots__ = ("steps", "nv", "nm", "init", "final", "_bound", "_arena", "_io")

    def __init__(self, steps, nv, nm, init, final) -> None:
        self.steps, self.nv, self.nm, self.init, self.final = steps, nv, nm, init, final
        self._bound = self._arena = self._io = None

    def run(self, rf: RegFile, mem: np.ndarray, bases, arenas: list) -> None:
        av, am = arenas
        if av.shape[0] < self.nv or am.shape[0] < self.nm:
            arenas[0] = av = np.empty((max(self.nv, av.shape[0]), VL), np.uint8)
            arenas[1] = am = np.empty((max(self.nm, am.shape[0]), VL), np.bool_)
        if self._arena is not av:
            self._bound, self._arena, self._io = [s.bind(av, am) for s in self.steps], av, None
        io = self._io
        if io is None or io[0] is not rf:
            self._io = io = (rf, _copies(self.init, rf, av, am), _copies(self.final, rf, av, am))
        for regs, ix, arena, rows in io[1]:
            arena[rows] = regs[ix]
        for step in self._bound:
            step(rf, mem, bases)
        for regs, ix, arena, rows in io[2]:
            regs[ix] = arena[rows]


def _copies(entries: list, rf: RegFile, av: np.ndarray, am: np.ndarray) -> list:
    """``entries`` ((kind, uid, arena row)) as bulk copies between the register file's arrays and the
    arenas: (registers array, its row indices, arena, arena rows) per array (``regfile.rows_of``); one
    copy per register where a register is not such a row."""
    out = []
    for kind, regs, arena in ((VREG, rf.v, av), (MASK, rf.m, am)):
        mine = [(uid, row) for k, uid, row in entries if k == kind]
        if not mine:
            continue
        got = rows_of([regs[uid] for uid, _ in mine])
        if got is None:
            out.extend((regs[uid].reshape(1, VL), np.zeros(1, np.intp), arena, np.asarray([row], np.intp))
                       for uid, row in mine)
            continue
        out.extend((b, ix, arena, np.asarray([mine[p][1] for p in ps], np.intp)) for b, ix, ps in got)
    return out


class _Group:
    __slots__ = ("kernel", "ins", "outs", "olds", "scan")

    def __init__(self, kernel, ins, outs, olds, scan=None) -> None:
        self.kernel, self.ins, self.outs, self.olds = kernel, ins, outs, olds
        self.scan = scan  # (numerics key, scan maker, scalars) of a spec with a scan form (batch_scan.py)

    def bind(self, av, am):
        arena = {VREG: av, MASK: am}
        kernel = self.kernel
        views = [(arena[k], r) for k, r in self.ins]
        outs = [arena[k][r] for k, r in self.outs]
        olds = [(o, arena[k], r) for o, (k, r) in zip(outs, self.olds)] if self.olds else None
        direct = bound_step(kernel, views, outs) if BIND and olds is None else None  # (bind.py)
        if direct is not None:
            return direct
        if olds is None and all(isinstance(r, slice) for _, r in views):
            ins = [a[r] for a, r in views]
            return lambda rf, mem, bases: kernel(ins, outs, mem)
        if BIND and olds is None:
            return gathered_step(kernel, views, outs)

        def step(rf, mem, bases):
            if olds is not None:
                for o, a, r in olds:
                    o[...] = a[r]
            kernel([a[r] for a, r in views], outs, mem)
        return step


class _Single:
    __slots__ = ("f", "sc", "regs", "olds")

    def __init__(self, f, sc, regs, olds) -> None:
        self.f, self.sc, self.regs, self.olds = f, sc, regs, olds  # regs: (kind, uid, row); olds: (row, old row)

    def bind(self, av, am):
        arena = {VREG: av, MASK: am}
        f, sc = self.f, self.sc
        srf = RegFile()
        for kind, uid, row in self.regs:
            (srf.v if kind == VREG else srf.m)[uid] = arena[kind][row]
        olds = [(arena[k][row], arena[k][old]) for k, row, old in self.olds]

        def step(rf, mem, bases):
            for o, src in olds:
                o[:] = src
            srf.spr_mask, srf.ar = rf.spr_mask, rf.ar
            f(srf, mem, bases, *sc)
        return step


class _Barrier:
    __slots__ = ("f", "sc", "flush", "reload")

    def __init__(self, f, sc, flush, reload) -> None:
        self.f, self.sc, self.flush, self.reload = f, sc, flush, reload

    def bind(self, av, am):
        arena = {VREG: av, MASK: am}
        f, sc = self.f, self.sc
        flush = [((rf_v if k == VREG else rf_m), uid, arena[k][row]) for k, uid, row in self.flush]
        reload = [((rf_v if k == VREG else rf_m), uid, arena[k][row]) for k, uid, row in self.reload]

        def step(rf, mem, bases):
            for get, uid, src in flush:
                get(rf)[uid][:] = src
            f(rf, mem, bases, *sc)
            for get, uid, dst in reload:
                dst[:] = get(rf)[uid]
        return step


def rf_v(rf):
    return rf.v


def rf_m(rf):
    return rf.m


def build(trace: list, plan: list, static: list, foots: list, bases: list, slot_bytes: list,
          ub_size: int, shapes: dict | None = None, tkey: tuple | None = None) -> Plan | None:
    """The batched program of one trace, or None when it would not pay or a UB access would fault.
    ``shapes``: the call site's cache of plan shapes (``plan_shapes.py``; None: none kept); ``tkey``: the
    trace's key if the caller made it."""
    if not BATCH or len(trace) < 8:
        return None
    for k, sc in trace:
        st = static[k]
        if st.tile is not None and st.cls != "nop" and (bases[st.tile] + sc[0]) % st.align:
            return None  # the one-by-one run faults at this instruction
    shape = plan_shapes.shape_of(shapes, trace, plan, static, foots, bases, slot_bytes, ub_size, _shape, tkey)
    return None if shape is None else _program(shape, bases, ub_size)


class _Shape:
    """What of a batched plan does not depend on where the tiles sit (``plan_shapes.py``): the nodes
    with their levels, the groups in order, the register versions."""

    __slots__ = ("nodes", "groups", "order", "initial", "vkey", "cur", "synced")

    def __init__(self, nodes, groups, order, initial, vkey, cur, synced) -> None:
        self.nodes, self.groups, self.order, self.initial = nodes, groups, order, initial
        self.vkey, self.cur, self.synced = vkey, cur, synced


def _shape(trace: list, plan: list, static: list, foots: list, bases: list, slot_bytes: list,
           ub_size: int) -> _Shape | None:
    """Levels and groups of a trace whose aligned accesses are aligned (``build`` checked), or None."""
    from pypto_pro.backends.sim.vf.call import _scalar_key as _skey
    cur: dict = {}          # (kind, uid) -> current version
    vlevel: list[int] = []  # version -> level
    vkey: list = []         # version -> (kind, uid)
    initial: list = []      # versions read from the register file at the start
    synced: set = set()     # registers whose current version is what the register file holds
    last_w = np.zeros(ub_size, np.int32)
    last_r = np.zeros(ub_size, np.int32)
    floor = top = 0
    nodes = []  # (level, pos, kind, spec or None, ins versions, old versions, out versions)

    def version(r, level: int) -> int:
        vlevel.append(level)
        vkey.append(r)
        return len(vlevel) - 1

    def current(r) -> int:
        v = cur.get(r)
        if v is None:
            v = cur[r] = version(r, 0)
            initial.append(v)
            synced.add(r)
        return v

    for pos, ((k, sc), (f, _)) in enumerate(zip(trace, plan)):
        st = static[k]
        if st.cls == "nop":
            continue
        if st.cls == "single" and getattr(f, "faults", None) is not None and f.faults(*sc):
            return None  # (vstus: a count that does not fit one register)
        if st.cls == "barrier":
            level = floor = top = top + 1
            flush = [cur[r] for r in cur if r not in synced]
            synced.update(cur)
            outs = []
            for r in st.writes:
                if r[0] in (VREG, MASK):
                    cur[r] = v = version(r, level)
                    outs.append(v)
                    synced.add(r)
            nodes.append((level, pos, "barrier", f, sc, flush, outs))
            continue
        spec = getattr(f, "batched", None)
        ins = [current(r) for r in st.reads]
        olds = [current(r) for r in st.writes] if spec is None or not spec.overwrites else []
        level = max([floor] + [vlevel[v] for v in ins] + [vlevel[v] for v in olds]) + 1
        fp = foots[k]
        spans = []
        if fp is not None:
            for tile, off, n, write in fp(*sc):
                a = bases[tile] + off
                b = a + (n if n is not None else max(0, slot_bytes[tile] - off))
                a, b = max(0, a), min(ub_size, b)
                if b <= a:
                    continue
                spans.append((a, b, write))
                level = max(level, int(last_w[a:b].max()) + 1)
                if write:
                    level = max(level, int(last_r[a:b].max()) + 1)
        for a, b, write in spans:
            if write:
                last_w[a:b] = level
            else:
                np.maximum(last_r[a:b], level, out=last_r[a:b])
        outs = []
        for r in st.writes:
            cur[r] = v = version(r, level)
            outs.append(v)
            synced.discard(r)
        top = max(top, level)
        nodes.append((level, pos, "node", f, sc, (spec, ins, olds), outs))

    # groups: one level, one numerics
    groups: dict = {}
    order = []
    for node in nodes:
        level, pos, kind, f, sc, extra, outs = node
        if kind == "node" and extra[0] is not None:
            spec = extra[0]
            key = (level, spec.key, spec.overwrites, tuple(_skey(x) for x in sc) if spec.shared else None)
        else:
            key = (level, pos)
        g = groups.get(key)
        if g is None:
            groups[key] = g = []
            order.append(key)
        g.append(node)
    order.sort(key=lambda key: (key[0], groups[key][0][1]))
    if len(order) > _WORTH * len(trace):
        return None
    return _Shape(nodes, groups, order, initial, vkey, cur, synced)


def _program(shape: _Shape, bases: list, ub_size: int) -> Plan:
    """The steps of a plan shape for tiles at ``bases``: the group kernels (their UB addresses), the
    arena rows (a group without a kernel runs node by node)."""
    groups, order, initial, vkey = shape.groups, shape.order, shape.initial, shape.vkey
    rows: dict[int, int] = {}
    count = {VREG: 0, MASK: 0}

    def alloc(v: int, n: int = 1) -> int:
        kind = vkey[v][0]
        r = count[kind]
        count[kind] += n
        return r

    for v in initial:
        rows[v] = alloc(v)
    init = [(vkey[v][0], vkey[v][1], rows[v]) for v in initial]
    steps = []
    for key in order:
        g = groups[key]
        level, pos, kind, f, sc, extra, outs = g[0]
        if kind == "barrier":
            for v in outs:
                rows[v] = alloc(v)
            steps.append(_Barrier(f, sc, [(*vkey[v], rows[v]) for v in extra],
                                  [(*vkey[v], rows[v]) for v in outs]))
            continue
        kernel = None
        spec = extra[0]
        if spec is not None:
            kernel = spec.make(bases, [n[4] for n in g], ub_size)
        if kernel is None:
            for level, pos, kind, f, sc, (spec_, ins, olds), outs in g:
                for v in outs:
                    rows[v] = alloc(v)
                regs = {vkey[v]: rows[v] for v in ins}
                read_rows = dict(regs)
                regs.update({vkey[v]: rows[v] for v in outs})
                # a destination starts as its previous value (a partial write) or, when the instruction also
                # reads it, as the version it reads (one array serves both on the scratch register file)
                inits = [(vkey[v][0], rows[v], rows[olds[j]] if olds else read_rows[vkey[v]])
                         for j, v in enumerate(outs) if olds or vkey[v] in read_rows]
                steps.append(_Single(f, sc, [(k_, u, r) for (k_, u), r in regs.items()], inits))
            continue
        n = len(g)
        out_slices = []
        for j in range(len(outs)):
            base = alloc(g[0][6][j], n)
            for i, node in enumerate(g):
                rows[node[6][j]] = base + i
            out_slices.append((vkey[g[0][6][j]][0], slice(base, base + n)))
        ins = [(vkey[g[0][5][1][j]][0], _rows([rows[node[5][1][j]] for node in g])) for j in range(len(extra[1]))]
        olds = [(vkey[g[0][5][2][j]][0], _rows([rows[node[5][2][j]] for node in g]))
                for j in range(len(extra[2]))] if extra[2] else []
        if olds:  # a broadcast old value must fill every output row
            olds = [(k_, r if not (isinstance(r, slice) and r.stop - r.start == 1 and n > 1)
                     else np.full(n, r.start, np.intp)) for k_, r in olds]
        scan = getattr(spec.make, "scan", None)
        scan = (key[1:], scan, [node[4] for node in g]) if scan and spec.shared else None
        steps.append(_Group(kernel, ins, out_slices, olds, scan))
    final = [(r[0], r[1], rows[v]) for r, v in shape.cur.items() if r not in shape.synced]
    return Plan(batch_scan.fuse(steps, bases, ub_size, final), count[VREG], count[MASK], init, final)
