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


@intrinsic("set_cross_core")
def set_cross_core(pipe: PipeType, event_id: int) -> None:
    """Signal the block's other engine when ``pipe`` reaches this point: from the Cube program to
    every Vector core of the block, or from a Vector core to the Cube core."""


@intrinsic("wait_cross_core")
def wait_cross_core(pipe: PipeType, event_id: int) -> None:
    """Block ``pipe`` until the other engine signalled ``event_id`` (in the Cube program: until every
    Vector core of the block has)."""


@intrinsic("sync_all")
def sync_all() -> None:
    """Barrier across every core of every block of the launch (all blocks must be resident)."""


@intrinsic("bar_m")
def bar_m() -> None:
    """``pipe_barrier(PIPE_M)``: later matrix instructions wait for the earlier ones (Cube section)."""


@intrinsic("bar_mte1")
def bar_mte1() -> None:
    """``pipe_barrier(PIPE_MTE1)`` (Cube section)."""


@intrinsic("bar_mte2")
def bar_mte2() -> None:
    """``pipe_barrier(PIPE_MTE2)``: later GM loads wait for the earlier ones."""


@intrinsic("bar_mte3")
def bar_mte3() -> None:
    """``pipe_barrier(PIPE_MTE3)``: later stores wait for the earlier ones."""


@intrinsic("bar_fix")
def bar_fix() -> None:
    """``pipe_barrier(PIPE_FIX)`` (Cube section)."""
