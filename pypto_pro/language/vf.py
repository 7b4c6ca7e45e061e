"""``@pl.vector_function`` and the ``vf.*`` namespace (``pl.Vf``; ``from pypto_pro.language import Vf``).

A vector function is Python source compiled, where it is called from a ``pl.section_vector()``,
into one V-pipe instruction of register-level VF code (the real PyPTO Pro's ``__VEC_SCOPE__``).
Inside its body the name ``vf`` is the VF namespace without an import. Every ``vf.*`` operation
is declared once in ``pypto_pro/ops/vf/`` (stub, frontend check, simulator numerics, cost, C++
spelling); the static methods of :class:`Vf` are those stubs.
"""
from __future__ import annotations

from typing import Callable, TypeVar

F = TypeVar("F", bound=Callable)


def vector_function(fn: F) -> F:
    """Mark ``fn`` as a vector function (the function itself is returned, as in the real API)."""
    fn.__pypto_vector_function__ = True  # type: ignore[attr-defined]
    return fn


def is_vector_function(fn: object) -> bool:
    return bool(getattr(fn, "__pypto_vector_function__", False))


class Vf:
    """Vector Function unit operations (Ascend 950): use inside ``@pl.vector_function`` bodies.

    Result-producing operations use the assignment form ``dst = vf.xxx(...)`` (the destination
    register is declared implicitly, or reused when the name already holds one); stores and other
    side-effect operations are statements. (The methods are attached by ``pypto_pro.ops.vf`` when the
    declarations register, which importing ``pypto_pro.language`` does.)"""
