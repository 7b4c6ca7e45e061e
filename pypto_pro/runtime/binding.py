"""Host-side argument checks and zero-copy binding of torch tensors / NumPy arrays.

Every check runs before anything executes, so a ``LaunchError`` leaves outputs untouched.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pypto_pro.errors import LaunchError
from pypto_pro.backends.sim.scalar_math import round_value
from pypto_pro.ir.expr import int_range
from pypto_pro.ir.nodes import NO_DEFAULT, ScalarParam, TensorParam
from pypto_pro.language.dtypes import BY_NUMPY, DT_FP32, DT_INT64, DataType
from pypto_pro.language.types import DYNAMIC, DTypeVar


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


def to_numpy(value: Any, name: str) -> np.ndarray | None:
    """A zero-copy NumPy view of a CPU torch tensor or NumPy array (None if neither)."""
    if isinstance(value, np.ndarray):
        return value
    torch = _torch()
    if torch is not None and isinstance(value, torch.Tensor):
        if value.device.type != "cpu":
            raise LaunchError(f"argument '{name}' is on {value.device}; the simulator needs CPU tensors")
        if value.dtype == torch.bfloat16:
            import ml_dtypes
            return value.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
        try:
            return value.numpy()
        except (TypeError, RuntimeError) as exc:
            raise LaunchError(f"argument '{name}': {exc}") from None
    return None


def dtype_name(value: Any) -> str:
    return str(getattr(value, "dtype", type(value).__name__))


@dataclass
class BoundArgs:
    arrays: list[np.ndarray | None]
    scalars: dict[str, Any]
    constexprs: dict[str, Any]
    dtypes: dict[str, DataType]  # DTypeVar name -> the dtype the arguments bind it to


def bind_arguments(kernel_name: str, params: list[TensorParam | ScalarParam], args: tuple, kwargs: dict) -> BoundArgs:
    names = [p.name for p in params]
    if len(args) > len(params):
        raise LaunchError(f"{kernel_name}() takes {len(params)} arguments ({', '.join(names)}) but {len(args)} were given")
    values: dict[str, Any] = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names:
            raise LaunchError(f"{kernel_name}() got an unexpected argument '{k}'")
        if k in values:
            raise LaunchError(f"{kernel_name}() got two values for argument '{k}'")
        values[k] = v
    for p in params:  # defaults of scalar parameters apply when a launch omits them (as in the real runtime)
        default = getattr(p, "default", NO_DEFAULT)
        if p.name not in values and default is not NO_DEFAULT:
            values[p.name] = default
    missing = [n for n in names if n not in values]
    if missing:
        raise LaunchError(f"{kernel_name}() is missing argument(s): {', '.join(missing)}")
    arrays: list[np.ndarray | None] = [None] * len(params)
    scalars: dict[str, Any] = {}
    constexprs: dict[str, Any] = {}
    dtypes: dict[str, DataType] = {}
    for p in params:
        v = values[p.name]
        if isinstance(p, TensorParam):
            arrays[p.index] = check_tensor(kernel_name, p, v, dtypes)
        elif p.ty == "constexpr":
            constexprs[p.name] = v
        else:
            scalars[p.name] = check_scalar(kernel_name, p, v)
    return BoundArgs(arrays, scalars, constexprs, dtypes)


def check_tensor(kernel_name: str, p: TensorParam, v: Any, dtypes: dict[str, DataType]) -> np.ndarray:
    arr = to_numpy(v, p.name)
    if arr is None:
        raise LaunchError(f"{kernel_name}: argument '{p.name}' must be a torch tensor or NumPy array, "
                          f"got {type(v).__name__}")
    got = BY_NUMPY.get(arr.dtype)
    var = p.type.dtype
    if isinstance(var, DTypeVar):
        if var.name in dtypes:
            want = dtypes[var.name]
        elif got in var.choices:
            want = dtypes[var.name] = got
        else:
            raise LaunchError(f"{kernel_name}: argument '{p.name}' has dtype {dtype_name(v)}; {var.name} may be "
                              f"{', '.join(c.name for c in var.choices)}")
    else:
        want = var
    if got != want:
        raise LaunchError(f"{kernel_name}: argument '{p.name}' has dtype {dtype_name(v)}, expected {want.name} "
                          f"({want.np_dtype})")
    if arr.ndim != p.type.rank:
        raise LaunchError(f"{kernel_name}: argument '{p.name}' has rank {arr.ndim}, expected {p.type.rank}")
    for axis, (d, s) in enumerate(zip(p.type.dims, arr.shape)):
        if d is not DYNAMIC and d != s:
            raise LaunchError(f"{kernel_name}: argument '{p.name}' has size {s} on axis {axis}, expected {d}")
    if 0 in arr.shape:
        raise LaunchError(f"{kernel_name}: argument '{p.name}' is empty (shape {list(arr.shape)})")
    if not arr.flags.c_contiguous:
        raise LaunchError(f"{kernel_name}: argument '{p.name}' is not contiguous (row-major); pass .contiguous()")
    return arr


def check_scalar(kernel_name: str, p: ScalarParam, v: Any) -> Any:
    """The value a run-time scalar parameter gets, checked as the real ``_validate_scalar_arg`` does:
    a bool fits bool and integer dtypes, an int integer dtypes, a float float dtypes. Ours also
    refuses an int outside the dtype's range (the real ctypes packing would wrap it silently); a
    parameter annotated with Python's ``float`` (ours) also takes an int."""
    dtype = p.dtype or (DT_FP32 if p.ty == "float" else DT_INT64)
    where = f"{kernel_name}: argument '{p.name}' ({dtype.name})"
    if isinstance(v, (np.bool_, np.integer, np.floating)):
        v = v.item()
    if not isinstance(v, (int, float, bool)):
        raise LaunchError(f"{where} must be a Python scalar (int / float / bool), got {type(v).__name__}")
    if isinstance(v, bool):
        if not (dtype.is_bool() or dtype.is_int()):
            raise LaunchError(f"{where}: a bool was passed for a non-boolean, non-integer dtype")
        return v if dtype.is_bool() else int(v)
    if isinstance(v, float):
        if not dtype.is_float():
            raise LaunchError(f"{where}: a float ({v!r}) was passed for a non-float dtype")
    elif dtype.is_float() and getattr(p, "legacy", False):
        pass  # ours: a Python-float parameter takes an int, as Python would
    elif not dtype.is_int():
        raise LaunchError(f"{where}: an int ({v!r}) was passed for a non-integer dtype"
                          + (f"; pass {float(v)!r}" if dtype.is_float() else ""))
    if dtype.is_float():
        if dtype.name in ("DT_FP16", "DT_BF16"):
            raise LaunchError(f"{where}: FP16 / BF16 scalar parameters cannot be passed to a kernel (the real "
                              "runtime has no ABI for them); use pl.DT_FP32")
        return round_value(float(v), dtype)
    lo, hi = int_range(dtype)
    if not lo <= v <= hi:
        raise LaunchError(f"{where}: {v} is out of range [{lo}, {hi}]")
    return v
