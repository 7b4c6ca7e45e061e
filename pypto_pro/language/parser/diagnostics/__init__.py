"""Parser diagnostics at their real import path: the exception classes and error codes."""
from __future__ import annotations

from pypto_pro.language.parser.diagnostics._error_codes import ErrorCode, get_error_code
from pypto_pro.language.parser.diagnostics._exceptions import (FinalRejectionError, InvalidOperationError,
                                                               ParserError, ParserSyntaxError, ParserTypeError,
                                                               ScopeIsolationError, SSAViolationError,
                                                               UndefinedVariableError, UnsupportedFeatureError)

__all__ = ["ParserError", "ParserSyntaxError", "ParserTypeError", "FinalRejectionError", "UndefinedVariableError",
           "SSAViolationError", "UnsupportedFeatureError", "InvalidOperationError", "ScopeIsolationError",
           "ErrorCode", "get_error_code"]
