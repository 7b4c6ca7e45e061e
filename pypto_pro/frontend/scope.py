"""Name resolution for kernels and inline helpers: locals, then closure, globals, builtins."""
from __future__ import annotations

import builtins
from typing import Any

_MISSING = object()


class Scope:
    """Local bindings of one function body over the (read-only) enclosing Python namespaces."""

    def __init__(self, globals_: dict[str, Any], closure: dict[str, Any], consts: dict[str, Any] | None = None):
        self.locals: dict[str, Any] = {}
        self.closure = closure
        self.globals = globals_
        self.consts = consts or {}  # the launch's compile-time names (TilingKey fields, datatype= variables)

    def lookup(self, name: str) -> Any:
        for space in (self.locals, self.closure, self.consts, self.globals, vars(builtins)):
            value = space.get(name, _MISSING)
            if value is not _MISSING:
                return value
        return _MISSING

    def known_names(self) -> list[str]:
        return [*self.locals, *self.closure, *self.consts, *self.globals, *vars(builtins)]


MISSING = _MISSING


def closure_vars(fn: Any) -> dict[str, Any]:
    """The free variables of ``fn`` with their current values (cells that are empty are skipped)."""
    code = getattr(fn, "__code__", None)
    cells = getattr(fn, "__closure__", None) or ()
    out: dict[str, Any] = {}
    if code is None:
        return out
    for name, cell in zip(code.co_freevars, cells):
        try:
            out[name] = cell.cell_contents
        except ValueError:
            pass
    return out
