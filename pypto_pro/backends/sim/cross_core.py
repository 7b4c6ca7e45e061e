"""Who signals whom: the keys of cross-core flags for each ``pl.CrossCoreSyncMode``, and the cores
taking part in a ``pl.system.sync_all`` of each ``pl.SyncCoreType``.

Cores are numbered per launch when its blocks run together (``core_base`` = first core of the
block), else per block: in a Cube+Vector kernel core ``base`` is the block's AIC and
``base + 1 .. base + aivs`` its AIVs; in a Vector-only kernel every core is an AIV.

A flag key is ``(receiving core, id)``; a wait names ``(key, need)`` with ``need`` the number of
distinct sending cores it waits for, or ``("from", core)`` for one given sender.

* INTRA_BLOCK (mode 2): a Cube set reaches both AIVs; an AIV set reaches the Cube, whose wait
  needs both AIVs (PTO-ISA set-cross-core.md, "mode2 semantics"; a5: ``set_intra_block`` twice,
  ids ``e`` and ``e + 16``, in the real codegen ``MakeCrossCoreSetCodegenCCE``).
* UNICAST_BLOCK (mode 3, a5): one AIV at a time: the Cube's set / wait with id ``e`` < 16 is
  AIV0's, ``e + 16`` AIV1's (the real codegen issues one ``set_intra_block`` / ``wait_intra_block``).
* INTER_SUBBLOCK (mode 1): the AIVs of one block meet (each set reaches every AIV of the block,
  each wait needs all of them), as PTO-ISA's SYNCALL uses the FFTS group modes.
* INTER_BLOCK (mode 0): every core of this kind in the launch meets (SYNCALL hard mode's
  ``ffts_cross_core_sync(mode 0)`` + ``wait_flag_dev``); needs every block resident.
"""
from __future__ import annotations

from typing import Callable

from pypto_pro.errors import SimulationError
from pypto_pro.language.enums import CrossCoreSyncMode, SyncCoreType

XSUB = 1 << 16  # id offsets keeping the group modes' flags apart from the intra-block ones
XBLK = 1 << 17
UNICAST_AIV1 = 16  # a5: the Cube addresses AIV1's copy of id e as e + 16


def xid_str(xid: int) -> str:
    """A cross-core flag id as the user wrote it."""
    if xid >= XBLK:
        return f"{xid - XBLK} (INTER_BLOCK)"
    if xid >= XSUB:
        return f"{xid - XSUB} (INTER_SUBBLOCK)"
    return str(xid)


def _kinds(aivs: int, total: int) -> tuple[list[int], list[int]]:
    """(AIC cores, AIV cores) of a launch of ``total`` cores."""
    per_block = 1 + aivs if aivs else 1
    aic = [c for c in range(total) if aivs and c % per_block == 0]
    return aic, [c for c in range(total) if not (aivs and c % per_block == 0)]


def cross_core_key(kind: str, mode: CrossCoreSyncMode | None, core: int, base: int, aivs: int,
                   total: int) -> Callable[[int], object]:
    """The flag keys a ``set_cross_core`` (``kind`` "xset") or ``wait_cross_core`` ("xwait") on
    ``core`` stands for, as a function of its run-time id."""
    cube = aivs > 0 and core == base
    set_ = kind == "xset"
    if mode is CrossCoreSyncMode.INTER_SUBBLOCK:
        if set_:
            return lambda ev: tuple((base + k, XSUB + ev) for k in range(1, aivs + 1))
        return lambda ev: ((core, XSUB + ev), aivs)
    if mode is CrossCoreSyncMode.INTER_BLOCK:
        if not total:
            raise SimulationError("INTER_BLOCK cross-core flags need the launch's blocks simulated together")
        aic, aiv = _kinds(aivs, total)
        same = aic if cube else aiv
        if set_:
            return lambda ev: tuple((c, XBLK + ev) for c in same)
        return lambda ev: ((core, XBLK + ev), len(same))
    if mode is CrossCoreSyncMode.UNICAST_BLOCK and cube:
        if set_:
            return lambda ev: ((base + 1, ev),) if ev < UNICAST_AIV1 else ((base + 2, ev - UNICAST_AIV1),)
        return lambda ev: (((core, ev), ("from", base + 1)) if ev < UNICAST_AIV1
                           else ((core, ev - UNICAST_AIV1), ("from", base + 2)))
    # INTRA_BLOCK (and an AIV's side of UNICAST_BLOCK, which is the same single flag)
    if set_:
        if cube:
            return lambda ev: tuple((base + k, ev) for k in range(1, aivs + 1))
        return lambda ev: ((base, ev),)
    need = aivs if cube else 1
    return lambda ev: ((core, ev), need)


def participants(core_type: SyncCoreType | None, aivs: int, total: int, used: int) -> list[int]:
    """Cores meeting at a sync_all of ``core_type`` in a launch of ``total`` cores; ``used`` > 0 (a
    soft-mode used-core count) keeps the first ``used`` (blocks, for MIX)."""
    aic, aiv = _kinds(aivs, total)
    if core_type is SyncCoreType.AIV_ONLY:
        return aiv[:used] if used > 0 else aiv
    if core_type is SyncCoreType.AIC_ONLY:
        return aic[:used] if used > 0 else aic
    per_block = 1 + aivs if aivs else 1
    everyone = list(range(total))
    return everyone[:used * per_block] if used > 0 else everyone
