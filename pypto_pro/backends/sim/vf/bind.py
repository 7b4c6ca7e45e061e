"""Bound group steps of a batched VF plan (``batch.py``): a group kernel that can bind its operand and
destination rows once (``kernel.bind(ins, outs)``, ``ops/vf/lanes.py``) runs that bound call instead of
building its operand list at every run.

Operands that are consecutive arena rows are views bound as they are; operands gathered from scattered
rows (the accumulator chains read one loaded row per chain) are gathered at each run into a buffer of
the group's own, with ``take`` over the same rows in the same order: the same contiguous bytes the
unbound step's ``arena[rows]`` builds. ``batch.BIND = False`` turns this off (the tests compare).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from pypto_pro.backends.sim.vf.regfile import VL


def _operands(views: list) -> tuple[list, list]:
    """The operand arrays of a group step (``views``: (arena, rows) per operand): a row slice as a view
    of its arena, scattered rows as a buffer of the step's own, filled by :func:`_gather` at each run."""
    ins, takes = [], []
    for arena, rows in views:
        if isinstance(rows, slice):
            ins.append(arena[rows])
        else:
            buf = np.empty((len(rows), VL), arena.dtype)
            takes.append((arena, rows, buf))
            ins.append(buf)
    return ins, takes


def _gather(takes: list) -> None:
    for arena, rows, buf in takes:
        arena.take(rows, axis=0, out=buf, mode="clip")  # (in-range rows: clip is not buffered)


def bound_step(kernel, views: list, outs: list) -> Callable | None:
    """The step of a group without partial writes (``views``: (arena, rows) per operand), or None."""
    bind = getattr(kernel, "bind", None)
    if bind is None:
        return None
    ins, takes = _operands(views)
    direct = bind(ins, outs)
    if direct is None or not takes:
        return direct

    def step(rf, mem, bases):
        _gather(takes)
        direct(rf, mem, bases)
    return step


def gathered_step(kernel, views: list, outs: list) -> Callable:
    """The step of a group without partial writes whose kernel has no bound form: operands gathered from
    scattered rows go into buffers of the group's own (``take`` over the same rows in the same order: the
    bytes ``arena[rows]`` copies), the others are views bound once; the kernel gets the same lists at
    every run."""
    ins, takes = _operands(views)

    def step(rf, mem, bases):
        _gather(takes)
        kernel(ins, outs, mem)
    return step
