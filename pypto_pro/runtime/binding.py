"""Host-side argument checks and zero-copy binding of torch tensors / NumPy arrays.

Every check runs before anything executes, so a ``LaunchError`` leaves outputs untouched. Where
the real PyPTO Pro raises ``TypeError`` (wrong argument type, dtype, arity) or ``ValueError``
(a shape that breaks the annotation's policy, a tiling array of the wrong length), ours is also
one.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pypto_pro.errors import LaunchError
from pypto_pro.backends.sim.scalar_math import round_value
from pypto_pro.ir.expr import int_range
from pypto_pro.ir.nodes import ScalarParam, TensorParam
from pypto_pro.ir.storage import TilingParam
from pypto_pro.ir.views import PtrParam
from pypto_pro.language import tiling as tiling_mod
from pypto_pro.language.dtypes import BY_NUMPY, DT_FP32, DT_INT64, DT_UINT16, DT_UINT32, DataType
from pypto_pro.language.types import DYNAMIC, DTypeVar


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


_TORCH_FP8 = {"float8_e4m3fn": "float8_e4m3fn", "float8_e5m2": "float8_e5m2", "float8_e8m0fnu": "float8_e8m0fnu"}


def to_numpy(value: Any, name: str) -> np.ndarray | None:
    """A zero-copy NumPy view of a CPU torch tensor or NumPy array (None if neither)."""
    if isinstance(value, np.ndarray):
        return value
    torch = _torch()
    if torch is not None and isinstance(value, torch.Tensor):
        if value.device.type != "cpu":
            raise LaunchError(f"argument '{name}' is on {value.device}; the simulator needs CPU tensors", kind="type")
        if value.dtype == torch.bfloat16:
            import ml_dtypes
            return value.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
        fp8 = _TORCH_FP8.get(str(value.dtype).removeprefix("torch."))
        if fp8 is not None:  # NumPy has no fp8: the same bytes as ml_dtypes' type
            import ml_dtypes
            return value.view(torch.uint8).numpy().view(getattr(ml_dtypes, fp8))
        if str(value.dtype) == "torch.float4_e2m1fn_x2":  # two packed FP4 codes a byte: its uint8 bytes, as the
            return value.view(torch.uint8).numpy()      # packed FP4 parameters take them (check_tensor)
        try:
            return value.numpy()
        except (TypeError, RuntimeError) as exc:
            raise LaunchError(f"argument '{name}': {exc}", kind="type") from None
    return None


def dtype_name(value: Any) -> str:
    return str(getattr(value, "dtype", type(value).__name__))


@dataclass
class BoundArgs:
    arrays: list[np.ndarray | None]
    scalars: dict[str, Any]
    constexprs: dict[str, Any]
    dtypes: dict[str, DataType]  # DTypeVar name -> the dtype the arguments bind it to
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)  # tensors with STATIC / ... dims
    static_signature: tuple = ()  # (param index, axis, value) of every specialising dim, as the real runtime
    scalar_error: LaunchError | None = None  # a run-time scalar's error, raised after compiling (defer_scalars)


def bind_values(kernel_name: str, signature: inspect.Signature, args: tuple, kwargs: dict) -> dict[str, Any]:
    """Arguments by parameter name, defaults applied (arity errors are ``TypeError``s)."""
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as exc:
        names = ", ".join(signature.parameters)
        raise LaunchError(f"{kernel_name}({names}): {exc}", kind="type") from None
    bound.apply_defaults()
    return dict(bound.arguments)


def bind_arguments(kernel_name: str, params: list, args: tuple, kwargs: dict,
                   signature: inspect.Signature | None = None, defer_scalars: bool = False) -> BoundArgs:
    """Check and bind a launch's arguments. ``defer_scalars``: keep the first run-time scalar's
    error in ``scalar_error`` instead of raising it, for the launcher to raise after compiling (the
    real launcher compiles on the first call and checks scalar arguments after, so a compile error
    wins)."""
    if signature is None:
        signature = inspect.Signature([inspect.Parameter(p.name, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                                       for p in params])
    values = bind_values(kernel_name, signature, args, kwargs)
    arrays: list[np.ndarray | None] = [None] * len(params)
    bound = BoundArgs(arrays, {}, {}, {})
    static: list[tuple[int, int, int]] = []
    for p in params:
        v = values[p.name]
        if isinstance(p, PtrParam):
            arrays[p.index] = check_ptr(kernel_name, p, v)
        elif isinstance(p, TensorParam):
            arr = check_tensor(kernel_name, p, v, bound.dtypes)
            arrays[p.index] = arr
            if p.type.needs_binding:
                bound.shapes[p.name] = tuple(arr.shape)
                static += [(p.index, a, int(arr.shape[a])) for a in p.type.static_axes(arr.ndim)]
        elif isinstance(p, TilingParam):
            bound.scalars[p.name] = check_tiling(kernel_name, p, v)
        elif p.ty == "constexpr":
            bound.constexprs[p.name] = v
        else:
            try:
                bound.scalars[p.name] = check_scalar(kernel_name, p, v)
            except LaunchError as exc:
                if not defer_scalars:
                    raise
                bound.scalar_error = bound.scalar_error or exc
    bound.static_signature = tuple(static)
    return bound


# dtypes the real runtime maps to no torch dtype, so it takes any tensor for them (jit.py _PL_DTYPE_TO_TORCH):
# ours takes a tensor of the same element size and reads its bytes as the declared dtype
UNCHECKED_DTYPES = (DT_UINT16, DT_UINT32)


def check_tensor(kernel_name: str, p: TensorParam, v: Any, dtypes: dict[str, DataType]) -> np.ndarray:
    arr = to_numpy(v, p.name)
    if arr is None:
        raise LaunchError(f"{kernel_name}: Tensor parameter '{p.name}' expected torch.Tensor (or a NumPy array), "
                          f"got {type(v).__name__}", kind="type")
    got = BY_NUMPY.get(arr.dtype)
    var = p.type.dtype
    if isinstance(var, DTypeVar):
        if var.name in dtypes:
            want = dtypes[var.name]
        elif got in var.choices:
            want = dtypes[var.name] = got
        else:
            raise LaunchError(f"{kernel_name}: argument '{p.name}' has dtype {dtype_name(v)}; {var.name} may be "
                              f"{', '.join(c.name for c in var.choices)}", kind="type")
    else:
        want = var
    if got != want and want in UNCHECKED_DTYPES and arr.dtype.itemsize == want.itemsize:
        arr, got = arr.view(want.np_dtype), want  # the real runtime checks no torch dtype for these: bytes as-is
    elif got != want and arr.dtype == np.uint8 and (want.bits == 8 or want.packed) and not want.is_int():
        # the 8-bit and packed 4-bit float types without a torch dtype of their own (HF8, E8M0, FP4) travel as
        # uint8 tensors of their bytes, as the real runtime takes them
        arr = arr.view(want.np_dtype) if want.np_dtype is not None else arr
        got = want
    if got != want:
        raise LaunchError(f"{kernel_name}: Tensor parameter '{p.name}' dtype mismatch: expected {want.name} "
                          f"({want.np_dtype}), got {dtype_name(v)}", kind="type")
    t = p.type
    if t.has_ellipsis:
        if arr.ndim < t.rank:
            raise LaunchError(f"{kernel_name}: Tensor parameter '{p.name}' rank mismatch: expected at least {t.rank}, "
                              f"got {arr.ndim}", kind="value")
    elif arr.ndim != t.rank:
        raise LaunchError(f"{kernel_name}: Tensor parameter '{p.name}' rank mismatch: expected {t.rank}, got "
                          f"{arr.ndim}", kind="value")
    for axis, d in enumerate(t.dims[:t.rank]):
        if isinstance(d, int) and d != arr.shape[axis]:
            raise LaunchError(f"{kernel_name}: Tensor parameter '{p.name}' axis {axis} mismatch: expected {d}, got "
                              f"{arr.shape[axis]}", kind="value")
    if 0 in arr.shape:
        raise LaunchError(f"{kernel_name}: Tensor parameter '{p.name}' axis {arr.shape.index(0)} must be positive, "
                          f"got 0 (shape {list(arr.shape)})", kind="value")
    if not arr.flags.c_contiguous:
        raise LaunchError(f"{kernel_name}: argument '{p.name}' is not contiguous (row-major); pass .contiguous()",
                          kind="value")
    return arr


def check_ptr(kernel_name: str, p: PtrParam, v: Any) -> np.ndarray:
    """A ``pl.Ptr`` argument: any contiguous tensor; its bytes, seen as the pointer's dtype. ``None``
    is a null pointer, as the real runtime passes it (for optional inputs the kernel never reads):
    memory of no bytes, so any load or store through it is out of bounds."""
    if v is None:
        return np.zeros(0, dtype=p.dtype.np_dtype if p.dtype.np_dtype is not None else np.uint8)
    arr = to_numpy(v, p.name)
    if arr is None:
        raise LaunchError(f"{kernel_name}: Ptr parameter '{p.name}' expected torch.Tensor (or a NumPy array), got "
                          f"{type(v).__name__}", kind="type")
    if not arr.flags.c_contiguous:
        raise LaunchError(f"{kernel_name}: Ptr parameter '{p.name}' needs a contiguous tensor", kind="value")
    flat = arr.reshape(-1).view(np.uint8)
    item = p.dtype.itemsize
    if flat.size % item:
        raise LaunchError(f"{kernel_name}: Ptr parameter '{p.name}' is {p.dtype.name}, but the argument has "
                          f"{flat.size} bytes (not a multiple of {item})", kind="value")
    return flat.view(p.dtype.np_dtype)


def check_tiling(kernel_name: str, p: TilingParam, v: Any) -> dict[str, Any]:
    """The values the device reads from a tiling instance (packed as its C struct, read back)."""
    if type(v) is not p.cls:
        hint = " (an instance of the tiling class, passed last)" if not tiling_mod.is_tiling_class(type(v)) else ""
        raise LaunchError(f"{kernel_name}: tiling parameter '{p.name}' expected a {p.cls.__name__} instance{hint}, "
                          f"got {type(v).__name__}", kind="type")
    try:
        _, values = tiling_mod.pack(v)
    except ValueError as exc:
        raise LaunchError(f"{kernel_name}: tiling argument '{p.name}': {exc}", kind="value") from None
    except TypeError as exc:
        raise LaunchError(f"{kernel_name}: tiling argument '{p.name}': {exc}", kind="type") from None
    return values


def check_scalar(kernel_name: str, p: ScalarParam, v: Any) -> Any:
    """The value a run-time scalar parameter gets, checked as the real ``_validate_scalar_arg`` does:
    a bool fits bool and integer dtypes, an int integer dtypes, a float float dtypes. An int that
    fits the dtype's width as either a signed or an unsigned number is reinterpreted as the real
    ctypes packing does (``3212836864`` -- fp32 bits as uint32 -- to a ``DT_INT32`` parameter is
    ``-1082130432``); ours refuses one wider than the dtype (ctypes would drop its high bits
    silently). A parameter annotated with Python's ``float`` (ours) also takes an int."""
    dtype = p.dtype or (DT_FP32 if p.ty == "float" else DT_INT64)
    where = f"{kernel_name}: argument '{p.name}' ({dtype.name})"
    if isinstance(v, (np.bool_, np.integer, np.floating)):
        v = v.item()
    if not isinstance(v, (int, float, bool)):
        raise LaunchError(f"{where} must be a Python scalar (int / float / bool), got {type(v).__name__}", kind="type")
    if isinstance(v, bool):
        if not (dtype.is_bool() or dtype.is_int()):
            raise LaunchError(f"{where}: a bool was passed for a non-boolean, non-integer dtype", kind="type")
        return v if dtype.is_bool() else int(v)
    if isinstance(v, float):
        if not dtype.is_float():
            raise LaunchError(f"{where}: a float ({v!r}) was passed for a non-float dtype", kind="type")
    elif dtype.is_float() and getattr(p, "legacy", False):
        pass  # ours: a Python-float parameter takes an int, as Python would
    elif not dtype.is_int():
        raise LaunchError(f"{where}: an int ({v!r}) was passed for a non-integer dtype"
                          + (f"; pass {float(v)!r}" if dtype.is_float() else ""), kind="type")
    if dtype.is_float():
        if dtype.name in ("DT_FP16", "DT_BF16"):
            raise LaunchError(f"{where}: FP16 / BF16 scalar parameters cannot be passed to a kernel (the real "
                              "runtime has no ABI for them); use pl.DT_FP32", kind="type")
        return round_value(float(v), dtype)
    lo, hi = int_range(dtype)
    if lo <= v <= hi:
        return v
    bits = dtype.bits
    if lo < 0 and hi < v < 1 << bits:  # unsigned bits for a signed dtype: the same bits, as ctypes packs them
        return v - (1 << bits)
    if lo == 0 and -(1 << (bits - 1)) <= v < 0:  # a negative value for an unsigned dtype: its two's complement
        return v + (1 << bits)
    raise LaunchError(f"{where}: {v} does not fit in {bits} bits (range [{lo}, {hi}], or [0, {(1 << bits) - 1}] "
                      "as unsigned bits)", kind="value")


__all__ = ["BoundArgs", "bind_arguments", "bind_values", "check_tensor", "check_ptr", "check_tiling",
           "check_scalar", "to_numpy", "DYNAMIC"]
