"""Builds, for each tile instruction of a lowered program, a closure that *dispatches* it.

Dispatch happens in program order (as the scalar unit issues it): it resolves the run-time
operands, computes the region the instruction works on from the tiles' valid shapes (and
updates them, as the scalar side of the hardware does), and returns a :class:`Prepared` record:
the region, the memory it touches, and ``run`` — the numerics. ``run(defer)`` reads the inputs;
with ``defer`` it returns a ``commit`` that writes the outputs (the simulator calls it at the
instruction's end time), otherwise it writes them at once.

Everything static (views, dtypes, shapes, the op's numerics) is captured once per program.
Invariant the schedule cache relies on: an instruction's on-chip accesses and commits are a
function of its statement, its tile slots and its work size (rows, cols, full_cols, k); only
its global-memory window depends on the other run-time operands.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from pypto_pro.backends.sim import gm_views, numerics
from pypto_pro.backends.sim.tile_state import SlotState
from pypto_pro.errors import CompileError, SimulationError
from pypto_pro.errors_sim import OutOfBoundsError
from pypto_pro.ir.expr import Const, Expr
from pypto_pro.ir.nodes import GMRef, SetValidShape, TileOp, TileRef
from pypto_pro.language.enums import MemorySpace
from pypto_pro.ops.registry import OPS


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

    def bind(self, arrays: list[np.ndarray | None]) -> None:
        self.arrays[:self.count] = arrays
        seen: dict[tuple, int] = {}
        for i, a in enumerate(arrays):
            key = (a.__array_interface__["data"][0], a.shape, a.strides) if a is not None else ("none", i)
            self.objs[i] = seen.setdefault(key, i)
        for v in self.views:
            self.objs[v.gm_index] = gm_views.view_obj(v, self.objs[v.base.index])


class Prepared:
    """A dispatched tile instruction: work size, memory touched, and its numerics."""

    __slots__ = ("rows", "cols", "full_cols", "accesses", "gm", "nbytes", "run", "commits", "k")

    def __init__(self, rows: int, cols: int, full_cols: bool, accesses: tuple, gm: tuple, nbytes: int,
                 run: Callable[[bool], Callable | None], commits: tuple = (), k: int = 0):
        self.k = k                # reduction depth of a matmul (for its cost)
        self.rows = rows
        self.cols = cols
        self.full_cols = full_cols
        self.accesses = accesses  # ((space, lo, hi, core), is_write, label, rows, row_bytes, used_bytes)
        self.gm = gm              # (param index, param name, rect, is_write)
        self.nbytes = nbytes
        self.run = run
        self.commits = commits    # ((core, space), lo, rows, row_bytes, used_bytes) marked written at commit


def fault(op, message: str, cls: type[SimulationError] = SimulationError) -> SimulationError:
    loc = op.loc
    text = f"{loc.path}:{loc.line}: {message}" if loc else message
    if loc and loc.source_line:
        text += f"\n    {loc.source_line.strip()}"
    return cls(text)


def operand_exprs(stmt: TileOp | SetValidShape) -> list[Expr]:
    """Run-time arguments of an instruction: tile slots, then GM offsets, then scalars."""
    if isinstance(stmt, SetValidShape):
        return [stmt.slot if stmt.slot is not None else Const(-1), stmt.rows, stmt.cols]
    args: list[Expr] = []
    for o in (stmt.dst, *stmt.srcs):
        if isinstance(o, TileRef):
            args.append(o.slot)
    for o in (stmt.dst, *stmt.srcs):
        if isinstance(o, GMRef):
            args.extend(o.offsets)
            args.extend(getattr(o.param, "view_exprs", tuple)())  # a pl.make_tensor view's shape, strides, offset
    args.extend(stmt.scalars)
    return args


def build(stmt: TileOp | SetValidShape, states: dict[int, SlotState], gm: GMBinding,
          remote: Callable[[int], dict[int, SlotState]] | None = None) -> Callable:
    """The dispatcher of one instruction. ``remote(subblock)`` gives the tile states of another
    core's memory, for moves that write into it (a5 Acc -> Vec from the Cube program)."""
    if isinstance(stmt, SetValidShape):
        return _set_validshape(stmt, states[stmt.buffer.uid])
    if stmt.op in ("load", "store"):
        return _movement(stmt, states, gm)
    if stmt.op == "setval":
        return gm_views.scalar_write(stmt, gm.arrays, lambda m: fault(stmt, m, OutOfBoundsError))
    if stmt.op in _CUBE_BUILDERS:
        if stmt.op == "fixpipe" and stmt.dst.buffer.space is MemorySpace.Vec:
            if remote is None:
                raise CompileError("an Acc -> Vec move needs the block's Vector cores, but the kernel has no "
                                   "section_vector()", stmt.loc)
            sub = stmt.attrs.get("subblock")
            targets = [sub] if sub is not None else [0, 1]  # None: every Vector core of the block
            parts = [_CUBE_BUILDERS[stmt.op](stmt, {**states, stmt.dst.buffer.uid: remote(k)[stmt.dst.buffer.uid]})
                     for k in targets]
            return parts[0] if len(parts) == 1 else _broadcast(parts)
        return _CUBE_BUILDERS[stmt.op](stmt, states)
    return _BUILDERS[OPS[stmt.op].kind](stmt, states)


class _Tile:
    """Static facts of one tile operand, for building access records cheaply."""

    __slots__ = ("st", "space", "addrs", "keys", "labels", "row_bytes", "item", "label")

    def __init__(self, st: SlotState):
        b = st.buffer
        self.st = st
        self.space = b.space
        self.addrs = b.addrs
        self.keys = [(b.space, a, a + b.slot_bytes, st.core) for a in b.addrs]
        self.labels = [f"{b.name}[{i}]" if b.depth > 1 else b.name for i in range(b.depth)]
        self.item = b.tile_type.dtype.itemsize
        self.row_bytes = b.tile_type.cols * self.item
        self.label = b.name

    def access(self, slot: int, rows: int, cols: int, write: bool) -> tuple:
        return (self.keys[slot], write, self.labels[slot], rows, self.row_bytes, cols * self.item)

    def written(self, slot: int, rows: int, cols: int) -> tuple:
        return ((self.st.core, self.space), self.addrs[slot], rows, self.row_bytes, cols * self.item)


def _deferred(compute: Callable[[np.ndarray], None], dst: np.ndarray) -> Callable[[bool], Callable | None]:
    """Numerics with reads at start and writes at commit: compute into scratch, copy at commit."""
    def run(defer: bool) -> Callable | None:
        if not defer:
            compute(dst)
            return None
        scratch = np.empty_like(dst)
        compute(scratch)

        def commit() -> None:
            dst[...] = scratch
        return commit
    return run


def _set_validshape(s: SetValidShape, st: SlotState) -> Callable:
    rows_max, cols_max = s.buffer.tile_type.shape
    depth = len(st.views)

    def dispatch(slot: int, rows: int, cols: int) -> None:
        if not (0 <= rows <= rows_max and 0 <= cols <= cols_max):
            raise fault(s, f"set_validshape({rows}, {cols}) is outside the tile's {rows_max} x {cols_max}")
        for i in (range(depth) if slot < 0 else (slot,)):
            st.declared[i][0] = st.valid[i][0] = rows
            st.declared[i][1] = st.valid[i][1] = cols
        return None
    return dispatch


def _movement(op: TileOp, states: dict[int, SlotState], gm: GMBinding) -> Callable:
    load = op.op == "load"
    tile = op.dst if load else op.srcs[0]
    ref = op.srcs[0] if load else op.dst
    assert isinstance(tile, TileRef) and isinstance(ref, GMRef)
    st = states[tile.buffer.uid]
    t = _Tile(st)
    views, declared, valid = st.views, st.declared, st.valid
    pidx, pname, rank = ref.param.index, ref.param.name, ref.param.type.rank
    arrays = gm.arrays
    item = t.item
    tview = ref.param if isinstance(ref.param, gm_views.TensorView) else None

    def dispatch(slot: int, *offs: int) -> Prepared:
        if tview is not None:  # offsets, then the view's shape, strides and byte offset
            offs, v = offs[:rank], offs[rank:]
            base = arrays[tview.base.index]
            g = gm_views.window(lambda m: fault(op, m, OutOfBoundsError), tview, base, v[:rank], v[rank:2 * rank],
                                v[-1])
        else:
            g = arrays[pidx]
        shape = g.shape
        for axis, o in enumerate(offs):
            if not 0 <= o < shape[axis]:
                raise fault(op, f"{'load from' if load else 'store to'} '{pname}': offset {o} on axis {axis} is outside "
                                f"the tensor's shape {list(shape)}", OutOfBoundsError)
        limit = declared[slot] if load else valid[slot]
        if rank == 1:
            r, c = 1, min(limit[1], shape[0] - offs[0])
            idx: tuple = (slice(offs[0], offs[0] + c),)
            rect: tuple = ((offs[0], offs[0] + c),)
        else:
            o0, o1 = offs[-2], offs[-1]
            r, c = min(limit[0], shape[-2] - o0), min(limit[1], shape[-1] - o1)
            idx = (*offs[:-2], slice(o0, o0 + r), slice(o1, o1 + c))
            rect = (*((o, o + 1) for o in offs[:-2]), (o0, o0 + r), (o1, o1 + c))
        if tview is not None:  # the checker sees a view's accesses as byte ranges of its base (gm_views)
            gm_acc = tuple((pidx, pname, rr, not load) for rr in gm_views.row_rects(g, base, idx))
        else:
            gm_acc = ((pidx, pname, rect, not load),)
        view = views[slot][:r, :c]
        if load:
            valid[slot][0], valid[slot][1] = r, c
            src = g[idx] if rank > 1 else g[idx][None, :]
            run = _deferred(lambda out: np.copyto(out, src), view)
            return Prepared(r, c, c == t.row_bytes // item, (t.access(slot, r, c, True),),
                            gm_acc, r * c * item, run, (t.written(slot, r, c),))
        dst = g[idx]
        convert = dst.dtype != view.dtype  # the fixpipe converts accumulators on the way out

        def compute(out: np.ndarray) -> None:
            data = view if rank > 1 else view[0]
            if convert:
                converted = np.empty(data.shape, dst.dtype)
                numerics.cast(converted.reshape(-1, data.shape[-1]) if converted.ndim > 1 else converted[None, :],
                              data if data.ndim > 1 else data[None, :], "rint")
                data = converted
            out[...] = data
        run = _deferred(compute, dst)
        return Prepared(r, c, c == t.row_bytes // item, (t.access(slot, r, c, False),),
                        gm_acc, r * c * item, run)
    return dispatch


def _broadcast(parts: list[Callable]) -> Callable:
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


def _check_covers(op: TileOp, st: SlotState, slot: int, r: int, c: int, name: str) -> None:
    vr, vc = st.valid[slot]
    if vr < r or vc < c:
        raise fault(op, f"pl.{op.op}: '{name}' ({st.buffer.name}) has valid shape {vr} x {vc}, smaller than the "
                        f"{r} x {c} region being computed")


def _binary(op: TileOp, states: dict[int, SlotState]) -> Callable:
    d, a, b = (_Tile(states[t.buffer.uid]) for t in (op.dst, *op.srcs))  # type: ignore[union-attr]
    name, fn = op.op, numerics.binary

    def dispatch(sd: int, sa: int, sb: int) -> Prepared:
        r, c = a.st.valid[sa]
        _check_covers(op, b.st, sb, r, c, "src1")
        dr, dc = d.st.declared[sd]
        r, c = min(r, dr), min(c, dc)
        av, bv = a.st.views[sa][:r, :c], b.st.views[sb][:r, :c]
        d.st.valid[sd][0], d.st.valid[sd][1] = r, c
        run = _deferred(lambda out: fn(name, out, av, bv), d.st.views[sd][:r, :c])
        return Prepared(r, c, c * d.item == d.row_bytes,
                        (a.access(sa, r, c, False), b.access(sb, r, c, False), d.access(sd, r, c, True)),
                        (), r * c * d.item, run, (d.written(sd, r, c),))
    return dispatch


def _unary_like(op: TileOp, states: dict[int, SlotState]) -> Callable:
    d, a = (_Tile(states[t.buffer.uid]) for t in (op.dst, op.srcs[0]))  # type: ignore[union-attr]
    kind, name, mode = OPS[op.op].kind, op.op, op.attrs.get("mode", "rint")

    def dispatch(sd: int, sa: int, *scalars) -> Prepared:
        r, c = a.st.valid[sa]
        dr, dc = d.st.declared[sd]
        r, c = min(r, dr), min(c, dc)
        av = a.st.views[sa][:r, :c]
        d.st.valid[sd][0], d.st.valid[sd][1] = r, c
        if kind == "unary":
            compute = lambda out: numerics.unary(name, out, av)  # noqa: E731
        elif kind == "scalar":
            compute = lambda out: numerics.binary_scalar(name, out, av, scalars[0])  # noqa: E731
        elif kind == "cast":
            compute = lambda out: numerics.cast(out, av, mode)  # noqa: E731
        else:  # move
            def compute(out):
                out[...] = av
        run = _deferred(compute, d.st.views[sd][:r, :c])
        return Prepared(r, c, c * max(a.item, d.item) == max(a.row_bytes, d.row_bytes),
                        (a.access(sa, r, c, False), d.access(sd, r, c, True)), (), r * c * d.item, run,
                        (d.written(sd, r, c),))
    return dispatch


def _fill(op: TileOp, states: dict[int, SlotState]) -> Callable:
    d = _Tile(states[op.dst.buffer.uid])  # type: ignore[union-attr]

    def dispatch(sd: int, scalar) -> Prepared:
        r, c = d.st.declared[sd]
        d.st.valid[sd][0], d.st.valid[sd][1] = r, c
        run = _deferred(lambda out: numerics.fill(out, scalar), d.st.views[sd][:r, :c])
        return Prepared(r, c, c * d.item == d.row_bytes, (d.access(sd, r, c, True),), (), r * c * d.item, run,
                        (d.written(sd, r, c),))
    return dispatch


def _reduce(op: TileOp, states: dict[int, SlotState]) -> Callable:
    d, a = (_Tile(states[t.buffer.uid]) for t in (op.dst, op.srcs[0]))  # type: ignore[union-attr]
    tmp = _Tile(states[op.srcs[1].buffer.uid]) if len(op.srcs) > 1 else None  # type: ignore[union-attr]
    name, dim = op.op, op.attrs["dim"]

    def dispatch(sd: int, sa: int, *rest) -> Prepared:
        r, c = a.st.valid[sa]
        if r == 0 or c == 0:
            raise fault(op, f"pl.{name}: source '{a.label}' has an empty valid region ({r} x {c})")
        av = a.st.views[sa][:r, :c]
        dr, dc = (r, 1) if dim == 1 else (1, c)
        d.st.valid[sd][0], d.st.valid[sd][1] = dr, dc
        run = _deferred(lambda out: numerics.reduce(name, out, av, dim), d.st.views[sd][:dr, :dc])
        acc = [a.access(sa, r, c, False), d.access(sd, dr, dc, True)]
        if tmp is not None:
            acc.append(tmp.access(rest[0], r, c, True))
        return Prepared(r, c, c * a.item == a.row_bytes, tuple(acc), (), r * c * a.item, run, (d.written(sd, dr, dc),))
    return dispatch


def _expand(op: TileOp, states: dict[int, SlotState]) -> Callable:
    d, a, v = (_Tile(states[t.buffer.uid]) for t in (op.dst, *op.srcs))  # type: ignore[union-attr]
    name, dim = op.op, op.attrs["dim"]

    def dispatch(sd: int, sa: int, sv: int) -> Prepared:
        r, c = a.st.valid[sa]
        dr, dc = d.st.declared[sd]
        r, c = min(r, dr), min(c, dc)
        if dim == 1:
            _check_covers(op, v.st, sv, r, 1, "vec")
            vec, vr, vcols = v.st.views[sv][:r, :1], r, 1
        else:
            _check_covers(op, v.st, sv, 1, c, "vec")
            vec, vr, vcols = v.st.views[sv][:1, :c], 1, c
        av = a.st.views[sa][:r, :c]
        d.st.valid[sd][0], d.st.valid[sd][1] = r, c
        run = _deferred(lambda out: numerics.expand(name, out, av, vec, dim), d.st.views[sd][:r, :c])
        return Prepared(r, c, c * d.item == d.row_bytes,
                        (a.access(sa, r, c, False), v.access(sv, vr, vcols, False), d.access(sd, r, c, True)),
                        (), r * c * d.item, run, (d.written(sd, r, c),))
    return dispatch


_BUILDERS: dict[str, Callable[[TileOp, dict[int, SlotState]], Callable]] = {
    "binary": _binary, "unary": _unary_like, "scalar": _unary_like, "cast": _unary_like, "move": _unary_like,
    "fill": _fill, "reduce": _reduce, "expand": _expand,
}


# ---- Cube ------------------------------------------------------------------------------------------


def _extract(op: TileOp, states: dict[int, SlotState]) -> Callable:
    """Mat -> Left/Right (MTE1): a window of ``src`` at ``offset``, optionally transposed."""
    d, a = (_Tile(states[t.buffer.uid]) for t in (op.dst, op.srcs[0]))  # type: ignore[union-attr]
    r0, c0 = op.attrs["offset"]
    transpose = op.attrs["transpose"]
    dt = op.dst.tile_type  # type: ignore[union-attr]
    win_r, win_c = (dt.cols, dt.rows) if transpose else (dt.rows, dt.cols)

    def dispatch(sd: int, sa: int) -> Prepared:
        vr, vc = a.st.valid[sa]
        # a window past the source's valid region is empty: K sub-steps beyond an edge add nothing
        r, c = max(0, min(win_r, vr - r0)), max(0, min(win_c, vc - c0))
        src = a.st.views[sa][r0:r0 + r, c0:c0 + c]
        dr, dc = (c, r) if transpose else (r, c)
        d.st.valid[sd][0], d.st.valid[sd][1] = dr, dc
        run = _deferred(lambda out: np.copyto(out, src.T if transpose else src), d.st.views[sd][:dr, :dc])
        if r == 0 or c == 0:
            return Prepared(dr, dc, True, (d.access(sd, 0, 0, True),), (), 0, lambda defer: None, ())
        return Prepared(r, c, True, (_window_access(a, sa, r0, r, c0 + c), d.access(sd, dr, dc, True)), (),
                        dt.nbytes, run, (d.written(sd, dr, dc),))
    return dispatch


def _window_access(t: _Tile, slot: int, r0: int, rows: int, cols_end: int) -> tuple:
    return (t.keys[slot], False, t.labels[slot], r0 + rows, t.row_bytes, cols_end * t.item)


def _matmul(op: TileOp, states: dict[int, SlotState]) -> Callable:
    """Left [M, K] x Right [K, N] -> Acc [M, N] on the valid regions; fp inputs multiply exactly and
    sum in float64 and round once to the accumulator dtype (independent of BLAS blocking), int8 accumulates exactly in int32."""
    d, lhs, rhs = (_Tile(states[t.buffer.uid]) for t in (op.dst, *op.srcs[:2]))  # type: ignore[union-attr]
    extra = _Tile(states[op.srcs[2].buffer.uid]) if len(op.srcs) > 2 else None  # type: ignore[union-attr]
    accumulate = op.op == "matmul_acc"
    acc_np = op.dst.tile_type.dtype.np_dtype  # type: ignore[union-attr]
    comp = np.int64 if acc_np == np.int32 else np.float64  # exact products, order-independent sums

    def dispatch(sd: int, sl: int, sr: int, *rest: int) -> Prepared:
        m, k = lhs.st.valid[sl]
        k2, n = rhs.st.valid[sr]
        if k != k2:
            raise fault(op, f"pl.{op.op}: lhs '{lhs.label}' has valid K {k} but rhs '{rhs.label}' has valid K {k2}")
        av, bv = lhs.st.views[sl][:m, :k], rhs.st.views[sr][:k, :n]
        acc_view = None
        accesses = [lhs.access(sl, m, k, False), rhs.access(sr, k, n, False)]
        if extra is not None:
            se = rest[0]
            if accumulate:
                _check_covers(op, extra.st, se, m, n, "acc")
                acc_view = extra.st.views[se][:m, :n]
                accesses.append(extra.access(se, m, n, False))
            else:
                _check_covers(op, extra.st, se, 1, n, "bias")
                acc_view = extra.st.views[se][:1, :n]
                accesses.append(extra.access(se, 1, n, False))
        d.st.valid[sd][0], d.st.valid[sd][1] = m, n
        accesses.append(d.access(sd, m, n, True))

        def compute(out: np.ndarray) -> None:
            prod = av.astype(comp) @ bv.astype(comp)
            if acc_view is not None:
                prod = prod + acc_view.astype(comp)
            out[...] = prod.astype(acc_np) if comp is not np.int64 else (prod & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
        run = _deferred(compute, d.st.views[sd][:m, :n])
        return Prepared(m, n, True, tuple(accesses), (), 0, run, (d.written(sd, m, n),), k)
    return dispatch


def _fixpipe(op: TileOp, states: dict[int, SlotState]) -> Callable:
    """Acc -> Mat / Vec (FIX) and Vec -> Mat (MTE3): same shape, converting dtype on the way."""
    d, a = (_Tile(states[t.buffer.uid]) for t in (op.dst, op.srcs[0]))  # type: ignore[union-attr]
    same = op.dst.tile_type.dtype == op.srcs[0].tile_type.dtype  # type: ignore[union-attr]

    def dispatch(sd: int, sa: int) -> Prepared:
        r, c = a.st.valid[sa]
        src = a.st.views[sa][:r, :c]
        d.st.valid[sd][0], d.st.valid[sd][1] = r, c
        compute = (lambda out: np.copyto(out, src)) if same else (lambda out: numerics.cast(out, src, "rint"))
        run = _deferred(compute, d.st.views[sd][:r, :c])
        return Prepared(r, c, True, (a.access(sa, r, c, False), d.access(sd, r, c, True)), (), r * c * d.item, run,
                        (d.written(sd, r, c),))
    return dispatch


_CUBE_BUILDERS: dict[str, Callable[[TileOp, dict[int, SlotState]], Callable]] = {
    "extract": _extract, "matmul": _matmul, "matmul_acc": _matmul, "fixpipe": _fixpipe, "ub_to_l1": _fixpipe,
}
