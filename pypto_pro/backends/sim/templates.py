"""Generic simulator rules for the common instruction shapes, parameterised by their numerics.

Each template follows PTO-ISA's valid-shape rules (``include/pto/cpu/T*.hpp``): an elementwise
instruction computes over its destination's valid shape and requires every tile source to have
that same valid shape; a row reduction reads its source's valid shape and writes one value per
row; a column reduction one per column; expands broadcast a per-row ``[R, 1]`` or per-column
``[1, C]`` operand. Numerics callables take NumPy arrays (the regions) and write ``out`` in place.
"""
from __future__ import annotations

from typing import Callable

from pypto_pro.backends.sim import batch_replay as _lanes  # (batch specs only when lanes are on: LANES > 1)
from pypto_pro.backends.sim.batch_replay import BatchSpec, batchable, exact_width, scalar_key
from pypto_pro.backends.sim.batch_replay import deferred as batched
from pypto_pro.backends.sim.kit import Prepared, SimEnv, bound_run, deferred, fault, require_valid, tiles
from pypto_pro.backends.sim.prep_memo import memoized
from pypto_pro.backends.sim.undefined import carriable, map_carry, reduce_carry
from pypto_pro.ir.nodes import TileOp


def _names(op: TileOp, n: int) -> tuple[str, ...]:
    names = op.attrs.get("operand_names")
    return tuple(names) if names else ("dst",) + tuple(f"src{i}" for i in range(n - 1))


def elementwise(numerics: Callable[..., None], full_width: bool = False, unused: int = 0, batch: bool = False) -> Callable:
    """``dst = f(src...[, scalars...])`` over dst's valid region, as far as every tile source's valid
    shape reaches (the rest of dst is left unwritten: on the chip it gets values computed from bytes
    past a source's valid data). ``numerics(out, *src_views, *scalars)``. Scalars follow the tile slots in the
    run-time arguments (see ``tile_ops.operand_exprs``). The last ``unused`` tile sources are
    operands the instruction takes but neither reads nor writes (an API's workspace tile). ``batch``:
    ``numerics`` also takes arrays with a leading block axis, element by element (batch_replay)."""
    def run_many(preps: list, stack: Callable, defer: bool):
        views, out_view, scalars = preps[0].batch.data
        vb = [stack(v) for v in views]
        return batched(lambda out: numerics(out, *vb, *scalars), stack(out_view), defer)

    bind = getattr(numerics, "bind", None)  # (out, *views, *scalars) -> the call for those operands, or None

    def rule(op: TileOp, env: SimEnv) -> Callable:
        ts = tiles(op, env)
        ts = ts[:len(ts) - unused]
        d, srcs = ts[0], ts[1:]
        n = len(srcs)
        item = max(t.item for t in ts)
        widest = max(t.row_bytes for t in ts)

        # (dst slot, src slots, rows, cols) -> (src views, dst view, accesses, written, whether it batches)
        memo: dict[tuple, tuple] = {}
        carry = carriable(*ts)  # padding computed with carries its undefinedness on (undefined.py)

        def dispatch(sd: int, *rest) -> Prepared:
            slots, scalars = rest[:n], rest[n + unused:]
            dr, dc = r, c = d.valid[sd]  # the chip computes (and is priced) over dst's valid shape
            for t, s in zip(srcs, slots):  # rows / columns past a source's valid shape: see docs/simulator.md
                r, c = min(r, t.valid[s][0]), min(c, t.valid[s][1])
            key = (sd, slots, r, c)
            got = memo.get(key)
            if got is None:  # every part is a pure function of the key (kit.TileAccess)
                got = memo[key] = (
                    tuple(t.region(s, r, c) for t, s in zip(srcs, slots)), d.region(sd, r, c),
                    tuple(t.access(s, r, c, False) for t, s in zip(srcs, slots)) + (d.access(sd, r, c, True),),
                    ((*d.written(sd, r, c), map_carry(d, sd, r, c, tuple((t, s, "same") for t, s in zip(srcs, slots)))),)
                    if carry else (d.written(sd, r, c),), batch and exact_width(c) and batchable(
                        tuple(t.region(s, r, c) for t, s in zip(srcs, slots)), d.region(sd, r, c)))
            views, out_view, acc, written, can_batch = got
            run = deferred(lambda out: numerics(out, *views, *scalars), out_view)
            bound = bind(out_view, *views, *scalars) if bind is not None else None
            if bound is not None:  # the same numerics with their operands bound (torch_engine.bind_binary)
                run = bound_run(bound, run)
            prep = Prepared(dr, dc, dc * item == widest, acc, (), dr * dc * d.item, run, written)
            # (not with a NaN scalar: which of two NaNs a broadcast scalar loop returns moved when batched)
            if can_batch and _lanes.LANES > 1 and not any(v != v for v in scalars):
                prep.batch = BatchSpec((numerics, scalar_key(scalars)), run_many, (views, out_view, scalars))
            return prep
        return memoized(dispatch, [(i, t.valid) for i, t in enumerate(ts)], scalars_from=1 + n + unused)
    return rule


def fill(numerics: Callable[..., None]) -> Callable:
    """``dst = f(scalars...)`` over dst's valid region (TEXPANDS and alike)."""
    def rule(op: TileOp, env: SimEnv) -> Callable:
        d = tiles(op, env)[0]

        def dispatch(sd: int, *scalars) -> Prepared:
            r, c = d.valid[sd]
            run = deferred(lambda out: numerics(out, *scalars), d.region(sd, r, c))
            return Prepared(r, c, c * d.item == d.row_bytes, (d.access(sd, r, c, True),), (), r * c * d.item, run,
                            (d.written(sd, r, c),))
        return memoized(dispatch, [(0, d.valid)], scalars_from=1)
    return rule


def row_reduce(numerics: Callable[..., None], tmp_written: bool = False) -> Callable:
    """One value per row of ``src``'s valid region into column 0 of ``dst`` (TROWSUM / TROWMAX ...).
    ``numerics(out_column, src_region)``; a ``tmp`` source (3rd tile) is scratch the instruction may
    overwrite (recorded as a write when ``tmp_written``)."""
    return _reduce(numerics, tmp_written, per_row=True)


def col_reduce(numerics: Callable[..., None], tmp_written: bool = False) -> Callable:
    """One value per column of ``src``'s valid region into row 0 of ``dst`` (TCOLSUM / TCOLMAX ...)."""
    return _reduce(numerics, tmp_written, per_row=False)


def _reduce(numerics: Callable[..., None], tmp_written: bool, per_row: bool) -> Callable:
    """The row (``per_row``: an ``[r, 1]`` result) or column (a ``[1, c]`` result) reduction rule."""
    def run_many(preps: list, stack: Callable, defer: bool):
        av, out_view = preps[0].batch.data
        ab = stack(av)
        return batched(lambda out: numerics(out, ab), stack(out_view), defer)

    def rule(op: TileOp, env: SimEnv) -> Callable:
        ts = tiles(op, env)
        d, a = ts[0], ts[1]
        tmp = ts[2] if len(ts) > 2 else None
        carry = carriable(d, a)

        def dispatch(sd: int, sa: int, *rest) -> Prepared:
            r, c = a.valid[sa]
            if r == 0 or c == 0:
                raise fault(op, f"pl.{op.attrs.get('api', op.op)}: source '{a.label}' has an empty valid region")
            dr, dc = d.valid[sd]
            have, need, what = (dr, r, "rows") if per_row else (dc, c, "columns")
            if have < need:
                raise fault(op, f"pl.{op.attrs.get('api', op.op)}: destination '{d.label}' has {have} valid {what}, "
                                f"the source {need}")
            orow, ocol = (r, 1) if per_row else (1, c)
            av = a.region(sa, r, c)
            run = deferred(lambda out: numerics(out, av), d.region(sd, orow, ocol))
            acc = [a.access(sa, r, c, False), d.access(sd, orow, ocol, True)]
            if tmp is not None and tmp_written:
                acc.append(tmp.access(rest[0], r, c, True))
            written = d.written(sd, orow, ocol)
            if carry:
                written = (*written, reduce_carry(d, sd, a, sa, r, c, per_row))
            prep = Prepared(r, c, c * a.item == a.row_bytes, tuple(acc), (), r * c * a.item, run, (written,))
            # batched: the tree's work buffer is per block as the single block's (numerics.reduce), so each
            # level runs the same inner loops; with one row (column) a level's element would be one loop
            # per block alone but a strided run over the blocks batched: block by block
            out_view = d.region(sd, orow, ocol)
            if _lanes.LANES > 1 and (r if per_row else c) > 1 and batchable((av,), out_view):
                prep.batch = BatchSpec((numerics, r, c), run_many, (av, out_view))
            return prep
        return memoized(dispatch, [(0, d.valid), (1, a.valid)])  # (a tmp slot's valid shape is not read)
    return rule


def expand(numerics: Callable[..., None], per_row: bool, batch: bool = False) -> Callable:
    """``dst = src (op) broadcast(vec)`` over dst's valid region: ``vec`` holds one value per row
    (``[R, 1]``, its valid rows must cover dst's) or per column (``[1, C]``). ``batch``: as for
    :func:`elementwise`."""
    def run_many(preps: list, stack: Callable, defer: bool):
        av, vec, out_view = preps[0].batch.data
        ab, vb = stack(av), stack(vec)
        return batched(lambda out: numerics(out, ab, vb), stack(out_view), defer)

    def rule(op: TileOp, env: SimEnv) -> Callable:
        ts = tiles(op, env)
        d, a, v = ts[0], ts[1], ts[2]
        names = _names(op, 3)
        carry = carriable(d, a, v)

        def dispatch(sd: int, sa: int, sv: int) -> Prepared:
            r, c = d.valid[sd]
            require_valid(op, a, sa, r, c, names[1])
            vr, vc = v.valid[sv]
            if per_row and vr < r or not per_row and vc < c:
                raise fault(op, f"pl.{op.attrs.get('api', op.op)}: '{names[2]}' ({v.label}) has valid shape {vr} x "
                                f"{vc}; it needs one value per {'row' if per_row else 'column'} of the {r} x {c} region")
            vec = v.region(sv, r, 1) if per_row else v.region(sv, 1, c)
            av = a.region(sa, r, c)
            run = deferred(lambda out: numerics(out, av, vec), d.region(sd, r, c))
            vacc = v.access(sv, r, 1, False) if per_row else v.access(sv, 1, c, False)
            written = d.written(sd, r, c)
            if carry:
                written = (*written, map_carry(d, sd, r, c, ((a, sa, "same"), (v, sv, "row" if per_row else "col"))))
            prep = Prepared(r, c, c * d.item == d.row_bytes,
                            (a.access(sa, r, c, False), vacc, d.access(sd, r, c, True)), (), r * c * d.item, run,
                            (written,))
            # (bf16 is computed through an fp32 copy of the whole batched tile, whose broadcast operand
            # NumPy then iterates in another loop than one block's: block by block)
            if batch and _lanes.LANES > 1 and exact_width(c) and d.st.buffer.tile_type.dtype.name != "DT_BF16":
                out_view = d.region(sd, r, c)
                if batchable((av, vec), out_view):
                    prep.batch = BatchSpec((numerics,), run_many, (av, vec, out_view))
            return prep
        return memoized(dispatch, [(0, d.valid), (1, a.valid), (2, v.valid)])
    return rule
