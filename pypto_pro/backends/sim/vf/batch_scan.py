"""Recurrences in a batched VF plan: consecutive groups of one numerics, each reading the one before, as one step.

A loop-carried accumulator (``acc = vf.mul_add_dst(x[h], w[h], mask)`` over the heads of the quantised
lightning indexer, a ``max`` / ``add`` chain) batches badly: every iteration's node depends on the
previous one's, so each level of ``batch.py``'s plan holds one small group and the plan pays a step
(gathers of the operand rows, views, the kernel's Python) per iteration. Such a run of groups is a
*chain*: ``L`` consecutive ``_Group`` steps with the same numerics and scalars (``Spec.key``, shared
scalars), no previous-value operands, one output of ``N`` rows, where step ``k`` reads step ``k - 1``'s
output rows, in order, as one operand (the *carried* operand) and reads nothing else any step of the
chain writes. Then every other operand of every level is known when the chain starts: they are
gathered once as ``[L, m, 256]`` stacks, and the spec's ``scan`` form computes the levels in order,
writing each level's rows of the arena exactly as its own step would (later steps and the final
write-back read them).

When no step outside the chain and no final write-back reads a level's rows but the last one's (a
max / sum accumulator read only after its loop: the FA softmax bodies), the chain is *dead inside*
and the scan form may compute only the last level (``lanes.scan_form``: one ``ufunc.reduce`` over
the stacked levels, in the chain's own order).

A spec offers a scan form through ``spec.make.scan(bases, scalars, ub_size, carried)`` returning
``scan(stacks, outs)`` (or None: no scan for that operand): ``carried`` the index of the carried
operand, ``stacks[j]`` the ``[L, m, 256]`` stack of operand ``j`` (``None`` for the carried one),
``outs[0]`` the first level's carried rows followed by each level's output rows (``L + 1`` views of
``[N, 256]``; ``outs[1:]`` are written). It must
compute, level by level, the bytes the group's kernel computes (``lanes.py`` runs the same per-level
numerics; ``tests/backends/sim/vf/test_vf_batch_scan.py`` compares scan on and off).

``SCAN = False`` keeps every group a step of its own.
"""
from __future__ import annotations

import numpy as np

from pypto_pro.ir.vf import VREG

SCAN = True
BOUND = True  # a scan with a bound form (``scan.bind``, ops/vf/lanes.py) runs it on buffers and views made once
MIN_LEVELS = 3  # shorter runs are cheaper as plain steps
WINDOW = 16  # a chain's next level is looked for at most this many steps after its last one


def _rows_of(r) -> list[int]:
    if isinstance(r, slice):
        return list(range(r.start, r.stop))
    return [int(x) for x in r]


def _link(prev, step) -> int | None:
    """The operand of ``step`` that reads ``prev``'s output rows in order (the chain's carried operand),
    or None when ``step`` does not continue a chain started by ``prev``."""
    if step.scan is None or prev.scan is None or step.scan[0] != prev.scan[0] or step.olds:
        return None
    if len(step.outs) != 1 or len(prev.outs) != 1:
        return None
    (kind, out), (pkind, pout) = step.outs[0], prev.outs[0]
    if kind != pkind or out.stop - out.start != pout.stop - pout.start:
        return None
    hits = [j for j, (k, r) in enumerate(step.ins) if k == pkind and isinstance(r, slice) and r == pout]
    if len(hits) != 1:
        return None
    return hits[0]


def _written(step) -> set:
    """The arena rows (kind, row) a step may write (a one-at-a-time step: every row it binds)."""
    if hasattr(step, "kernel"):  # a group
        return {(k, r) for k, sl in step.outs for r in range(sl.start, sl.stop)}
    if hasattr(step, "reload"):  # a barrier: its results are read back into the arena
        return {(k, r) for k, _, r in step.reload}
    return {(k, r) for k, _, r in getattr(step, "regs", ())}


def _read(step) -> set | None:
    """The arena rows (kind, row) a step may read, or None when not known (nothing is then dead)."""
    if hasattr(step, "kernel"):  # a group: its operands and the previous values of partial writes
        return {(k, x) for k, r in list(step.ins) + list(step.olds or ()) for x in _rows_of(r)}
    if hasattr(step, "reload"):  # a barrier: the versions it writes back to the register file
        return {(k, r) for k, _, r in step.flush}
    if hasattr(step, "regs"):  # a one-at-a-time step: every row it binds, and the rows its outputs start from
        return {(k, r) for k, _, r in step.regs} | {(k, old) for k, _, old in step.olds}
    if isinstance(step, Scan):
        rows = {(step.first[0], x) for x in _rows_of(step.first[1])}
        for k, ix in zip(step.kinds, step.index):
            if ix is not None:
                rows.update((k, int(x)) for x in ix.ravel())
        return rows
    return None


def _mark_dead(steps: list, final: list) -> None:
    """Set ``dead`` on each Scan of ``steps`` whose levels but the last are read by no other step and no
    final write-back (``final``: (kind, uid, row))."""
    if not any(isinstance(s, Scan) for s in steps):
        return
    readers: dict = {}  # (kind, row) -> the steps that read it (-1: the final write-back)
    for i, s in enumerate(steps):
        rows = _read(s)
        if rows is None:
            return
        for r in rows:
            readers.setdefault(r, set()).add(i)
    for k, _, r in final:
        readers.setdefault((k, r), set()).add(-1)
    for i, s in enumerate(steps):
        if isinstance(s, Scan):
            s.dead = all(readers.get((k, x), set()) <= {i} for k, r in s.outs[:-1] for x in _rows_of(r))


def fuse(steps: list, bases, ub_size: int, final: list = ()) -> list:
    """``steps`` with every chain of at least ``MIN_LEVELS`` groups replaced by one ``Scan`` step at the
    place of its first level. A later level may sit after other steps (the groups of other numerics at
    the same levels); it joins only when none of the steps from the chain's start to it writes an
    operand row it reads other than the carried one, so every level can run at the start (the steps in
    between that read a level's rows find them already written: every row is written once)."""
    if not SCAN:
        return steps
    n = len(steps)
    written = [_written(s) for s in steps]
    used: set[int] = set()
    out: list = []
    for i, s in enumerate(steps):
        if i in used:
            continue
        if getattr(s, "scan", None) is None or s.olds or len(s.outs) != 1:
            out.append(s)
            continue
        chain, carried, between = [s], None, set(written[i])
        members, last = [], i
        for p in range(i + 1, n):
            if p - last > WINDOW:
                break
            t = steps[p]
            if p not in used and getattr(t, "scan", None) is not None:
                c = _link(chain[-1], t)
                if c is not None and (carried is None or c == carried) and _fits(t, s, c, between):
                    chain.append(t)
                    carried, last = c, p
                    members.append(p)
            between |= written[p]
        scan = s.scan[1](bases, s.scan[2], ub_size, carried) if len(chain) >= MIN_LEVELS else None
        if scan is None:
            out.append(s)
            continue
        used.update(members)
        out.append(Scan(scan, chain, carried))
    _mark_dead(out, list(final))
    return out


def _fits(t, head, carried: int, between: set) -> bool:
    """Whether ``t``'s operands other than the carried one are known at the chain's start and have the
    lengths of the head's."""
    for q, ((k, r), (k0, r0)) in enumerate(zip(t.ins, head.ins)):
        if q == carried:
            continue
        rows = _rows_of(r)
        if k != k0 or len(rows) != len(_rows_of(r0)) or any((k, x) in between for x in rows):
            return False
    return True


class Scan:
    """One step running a chain of ``L`` groups (see module docstring)."""

    __slots__ = ("scan", "kinds", "index", "first", "outs", "carried", "olds", "dead")

    def __init__(self, scan, chain: list, carried: int) -> None:
        self.scan, self.carried, self.olds, self.dead = scan, carried, None, False
        head = chain[0]
        self.kinds = [k for k, _ in head.ins]
        # per non-carried operand: the [L, m] arena rows of every level
        self.index = [None if q == carried else np.asarray([_rows_of(g.ins[q][1]) for g in chain], np.intp)
                      for q in range(len(head.ins))]
        self.first = head.ins[carried]  # the carried operand of the first level: (kind, rows)
        self.outs = [g.outs[0] for g in chain]

    def bind(self, av: np.ndarray, am: np.ndarray):
        """The step function on these arenas (``batch.Plan.run`` binds every step once per arena)."""
        scan = self.scan

        def arr(kind):
            return av if kind == VREG else am
        index = [(arr(k), ix) for k, ix in zip(self.kinds, self.index)]
        fk, fr = self.first
        views = [arr(fk)[fr]] + [arr(k)[r] for k, r in self.outs]  # slices: views of the arena

        if BOUND and getattr(scan, "bind", None) is not None:
            return self._bound(scan.bind, index, arr(fk), fr, views, self.dead)

        def step(rf, mem, bases):
            stacks = [None if ix is None else a[ix] for a, ix in index]
            if not isinstance(fr, slice):  # a gathered first operand is a copy: take it now
                views[0] = arr(fk)[fr]
            scan(stacks, views)
        return step

    @staticmethod
    def _bound(bind, index: list, first: np.ndarray, fr, views: list, dead: bool):
        """The step through the scan's bound form: every operand is gathered into a buffer of the step's
        own (``take`` over the same rows in the same order: the bytes ``arena[rows]`` copies) and the
        levels run on views made once."""
        takes = []
        stacks = []
        for a, ix in index:
            if ix is None:
                stacks.append(None)
                continue
            buf = np.empty((*ix.shape, a.shape[1]), a.dtype)
            takes.append((a, ix, buf))
            stacks.append(buf)
        if not isinstance(fr, slice):  # a gathered first operand: taken at each run, as the plain step does
            views[0] = np.empty((len(fr), first.shape[1]), first.dtype)
            takes.append((first, np.asarray(fr, np.intp), views[0]))
        run = bind(stacks, views, dead)

        def step(rf, mem, bases):
            for a, ix, buf in takes:
                a.take(ix, axis=0, out=buf, mode="clip")  # (in-range rows: clip is not buffered)
            run()
        return step
