"""Manual synchronisation for authors who take full control (``@pl.jit(auto_mutex=False)``)."""
from __future__ import annotations

from pypto_pro.language.enums import CrossCoreSyncMode, PipeType
from pypto_pro.language.intrinsic import intrinsic


@intrinsic("sync_src")
def sync_src(set_pipe: PipeType, wait_pipe: PipeType, event_id: int) -> None:
    """``set_flag(set_pipe, wait_pipe, event_id)``: sits in ``set_pipe``'s queue."""


@intrinsic("sync_dst")
def sync_dst(set_pipe: PipeType, wait_pipe: PipeType, event_id: int) -> None:
    """``wait_flag(set_pipe, wait_pipe, event_id)``: blocks ``wait_pipe`` until the flag is set."""


@intrinsic("mutex_lock")
def mutex_lock(pipe: PipeType, mutex_id: int) -> None:
    """Acquire buffer id ``mutex_id`` on ``pipe`` (a5 ``get_buf``)."""


@intrinsic("mutex_unlock")
def mutex_unlock(pipe: PipeType, mutex_id: int) -> None:
    """Release buffer id ``mutex_id`` on ``pipe`` (a5 ``rls_buf``)."""


@intrinsic("barrier")
def barrier(pipe: PipeType) -> None:
    """Wait until every instruction already issued to ``pipe`` has finished."""


@intrinsic("set_cross_core")
def set_cross_core(pipe: PipeType, event_id: int, sync_mode: CrossCoreSyncMode = CrossCoreSyncMode.INTRA_BLOCK) -> None:
    """Signal the block's other engine when ``pipe`` reaches this point: from the Cube program to
    every Vector core of the block, or from a Vector core to the Cube core."""


@intrinsic("wait_cross_core")
def wait_cross_core(pipe: PipeType, event_id: int,
                    sync_mode: CrossCoreSyncMode = CrossCoreSyncMode.INTRA_BLOCK) -> None:
    """Block ``pipe`` until the other engine signalled ``event_id`` (in the Cube program: until every
    Vector core of the block has)."""


@intrinsic("sync_all")
def sync_all() -> None:
    """Barrier across every core of every block of the launch (all blocks must be resident)."""


@intrinsic("set_mm_layout_transform")
def set_mm_layout_transform(*, enabled: bool) -> None:
    """Switch the fixpipe's L0C read-out direction for a K-split matmul (``True``: along N, column
    first; ``False``: back to the default, along M). The values stored are the same either way."""
