"""GM pointers, tensor views and scalar GM writes in kernel code: ``pl.make_ptr``, ``pl.addptr``,
``pl.make_tensor`` and ``pl.setval`` on a GM tensor.

A pointer (:class:`PtrValue`) is a parameter's memory, a byte offset into it and an element
type. ``pl.make_tensor`` turns a pointer (or a tensor) into a tensor view
(``pypto_pro.ir.views.TensorView``) that loads and stores use like a tensor parameter. Shape,
strides and offsets may be run-time values (tiling fields, shapes, ...): they are taken when the
view is made.
"""
from __future__ import annotations

import ast
import numbers
from typing import TYPE_CHECKING, Any

from pypto_pro.frontend.intrinsics import handler
from pypto_pro.frontend.operands import Args, element_node
from pypto_pro.frontend.values import FrontendObject, TensorValue, TileValue
from pypto_pro.ir.expr import BinOp, Const, Expr, Var
from pypto_pro.ir.nodes import Assign, GMRef, TensorParam, TileOp
from pypto_pro.ir.views import PtrParam, TensorView
from pypto_pro.language.dtypes import DataType
from pypto_pro.language.enums import PipeType
from pypto_pro.language.types import DYNAMIC, TensorType

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser


class PtrValue(FrontendObject):
    """A GM pointer: ``base``'s memory from ``offset`` bytes on, seen as ``dtype`` elements."""

    def __init__(self, base: TensorParam, offset: Expr, dtype: DataType):
        self.base = base
        self.offset = offset
        self.dtype = dtype

    @staticmethod
    def of_param(p: PtrParam) -> "PtrValue":
        return PtrValue(p, Const(0), p.dtype)

    def describe(self) -> str:
        return f"pointer '{self.base.name}' ({self.dtype.name})"

    def frontend_getattr(self, p: "FunctionParser", node: ast.AST, attr: str) -> Any:
        if attr == "dtype":
            return self.dtype
        p.fail(node, f"{self.describe()} has no attribute '{attr}'; view it with pl.make_tensor(ptr, shape)")

    def frontend_setattr(self, p, node, attr, value) -> None:
        p.fail(node, f"{self.describe()} has no settable attributes")

    def frontend_getitem(self, p, node, index) -> Any:
        p.fail(node, f"{self.describe()} cannot be indexed; view it with pl.make_tensor(ptr, shape) first")

    def frontend_setitem(self, p, node, index, value) -> None:
        self.frontend_getitem(p, node, index)


def _source(p: "FunctionParser", a: Args, name: str, what: str) -> tuple[TensorParam, Expr, DataType]:
    """(parameter, byte offset, dtype) of a pointer or tensor argument."""
    v = a[name]
    if isinstance(v, PtrValue):
        return v.base, v.offset, v.dtype
    if isinstance(v, TensorValue):
        param = v.param
        if isinstance(param, TensorView):
            return param.base, param.offset, param.type.dtype  # type: ignore[return-value]
        return param, Const(0), param.type.dtype  # type: ignore[return-value]
    p.fail(a.node(name), f"{what}: '{name}' must be a pl.Ptr or a tensor, got {p.describe(v)}", kind="type")
    raise AssertionError


def _dtype(p: "FunctionParser", a: Args, default: DataType) -> DataType:
    dt = a["dtype"]
    if dt is None:
        return default
    if not isinstance(dt, DataType):
        p.fail(a.node("dtype"), f"dtype must be a pl.DT_* type, got {p.describe(dt)}", kind="type")
    if dt.np_dtype is None:
        p.fail(a.node("dtype"), f"{dt.name} elements are packed two per byte; views of them are not supported")
    return dt


def taken(p: "FunctionParser", node: ast.AST, v: Any, base: str) -> Expr:
    """``v`` as an expression whose value is fixed now: a run-time one (even a variable, which later
    code may assign) is copied into a fresh variable."""
    e = v if isinstance(v, Expr) else Const(v)
    if isinstance(e, Const):
        return e
    var = Var(p.ctx.fresh_name(base))
    p.ctx.builder.emit(Assign(var, e, p.loc(node)))
    return var


def _int_arg(p: "FunctionParser", node: ast.AST, v: Any, what: str) -> Expr:
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):
        return Const(int(v))
    if not isinstance(v, Expr) or v.ty != "int":
        p.fail(node, f"{what} must be an integer (a compile-time int or a run-time integer scalar), got "
                     f"{p.describe(v)}")
    return v


@handler("make_ptr")
def pl_make_ptr(p: "FunctionParser", node: ast.Call, a: Args) -> PtrValue:
    base, offset, dtype = _source(p, a, "ptr", "pl.make_ptr")
    dt = _dtype(p, a, dtype)
    if isinstance(offset, Const) and offset.value % dt.itemsize:
        p.fail(node, f"pl.make_ptr: byte offset {offset.value} of '{base.name}' is not a multiple of the "
                     f"{dt.name} element size ({dt.itemsize})")
    return PtrValue(base, offset, dt)


@handler("addptr")
def pl_addptr(p: "FunctionParser", node: ast.Call, a: Args) -> PtrValue:
    ptr = a["ptr"]
    if not isinstance(ptr, PtrValue):
        p.fail(a.node("ptr"), f"pl.addptr: 'ptr' must be a pl.Ptr, got {p.describe(ptr)} (pl.make_ptr(tensor) "
                              "gives a tensor's pointer)", kind="type")
    if ptr.dtype.get_bit() < 8:
        p.fail(a.node("ptr"), f"pl.addptr: {ptr.dtype.name} is narrower than a byte; reinterpret the pointer "
                              "first (pl.make_ptr(ptr, dtype=pl.DT_UINT8))")
    off = _int_arg(p, a.node("offset"), a["offset"], "pl.addptr offset")
    if isinstance(off, Const) and isinstance(ptr.offset, Const):
        total: Expr = Const(ptr.offset.value + off.value * ptr.dtype.itemsize)
        if total.value < 0:  # type: ignore[operator]
            p.fail(a.node("offset"), f"pl.addptr: the pointer would start {-total.value} bytes before "  # type: ignore[operator]
                                     f"'{ptr.base.name}'")
    else:
        total = BinOp("+", ptr.offset, BinOp("*", off, Const(ptr.dtype.itemsize)))
    return PtrValue(ptr.base, taken(p, node, total, f"{ptr.base.name}_off"), ptr.dtype)


@handler("make_tensor")
def pl_make_tensor(p: "FunctionParser", node: ast.Call, a: Args) -> TensorValue:
    base, offset, src_dtype = _source(p, a, "ptr", "pl.make_tensor")
    dtype = _dtype(p, a, src_dtype)
    shape, stride = a["shape"], a["stride"]
    if isinstance(shape, tuple) and hasattr(shape, "_fields"):
        shape = list(shape)
    if not isinstance(shape, (list, tuple)) or not shape:
        p.fail(a.node("shape"), f"pl.make_tensor: shape must be a non-empty list, got {p.describe(shape)}")
    rank = len(shape)
    dims = [_int_arg(p, element_node(a.node("shape"), rank, i), d, f"shape[{i}]") for i, d in enumerate(shape)]
    for i, d in enumerate(dims):
        if isinstance(d, Const) and d.value <= 0:
            p.fail(element_node(a.node("shape"), rank, i), f"pl.make_tensor: shape[{i}] = {d.value} must be positive")
    if stride is None:
        strides: list[Expr] = [Const(1)]
        for d in reversed(dims[1:]):
            prev = strides[0]
            strides.insert(0, Const(prev.value * d.value) if isinstance(prev, Const) and isinstance(d, Const)
                           else BinOp("*", prev, d))
    else:
        if not isinstance(stride, (list, tuple)) or len(stride) != rank:
            p.fail(a.node("stride"), f"pl.make_tensor: stride must list one step per axis ({rank}), got "
                                     f"{p.describe(stride)}")
        strides = [_int_arg(p, element_node(a.node("stride"), rank, i), s, f"stride[{i}]")
                   for i, s in enumerate(stride)]
    if isinstance(offset, Const) and offset.value % dtype.itemsize:
        p.fail(node, f"pl.make_tensor: byte offset {offset.value} is not a multiple of the {dtype.name} element size")
    name = p.ctx.fresh_name(f"{base.name}_view")
    shape_e = tuple(taken(p, node, d, f"{name}_dim{i}") for i, d in enumerate(dims))
    stride_e = tuple(taken(p, node, s, f"{name}_stride{i}") for i, s in enumerate(strides))
    ttype = TensorType(tuple(d.value if isinstance(d, Const) else DYNAMIC for d in shape_e), dtype)
    view = TensorView(name, base, ttype, shape_e, stride_e, offset, p.ctx.param_count + len(p.ctx.views))
    p.ctx.views.append(view)
    return TensorValue(view)  # type: ignore[arg-type]


@handler("setval")
def pl_setval(p: "FunctionParser", node: ast.Call, a: Args) -> None:
    container, offset, value = a["container"], a["offset"], a["value"]
    if isinstance(container, TileValue):
        from pypto_pro.ops.tile_element import setval_tile
        return setval_tile(p, node, a)
    if not isinstance(container, TensorValue):
        p.fail(a.node("container"), f"pl.setval: 'container' must be a tensor or a tile, got {p.describe(container)}",
               kind="type")
    # outside the sections it is shared code: the scalar unit of every engine's program writes it (as the real one)
    param = container.param
    dtype = param.type.dtype
    if dtype.np_dtype is None or dtype.get_bit() < 8:
        p.fail(a.node("container"), f"pl.setval: {dtype.name} is a storage-only type; scalars cannot be written to it")
    off = _int_arg(p, a.node("offset"), offset, "pl.setval offset")
    if isinstance(off, Const):
        size = 1
        for d in param.type.dims:
            size = size * d if isinstance(d, int) and isinstance(size, int) else None  # type: ignore[assignment]
        if off.value < 0 or (size is not None and off.value >= size):
            p.fail(a.node("offset"), f"pl.setval: offset {off.value} is outside tensor '{param.name}' "
                                     f"({size} elements)" if size is not None else "pl.setval: offset is negative")
    if not isinstance(value, (bool, int, float, Expr)):
        p.fail(a.node("value"), f"pl.setval: 'value' must be a scalar, got {p.describe(value)}")
    v = value if isinstance(value, Expr) else Const(value)
    if (dtype.is_int() or dtype.is_bool()) and v.ty == "float":
        p.fail(a.node("value"), f"pl.setval: a float value cannot be written to {dtype.name} tensor '{param.name}' "
                                "(convert it first)")
    gm = GMRef(param, (off,))  # type: ignore[arg-type]
    p.ctx.builder.emit(TileOp("setval", PipeType.S, gm, (), (v,), {"linear": True}, p.loc(node)))
