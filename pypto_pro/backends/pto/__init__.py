"""PTO-ISA C++ backend: emits kernel.cpp / launcher.cpp from the lowered programs."""
from pypto_pro.backends.pto.emitter import emit_kernel

__all__ = ["emit_kernel"]
