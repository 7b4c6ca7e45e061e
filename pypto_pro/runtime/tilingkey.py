"""TilingKey: compile-time specialisation of a kernel by a few small fields (the real PyPTO Pro's
``pypto_pro.runtime.tilingkey``, same names, rules and messages).

    class Key:
        BLOCK_M = TilingKeyField(bits=2, values=[64, 128, 256])
        CAUSAL = TilingKeyField(bits=1, values=[0, 1])

        def is_valid(self, key):            # optional; key is a tuple in field order
            block_m, causal = key
            return not (block_m == 256 and causal)

    @pl.jit(tiling_key=Key)
    def kernel(...): ...                     # BLOCK_M, CAUSAL are compile-time constants inside
    kernel[stream, block_dim, {"BLOCK_M": 128, "CAUSAL": 1}](...)

Fields are packed in definition order, the first in the lowest bits: each field's bits hold the
*index* of its value in ``values`` (``pack`` = ``sum(index << offset)``), as AscendC
template-tiling keys do. Each key is folded into the IR as constants before any pass, so every
key has its own program (and its own ``kernel.cpp``) with no run-time branch left for it.

A malformed schema is a ``ValueError`` at decoration (ours: a located ``CompileError`` that is
also a ``ValueError``); a bad launch key is a ``ValueError`` (ours: a ``LaunchError`` that is
also one). ``combinations()``, ``encode()`` and ``header()`` serve ``pypto-pro build``.
"""
from __future__ import annotations

import inspect
import itertools
from typing import Any, Iterator

from pypto_pro.errors import CompileError, LaunchError, SourceLocation

_MAX_TOTAL_BITS = 64
MAX_BITS = _MAX_TOTAL_BITS


class TilingKeyField:
    """One field: the bits it occupies in the packed 64-bit key (> 0) and its candidate values."""

    def __init__(self, *, bits: int, values) -> None:
        self.bits = bits
        self.values = tuple(values)
        self.name: str | None = None
        self.offset: int | None = None

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"TilingKeyField(bits={self.bits!r}, values={list(self.values)!r})"


def _schema_error(message: str, cls: Any) -> CompileError:
    return CompileError(message, _where(cls), kind="value")


class TilingKeySchema:
    """A validated TilingKey class: its fields in definition order (with bit offsets) and its
    optional ``is_valid`` predicate, bound to an instance made without ``__init__``."""

    def __init__(self, cls: type) -> None:
        if not isinstance(cls, type):
            raise _schema_error(f"tiling_key must be a class, got {type(cls).__name__}", None)
        self._cls = cls
        self._fields: list[TilingKeyField] = self._collect_fields(cls)
        self._valid_combos: list[tuple] | None = None
        if not self._fields:
            raise _schema_error(f"tiling_key class '{cls.__name__}' has no TilingKeyField members", cls)
        self.is_valid = None
        is_valid = getattr(cls, "is_valid", None)
        if is_valid is not None:
            if not callable(is_valid):
                raise _schema_error(f"tiling_key class '{cls.__name__}' has a non-callable 'is_valid' member", cls)
            inst = object.__new__(cls)
            self.is_valid = is_valid.__get__(inst, cls) if hasattr(is_valid, "__get__") else is_valid
        self._validate_and_assign_offsets()

    @property
    def cls(self) -> type:
        return self._cls

    @property
    def cls_name(self) -> str:
        return self._cls.__name__

    name = cls_name  # ours (pypto-pro build)

    @property
    def fields(self) -> list[TilingKeyField]:
        return list(self._fields)

    @property
    def bits(self) -> int:
        return sum(f.bits for f in self._fields)

    @staticmethod
    def _collect_fields(cls: type) -> list[TilingKeyField]:
        fields = []
        for name, value in vars(cls).items():
            if isinstance(value, TilingKeyField):
                if value.name is None:
                    value.name = name
                fields.append(value)
        return fields

    def _validate_and_assign_offsets(self) -> None:
        offset = 0
        cls = self._cls
        for field in self._fields:
            bits = field.bits
            if not isinstance(bits, int) or isinstance(bits, bool) or bits <= 0:
                raise _schema_error(f"tilingkey field '{field.name}' must have bits > 0, got {bits}", cls)
            if not field.values:
                raise _schema_error(f"tilingkey field '{field.name}' must have a non-empty 'values' list", cls)
            for v in field.values:
                if not isinstance(v, int) or isinstance(v, bool):
                    raise _schema_error(f"tilingkey field '{field.name}' values must be ints, got {v!r}", cls)
            if len(set(field.values)) != len(field.values):
                raise _schema_error(f"tilingkey field '{field.name}' values must be unique", cls)
            max_candidates = 1 << bits
            if len(field.values) > max_candidates:
                raise _schema_error(f"tilingkey field '{field.name}' has {len(field.values)} candidates, exceeding "
                                    f"the {max_candidates} representable by {bits} bits", cls)
            field.offset = offset
            offset += bits
        if offset > _MAX_TOTAL_BITS:
            raise _schema_error(f"tiling_key class '{cls.__name__}' uses {offset} bits, exceeding the "
                                f"{_MAX_TOTAL_BITS}-bit limit", cls)

    # ---- keys (the real API) -----------------------------------------------------------------

    def field_names(self) -> list[str]:
        """Field names in definition order (the template-parameter order)."""
        return [f.name for f in self._fields]  # type: ignore[misc]

    def pack(self, key: dict) -> int:
        """The unique 64-bit identifier of a concrete key: each value's index at its field's offset."""
        packed = 0
        for f in self._fields:
            packed |= f.values.index(key[f.name]) << f.offset  # type: ignore[operator]
        return packed

    def validate_concrete(self, key: Any) -> None:
        """Check a concrete key dict against the schema (``ValueError`` if it does not fit)."""
        if not isinstance(key, dict):
            raise LaunchError(f"tilingkey must be specified as a dict, got {type(key).__name__}", kind="value")
        if sorted(key) != sorted(self.field_names()):
            raise LaunchError(f"tilingkey keys {sorted(key)} do not match schema fields {sorted(self.field_names())}",
                              kind="value")
        for f in self._fields:
            v = key[f.name]
            if v not in f.values:
                raise LaunchError(f"tilingkey field '{f.name}' value {v!r} is not a candidate; allowed: "
                                  f"{list(f.values)}", kind="value")
        if not self._call_is_valid(tuple(key[f.name] for f in self._fields)):
            raise LaunchError(f"tilingkey {key} did not pass {self.cls_name}.is_valid", kind="value")

    def enumerate_valid(self) -> list[tuple]:
        """Every valid combination of field values (tuples in definition order), in product order."""
        if self._valid_combos is None:
            combos = itertools.product(*(f.values for f in self._fields))
            self._valid_combos = [c for c in combos if self._call_is_valid(c)]
        return self._valid_combos

    def _call_is_valid(self, values: tuple) -> bool:
        if self.is_valid is None:
            return True
        try:
            return bool(self.is_valid(values))
        except Exception as exc:  # the user's predicate failed: say where, without our frames
            raise LaunchError(f"{self.cls_name}.is_valid{values} raised {type(exc).__name__}: {exc}",
                              kind="value") from None

    # ---- ours --------------------------------------------------------------------------------

    def canonical(self, key: dict) -> dict[str, int]:
        """A validated key with each value as the field's own candidate (``True`` given for 1 is 1)."""
        return {f.name: f.values[f.values.index(key[f.name])] for f in self._fields}  # type: ignore[misc]

    def encode(self, values: dict[str, int]) -> int:
        return self.pack(values)

    def combinations(self) -> Iterator[dict[str, int]]:
        """Every valid key as a dict, in :meth:`enumerate_valid` order."""
        names = self.field_names()
        for combo in self.enumerate_valid():
            yield dict(zip(names, combo))

    def header(self, kernel: str) -> str:
        """A C header with the encoding of each field and a key builder."""
        up = kernel.upper()
        lines = [f"// Tiling key of {kernel} ({self.cls_name}): fields in encoding order, first in the lowest bits; "
                 "each field holds the index of its value.", "#pragma once", "#include <stdint.h>", ""]
        for f in self._fields:
            lines.append(f"#define {up}_{f.name}_SHIFT {f.offset}")
            lines.append(f"#define {up}_{f.name}_BITS {f.bits}")
            for i, v in enumerate(f.values):
                lines.append(f"#define {up}_{f.name}_{_cname(v)} {i}  /* value {v} */")
        args = ", ".join(f"uint64_t {f.name.lower()}_index" for f in self._fields)  # type: ignore[union-attr]
        body = " | ".join(f"({f.name.lower()}_index << {f.offset})" for f in self._fields)  # type: ignore[union-attr]
        lines += ["", f"static inline uint64_t {kernel}_tiling_key({args}) {{ return {body}; }}", ""]
        return "\n".join(lines)


def check_name_conflicts(schema: TilingKeySchema, fn: Any, names: dict[str, Any]) -> None:
    """Field names must not be kernel parameters, nor module-level (non-callable) variables of the
    scope that decorates the kernel: inside the kernel, the field's name means its value."""
    fields = set(schema.field_names())
    params = set(inspect.signature(fn).parameters)
    clash = fields & params
    if clash:
        raise _schema_error(f"TilingKey field name(s) conflict with kernel parameter name(s): {clash}", schema.cls)
    variables = {n for n, v in names.items() if not n.startswith("__") and not callable(v) and not isinstance(v, type)}
    clash = fields & variables
    if clash:
        raise _schema_error(f"TilingKey field name(s) conflict with module-level variable name(s): {clash}",
                            schema.cls)


def _cname(v: int) -> str:
    return f"M{-v}" if v < 0 else f"V{v}"


def _where(cls: Any) -> SourceLocation | None:
    if cls is None:
        return None
    try:
        import linecache
        path = inspect.getsourcefile(cls)
        _, line = inspect.getsourcelines(cls)
        return SourceLocation(path or "?", line, 0, linecache.getline(path or "", line))
    except (TypeError, OSError):
        return None
