"""The real ``pl.*`` names that build or read the real IR objects (``pypto.ir.Function`` /
``Program``), which pypto_pro does not model: ``pl.function``, ``pl.program``, ``pl.kernel`` /
``pl.KernelDef`` (the deferred definition its JIT consumes), and the IR text readers ``pl.parse``,
``pl.loads``, ``pl.parse_program``, ``pl.loads_program``.

They keep the real signatures (so ``inspect.signature`` and typos behave as there); using one
raises :class:`IROnlyError` (a ``NotImplementedError``) that says what to write instead, never a
silent stand-in. A kernel for the real PyPTO Pro is written with ``@pl.jit``, which works here.
"""
from __future__ import annotations

from typing import Any, Callable

from pypto_pro.language.enums import FunctionType

_HINT = "write the kernel with @pl.jit (it compiles, simulates and emits C++ here)"


class IROnlyError(NotImplementedError):
    """A real API that returns the real IR objects, which pypto_pro has no equivalent of."""


def _refuse(what: str) -> IROnlyError:
    return IROnlyError(f"{what} builds the real PyPTO Pro IR (pypto.ir), which pypto_pro does not model; {_HINT}")


def function(fn: Callable | None = None, *, type: FunctionType = FunctionType.Opaque,  # noqa: A002 (real name)
             strict_ssa: bool = False) -> Any:
    """Real: parse a DSL function into an ``ir.Function``. Here: raises :class:`IROnlyError`."""
    raise _refuse("@pl.function")


def program(cls: type | None = None, *, strict_ssa: bool = False) -> Any:
    """Real: parse a class of ``@pl.function`` methods into an ``ir.Program``. Here: raises."""
    raise _refuse("@pl.program")


def kernel(func: Callable | None = None, meta_data: Any = None, *, name: str | None = None,
           func_type: FunctionType = FunctionType.Opaque, strict_ssa: bool = False, auto_mutex: bool = True,
           pipeline: Any = None) -> Any:
    """Real: capture a function as a ``KernelDef`` for the JIT's deferred parse. Here: raises."""
    raise _refuse("@pl.kernel")


class KernelDef:
    """Real: the deferred kernel definition ``@pl.kernel`` returns. Here: constructing one raises."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise _refuse("pl.KernelDef")


def parse(code: str, filename: str = "<string>") -> Any:
    """Real: parse DSL source text into an ``ir.Function`` / ``ir.Program``. Here: raises."""
    raise _refuse("pl.parse")


def loads(filepath: str) -> Any:
    """Real: read a DSL file into an ``ir.Function`` / ``ir.Program``. Here: raises."""
    raise _refuse("pl.loads")


def parse_program(code: str, filename: str = "<string>") -> Any:
    """Real: parse DSL source text into an ``ir.Program``. Here: raises."""
    raise _refuse("pl.parse_program")


def loads_program(filepath: str) -> Any:
    """Real: read a DSL file into an ``ir.Program``. Here: raises."""
    raise _refuse("pl.loads_program")
