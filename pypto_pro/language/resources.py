"""Structs, tuples, GM pointers and views, and GM scalar writes (signatures and docs; the
frontend compiles calls to them inside kernels, ``pypto_pro.frontend.structs`` / ``.resources``).

``pl.struct`` / ``pl.struct_array`` / ``pl.make_tuple`` also work in host code, as in the real
PyPTO Pro: there they return plain namespaces.
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Sequence

from pypto_pro.language.dtypes import DataType
from pypto_pro.language.intrinsic import intrinsic


def _host_and_kernel(name: str):
    """An intrinsic whose host-side call runs the Python body (instead of raising)."""
    def mark(fn):
        fn.__pypto_intrinsic__ = name  # type: ignore[attr-defined]
        return fn
    return mark


@_host_and_kernel("struct")
def struct(*args: Any, **fields: Any) -> Any:
    """``pl.struct("Name", field=value, ...)``: a struct of scalar and fixed-size array fields
    (``arr=[0, 0, 0, 0]``), read and written in kernel code (``s.f``, ``s.arr[i] = v``) and
    emitted as a C struct named ``Name``. Assignment aliases it; helpers get it by reference."""
    return SimpleNamespace(**fields)


@_host_and_kernel("struct_array")
def struct_array(size: int, *args: Any, **fields: Any) -> Any:
    """``pl.struct_array(n, "Name", field=value, ...)``: ``n`` structs; ``arr[i]`` (``i`` a
    compile-time int or a run-time integer) is a reference to slot ``i``."""
    return [SimpleNamespace(**fields) for _ in range(size)]


@_host_and_kernel("make_tuple")
def make_tuple(*args: Any, **fields: Any) -> Any:
    """``pl.make_tuple(field=value, ...)``: values (scalars, tiles, groups, tensors, structs,
    tuples) grouped under names at compile time; ``t.field`` is the value. Nothing is stored."""
    if args:
        raise TypeError("pl.make_tuple() does not accept positional arguments; use keyword args")
    return SimpleNamespace(**fields)


@intrinsic("make_ptr")
def make_ptr(ptr: Any, dtype: DataType | None = None) -> Any:
    """The raw pointer of a tensor or pointer, seen with element type ``dtype`` (default: the
    source's): a reinterpretation, not a conversion."""


@intrinsic("addptr")
def addptr(ptr: Any, offset: Any) -> Any:
    """``ptr`` advanced by ``offset`` elements (of the pointer's dtype)."""


@intrinsic("make_tensor")
def make_tensor(ptr: Any, shape: Sequence[Any], stride: Sequence[Any] | None = None,
                dtype: DataType | None = None) -> Any:
    """A GM tensor view of ``ptr`` (a ``pl.Ptr`` or a tensor): ``shape`` and ``stride`` in
    elements (default: contiguous row-major), element ``[i0, i1, ...]`` at
    ``ptr + i0 * stride[0] + i1 * stride[1] + ...``; ``dtype`` reinterprets the elements."""


@intrinsic("setval")
def setval(container: Any, offset: Any, value: Any) -> None:
    """Write the scalar ``value`` at linear element ``offset`` of a GM tensor or a Vec tile (S pipe)."""
