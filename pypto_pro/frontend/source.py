"""Reads a Python function's source and parses it into an AST with positions in the real file."""
from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Callable

from pypto_pro.errors import CompileError
from pypto_pro.frontend.diagnostics import SourceFile


def parse_function(fn: Callable) -> tuple[ast.FunctionDef, SourceFile]:
    """The ``FunctionDef`` of ``fn`` and its ``SourceFile`` (never executes the body)."""
    try:
        lines, start = inspect.getsourcelines(fn)
        path = inspect.getsourcefile(fn) or inspect.getfile(fn)
    except (OSError, TypeError) as exc:
        raise CompileError(f"cannot read the source of {getattr(fn, '__name__', fn)!r}: {exc}") from None
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    indent = len(lines[0]) - len(lines[0].lstrip()) if dedented != text else 0
    tree = ast.parse(dedented)
    node = tree.body[0]
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise CompileError(f"{fn!r} is not defined by a def statement")
    if isinstance(node, ast.AsyncFunctionDef):
        src = SourceFile(path, start - 1, indent)
        raise CompileError("async kernels are not supported", src.loc(node))
    return node, SourceFile(path, start - 1, indent)
