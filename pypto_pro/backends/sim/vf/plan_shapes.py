"""Plan shapes of a VF call site kept across tile placements: one trace, many slot addresses, one set of levels.

``batch.build`` spends most of its time on the *shape* of a plan (``batch._shape``): register versions,
levels (register dependencies and the UB byte order of every access), groups. Of the analyses of a
call site, many see the same trace with the tiles at other addresses (double buffers, the slots of a
multi-buffer tile): in the FA kernels of the system tests 80 builds held 14 traces. The levels depend on
the addresses only through which accesses share bytes, and that is the same for two placements when

* no access is clipped by the ends of UB (every tile's *envelope*, the byte range its accesses reach
  relative to its base, lies inside UB at both), and
* any two tiles whose envelopes meet at one placement meet at the other with the same displacement
  ``base_u - base_t`` (and tiles whose envelopes are apart stay apart): the accesses of tiles that
  interact are the same bytes translated, and the others touch no common byte.

So a shape is kept per (trace, plan forms) and *signature* (the displacements of the meeting pairs),
and ``batch._program`` makes the steps from it for the actual bases (the group kernels hold absolute
addresses; a kernel a placement does not allow, ``Spec.make`` -> None, runs node by node there).
Alignment is checked per placement by ``build`` before. ``REUSE = False`` builds every shape afresh
(``tests/backends/sim/vf/test_vf_plan_shapes.py`` compares the plans and the bytes).
"""
from __future__ import annotations

from typing import Callable

REUSE = True
MAX_TRACES = 256  # traces kept per call site
MAX_SIGNATURES = 16  # placements kept per trace
_MISSING = object()


def shape_of(cache: dict | None, trace: list, plan: list, static: list, foots: list, bases: list,
             slot_bytes: list, ub_size: int, make: Callable, tkey: tuple | None = None):
    """``make(trace, plan, static, foots, bases, slot_bytes, ub_size)``, or the shape it gave for another
    placement with the same signature. ``tkey``: the trace keyed as ``call._scalar_key`` keys scalars."""
    args = (trace, plan, static, foots, bases, slot_bytes, ub_size)
    if cache is None or not REUSE:
        return make(*args)
    if tkey is None:
        from pypto_pro.backends.sim.vf.call import _scalar_key
        tkey = tuple((k, tuple(_scalar_key(x) for x in sc)) for k, sc in trace)
    key = (tkey, tuple(id(f) for f, _ in plan))
    entry = cache.get(key)
    if entry is None:
        if len(cache) >= MAX_TRACES:
            return make(*args)
        entry = cache[key] = (envelopes(trace, static, foots, slot_bytes), {}, [f for f, _ in plan])
    sig = signature(entry[0], bases, ub_size)
    if sig is None:
        return make(*args)
    got = entry[1].get(sig, _MISSING)
    if got is _MISSING:
        got = make(*args)
        if len(entry[1]) < MAX_SIGNATURES:
            entry[1][sig] = got
    return got


def envelopes(trace: list, static: list, foots: list, slot_bytes: list) -> dict[int, tuple[int, int]]:
    """tile -> (lo, hi): the bytes, relative to the tile's base, that the trace's ordered accesses reach
    (those ``batch._shape`` orders: not nops, not barriers; empty ranges left out)."""
    env: dict[int, list[int]] = {}
    for k, sc in trace:
        fp = foots[k]
        if fp is None or static[k].cls in ("nop", "barrier"):
            continue
        for tile, off, n, _ in fp(*sc):
            a, b = off, off + (n if n is not None else max(0, slot_bytes[tile] - off))
            if b <= a:
                continue
            e = env.get(tile)
            if e is None:
                env[tile] = [a, b]
            else:
                e[0], e[1] = min(e[0], a), max(e[1], b)
    return {t: (lo, hi) for t, (lo, hi) in env.items()}


def signature(env: dict[int, tuple[int, int]], bases: list, ub_size: int) -> tuple | None:
    """The displacements of the tiles whose envelopes meet at ``bases``, or None when an envelope
    leaves UB (an access would be clipped: no shape is shared)."""
    placed = []
    for t in sorted(env):
        lo, hi = env[t]
        a, b = bases[t] + lo, bases[t] + hi
        if a < 0 or b > ub_size:
            return None
        placed.append((t, a, b))
    meets = []
    for i, (t, a, b) in enumerate(placed):
        for u, c, d in placed[i + 1:]:
            if a < d and c < b:
                meets.append((t, u, bases[u] - bases[t]))
    return tuple(meets)
