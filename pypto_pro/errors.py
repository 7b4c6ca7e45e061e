"""Exception hierarchy users see.

Every error caused by a user's kernel or launch is a ``PyptoError``; compile errors carry the
location in the user's source (``path:line:col:`` prefix plus the quoted line and a caret).
"""
from __future__ import annotations

from dataclasses import dataclass


class PyptoError(Exception):
    """Base class of every error pypto_pro reports to a user."""


@dataclass(frozen=True)
class SourceLocation:
    """A point in the user's source: file path, 1-based line, 0-based column."""

    path: str
    line: int
    col: int
    source_line: str = ""

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col + 1}"


class CompileError(PyptoError):
    """A mistake in a kernel's source, reported at ``path:line:col`` with a caret."""

    def __init__(self, message: str, loc: SourceLocation | None = None, notes: list[str] | None = None):
        self.bare_message = message
        self.loc = loc
        self.notes = list(notes or [])
        super().__init__(self._format())

    def _format(self) -> str:
        if self.loc is None:
            text = f"error: {self.bare_message}"
        else:
            text = f"{self.loc}: error: {self.bare_message}"
            if self.loc.source_line:
                line = self.loc.source_line.rstrip("\n")
                text += f"\n    {line}\n    {' ' * self.loc.col}^"
        for note in self.notes:
            text += f"\n  note: {note}"
        return text

    @property
    def line(self) -> int | None:
        return self.loc.line if self.loc else None

    @property
    def col(self) -> int | None:
        """1-based column, as printed."""
        return self.loc.col + 1 if self.loc else None


class MemoryOverlapWarning(UserWarning):
    """Two tiles with different byte ranges share bytes while both are live (``check_memory``).

    The chip allows it and real kernels alias tiles on purpose, so it is a warning: the simulator's
    race checker reports any access order that actually conflicts."""


class LaunchError(PyptoError):
    """Host-side argument or launch-configuration mistake, detected before anything runs."""


class SimulationError(PyptoError):
    """The simulator found a fault while running a kernel (bad access, invalid shape, ...)."""


class InternalCompilerError(Exception):
    """A bug in pypto_pro itself (never a user mistake); deliberately not a PyptoError."""
