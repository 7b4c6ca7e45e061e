"""The real parser's exception classes, at their real module path.

They are our :class:`pypto_pro.errors.CompileError` subclasses (defined in ``pypto_pro.errors``):
every located compile error pypto_pro raises is an instance of one of them, chosen by the
error's ``kind``, so ``except ParserSyntaxError`` / ``pytest.raises(ParserTypeError)`` written
for the real PyPTO Pro catch ours.
"""
from __future__ import annotations

from pypto_pro.errors import (FinalRejectionError, InvalidOperationError, ParserError, ParserSyntaxError,
                              ParserTypeError, ScopeIsolationError, SSAViolationError, UndefinedVariableError,
                              UnsupportedFeatureError)

__all__ = ["ParserError", "ParserSyntaxError", "ParserTypeError", "FinalRejectionError", "UndefinedVariableError",
           "SSAViolationError", "UnsupportedFeatureError", "InvalidOperationError", "ScopeIsolationError"]
