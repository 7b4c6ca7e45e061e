"""The real PyPTO Pro's parser package path, ``pypto_pro.language.parser``.

Our frontend lives in :mod:`pypto_pro.frontend`; this package gives the real import paths of the
parser's public names (the exception classes under ``diagnostics``) so code written for the real
PyPTO Pro imports and catches them unchanged.
"""
from __future__ import annotations

from pypto_pro.language.parser.diagnostics import ParserError

__all__ = ["ParserError", "diagnostics"]
