"""What a launch specialises and configures, checked as the real PyPTO Pro runtime checks it.

- the bracket forms: ``kernel[block_dim]``, ``kernel[stream, block_dim]``,
  ``kernel[stream, block_dim, tilingkey]``, ``kernel[stream, block_dim, datatype]`` (a kernel
  with a datatype schema and no tiling key) and ``kernel[stream, block_dim, tilingkey, datatype]``;
- ``block_dim``: a positive integer;
- the ``datatype=`` schema of ``@pl.jit``: ``{param name: dtype variable name}``, and the launch's
  ``{param name: pl.DT_*}`` dict, which binds each variable to a dtype inside the kernel.

Errors are the real ones (``ValueError`` / ``TypeError``): a ``CompileError`` for a schema at
decoration, a ``LaunchError`` at launch, each also an instance of the builtin class.
"""
from __future__ import annotations

import inspect
import numbers
from dataclasses import dataclass
from typing import Any, Callable

from pypto_pro.errors import CompileError, LaunchError
from pypto_pro.language.dtypes import DataType


@dataclass(frozen=True)
class LaunchKey:
    """A parsed bracket: stream, block count, tiling-key dict and datatype dict (None if absent)."""

    stream: Any
    block_dim: Any
    tiling_key: dict | None
    datatype: dict | None


def key_error(has_tiling_key: bool, has_datatype: bool) -> str:
    if has_tiling_key and has_datatype:
        return "Expected kernel[stream, block_dim, tilingkey, datatype]"
    if has_tiling_key:
        return "Expected kernel[stream, block_dim, tilingkey]"
    if has_datatype:
        return "Expected kernel[stream, block_dim, datatype]"
    return "Expected kernel[stream, block_dim] or kernel[block_dim]"


def parse_launch_key(key: Any, has_tiling_key: bool, has_datatype: bool, kernel: str) -> LaunchKey:
    """Split ``kernel[...]``'s subscript as the real runtime does (a third item is the tiling key,
    or the datatype dict when the kernel has a datatype schema and no tiling key)."""
    tk = dt = None
    if isinstance(key, tuple):
        if len(key) == 4:
            stream, block_dim, tk, dt = key
        elif len(key) == 3:
            stream, block_dim, third = key
            if not has_tiling_key and has_datatype:
                dt = third
            else:
                tk = third
        elif len(key) == 2:
            stream, block_dim = key
        else:
            raise LaunchError(f"{kernel}: {key_error(has_tiling_key, has_datatype)}; got {len(key)} items",
                              kind="value")
    else:
        stream, block_dim = None, key
    message = f"{kernel}: {key_error(has_tiling_key, has_datatype)}"
    if has_tiling_key and tk is None:
        raise LaunchError(f"{message} (it is specialised by a tiling key: give one value per field)", kind="value")
    if not has_tiling_key and tk is not None:
        raise LaunchError(f"{message} (it has no tiling_key)", kind="value")
    if has_datatype and dt is None:
        raise LaunchError(f"{message} (it has a datatype schema: give each parameter's dtype)", kind="value")
    if not has_datatype and dt is not None:
        raise LaunchError(f"{message} (it has no datatype schema)", kind="value")
    return LaunchKey(stream, block_dim, tk, dt)


def check_block_dim(block_dim: Any, kernel: str) -> int:
    if isinstance(block_dim, bool) or not isinstance(block_dim, numbers.Integral):
        raise LaunchError(f"{kernel}: block_dim must be a positive integer, got {type(block_dim).__name__}: "
                          f"{block_dim!r}", kind="value")
    if block_dim <= 0:
        raise LaunchError(f"{kernel}: block_dim must be a positive integer, got {block_dim}", kind="value")
    return int(block_dim)


# ---- datatype= ---------------------------------------------------------------------------------


def validate_datatype_schema(datatype: Any, where: Any = None) -> dict[str, str] | None:
    """The decorator's ``datatype=`` mapping, checked on its own."""
    if datatype is None:
        return None
    if not isinstance(datatype, dict) or not datatype:
        raise CompileError("datatype must be a non-empty dict mapping param name to dtype variable name", where,
                           kind="value")
    for param, var in datatype.items():
        if not isinstance(param, str) or not param:
            raise CompileError(f"datatype param names must be non-empty strings, got {param!r}", where, kind="value")
        if not isinstance(var, str) or not var.isidentifier():
            raise CompileError(f"datatype variable for param '{param}' must be a valid Python identifier, got "
                               f"{var!r}", where, kind="value")
    return dict(datatype)


def validate_datatype_context(spec: dict[str, str] | None, fn: Callable, tiling_fields: list[str],
                              where: Any = None) -> None:
    """The schema against the kernel: its keys are parameters, its variables are not, nor tiling-key fields."""
    if spec is None:
        return
    params = set(inspect.signature(fn).parameters)
    missing = sorted(set(spec) - params)
    if missing:
        raise CompileError(f"datatype params {missing} do not match kernel function '{fn.__name__}' parameters",
                           where, kind="value")
    variables = set(spec.values())
    clash = sorted(variables & params)
    if clash:
        raise CompileError(f"datatype variable names conflict with kernel params: {clash}", where, kind="value")
    clash = sorted(variables & set(tiling_fields))
    if clash:
        raise CompileError(f"datatype variable names conflict with tiling_key fields: {clash}", where, kind="value")


def bind_datatype(spec: dict[str, str] | None, given: Any, kernel: str) -> dict[str, DataType]:
    """A launch's datatype dict as ``{variable: dtype}`` (the kernel's compile-time names)."""
    if spec is None:
        if given is not None:
            raise LaunchError(f"{kernel}: datatype dict was provided but this kernel has no datatype schema",
                              kind="value")
        return {}
    if not isinstance(given, dict):
        raise LaunchError(f"{kernel}: datatype kernel launch requires a dtype dict", kind="value")
    if set(given) != set(spec):
        raise LaunchError(f"{kernel}: datatype keys {sorted(given)} do not match schema params {sorted(spec)}",
                          kind="value")
    out: dict[str, DataType] = {}
    for param, var in spec.items():
        dtype = given[param]
        if not isinstance(dtype, DataType):
            raise LaunchError(f"{kernel}: datatype['{param}'] must be a pypto_pro.DataType, got "
                              f"{type(dtype).__name__}", kind="type")
        if var in out and out[var] is not dtype:
            raise LaunchError(f"{kernel}: datatype params mapped to variable '{var}' disagree: {out[var]} vs "
                              f"{dtype}", kind="value")
        out[var] = dtype
    return out
