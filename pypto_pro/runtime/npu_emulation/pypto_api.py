"""``pypto`` on the simulator: ``pypto.options`` only.

The real wheel ships ``pypto`` (PyPTO's tensor-level language, compiler and runtime) next to
``pypto_pro``, and PyPTO Pro tests decorate with ``@pypto.options(pass_options={...})``. Those options set
a scope of the *tensor-level* compiler's configuration; the real pypto_pro kernels read none of them
except ``host.compile_timeout``, the time limit of the C++ build, which the simulator does not run. So
``options`` here takes the real arguments, works as a decorator and as a context manager, and changes
nothing. Every other ``pypto`` name raises ``NotEmulatedError`` naming it.
"""
from __future__ import annotations

import functools
import types
from typing import Any, Callable

from pypto_pro.runtime.npu_emulation.errors import NotEmulatedError

_WHY = "pypto_pro emulates only pypto.options; the rest of pypto is PyPTO's tensor-level language and runtime."


class Options:
    """A ``pypto.options(...)`` scope (no option reaches a pypto_pro kernel; see the module doc)."""

    def __init__(self, **fields: Any):
        self.__dict__.update(fields)

    def __enter__(self) -> "Options":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def __call__(self, func: Callable) -> Callable:
        if not callable(func):
            raise TypeError(f"pypto.options(...) decorates a function, got {type(func).__name__}")

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)
        return wrapper


def options(name: str = "", codegen_options: dict | None = None, host_options: dict | None = None,
            pass_options: dict | None = None, runtime_options: dict | None = None,
            verify_options: dict | None = None, operation_options: dict | None = None,
            debug_options: dict | None = None, vec_tile_shapes: Any = None, cube_tile_shapes: Any = None,
            conv_tile_shapes: Any = None, matrix_size: Any = None) -> Options:
    """The real ``pypto.options`` signature; a decorator or ``with`` scope that changes nothing here."""
    return Options(name=name, codegen_options=codegen_options, host_options=host_options,
                   pass_options=pass_options, runtime_options=runtime_options, verify_options=verify_options,
                   operation_options=operation_options, debug_options=debug_options,
                   vec_tile_shapes=vec_tile_shapes, cube_tile_shapes=cube_tile_shapes,
                   conv_tile_shapes=conv_tile_shapes, matrix_size=matrix_size)


def build_module() -> types.ModuleType:
    module = types.ModuleType("pypto", "pypto on the pypto_pro simulator: pypto.options only (emulated; see "
                                       "docs/npu_scripts.md).")
    module.options = options  # type: ignore[attr-defined]

    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(f"module 'pypto' has no attribute {name!r}")
        raise NotEmulatedError(f"pypto.{name}", _WHY)

    module.__getattr__ = __getattr__  # type: ignore[attr-defined]
    module.__all__ = ["options"]
    return module


SUBMODULE_WHY = _WHY
