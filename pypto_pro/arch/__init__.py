"""Machine models as data. ``get_arch(name)`` returns the model an ``arch`` name selects
(``arch/names.py``): ``"a5"`` (default: Ascend 950PR_9589), ``"a2"``/``"a3"``/``"a2a3"``, or a 950
variant such as ``"950DT_9581"``."""
from __future__ import annotations

from pypto_pro.arch.a2a3 import A2A3
from pypto_pro.arch.a5 import A5, A5_VARIANTS, DEFAULT_VARIANT
from pypto_pro.arch.model import ArchModel
from pypto_pro.arch.names import DEFAULT_ARCH, UnknownArchError, accepted_names, resolve_arch

ARCHS: dict[str, ArchModel] = {A2A3.name: A2A3, A5.name: A5}  # one model per family, a5 = the default variant

__all__ = ["A2A3", "A5", "A5_VARIANTS", "ARCHS", "DEFAULT_ARCH", "DEFAULT_VARIANT", "ArchModel", "UnknownArchError",
           "accepted_names", "get_arch", "resolve_arch"]


def get_arch(name: str | None = None) -> ArchModel:
    """The machine model ``name`` selects (None: the auto rule); ``UnknownArchError`` lists the names."""
    return resolve_arch(name)
