"""Automatic Cube <-> Vector pipelining: ``@pl.jit(pipeline=pl.pipeline.PipelineConfig(preload=2))``.

Stage functions (``@pl.pipeline.stage``) hold one engine's work (their body has a
``pl.section_cube()`` or ``pl.section_vector()``); a kernel loop that calls stages in order is
rewritten so that each consumer stage runs ``preload`` iterations behind its producer. Tile
groups shared by a writer stage on one engine and a reader stage on the other declare
``fwd_ids`` (data ready) and ``bwd_ids`` (buffer free), one cross-core event id per slot.

The rewritten kernel is written to the build directory as ``pipeline_generated.py``; it uses the
four sync intrinsics below, which authors may also call by hand.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, TypeVar

from pypto_pro.language.intrinsic import intrinsic

F = TypeVar("F", bound=Callable)


@dataclass(frozen=True)
class PipelineConfig:
    """``preload``: iterations a producer stage runs ahead of its consumer (0 = serial order; the
    real default is 2: ``runtime/pipeline/config.py``). ``sync_only``: keep the serial loop and only
    insert the cross-core syncs."""

    preload: int = 2
    sync_only: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.preload, int) or isinstance(self.preload, bool) or self.preload < 0:
            raise ValueError(f"PipelineConfig.preload must be an int >= 0, got {self.preload!r}")
        if not isinstance(self.sync_only, bool):
            raise ValueError("PipelineConfig.sync_only must be True or False")


def stage(fn: F | None = None, *, produces: tuple[str, ...] | list[str] = (),
          consumes: tuple[str, ...] | list[str] = ()) -> Any:
    """Mark a pipeline stage: inlined into the kernel like ``@pl.inline``, scheduled by the
    pipeline transform. ``produces`` / ``consumes`` name the stage's parameters bound to shared
    tile groups it writes / reads (``@pl.pipeline.stage(produces=["s"])``)."""
    def mark(f: F) -> F:
        f.__pypto_inline__ = True  # type: ignore[attr-defined]
        f.pipeline_stage = True  # type: ignore[attr-defined]  (the real mark, read by is_pipeline_stage)
        f.__pypto_stage__ = (tuple(produces), tuple(consumes))  # type: ignore[attr-defined]
        return f

    return mark(fn) if fn is not None else mark


def is_pipeline_stage(fn: Any) -> bool:
    """Whether ``fn`` was marked by ``@pl.pipeline.stage`` (as the real ``is_pipeline_stage``)."""
    return callable(fn) and bool(getattr(fn, "pipeline_stage", False))


@intrinsic("pipeline.wait_free")
def wait_free(group: Any, slot: Any = None, min_depth: int = 1) -> None:
    """Writer side: wait until the reader released the slot ``group.next()`` returns next (or ``slot``)."""


@intrinsic("pipeline.signal_ready")
def signal_ready(group: Any, slot: Any = None) -> None:
    """Writer side: the current slot (or ``slot``) holds data for the reader."""


@intrinsic("pipeline.wait_ready")
def wait_ready(group: Any, slot: Any = None, min_depth: int = 1) -> None:
    """Reader side: wait until the slot ``group.next()`` returns next (or ``slot``) holds data."""


@intrinsic("pipeline.signal_free")
def signal_free(group: Any, slot: Any = None) -> None:
    """Reader side: the current slot (or ``slot``) may be overwritten."""
