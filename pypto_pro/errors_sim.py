"""Faults the simulator reports: all are ``SimulationError`` (a ``PyptoError``)."""
from __future__ import annotations

from pypto_pro.errors import SimulationError


class RaceError(SimulationError):
    """Two accesses to overlapping bytes, one a write, with no happens-before path between them."""


class DeadlockError(SimulationError):
    """Instruction queues are non-empty and nothing can run."""


class SyncError(SimulationError):
    """A flag set again while pending, left unconsumed at kernel end, or a buffer id locked twice."""


class UninitializedReadError(SimulationError):
    """An op read on-chip bytes that nothing in this block had written."""


class OutOfBoundsError(SimulationError):
    """A global-memory access outside its tensor."""
