"""Dispatch once per distinct call: a memo of a rule's :class:`~kit.Prepared` records.

The same static instruction runs many times in a launch (once per loop iteration, per block),
almost always with the same tile slots and valid shapes. For the rules whose dispatch is a pure
function of

* its run-time arguments (tile slots, on-chip offsets, numeric scalars), and
* the valid shapes of its tile operands at the slots the arguments name,

the :class:`~kit.Prepared` it returns can be built once and handed out again: its numerics
(``run``) read and write the same views each time, its accesses and commits are the same tuples,
and nothing mutates a ``Prepared`` after dispatch (only scalar reads set ``result``: those rules are
never memoized). A dispatch that raises a fault stores nothing, so the same call raises again.

Keys are exact: numeric scalars are told apart by type and bytes (``-0.0`` from ``0.0``, ``True``
from ``1`` and ``1.0``, NaN payloads: ``batch_replay.scalar_key``); the valid shapes are copied into
the key (they are mutable lists). The memo of a call site holds at most :data:`CAP` entries (a
scalar that changes every call would otherwise grow it without bound; past the cap calls dispatch
as before), and a call site that, after :data:`TRIAL` calls, hits less than one in 8 (a load whose
window moves with the block and the iteration, as in an elementwise kernel) stops keying altogether;
the memo is emptied when ``batch_replay.LANES`` changes (``Prepared.batch`` depends on it).
Rules are built per compiled program, so a recompiled kernel (other constexprs, shapes) starts with
empty memos; a rule whose records view the launch's global tensors (a load) registers its memo with
the program's ``GMBinding``, which empties it when a launch binds its tensors and when it releases
them (so a compiled kernel keeps no tensor of its last launch alive). ``ENABLED = False`` (or ``PYPTO_PRO_SIM_PREP_MEMO=0``) dispatches every call afresh.
"""
from __future__ import annotations

from typing import Callable, Sequence

from pypto_pro import env_flags
from pypto_pro.backends.sim import batch_replay as _lanes
from pypto_pro.backends.sim.batch_replay import scalar_key

ENABLED = env_flags.flag("PYPTO_PRO_SIM_PREP_MEMO", True)
CAP = 4096  # entries per call site


TRIAL = 256  # calls after which a call site that hits less than one call in 8 stops keying its calls


def memoized(dispatch: Callable, operands: Sequence[tuple[int, list]], scalars_from: int | None = None,
             cap: int | None = None, state: Callable[[], object] | None = None, gm=None,
             keep: Callable[[], bool] | None = None) -> Callable:
    """``dispatch`` with its Prepared records memoized (see the module docstring).

    ``operands``: ``(argument position, valid-shape list)`` of each tile operand whose valid shape
    the dispatch reads (``TileAccess.valid``: ``valid[slot]`` is ``[rows, cols]``); ``scalars_from``:
    the position where numeric scalars start (keyed by type and bytes), None when there are none
    (the other arguments, slots and offsets, are compared by value and type). ``state()``: any
    other state the dispatch reads (a hashable value, part of the key: a tensor's ``pl.set_stride``
    descriptor). ``gm``: the program's ``kit.GMBinding`` when the records hold views of the launch's
    global tensors: the memo is emptied whenever the binding binds or releases them. ``keep()``,
    asked right after a dispatch: whether its record may be kept (False for one that read memory
    at dispatch, as a strided GM load does)."""
    cache: dict = {}
    if gm is not None:
        gm.memos.append(cache)
    limit = CAP if cap is None else cap
    seen_lanes = [_lanes.LANES]
    ops = tuple(operands)
    if len(ops) == 1:
        (p0, v0), = ops

        def shapes(a: tuple) -> tuple:
            return tuple(v0[a[p0]])
    elif len(ops) == 2:
        (p0, v0), (p1, v1) = ops

        def shapes(a: tuple) -> tuple:
            return (*v0[a[p0]], *v1[a[p1]])
    elif len(ops) == 3:
        (p0, v0), (p1, v1), (p2, v2) = ops

        def shapes(a: tuple) -> tuple:
            return (*v0[a[p0]], *v1[a[p1]], *v2[a[p2]])
    else:
        def shapes(a: tuple) -> tuple:
            return tuple(x for p, v in ops for x in v[a[p]])

    counts = [0, 0, False]  # hits, misses, whether this call site stopped keying (it rarely hits)

    def call(*args):
        if not ENABLED or counts[2]:
            return dispatch(*args)
        if seen_lanes[0] != _lanes.LANES:
            cache.clear()
            seen_lanes[0] = _lanes.LANES
        if scalars_from is None or len(args) <= scalars_from:
            key = (args, tuple(map(type, args)), shapes(args))
        else:
            head = args[:scalars_from]
            key = (head, tuple(map(type, head)), shapes(args), scalar_key(args[scalars_from:]))
        if state is not None:
            key = (key, state())
        prep = cache.get(key)
        if prep is not None:
            counts[0] += 1
            return prep
        counts[1] += 1
        if counts[1] + counts[0] >= TRIAL and counts[0] * 8 < counts[1] + counts[0]:  # (each block its own windows)
            counts[2] = True
            cache.clear()
            return dispatch(*args)
        prep = dispatch(*args)
        if len(cache) < limit and (keep is None or keep()):
            cache[key] = prep
        return prep
    call.memo, call.counts = cache, counts  # type: ignore[attr-defined]  (for tests and profiles)
    return call
