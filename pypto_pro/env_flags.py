"""The simulator's environment switches (``PYPTO_PRO_SIM_*``), read one way everywhere.

A switch is on/off (``1 on true yes`` / ``0 off false no``, any case, blank means the default) or a
positive count. A value that is neither is the user's mistake: a ``ValueError`` naming the variable
and what it accepts, not a silent default (``PYPTO_PRO_SIM_MEMO=o`` must not quietly keep the memo).
"""
from __future__ import annotations

import os

_ON = ("1", "on", "true", "yes")
_OFF = ("0", "off", "false", "no")


def flag(name: str, default: bool) -> bool:
    """The on/off value of environment variable ``name`` (``default`` when unset or blank)."""
    raw = os.environ.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in _ON:
        return True
    if raw in _OFF:
        return False
    raise ValueError(f"{name}={os.environ[name]!r}: expected one of {', '.join(_ON + _OFF)}")


def count(name: str, default: int) -> int:
    """The positive integer value of environment variable ``name`` (``default`` when unset or blank)."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"{name}={os.environ[name]!r}: expected a positive integer")
    return value
