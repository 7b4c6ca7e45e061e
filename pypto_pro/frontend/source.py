"""Reads a Python function's source and parses it into an AST with positions in the real file."""
from __future__ import annotations

import ast
import inspect
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
    # An indented definition (a kernel inside a function or class) is parsed where it stands, under an
    # ``if True:`` line: no dedent, so columns are the file's own and lines at column 0 (inside a
    # multi-line string) are no problem.
    indented = lines[0][:1] in (" ", "\t")
    src = SourceFile(path, start - 2 if indented else start - 1, 0)
    try:
        tree = ast.parse("if True:\n" + text if indented else text)
    except SyntaxError as exc:
        line = (exc.lineno or 1) - (1 if indented else 0)
        raise CompileError(f"cannot parse the source of {getattr(fn, '__name__', fn)!r} on its own "
                           f"(kernels and helpers must be defined with def): {exc.msg}",
                           SourceFile(path, start - 1, 0).loc(ast.Pass(lineno=line, col_offset=0))) from None
    node = tree.body[0].body[0] if indented else tree.body[0]  # type: ignore[attr-defined]
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise CompileError(f"{fn!r} is not defined by a def statement (kernels and helpers must be)", src.loc(node))
    if isinstance(node, ast.AsyncFunctionDef):
        raise CompileError("async kernels are not supported", src.loc(node))
    return node, src

