"""Helpers for the tests of a fast path with an on / off switch: count how often it is taken, and run the
same launch with it on and off (the results must be equal)."""
from __future__ import annotations

from collections.abc import Callable


def count_taken(monkeypatch, owner, name: str, source=None) -> list[int]:
    """Wrap ``owner.name`` (a function that returns None when the fast path does not apply, taken from
    ``source`` when the caller's module imported it from elsewhere) to count its non-None results."""
    seen = [0]
    real = getattr(source if source is not None else owner, name)

    def counting(*args, **kwargs):
        got = real(*args, **kwargs)
        seen[0] += got is not None
        return got
    monkeypatch.setattr(owner, name, counting)
    return seen


def run_both(run: Callable[[], object], monkeypatch, module, switch: str) -> list:
    """``run()`` with ``module.switch`` True, then False; asserts both results are equal."""
    got = []
    for on in (True, False):
        monkeypatch.setattr(module, switch, on)
        got.append(run())
    assert got[0] == got[1]
    return got
