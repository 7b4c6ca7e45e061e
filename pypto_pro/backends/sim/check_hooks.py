"""The memory checkers as the scheduler and schedule replay call them for each started instruction:
the on-chip checker with the instruction's accesses, the global-memory checker with its GM records."""
from __future__ import annotations

from typing import Callable

from pypto_pro.backends.sim.checks import OnChipChecker
from pypto_pro.backends.sim.gm_checker import GlobalChecker
from pypto_pro.backends.sim.inst import Inst


def check_hook(onchip: OnChipChecker | None, gmcheck: GlobalChecker | None, objs: list[int],
               block_of: Callable[[Inst], int]) -> Callable[[Inst], None] | None:
    """What the scheduler calls as each instruction starts: the memory checkers."""
    gm = gm_check(gmcheck, objs, block_of)
    if onchip is None or gm is None:
        return None
    onchip_access = onchip.access

    def hook(inst: Inst) -> None:
        for acc in inst.accesses:
            onchip_access(inst, acc)
        gm(inst, inst.gm)
    return hook


def gm_check(gmcheck: GlobalChecker | None, objs: list[int],
             block_of: Callable[[Inst], int]) -> Callable[[Inst, tuple], None] | None:
    """The global-memory checker: ``gm`` are the accesses of ``inst`` (for a replayed block,
    ``inst`` is the recorded block's instruction: same statement, pipe and clock)."""
    if gmcheck is None:
        return None
    gm_rects, gm_rows, gm_one = gmcheck.access_rects, gmcheck.access_rows, gmcheck.access_one

    def check(inst: Inst, gm: tuple) -> None:
        # one strided access through a view (gm_views.records: a tuple subclass; a plain tuple has none)
        geom = getattr(gm, "geom", None) if gm.__class__ is not tuple else None
        if geom is not None:
            pidx, pname, _, write = gm[0]
            gm_rows(inst, block_of(inst), objs[pidx], pname, geom, write, pidx)
            return
        if len(gm) == 1:  # the common case: one record (what the loop below does with it)
            pidx, pname, rect, write = gm[0]
            gm_one(inst, block_of(inst), objs[pidx], pname, rect, write, pidx)
            return
        # a run of records of one tensor and direction (a view's rows: gm_views.row_rects) is one call
        i, n = 0, len(gm)
        while i < n:
            pidx, pname, rect, write = gm[i]
            j = i + 1
            while j < n and gm[j][0] == pidx and gm[j][3] is write and gm[j][1] == pname:
                j += 1
            gm_rects(inst, block_of(inst), objs[pidx], pname, (rect,) if j == i + 1 else
                     [r[2] for r in gm[i:j]], write, pidx)
            i = j
    return check
