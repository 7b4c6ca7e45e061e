"""The real parser's error codes, at their real module path."""
from __future__ import annotations

from pypto_pro.errors import ErrorCode

__all__ = ["ErrorCode", "get_error_code"]


def get_error_code(exception_type: type) -> ErrorCode | None:
    """The error code of an exception class (None for classes that have none)."""
    code = getattr(exception_type, "error_code", None)
    return code if isinstance(code, ErrorCode) else None
