"""Manual synchronisation for authors who take full control (``@pl.jit(auto_mutex=False)``)."""
from __future__ import annotations

from pypto_pro.language.enums import PipeType
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
