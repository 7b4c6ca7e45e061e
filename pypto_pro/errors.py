"""Exception hierarchy users see.

Every error caused by a user's kernel or launch is a ``PyptoError``; compile errors carry the
location in the user's source (``path:line:col:`` prefix plus the quoted line and a caret).

Where the real PyPTO Pro raises a specific class, ours is catchable as it too:

- a ``CompileError`` is created with a ``kind`` and *is* an instance of the real parser class of
  that kind (``ParserSyntaxError`` by default, ``ParserTypeError``, ``UndefinedVariableError``,
  ``UnsupportedFeatureError``, ... ; importable from the real path
  ``pypto_pro.language.parser.diagnostics``), or of the builtin ``ValueError`` / ``TypeError``
  where the real runtime raises those at decoration time (``kind="value"`` / ``"typeerror"``);
- a ``LaunchError`` with ``kind="type"`` / ``"value"`` is also a ``TypeError`` / ``ValueError``,
  as the real runtime's argument and launch checks are.
"""
from __future__ import annotations

import enum
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


class ErrorCode(enum.IntEnum):
    """The real parser's error codes: ``0xF00000 | ExternalError`` (the real
    ``framework/include/tilefwk/error_code.h``)."""

    INVALID_TYPE = 0xF00001
    INVALID_VAL = 0xF00002
    NAME_ERROR = 0xF00004
    NOT_IMPLEMENTED_ERROR = 0xF00005
    INVALID_OPERATION = 0xF00007
    UNKNOWN = 0xF0FFFF


# kind -> CompileError subclass; filled below, once the classes exist
_COMPILE_KINDS: dict[str, type] = {}
_LAUNCH_KINDS: dict[str, type] = {}


class CompileError(PyptoError):
    """A mistake in a kernel's source, reported at ``path:line:col`` with a caret.

    ``kind`` chooses the real PyPTO Pro class the error is an instance of (see the module doc);
    ``CompileError(...)`` with no kind is a ``ParserSyntaxError``, the class the real parser
    raises for most mistakes (it wraps the ``ValueError`` / ``TypeError`` of its op builders)."""

    error_code = ErrorCode.UNKNOWN

    def __new__(cls, message: str = "", loc: SourceLocation | None = None, notes: list[str] | None = None,
                kind: str | None = None):
        if cls is CompileError:
            cls = _COMPILE_KINDS[kind or "syntax"]
        return super().__new__(cls, message)

    def __init__(self, message: str = "", loc: SourceLocation | None = None, notes: list[str] | None = None,
                 kind: str | None = None):
        self.bare_message = message
        self.message = message  # the real ParserError's attribute
        self.loc = loc
        self.notes = list(notes or [])
        self.hint: str | None = None
        self.note: str | None = "; ".join(self.notes) or None
        super().__init__(self._format())

    def __reduce__(self):
        return (_rebuild_compile_error, (type(self), self.bare_message, self.loc, self.notes))

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

    @property
    def span(self) -> dict | None:
        """The location as the real ``ParserError.span`` dict (1-based line and column)."""
        if self.loc is None:
            return None
        return {"filename": self.loc.path, "file": self.loc.path, "line": self.loc.line, "column": self.loc.col + 1,
                "begin_line": self.loc.line, "begin_column": self.loc.col + 1, "end_line": self.loc.line,
                "end_column": self.loc.col + 1}


def _rebuild_compile_error(cls: type, message: str, loc, notes) -> "CompileError":
    return cls(message, loc, notes)


class ParserError(CompileError):
    """The real parser's base class (``pypto_pro.language.parser.diagnostics.ParserError``)."""


class ParserSyntaxError(ParserError):
    """DSL syntax or an op's argument rules violated (the real parser's most common error)."""

    error_code = ErrorCode.INVALID_VAL


class ParserTypeError(ParserError):
    """A type annotation is wrong or missing, or a value has the wrong type for its use."""

    error_code = ErrorCode.INVALID_TYPE


class FinalRejectionError(ParserTypeError):
    """A rejection the real parser does not retry as a Python expression."""


class UndefinedVariableError(ParserError):
    """A name that is not defined."""

    error_code = ErrorCode.NAME_ERROR


class SSAViolationError(ParserError):
    """A variable redefined where the real parser requires single assignment."""

    error_code = ErrorCode.INVALID_OPERATION


class UnsupportedFeatureError(ParserError):
    """A Python feature kernels do not support."""

    error_code = ErrorCode.NOT_IMPLEMENTED_ERROR


class InvalidOperationError(ParserError):
    """An operation that is invalid or unknown."""

    error_code = ErrorCode.INVALID_OPERATION


class ScopeIsolationError(ParserError):
    """A value used outside the scope it belongs to."""

    error_code = ErrorCode.INVALID_OPERATION


class DeclarationValueError(CompileError, ValueError):
    """A malformed declaration the real runtime rejects with ``ValueError`` at decoration time
    (a TilingKey class, a ``datatype=`` schema, a tiling dataclass)."""

    error_code = ErrorCode.INVALID_VAL


class DeclarationTypeError(CompileError, TypeError):
    """A malformed declaration the real runtime rejects with ``TypeError`` (a kernel signature's
    tensor annotation, an unknown ``pl.jit`` keyword)."""

    error_code = ErrorCode.INVALID_TYPE


_COMPILE_KINDS.update({
    "syntax": ParserSyntaxError, "type": ParserTypeError, "final": FinalRejectionError,
    "undefined": UndefinedVariableError, "ssa": SSAViolationError, "unsupported": UnsupportedFeatureError,
    "operation": InvalidOperationError, "scope": ScopeIsolationError, "value": DeclarationValueError,
    "typeerror": DeclarationTypeError,
})
COMPILE_ERROR_KINDS = tuple(_COMPILE_KINDS)


class MemoryOverlapWarning(UserWarning):
    """Two tiles with different byte ranges share bytes while both are live (``check_memory``).

    The chip allows it and real kernels alias tiles on purpose, so it is a warning: the simulator's
    race checker reports any access order that actually conflicts."""


class LaunchError(PyptoError):
    """Host-side argument or launch-configuration mistake, detected before anything runs.

    ``kind="type"`` / ``"value"`` / ``"runtime"`` make it also a ``TypeError`` / ``ValueError``
    / ``RuntimeError``, where the real runtime raises those."""

    def __new__(cls, message: str = "", kind: str | None = None):
        if cls is LaunchError and kind is not None:
            cls = _LAUNCH_KINDS[kind]
        return super().__new__(cls, message)

    def __init__(self, message: str = "", kind: str | None = None):
        super().__init__(message)

    def __reduce__(self):
        return (type(self), (str(self),))


class LaunchTypeError(LaunchError, TypeError):
    """A launch argument of the wrong type, dtype, rank or shape (the real runtime: ``TypeError``)."""


class LaunchValueError(LaunchError, ValueError):
    """A bad launch configuration or tiling-key value (the real runtime: ``ValueError``)."""


class LaunchRuntimeError(LaunchError, RuntimeError):
    """The launch could not be carried out (the real runtime: ``RuntimeError``)."""


_LAUNCH_KINDS.update({"type": LaunchTypeError, "value": LaunchValueError, "runtime": LaunchRuntimeError})


class SimulationError(PyptoError):
    """The simulator found a fault while running a kernel (bad access, invalid shape, ...)."""


class InternalCompilerError(Exception):
    """A bug in pypto_pro itself (never a user mistake); deliberately not a PyptoError."""
