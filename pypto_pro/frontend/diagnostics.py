"""Source locations for AST nodes and helpers that build located ``CompileError``s."""
from __future__ import annotations

import ast
import difflib
import linecache
from dataclasses import dataclass
from typing import Iterable, NoReturn

from pypto_pro.errors import CompileError, SourceLocation


@dataclass(frozen=True)
class SourceFile:
    """Where a parsed function's text came from: path plus the line/column shift of the snippet."""

    path: str
    line_offset: int  # added to ast line numbers (1-based in the snippet)
    col_offset: int   # added to ast columns (0 for source parsed in place, as parse_function does)
    line_map: dict | None = None  # generated code: generated line -> (user line, user column)

    def loc(self, node: ast.AST | None) -> SourceLocation | None:
        if node is None or not hasattr(node, "lineno"):
            return None
        if self.line_map is not None:
            line, col = self.line_map.get(node.lineno, (0, 0))
            return SourceLocation(self.path, line, col, linecache.getline(self.path, line) if line else "")
        line = node.lineno + self.line_offset
        col = node.col_offset + self.col_offset
        return SourceLocation(self.path, line, col, linecache.getline(self.path, line))


def fail(src: SourceFile, node: ast.AST | None, message: str, notes: Iterable[str] = (),
         kind: str | None = None) -> NoReturn:
    """Raise a located ``CompileError``; ``kind`` picks its real PyPTO Pro class (``pypto_pro.errors``)."""
    raise CompileError(message, src.loc(node), list(notes), kind=kind)


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""
