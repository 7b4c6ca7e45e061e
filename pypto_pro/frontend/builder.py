"""Collects IR statements into nested blocks while the parser walks the AST."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from pypto_pro.ir.nodes import Stmt


class Builder:
    def __init__(self) -> None:
        self._blocks: list[list[Stmt]] = [[]]

    @property
    def root(self) -> list[Stmt]:
        return self._blocks[0]

    @property
    def current(self) -> list[Stmt]:
        """The statement list being filled."""
        return self._blocks[-1]

    def emit(self, stmt: Stmt) -> None:
        self._blocks[-1].append(stmt)

    @contextmanager
    def block(self) -> Iterator[list[Stmt]]:
        body: list[Stmt] = []
        self._blocks.append(body)
        try:
            yield body
        finally:
            self._blocks.pop()
