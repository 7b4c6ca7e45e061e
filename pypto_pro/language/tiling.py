"""Tiling dataclasses: the run-time parameters a launch passes as the kernel's last argument.

A tiling class is a ``@dataclass`` whose fields are all ``int`` (``int64_t`` on the device),
``float`` (``float``, fp32), ``bool``, or a fixed-size array ``T[N]`` of one of them
(``1 <= N <= 2048``, an integer literal). ``T[N]`` is not Python: the module must use
``from __future__ import annotations`` so the annotation stays a string, which is parsed here
without evaluating it (the real PyPTO Pro's ``language/typing/_tiling.py`` rules).

The host packs an instance into the C struct the device reads (field order, native ctypes
alignment); the simulator reads back the packed values, so a kernel sees exactly what the chip
would: ints wrapped to 64 bits, floats rounded to fp32.
"""
from __future__ import annotations

import ast
import ctypes
import inspect
import numbers
import textwrap
from dataclasses import dataclass, is_dataclass
from typing import Any

MAX_ARRAY = 2048

_PY_TYPES = {"int": int, "float": float, "bool": bool}
_SCALAR_TY = {int: "int", float: "float", bool: "bool"}
_CTYPES = {"int": ctypes.c_int64, "float": ctypes.c_float, "bool": ctypes.c_bool}
C_TYPE_NAMES = {"int": "int64_t", "float": "float", "bool": "bool"}


@dataclass(frozen=True)
class TilingField:
    """One field: its scalar type (``"int"`` / ``"float"`` / ``"bool"``) and array size (None for
    a scalar field)."""

    name: str
    ty: str
    size: int | None = None

    @property
    def c_decl(self) -> str:
        tail = f"[{self.size}]" if self.size is not None else ""
        return f"{C_TYPE_NAMES[self.ty]} {self.name}{tail};"


def parse_field_annotation(annotation: object) -> tuple[str, int | None]:
    """``int`` / ``"float"`` / ``"bool[8]"`` -> (scalar type, array size or None). Raises
    ``TypeError`` for a type that is not int / float / bool, ``ValueError`` for a bad size."""
    if isinstance(annotation, type) and annotation in _SCALAR_TY:
        return _SCALAR_TY[annotation], None
    if not isinstance(annotation, str):
        raise TypeError("expected int, float, bool, or T[N]")
    try:
        node = ast.parse(annotation, mode="eval").body
    except SyntaxError as exc:
        raise ValueError(f"invalid annotation syntax {annotation!r}") from exc
    if isinstance(node, ast.Name):
        if node.id not in _PY_TYPES:
            raise TypeError(f"unsupported scalar type {node.id!r}")
        return node.id, None
    if not isinstance(node, ast.Subscript) or not isinstance(node.value, ast.Name):
        raise TypeError("expected a scalar type or fixed-array annotation T[N]")
    if node.value.id not in _PY_TYPES:
        raise TypeError(f"array element type must be int, float, or bool, got {node.value.id!r}")
    size = node.slice
    if not isinstance(size, ast.Constant) or type(size.value) is not int or size.value <= 0:
        raise ValueError("array size must be a positive integer literal")
    if size.value > MAX_ARRAY:
        raise ValueError(f"Array size must not exceed {MAX_ARRAY}, got {size.value}")
    return node.value.id, size.value


def looks_like_tiling_class(cls: object) -> bool:
    """A dataclass type with annotations: meant as a tiling class (its fields may still be wrong)."""
    return isinstance(cls, type) and is_dataclass(cls) and bool(getattr(cls, "__annotations__", {}))


def duplicate_field(cls: type) -> str | None:
    """The first field name the class body annotates twice (Python keeps only the last one in
    ``__annotations__``, so this reads the class source), or None."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (TypeError, OSError, SyntaxError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls.__name__:
            seen: set[str] = set()
            for stmt in node.body:
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    if stmt.target.id in seen:
                        return stmt.target.id
                    seen.add(stmt.target.id)
            return None
    return None


def tiling_fields(cls: type) -> list[TilingField]:
    """The validated fields of a tiling class, in definition order. Raises ``ValueError`` (with the
    real runtime's wording) for a duplicate field, a bad annotation or an empty class."""
    if not isinstance(cls, type) or not is_dataclass(cls):
        raise ValueError(f"Not a valid tiling class: {cls!r}. Expected a dataclass.")
    annotations = getattr(cls, "__annotations__", {})
    if not annotations:
        raise ValueError(f"Not a valid tiling class: {cls!r}. At least one field is required.")
    dup = duplicate_field(cls)
    if dup is not None:
        raise ValueError(f"Tiling class '{cls.__name__}' has duplicate field '{dup}'. All field names must be unique.")
    fields = []
    for name, annotation in annotations.items():
        try:
            ty, size = parse_field_annotation(annotation)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"Invalid tiling field {name!r} annotation {annotation!r}: {exc}") from None
        fields.append(TilingField(name, ty, size))
    return fields


def is_tiling_class(cls: object) -> bool:
    """True for a dataclass whose fields are all valid tiling fields (the real predicate)."""
    if not looks_like_tiling_class(cls):
        return False
    try:
        tiling_fields(cls)  # type: ignore[arg-type]
    except ValueError:
        return False
    return True


def ctype_struct(cls: type) -> type:
    """A ``ctypes.Structure`` with the C layout of the device's tiling struct."""
    members = []
    for f in tiling_fields(cls):
        base = _CTYPES[f.ty]
        members.append((f.name, base * f.size if f.size is not None else base))
    return type(f"{cls.__name__}_CStruct", (ctypes.Structure,), {"_fields_": members})


def c_struct_decl(cls: type, type_name: str | None = None) -> str:
    """The C declaration of the tiling struct (the layout :func:`pack` produces)."""
    body = "\n".join(f"    {f.c_decl}" for f in tiling_fields(cls))
    return f"struct {type_name or cls.__name__} {{\n{body}\n}};"


def pack(instance: Any) -> tuple[bytes, dict[str, Any]]:
    """Serialise a tiling instance to its C struct bytes, and the values the device reads back
    (``{field: value or list}``). Raises ``TypeError`` / ``ValueError`` as the real runtime does
    for an array field that is not a sequence or has the wrong length."""
    cls = type(instance)
    fields = tiling_fields(cls)
    struct_cls = ctype_struct(cls)
    values = []
    for f in fields:
        v = getattr(instance, f.name)
        if f.size is not None:
            if isinstance(v, (str, bytes, bytearray)) or not hasattr(v, "__getitem__") or not hasattr(v, "__len__"):
                raise TypeError(f"Tiling field '{f.name}' is {f.ty}[{f.size}]: expected an indexable sequence, got "
                                f"{type(v).__name__!r}")
            if len(v) != f.size:
                raise ValueError(f"Tiling field '{f.name}' expected {f.size} elements, got {len(v)}")
            items = [v[i] for i in range(f.size)]
            for x in items:
                _check_value(f, x)
            values.append((_CTYPES[f.ty] * f.size)(*(_c(f.ty, x) for x in items)))
        else:
            _check_value(f, v)
            values.append(_c(f.ty, v))
    packed = struct_cls(*values)
    readback: dict[str, Any] = {}
    for f in fields:
        got = getattr(packed, f.name)
        readback[f.name] = [_py(f.ty, x) for x in got] if f.size is not None else _py(f.ty, got)
    return bytes(packed), readback


def _check_value(f: TilingField, v: Any) -> None:
    ok = isinstance(v, numbers.Real) if f.ty == "float" else isinstance(v, numbers.Integral)
    if not ok:
        raise TypeError(f"Tiling field '{f.name}' holds {f.ty} values; got {type(v).__name__} {v!r}")


def _c(ty: str, v: Any) -> Any:
    """A value ctypes stores as the device does: ints wrap to 64 bits, floats round to fp32."""
    if ty == "float":
        return float(v)
    return bool(v) if ty == "bool" else int(v)  # ctypes' c_int64 wraps an out-of-range int


def _py(ty: str, v: Any) -> Any:
    return bool(v) if ty == "bool" else float(v) if ty == "float" else int(v)
