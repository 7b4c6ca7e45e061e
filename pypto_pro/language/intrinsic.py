"""Marks DSL functions as intrinsics: the frontend compiles calls to them; calling one from
plain Python (outside a ``@pl.jit`` kernel) is an error that says so."""
from __future__ import annotations

import functools
import inspect
from typing import Callable, TypeVar

F = TypeVar("F", bound=Callable)


def intrinsic(name: str) -> Callable[[F], F]:
    def mark(fn: F) -> F:
        sig = inspect.signature(fn)

        @functools.wraps(fn)
        def outside_kernel(*args, **kwargs):
            sig.bind(*args, **kwargs)  # a wrong call says what is wrong (TypeError), as the real stubs do
            raise RuntimeError(f"pl.{name}() is a DSL API declaration and must be used inside a PyPTO kernel")

        outside_kernel.__pypto_intrinsic__ = name  # type: ignore[attr-defined]
        return outside_kernel  # type: ignore[return-value]

    return mark


def intrinsic_name(obj: object) -> str | None:
    return getattr(obj, "__pypto_intrinsic__", None)
