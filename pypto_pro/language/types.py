"""Type constructors of the DSL: ``pl.Tensor[[dims], dtype]`` annotations and ``pl.TileType``.

They are ordinary Python objects: the frontend evaluates them at compile time.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from pypto_pro.language.dtypes import DataType
from pypto_pro.language.enums import MemorySpace  # noqa: F401
from pypto_pro.language.tile_type import TileType  # noqa: F401  (pl.TileType lives in tile_type.py)


class _Dynamic:
    """Marker for a tensor dimension known only at launch time."""

    _instance: "_Dynamic | None" = None

    def __new__(cls) -> "_Dynamic":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "pl.DYNAMIC"


DYNAMIC = _Dynamic()


@dataclass(frozen=True, eq=False)
class DTypeVar:
    """A dtype chosen by the arguments at launch: ``T = pl.DTypeVar("T", [pl.DT_FP16, pl.DT_BF16])``
    annotates ``pl.Tensor[[...], T]``; inside the kernel ``T`` is the bound dtype (a compile-time
    constant), each binding compiles its own program, and releases emit every choice."""

    name: str
    choices: tuple[DataType, ...]

    def __init__(self, name: str, choices: Sequence[DataType]):
        if not isinstance(name, str) or not name.isidentifier():
            raise TypeError(f"DTypeVar name must be an identifier, got {name!r}")
        if not isinstance(choices, (list, tuple)) or not choices or \
                not all(isinstance(c, DataType) for c in choices) or len(set(choices)) != len(choices):
            raise TypeError(f"DTypeVar {name}: choices must be distinct pl.DT_* types, got {choices!r}")
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "choices", tuple(choices))

    def __repr__(self) -> str:
        return f"pl.DTypeVar({self.name!r}, [{', '.join(repr(c) for c in self.choices)}])"


@dataclass(frozen=True)
class TensorType:
    """A global-memory tensor parameter: rank, static or dynamic dims, dtype (row-major, ND); the
    dtype may be a :class:`DTypeVar` until launch arguments bind it."""

    dims: tuple[int | _Dynamic, ...]
    dtype: DataType | DTypeVar

    def bind(self, dtypes: dict[str, DataType]) -> "TensorType":
        if isinstance(self.dtype, DTypeVar):
            return TensorType(self.dims, dtypes[self.dtype.name])
        return self

    @property
    def rank(self) -> int:
        return len(self.dims)

    def __repr__(self) -> str:
        dims = ", ".join(repr(d) if d is DYNAMIC else str(d) for d in self.dims)
        return f"pl.Tensor[[{dims}], {self.dtype!r}]"


class _TensorFactory:
    """``pl.Tensor[[dims], dtype]`` builds a :class:`TensorType` for a kernel parameter annotation."""

    def __getitem__(self, item: Any) -> TensorType:
        if not (isinstance(item, tuple) and len(item) == 2):
            raise TypeError("pl.Tensor takes [[dims...], dtype], e.g. pl.Tensor[[pl.DYNAMIC, 128], pl.DT_FP16]")
        dims, dtype = item
        if not isinstance(dims, (list, tuple)) or not dims:
            raise TypeError("pl.Tensor dims must be a non-empty list of ints or pl.DYNAMIC")
        for d in dims:
            if d is not DYNAMIC and not (isinstance(d, int) and not isinstance(d, bool) and d > 0):
                raise TypeError(f"pl.Tensor dim {d!r} must be a positive int or pl.DYNAMIC")
        if not isinstance(dtype, (DataType, DTypeVar)):
            raise TypeError(f"pl.Tensor dtype must be a pl.DT_* type or a pl.DTypeVar, got {dtype!r}")
        return TensorType(tuple(dims), dtype)

    def __repr__(self) -> str:
        return "pl.Tensor"


Tensor = _TensorFactory()


class Constexpr:
    """Annotation for a kernel parameter that is a compile-time constant (part of the cache key)."""
