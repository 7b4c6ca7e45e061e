"""Renders the pipeline transform's output as ``pipeline_generated.py``: a standalone DSL module
(imports, the compile-time constants and helpers the kernel uses, the stage functions, and the
rewritten kernel) that can be read, and compiled on its own."""
from __future__ import annotations

import ast
import builtins
import inspect
import textwrap
import types
from typing import Any, Callable

from pypto_pro.arch.model import ArchModel
from pypto_pro.frontend.pipeline_transform import Generated
from pypto_pro.frontend.scope import MISSING, Scope, closure_vars
from pypto_pro.language.dtypes import DataType
from pypto_pro.language.enums import MemorySpace, PipeType
from pypto_pro.language.types import TileType

_PLAIN = (int, float, bool, str, type(None), DataType, MemorySpace, PipeType, TileType)


def _literal(v: Any) -> str | None:
    if isinstance(v, _PLAIN):
        return repr(v)
    if isinstance(v, dict):
        items = [(_literal(k), _literal(x)) for k, x in v.items()]
        if all(a is not None and b is not None for a, b in items):
            return "{" + ", ".join(f"{a}: {b}" for a, b in items) + "}"
        return None
    if isinstance(v, (list, tuple)):
        parts = [_literal(x) for x in v]
        if all(p is not None for p in parts):
            body = ", ".join(parts)  # type: ignore[arg-type]
            return f"[{body}]" if isinstance(v, list) else f"({body}{',' if len(parts) == 1 else ''})"
    return None


def _names(text: str) -> list[str]:
    seen: list[str] = []
    for n in ast.walk(ast.parse(textwrap.dedent(text))):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in seen:
            seen.append(n.id)
    return seen


def render(fn: Callable, gen: Generated, scope: Scope, arch: ArchModel, auto_mutex: bool) -> str:
    lines = [f"# pipeline_generated.py: '{fn.__name__}' after the pypto_pro pipeline transform.",
             f"# Source: {inspect.getsourcefile(fn)}. Every line of the kernel ends with the user line it came from",
             "# in compile errors; stage calls are shifted by their delay, with the cross-core syncs around them.",
             *(f"#   {n}" for n in gen.notes),
             "import pypto_pro.language as pl", ""]
    helpers: dict[str, str] = {name: textwrap.dedent(inspect.getsource(f)) for name, f in gen.stage_fns.items()}
    # each text resolves its names in its own function's scope (stages may close over the user's factory)
    pending = [(gen.kernel_text, scope)] + [(helpers[n], Scope(f.__globals__, closure_vars(f)))
                                            for n, f in gen.stage_fns.items()]
    constants: dict[str, str] = {}
    while pending:
        text, where = pending.pop()
        for name in _names(text):
            if name in helpers or name in constants or name == "pl":
                continue
            value = where.lookup(name)
            if value is MISSING or isinstance(value, types.ModuleType) or hasattr(builtins, name):
                continue
            if getattr(value, "__pypto_inline__", False) or inspect.isfunction(value):  # a helper the kernel inlines
                helpers[name] = textwrap.dedent(inspect.getsource(value))
                pending.append((helpers[name], Scope(value.__globals__, closure_vars(value))))
                continue
            lit = _literal(value)
            constants[name] = (f"{name} = {lit}" if lit is not None
                               else f"# {name}: a {type(value).__name__} from the user's module; define it here to "
                                    "compile this file on its own")
    lines += list(constants.values()) + [""]
    for src in helpers.values():
        lines += [src.rstrip(), "", ""]
    lines.append(f"@pl.jit(arch={arch.name!r}, auto_mutex={auto_mutex})")
    lines.append(gen.kernel_text.rstrip())
    return "\n".join(lines) + "\n"
