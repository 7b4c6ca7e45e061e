"""The simulator's toolkit for instruction rules: what an op declaration's ``sim`` builder uses.

A sim rule is ``rule(stmt, env) -> dispatch``: built once per program, it captures everything
static (views, dtypes, numerics). ``dispatch(*run_time_args)`` runs in program order (as the
scalar unit issues the instruction): it reads the tiles' valid shapes, computes the region, and
returns a :class:`Prepared` record: the work size, the memory touched, and ``run`` — the numerics.
``run(defer)`` reads the inputs; with ``defer`` it returns a ``commit`` that writes the outputs
(called at the instruction's end time), otherwise it writes them at once.

Invariant the schedule cache relies on: an instruction's on-chip accesses and commits are a
function of its statement, its tile slots and its work size (rows, cols, full_cols, k); only its
global-memory window may depend on other run-time operands.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from pypto_pro.backends.sim.tile_state import SlotState
from pypto_pro.errors import SimulationError
from pypto_pro.ir.nodes import TileOp, TileRef
from pypto_pro.language.enums import SectionKind


class GMBinding:
    """The launch's global tensors as NumPy arrays (by parameter position) and, for each, a small
    id of the memory it views, so two parameters bound to the same tensor are seen as one.
    ``pl.make_tensor`` views (``views``) take the indices after the parameters (``gm_views``)."""

    def __init__(self, count: int, views: list | tuple = ()):
        self.count = count
        self.views = list(views)
        extra = max((v.gm_index + 1 for v in self.views), default=count) - count
        self.arrays: list[np.ndarray | None] = [None] * (count + max(0, extra))
        self.objs: list[int] = list(range(len(self.arrays)))
        self.strides: dict[int, tuple[int, int]] = {}  # pl.set_stride descriptors of this program (gm_strided)
        self.memos: list[dict] = []  # rules' memos of records that view these arrays (prep_memo): emptied with them

    def bind(self, arrays: list[np.ndarray | None]) -> None:
        from pypto_pro.backends.sim import gm_views
        self.arrays[:self.count] = arrays
        self.strides.clear()
        for memo in self.memos:
            memo.clear()
        seen: dict[tuple, int] = {}
        for i, a in enumerate(arrays):
            key = (a.__array_interface__["data"][0], a.shape, a.strides) if a is not None else ("none", i)
            self.objs[i] = seen.setdefault(key, i)
        for v in self.views:
            self.objs[v.gm_index] = gm_views.view_obj(v, self.objs[v.base.index])

    def region(self, pidx: int, rect: tuple) -> np.ndarray | None:
        """The GM bytes behind a checker access of binding ``pidx``: an element window of a tensor
        parameter, or for a ``pl.make_tensor`` view a byte range of its base (``gm_views``)."""
        view = next((v for v in self.views if v.gm_index == pidx), None)
        if view is None:
            arr = self.arrays[pidx] if pidx < len(self.arrays) else None
            if arr is None or len(rect) != max(1, arr.ndim):
                return None
            return arr[tuple(slice(a, b) for a, b in rect)] if arr.ndim else arr
        base = self.arrays[view.base.index]
        if base is None or len(rect) != 1 or not base.flags.c_contiguous:
            return None
        (lo, hi), = rect
        return base.reshape(-1).view(np.uint8)[lo:hi]

    @staticmethod
    def launch_objs(bindings: list["GMBinding"]) -> list[int]:
        """The memory ids of every parameter and view of a launch's programs: each program binds the
        views it makes (a Vector program's views are not the Cube program's), all numbered per kernel."""
        objs = list(range(max(len(b.objs) for b in bindings)))
        for b in bindings:
            objs[:b.count] = b.objs[:b.count]
            for v in b.views:
                objs[v.gm_index] = b.objs[v.gm_index]
        return objs

    def release(self) -> None:
        """Drop the launch's arrays (called when a launch ends), so a compiled kernel does not keep
        its last launch's tensors alive."""
        self.arrays[:] = [None] * len(self.arrays)
        for memo in self.memos:
            memo.clear()


@dataclass
class SimEnv:
    """What a sim rule may bind: the program's tile states, its GM binding, and ``remote(k)``, the
    tile states of Vector core ``k`` of the block (for Cube-side moves into a UB); ``kind``, the engine
    whose program the instruction is in (device prints name their core by it); ``spr``, the core's
    vector-mask special registers (``vec_mask.VecMaskSPR``), written and read at dispatch."""

    states: dict[int, SlotState]
    gm: GMBinding
    remote: Callable[[int], dict[int, SlotState]] | None = None
    kind: SectionKind | None = None
    block: dict | None = None  # state every core of the block shares (the SSBUF bytes: ops/ssbuf.py)
    spr: Any = None  # the core's vector-mask registers (backends/sim/vec_mask.py)


class Prepared:
    """A dispatched tile instruction: work size, memory touched, and its numerics."""

    __slots__ = ("rows", "cols", "full_cols", "accesses", "gm", "nbytes", "run", "commits", "k", "priced", "result",
                 "batch", "logged")

    def __init__(self, rows: int, cols: int, full_cols: bool, accesses: tuple, gm: tuple, nbytes: int,
                 run: Callable[[bool], Callable | None], commits: tuple = (), k: int = 0,
                 priced: tuple | None = None):
        self.k = k                # reduction depth of a matmul (for its cost)
        self.priced = priced      # (cycles, ideal cycles, key) of an instruction priced at dispatch (SIMT)
        self.rows = rows
        self.cols = cols
        self.full_cols = full_cols
        self.accesses = accesses  # ((space, lo, hi, core), is_write, label, rows, row_bytes, used_bytes)
        self.gm = gm              # (param index, param name, rect, is_write)
        self.nbytes = nbytes
        self.run = run
        self.commits = commits    # ((core, space), lo, rows, row_bytes, used_bytes) marked written at commit
        self.result = None        # a scalar read (getval): the value, once its numerics ran
        self.batch = None         # how to run it with other blocks' (batch_replay.BatchSpec), if it can
        self.logged = None        # (cost cache, cost entry, its id): what the recorder found for it (recorder.py)


def fault(op, message: str, cls: type[SimulationError] = SimulationError) -> SimulationError:
    """A located simulation error for ``op`` (a statement with ``.loc``)."""
    loc = op.loc
    text = f"{loc.path}:{loc.line}: {message}" if loc else message
    if loc and loc.source_line:
        text += f"\n    {loc.source_line.strip()}"
    return cls(text)


class TileAccess:
    """Static facts of one tile operand, for building access records cheaply.

    A record covers the bytes a region from ``[0, 0]`` touches in the tile's layout: rows of a
    row-major tile; columns, block columns or block rows of the others (``layouts.region_rows``)."""

    __slots__ = ("st", "space", "addrs", "keys", "labels", "row_bytes", "item", "label", "views", "valid", "boxed",
                 "_acc", "_wr", "_reg")

    def __init__(self, st: SlotState):
        b = st.buffer
        self.st = st
        self.views = st.views
        self.valid = st.valid
        self.space = b.space
        self.addrs = b.addrs
        self.keys = [(b.space, a, a + b.slot_bytes, st.core) for a in b.addrs] if b.view_starts is None else \
            [(b.space, a, b.alias_of.addrs[bs] + b.alias_of.slot_bytes, st.core)  # (its bytes end with its tile's)
             for a, (bs, _, _) in zip(b.addrs, b.view_starts.slots(b.alias_of))]
        self.labels = [b.user_label(i) for i in range(b.depth)] \
            if b.view_starts is None else _start_labels(b)
        self.item = b.tile_type.dtype.itemsize
        self.row_bytes = b.tile_type.cols * self.item
        self.label = b.name
        self.boxed = st.layout.name != "ND"
        # memos: a record is a pure function of its arguments (the slot's key, label and layout never
        # change), and an SPMD launch asks for the same few thousands of times (one per block)
        self._acc: dict[tuple, tuple] = {}
        self._wr: dict[tuple, tuple] = {}
        self._reg: dict[tuple, object] = {}

    def _rows(self, rows: int, cols: int) -> tuple[int, int, int]:
        if self.boxed:
            from pypto_pro.arch.layouts import region_rows
            return region_rows(self.st.buffer.tile_type, self.st.layout, rows, cols)
        return rows, self.row_bytes, cols * self.item

    def access(self, slot: int, rows: int, cols: int, write: bool) -> tuple:
        key = (slot, rows, cols, write)
        got = self._acc.get(key)
        if got is None:
            got = self._acc[key] = (self.keys[slot], write, self.labels[slot], *self._rows(rows, cols))
        return got

    def window(self, slot: int, r0: int, rows: int, cols_end: int, write: bool = False) -> tuple:
        """Rows ``r0 .. r0+rows`` up to column ``cols_end`` (accesses cover whole leading rows)."""
        return self.access(slot, r0 + rows, cols_end, write)

    def written(self, slot: int, rows: int, cols: int) -> tuple:
        key = (slot, rows, cols)
        got = self._wr.get(key)
        if got is None:
            got = self._wr[key] = ((self.st.core, self.space), self.addrs[slot], *self._rows(rows, cols))
        return got

    def region(self, slot: int, rows: int, cols: int):
        """The ``[:rows, :cols]`` window of the slot's view (the same view object on every call:
        the slot's memory lives as long as the program)."""
        key = (slot, rows, cols)
        got = self._reg.get(key)
        if got is None:
            got = self._reg[key] = self.views[slot][:rows, :cols]
        return got


def _start_labels(view) -> list[str]:
    """A subview at a run-time start, per slot: its tile and where it starts, ``t[1]@[r, c]``."""
    base = view.alias_of
    return [f"{base.name}{f'[{bs}]' if base.depth > 1 else ''}@[{r}, {c}]" for bs, r, c in view.view_starts.slots(base)]


def tiles(op: TileOp, env: SimEnv) -> list[TileAccess]:
    """Access helpers for the op's tile operands, destination first, then sources in order."""
    return [TileAccess(env.states[t.buffer.uid]) for t in (op.dst, *op.srcs) if isinstance(t, TileRef)]


def deferred(compute: Callable[[np.ndarray], None], dst, direct: bool = False) -> Callable[[bool], Callable | None]:
    """Numerics with reads at start and writes at commit: compute into scratch, copy at commit
    (a boxed tile's region is computed into scratch and scattered into its bytes, unless ``direct``:
    a ``compute`` that reads every operand before it stores anything may write the region itself)."""
    via_scratch = not direct and not isinstance(dst, np.ndarray)  # a fractal.Region

    def run(defer: bool) -> Callable | None:
        if not defer and not via_scratch:
            compute(dst)
            return None
        scratch = np.empty(dst.shape, dst.dtype)
        compute(scratch)
        return landing(dst, scratch, defer)
    return run


def bound_run(bound: Callable[[], None], run: Callable[[bool], Callable | None]) -> Callable[[bool], Callable | None]:
    """``run`` (a :func:`deferred` into a plain array) whose undeferred form is ``bound()``: the same
    numerics with their operands bound once (a deferred run computes into scratch: ``run`` itself)."""
    def fast(defer: bool) -> Callable | None:
        if not defer:
            bound()
            return None
        return run(defer)
    return fast


def landing(dst, scratch: np.ndarray, defer: bool) -> Callable | None:
    """Copy ``scratch`` into ``dst`` now (None), or return the commit that will."""
    def commit() -> None:
        dst[...] = scratch
    if not defer:
        commit()
        return None
    return commit


def deferred_many(compute: Callable[[list[np.ndarray]], None], dsts: list[np.ndarray]) -> Callable:
    """Like :func:`deferred` for an instruction that writes several outputs."""
    def run(defer: bool) -> Callable | None:
        if not defer:
            compute(dsts)
            return None
        scratch = [np.empty_like(d) for d in dsts]
        compute(scratch)

        def commit() -> None:
            for d, s in zip(dsts, scratch):
                d[...] = s
        return commit
    return run


def no_run(defer: bool) -> None:
    return None


def write_at_end(commit: Callable[[], None]) -> Callable[[bool], Callable | None]:
    """Numerics that only write (their inputs are known at dispatch): ``commit`` at the end, or now."""
    def run(defer: bool) -> Callable | None:
        if not defer:
            commit()
            return None
        return commit
    return run


def scalar_read(accesses: tuple, gm: tuple, nbytes: int, read: Callable[[], object]) -> Prepared:
    """A scalar read (getval, ssbuf_load): ``result`` is ``read()`` once its numerics run."""
    prep = Prepared(1, 1, True, accesses, gm, nbytes, no_run)

    def run(defer: bool) -> None:
        prep.result = read()
        return None
    prep.run = run
    return prep


def broadcast(parts: list[Callable]) -> Callable:
    """One instruction writing the same data into several cores' memories (Acc -> every AIV's UB)."""
    def dispatch(*args) -> Prepared:
        preps = [d(*args) for d in parts]
        first = preps[0]

        def run(defer: bool):
            commits = [p.run(defer) for p in preps]
            if not defer:
                return None

            def commit() -> None:
                for c in commits:
                    if c is not None:
                        c()
            return commit
        return Prepared(first.rows, first.cols, first.full_cols, sum((p.accesses for p in preps), ()), (),
                        sum(p.nbytes for p in preps), run, sum((p.commits for p in preps), ()))
    return dispatch


def require_valid(op: TileOp, t: TileAccess, slot: int, rows: int, cols: int, name: str) -> None:
    """A source must cover the region an instruction computes (the destination's valid shape).

    PTO-ISA's debug builds assert the two are equal (``PTO_ASSERT``, compiled out of release builds):
    on the chip a source with a larger valid shape is read over the region at its own row stride,
    as real kernels rely on (a Vector core's view of a tile whose valid shape only the Cube set).
    A smaller one would have the instruction read past the source's valid data: a fault here."""
    require_covers(op, t, slot, rows, cols, name)


def require_covers(op: TileOp, t: TileAccess, slot: int, rows: int, cols: int, name: str) -> None:
    """A source must hold at least the ``rows x cols`` region an instruction reads from it."""
    vr, vc = t.valid[slot]
    if vr < rows or vc < cols:
        raise fault(op, f"pl.{op.attrs.get('api', op.op)}: '{name}' ({t.label}) has valid shape {vr} x {vc}, smaller "
                        f"than the {rows} x {cols} region the instruction reads")
