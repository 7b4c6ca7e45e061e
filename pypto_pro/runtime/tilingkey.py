"""TilingKey: compile-time specialisation of a kernel by a few small fields.

    class Key:
        BLOCK_M = TilingKeyField(bits=2, values=[64, 128, 256])
        CAUSAL = TilingKeyField(bits=1, values=[0, 1])
        def is_valid(self, key):            # optional
            return not (key.BLOCK_M == 256 and key.CAUSAL)

    @pl.jit(tiling_key=Key)
    def kernel(...): ...                     # BLOCK_M, CAUSAL are compile-time constants inside
    kernel[stream, block_dim, {"BLOCK_M": 128, "CAUSAL": 1}](...)

Fields are encoded in definition order, the first in the lowest bits: ``code = sum(index << offset)``.
Each key is folded into the IR as constants before any pass, so every key has its own program
(and its own ``kernel.cpp``) with no run-time branch left for it.
"""
from __future__ import annotations

import inspect
import itertools
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Iterator, Sequence

from pypto_pro.errors import CompileError, LaunchError

MAX_BITS = 64


@dataclass(frozen=True)
class TilingKeyField:
    """One field: its width in bits and the values it may take (ints)."""

    bits: int
    values: Sequence[int]


@dataclass(frozen=True)
class FieldSpec:
    name: str
    bits: int
    values: tuple[int, ...]
    offset: int


class TilingKeySchema:
    """A validated TilingKey class: fields in encoding order, and its ``is_valid``."""

    def __init__(self, cls: Any):
        where = _where(cls)
        if not inspect.isclass(cls):
            raise CompileError(f"tiling_key must be a class of TilingKeyField attributes, got {cls!r}", where)
        fields = [(n, v) for n, v in vars(cls).items() if isinstance(v, TilingKeyField)]
        if not fields:
            raise CompileError(f"tiling_key class '{cls.__name__}' declares no TilingKeyField", where)
        self.cls = cls
        self.name = cls.__name__
        self.fields: list[FieldSpec] = []
        offset = 0
        for name, f in fields:
            if not isinstance(f.bits, int) or isinstance(f.bits, bool) or f.bits <= 0:
                raise CompileError(f"TilingKey field {name}: bits must be a positive int, got {f.bits!r}", where)
            values = list(f.values) if isinstance(f.values, (list, tuple)) else None
            if not values:
                raise CompileError(f"TilingKey field {name}: values must be a non-empty list of ints", where)
            for v in values:
                if not isinstance(v, int) or isinstance(v, bool):
                    raise CompileError(f"TilingKey field {name}: value {v!r} is not an int", where)
            if len(set(values)) != len(values):
                raise CompileError(f"TilingKey field {name}: values {values} repeat a value", where)
            if len(values) > 2 ** f.bits:
                raise CompileError(f"TilingKey field {name}: {len(values)} values do not fit in {f.bits} bit(s)",
                                   where)
            self.fields.append(FieldSpec(name, f.bits, tuple(values), offset))
            offset += f.bits
        if offset > MAX_BITS:
            raise CompileError(f"tiling_key '{cls.__name__}' uses {offset} bits; at most {MAX_BITS} fit a key", where)
        self.bits = offset
        check = vars(cls).get("is_valid")
        if check is not None and not callable(check):
            raise CompileError(f"tiling_key '{cls.__name__}'.is_valid must be a method", where)
        self._is_valid = check

    # ---- keys ----------------------------------------------------------------------------------

    def encode(self, values: dict[str, int]) -> int:
        return sum(f.values.index(values[f.name]) << f.offset for f in self.fields)

    def key_object(self, values: dict[str, int]) -> SimpleNamespace:
        return SimpleNamespace(**values, code=self.encode(values))

    def valid(self, values: dict[str, int]) -> bool:
        if self._is_valid is None:
            return True
        return bool(self._is_valid(self.cls(), self.key_object(values)))

    def resolve(self, given: Any, kernel: str) -> dict[str, int]:
        """Check a launch's key dict: every field given, known, with an allowed value, and valid."""
        if not isinstance(given, dict):
            raise LaunchError(f"{kernel}[stream, block_dim, key]: the key must be a dict of field values, got "
                              f"{type(given).__name__}")
        names = [f.name for f in self.fields]
        for k in given:
            if k not in names:
                raise LaunchError(f"{kernel}: tiling key has no field {k!r} (fields: {', '.join(names)})")
        values: dict[str, int] = {}
        for f in self.fields:
            if f.name not in given:
                raise LaunchError(f"{kernel}: tiling key field {f.name!r} is missing (values: {list(f.values)})")
            v = given[f.name]
            if isinstance(v, bool) or v not in f.values:
                raise LaunchError(f"{kernel}: tiling key field {f.name}={v!r} is not one of {list(f.values)}")
            values[f.name] = v
        try:
            ok = self.valid(values)
        except Exception as exc:
            raise LaunchError(f"{kernel}: {self.name}.is_valid raised {type(exc).__name__}: {exc}") from None
        if not ok:
            raise LaunchError(f"{kernel}: tiling key {values} is rejected by {self.name}.is_valid")
        return values

    def combinations(self) -> Iterator[dict[str, int]]:
        """Every valid key, in encoding order."""
        for combo in itertools.product(*(f.values for f in self.fields)):
            values = dict(zip((f.name for f in self.fields), combo))
            if self.valid(values):
                yield values

    def header(self, kernel: str) -> str:
        """A C header with the encoding of each field and a key builder."""
        up = kernel.upper()
        lines = [f"// Tiling key of {kernel} ({self.name}): fields in encoding order, first in the lowest bits.",
                 "#pragma once", "#include <stdint.h>", ""]
        for f in self.fields:
            lines.append(f"#define {up}_{f.name}_SHIFT {f.offset}")
            lines.append(f"#define {up}_{f.name}_BITS {f.bits}")
            for i, v in enumerate(f.values):
                lines.append(f"#define {up}_{f.name}_{_cname(v)} {i}  /* value {v} */")
        args = ", ".join(f"uint64_t {f.name.lower()}_index" for f in self.fields)
        body = " | ".join(f"({f.name.lower()}_index << {f.offset})" for f in self.fields)
        lines += ["", f"static inline uint64_t {kernel}_tiling_key({args}) {{ return {body}; }}", ""]
        return "\n".join(lines)


def _cname(v: int) -> str:
    return f"M{-v}" if v < 0 else f"V{v}"


def _where(cls: Any):
    try:
        from pypto_pro.errors import SourceLocation
        path = inspect.getsourcefile(cls)
        _, line = inspect.getsourcelines(cls)
        import linecache
        return SourceLocation(path, line, 0, linecache.getline(path, line))
    except (TypeError, OSError):
        return None
