"""pypto_pro: a Python DSL and compiler for Ascend-style AI-core kernels, with a CPU simulator."""
from __future__ import annotations

from pypto_pro.errors import CompileError, LaunchError, PyptoError, SimulationError

__version__ = "0.1.0"
__all__ = ["CompileError", "LaunchError", "PyptoError", "SimulationError", "__version__"]
