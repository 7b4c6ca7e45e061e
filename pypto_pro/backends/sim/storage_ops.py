"""Struct and tiling fields in the simulator's generated program (``pypto_pro.ir.storage``).

Each field is a Python list local to the program (one per block run), ``slots x width`` long:
a struct's fields start unset and are filled where ``pl.struct(...)`` runs; the tiling
parameter's fields come from the launch (``ctx.scalars[name]``, the values the packed C struct
holds). Every read and write goes through a helper that checks the slot and element indices and
that the element was set, raising a located ``SimulationError`` otherwise. Stores round to the
field's C type (fp32 for float fields).
"""
from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np

from pypto_pro.errors import SimulationError, SourceLocation
from pypto_pro.ir.storage import ArrayInit, ArrayLoad, ArrayStore, ScalarArray


def array_name(a: ScalarArray) -> str:
    return f"{re.sub(r'[^0-9A-Za-z_]', '_', a.label)}__f{a.uid}"


class _Site:
    __slots__ = ("array", "loc", "what")

    def __init__(self, array: ScalarArray, loc: SourceLocation | None, what: str):
        self.array = array
        self.loc = loc
        self.what = what


def _fault(site: _Site, message: str) -> SimulationError:
    loc = site.loc
    text = f"{loc.path}:{loc.line}: {message}" if loc else message
    if loc and loc.source_line:
        text += f"\n    {loc.source_line.strip()}"
    return SimulationError(text)


def _index(site: _Site, s: int, e: int) -> int:
    a = site.array
    if not 0 <= s < a.storage.slots:
        owner = f"struct_array '{a.storage.var}'"
        raise _fault(site, f"{site.what} {owner}[{s}]: index {s} is out of range for {a.storage.slots} slots")
    if not 0 <= e < a.per_slot:
        raise _fault(site, f"{site.what} '{a.label}[{e}]': index {e} is out of range for {a.per_slot} elements")
    return s * a.per_slot + e


def _f32(v: Any) -> float:
    return float(np.float32(v))


_CONVERT: dict[str, Callable[[Any], Any]] = {"float": _f32, "int": int, "bool": bool}


class StorageCodegen:
    """The storage part of one program's source: declarations, reads, writes, and the helpers
    (``namespace``) the generated code calls."""

    def __init__(self) -> None:
        self.sites: list[_Site] = []
        self.arrays: dict[int, ScalarArray] = {}
        sites = self.sites

        def ld(a: list, s: int, e: int, k: int) -> Any:
            site = sites[k]
            v = a[_index(site, s, e)]
            if v is None:
                raise _fault(site, f"'{site.array.label}' is read before this program set it (a struct made in "
                                   "one section is not visible in the other's program)")
            return v

        def st(a: list, s: int, e: int, v: Any, k: int) -> None:
            site = sites[k]
            a[_index(site, s, e)] = _CONVERT[site.array.ty](v)

        self.namespace: dict[str, Any] = {"_sld": ld, "_sst": st, "_sconv": _CONVERT}

    def _site(self, array: ScalarArray, loc, what: str) -> int:
        self.arrays.setdefault(array.uid, array)
        self.sites.append(_Site(array, loc, what))
        return len(self.sites) - 1

    def declarations(self, used: list[ScalarArray]) -> list[str]:
        """Program-start lines: a list per field (tiling fields from the launch's values)."""
        lines = []
        for a in used:
            self.arrays.setdefault(a.uid, a)
            name = array_name(a)
            if a.storage.kind == "tiling":
                value = f"ctx.scalars[{a.storage.param!r}][{a.field!r}]"
                lines.append(f"    {name} = list({value})" if a.width is not None else f"    {name} = [{value}]")
            else:
                lines.append(f"    {name} = [None] * {a.size}")
        return lines

    def load(self, e: ArrayLoad, expr: Callable) -> str:
        k = self._site(e.array, e.loc, "read of")
        elem = expr(e.elem) if e.elem is not None else "0"
        return f"_sld({array_name(e.array)}, {expr(e.slot)}, {elem}, {k})"

    def statement(self, s: ArrayStore | ArrayInit, expr: Callable) -> str:
        a = s.array
        if isinstance(s, ArrayStore):
            k = self._site(a, s.loc, "write to")
            elem = expr(s.elem) if s.elem is not None else "0"
            return f"_sst({array_name(a)}, {expr(s.slot)}, {elem}, {expr(s.value)}, {k})"
        conv = f"_sconv[{a.ty!r}]"
        values = ", ".join(f"{conv}({expr(v)})" for v in s.values)
        return f"{array_name(a)}[:] = [{values}] * {a.storage.slots}"
