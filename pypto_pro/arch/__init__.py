"""Machine models as data. ``get_arch(name)`` returns the model for ``"a5"`` (default) or ``"a2a3"``."""
from __future__ import annotations

from pypto_pro.arch.a2a3 import A2A3
from pypto_pro.arch.a5 import A5
from pypto_pro.arch.model import ArchModel

ARCHS: dict[str, ArchModel] = {A2A3.name: A2A3, A5.name: A5}
DEFAULT_ARCH = "a5"


def get_arch(name: str) -> ArchModel:
    """Return the machine model called ``name``; ``KeyError`` lists the known ones."""
    try:
        return ARCHS[name]
    except KeyError:
        raise KeyError(f"unknown arch {name!r}; known: {', '.join(sorted(ARCHS))}") from None
