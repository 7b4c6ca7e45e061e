"""Marks DSL functions as intrinsics: the frontend compiles calls to them; calling one from
plain Python (outside a ``@pl.jit`` kernel) is an error that says so."""
from __future__ import annotations

import functools
from typing import Callable, TypeVar

F = TypeVar("F", bound=Callable)


def intrinsic(name: str) -> Callable[[F], F]:
    def mark(fn: F) -> F:
        @functools.wraps(fn)
        def outside_kernel(*args, **kwargs):
            raise RuntimeError(f"pl.{name}() can only be used inside a @pl.jit kernel")  # noqa: E501

        outside_kernel.__pypto_intrinsic__ = name  # type: ignore[attr-defined]
        return outside_kernel  # type: ignore[return-value]

    return mark


def intrinsic_name(obj: object) -> str | None:
    return getattr(obj, "__pypto_intrinsic__", None)
