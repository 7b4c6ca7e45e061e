"""pypto_pro: a Python DSL and compiler for Ascend-style AI-core kernels, with a CPU simulator."""
from __future__ import annotations

from pypto_pro.errors import CompileError, LaunchError, MemoryOverlapWarning, PyptoError, SimulationError
from pypto_pro.errors_sim import (DeadlockError, OutOfBoundsError, RaceError, SyncError,
                                  UninitializedReadError)

__version__ = "0.1.0"
__all__ = ["CompileError", "DeadlockError", "LaunchError", "MemoryOverlapWarning", "OutOfBoundsError", "PyptoError", "RaceError",
           "SimulationError", "SyncError", "UninitializedReadError", "__version__"]

# The language loads every stage in a working order (frontend, ops, simulator); importing it here
# first lets any submodule (pypto_pro.testing, pypto_pro.ir.expr, ...) be imported on its own.
import pypto_pro.language  # noqa: E402,F401
