"""``pl.system``: synchronisation, barriers and cache control, as the real PyPTO Pro declares them
(``python/pypto_pro/ir/op/system_ops.py``; pages ``operation/synchronization/*.md`` and
``operation/cache_control/dcci.md``).

The real functions take keywords only (``sync_src(*, set_pipe, wait_pipe, event_id)``: its parser
registers them with ``parse_args=False``, system_ops.py ``register_table``), and so do ours: a
positional argument is a CompileError. ``barrier(pipe)`` is ours: one call for any pipe
(``barrier(pl.PipeType.V)`` is the a2a3 ``pipe_barrier(PIPE_V)``, ``barrier(pl.PipeType.ALL)`` is
``bar_all()``).
"""
from __future__ import annotations

from typing import Any

from pypto_pro.language.enums import CacheLine, CrossCoreSyncMode, DcciDst, PipeType, SyncAllMode, SyncCoreType
from pypto_pro.language.intrinsic import intrinsic


@intrinsic("sync_src")
def sync_src(*, set_pipe: PipeType, wait_pipe: PipeType, event_id: int) -> None:
    """``set_flag(set_pipe, wait_pipe, event_id)``: sits in ``set_pipe``'s queue and fires once every
    earlier ``set_pipe`` instruction has finished."""


@intrinsic("sync_dst")
def sync_dst(*, set_pipe: PipeType, wait_pipe: PipeType, event_id: int) -> None:
    """``wait_flag(set_pipe, wait_pipe, event_id)``: blocks ``wait_pipe`` until the flag is set."""


@intrinsic("mutex_lock")
def mutex_lock(*, pipe: PipeType, mutex_id: int, mode: int = 0, max_mutex_id: int = 2,
               mutex_ids: Any = None) -> None:
    """Acquire buffer id ``mutex_id`` (0-31) on ``pipe`` (a5 ``get_buf``). A run-time ``mutex_id``
    is compared against ``mutex_ids`` (default ``range(max_mutex_id)``); a value outside them
    acquires nothing, as the real if-chain does."""


@intrinsic("mutex_unlock")
def mutex_unlock(*, pipe: PipeType, mutex_id: int, mode: int = 0, max_mutex_id: int = 2,
                 mutex_ids: Any = None) -> None:
    """Release buffer id ``mutex_id`` on ``pipe`` (a5 ``rls_buf``) once ``pipe`` has drained."""


@intrinsic("barrier")
def barrier(pipe: PipeType) -> None:
    """Ours: wait until every instruction already issued to ``pipe`` has finished (``pipe_barrier``)."""


@intrinsic("bar_m")
def bar_m() -> None:
    """``pipe_barrier(PIPE_M)`` (Cube section)."""


@intrinsic("bar_mte1")
def bar_mte1() -> None:
    """``pipe_barrier(PIPE_MTE1)`` (Cube section)."""


@intrinsic("bar_mte2")
def bar_mte2() -> None:
    """``pipe_barrier(PIPE_MTE2)``: later GM -> on-chip copies start after the earlier ones land."""


@intrinsic("bar_mte3")
def bar_mte3() -> None:
    """``pipe_barrier(PIPE_MTE3)``: later UB -> GM / L1 copies start after the earlier ones land."""


@intrinsic("bar_fix")
def bar_fix() -> None:
    """``pipe_barrier(PIPE_FIX)`` (Cube section)."""


@intrinsic("bar_all")
def bar_all() -> None:
    """``pipe_barrier(PIPE_ALL)``: every pipe of this core drains before any continues."""


@intrinsic("set_cross_core")
def set_cross_core(*, pipe: PipeType, event_id: int,
                   sync_mode: CrossCoreSyncMode = CrossCoreSyncMode.INTRA_BLOCK) -> None:
    """Signal cross-core event ``event_id`` (0-15) when ``pipe`` reaches this point. INTRA_BLOCK:
    Cube -> both Vector cores of the block / a Vector core -> the Cube; UNICAST_BLOCK: one Vector
    core <-> the Cube; INTER_SUBBLOCK: one Vector core -> its sibling; INTER_BLOCK: every core of
    this kind in the launch."""


@intrinsic("wait_cross_core")
def wait_cross_core(*, pipe: PipeType, event_id: int,
                    sync_mode: CrossCoreSyncMode = CrossCoreSyncMode.INTRA_BLOCK) -> None:
    """Block ``pipe`` until the cross-core event ``event_id`` of ``sync_mode`` arrived (the mode must
    match the set's)."""


@intrinsic("sync_all")
def sync_all(workspaces: Any = None, *, core_type: SyncCoreType = SyncCoreType.MIX,
             mode: SyncAllMode = SyncAllMode.HARD) -> None:
    """Barrier across every core of ``core_type`` in the launch (all blocks must be resident).
    HARD: FFTS signals, no workspace; SOFT: GM polling with ``workspaces`` = [GM tensor, Vec tile
    and/or Mat tile, optional used-core count]."""


@intrinsic("dcci")
def dcci(target: Any, offset: Any = None, *, cache_line: CacheLine = CacheLine.ENTIRE_DATA_CACHE,
         dst: DcciDst = DcciDst.AUTO) -> None:
    """Clean and invalidate the scalar data cache for a GM tensor (or a Vec tile): write back what
    the scalar unit wrote there and drop stale lines, so other pipes and cores see the same bytes."""


@intrinsic("set_mm_layout_transform")
def set_mm_layout_transform(*, enabled: bool) -> None:
    """Switch the fixpipe's L0C read-out direction for a K-split matmul (``True``: along N, column
    first; ``False``: back to the default, along M). The values stored are the same either way."""
