"""Frontend helpers the ``vf.*`` check rules share: operand kinds, destination registers, UB
addresses and the emission of :class:`pypto_pro.ir.vf.VfInstr` statements.

A check receives the VF body parser ``p`` (``frontend/vf/body.py``: ``p.vf`` is the call's state,
``p.target_value()`` what the assignment's target names hold), the call node and the bound
arguments; every user mistake is a located CompileError at the argument's own position.
"""
from __future__ import annotations

import ast
import enum
from typing import Any

from pypto_pro.frontend.operands import Args
from pypto_pro.frontend.scalars import is_scalar_value
from pypto_pro.frontend.vf.values import AddrValue, RegValue, TilePtr
from pypto_pro.ir.expr import BinOp, Const, Expr, Var, convert
from pypto_pro.ir.nodes import Assign
from pypto_pro.ir.vf import ALIGN, MASK, VREG, MemRef, RegRead, VfInstr, VReg
from pypto_pro.language.dtypes import DT_FP32, DT_INT64, DataType

B8, B16, B32, B64 = 1, 2, 4, 8


def reg(p, a: Args, name: str, dtypes: tuple[DataType, ...] | None = None) -> RegValue:
    """A vector-register operand (``RegTensor``), optionally of one of ``dtypes``."""
    v = a[name]
    if not isinstance(v, RegValue) or v.reg.kind != VREG:
        p.fail(a.node(name), f"{a.display}(): '{name}' must be a vector register (the result of a vf.* "
                             f"operation), got {p.describe(v)}")
    if dtypes is not None and v.dtype not in dtypes:
        shown = ", ".join(d.name for d in dtypes)
        p.fail(a.node(name), f"{a.display}(): '{name}' is a register of {v.dtype.name}; this operation takes {shown}")
    return v


def mask(p, a: Args, name: str, required: bool = True) -> RegValue | None:
    """A predicate operand (``MaskReg``); ``None`` when optional and not given."""
    v = a[name]
    if v is None and not required:
        return None
    if not isinstance(v, RegValue) or v.reg.kind != MASK:
        p.fail(a.node(name), f"{a.display}(): '{name}' must be a mask register (vf.create_mask / vf.update_mask / "
                             f"a comparison), got {p.describe(v)}")
    return v


def same_dtype(p, a: Args, names: tuple[str, ...], regs: list[RegValue]) -> DataType:
    dt = regs[0].dtype
    for n, r in zip(names[1:], regs[1:]):
        if r.dtype is not dt:
            p.fail(a.node(n), f"{a.display}(): '{n}' is a register of {r.dtype.name} but '{names[0]}' is "
                              f"{dt.name}; the operands of one VF instruction have one dtype")
    return dt


def dtype_arg(p, a: Args, name: str, default: DataType | None = None) -> DataType | None:
    v = a[name]
    if v is None:
        return default
    if not isinstance(v, DataType):
        p.fail(a.node(name), f"{a.display}(): '{name}' must be a pl.DT_* dtype, got {p.describe(v)}")
    return v


def enum_arg(p, a: Args, name: str, cls: type[enum.Enum], default: Any, allowed: tuple | None = None) -> Any:
    v = a[name]
    if v is None:
        return default
    if not isinstance(v, cls):
        p.fail(a.node(name), f"{a.display}(): '{name}' must be a pl.{cls.__name__} value, got {p.describe(v)}")
    if allowed is not None and v.name not in allowed:
        p.fail(a.node(name), f"{a.display}(): {name}=pl.{cls.__name__}.{v.name} is not supported here "
                             f"(supported: {', '.join(allowed)})")
    return v


def scalar(p, a: Args, name: str, dtype: DataType) -> Expr:
    """A scalar operand converted to ``dtype`` (a compile-time number or a run-time scalar)."""
    v = a[name]
    if isinstance(v, bool) or not is_scalar_value(v):
        p.fail(a.node(name), f"{a.display}(): '{name}' must be a scalar, got {p.describe(v)}")
    e = p.scalar_expr(a.node(name), v)
    if e.dtype.is_float() and not dtype.is_float():
        p.fail(a.node(name), f"{a.display}(): '{name}' is a float but the registers hold {dtype.name}")
    return convert(e, dtype)


def dst(p, kind: str, dtype: DataType | None, index: int = 0) -> RegValue:
    """The destination register of the assignment's ``index``-th target: the register that name already
    holds when it is one of the same kind and dtype (a loop-carried accumulator), else a new one."""
    current = p.target_value(index)
    if isinstance(current, RegValue) and current.reg.kind == kind and current.dtype is dtype \
            and current.reg.dtype is dtype:
        return current
    names = p.target_names()
    name = names[index] if index < len(names) and names[index] else f"_vreg{p.vf.temps}"
    p.vf.temps += 1
    return RegValue(VReg(kind, dtype, name), dtype)


def read(r: RegValue | None) -> RegRead | None:
    return None if r is None else RegRead(r.reg, r.dtype)


def emit(p, node: ast.AST, op: str, dsts: tuple[RegValue, ...], args: tuple, **attrs: Any) -> None:
    p.ctx.builder.emit(VfInstr(op, tuple(d.reg for d in dsts), args, attrs, p.loc(node)))


# ---- UB addresses ---------------------------------------------------------------------------------


def tile_ptr(p, a: Args, name: str) -> TilePtr:
    v = a[name]
    if not isinstance(v, TilePtr):
        p.fail(a.node(name), f"{a.display}(): '{name}' must be a UB tile (a tile argument of the vector function), "
                             f"got {p.describe(v)}")
    return v


def element_offset(p, a: Args, name: str, ptr: TilePtr) -> Expr:
    """The ``offset`` argument in elements of the tile's dtype: an int / scalar, ``[row, col]``
    (``row * shape[1] + col``) or an address register; ``None`` is 0."""
    v = a[name]
    node = a.node(name)
    if v is None:
        return Const(0, DT_INT64)
    if isinstance(v, AddrValue):
        return addr_elements(p, node, v, ptr)
    if isinstance(v, (list, tuple)):
        if len(v) != 2:
            p.fail(node, f"{a.display}(): a list offset is [row, col], got {len(v)} element(s)")
        row, col = (convert(_int_expr(p, node, x, a.display), DT_INT64) for x in v)
        cols = ptr.ref.tile_type.shape[1]
        return _add(p, node, _mul(p, node, row, Const(cols, DT_INT64)), col)
    return convert(_int_expr(p, node, v, a.display), DT_INT64)


def addr_elements(p, node, v: AddrValue, ptr: TilePtr) -> Expr:
    """An address register's offset in elements of the tile: it counts elements of its own dtype (the real
    backend's ``vag_b8 / _b16 / _b32`` by that width), so a register of another width scales by the ratio."""
    off = convert(v.offset, DT_INT64)
    wa, wt = width(v.dtype), width(ptr.dtype)
    if wa == wt:
        return off
    if wa % wt:
        p.fail(node, f"an address register of {v.dtype.name} counts {wa}-byte elements, which is not a whole "
                     f"number of the tile's {ptr.dtype.name} elements: give vf.create_addr_reg dtype=pl.{ptr.dtype.name}")
    return _mul(p, node, off, Const(wa // wt, DT_INT64))


def _int_expr(p, node, v: Any, display: str) -> Expr:
    if isinstance(v, bool) or not is_scalar_value(v):
        p.fail(node, f"{display}(): an offset is an integer number of elements, got {p.describe(v)}")
    e = p.scalar_expr(node, v)
    if not e.dtype.is_int():
        p.fail(node, f"{display}(): an offset is an integer number of elements, got {e.dtype.short}")
    return e


def _add(p, node, x: Expr, y: Expr) -> Expr:
    f = p.fold(node, "+", x, y, DT_INT64)
    return f if f is not None else BinOp("+", x, y)


def _mul(p, node, x: Expr, y: Expr) -> Expr:
    f = p.fold(node, "*", x, y, DT_INT64)
    return f if f is not None else BinOp("*", x, y)


def address(p, node: ast.AST, ptr: TilePtr, elements: Expr, write: bool) -> MemRef:
    """``ptr + elements`` (elements of the tile's dtype, as the C++ pointer arithmetic counts them) as a
    UB address: bytes from the tile argument's start. Records the tile as read or written by the call."""
    offset = _add(p, node, convert(ptr.offset, DT_INT64), convert(elements, DT_INT64))
    nbytes = _mul(p, node, offset, Const(width(ptr.dtype), DT_INT64))
    (p.vf.written if write else p.vf.read).add(ptr.index)
    return MemRef(ptr.index, nbytes)


def cursor(p, node: ast.AST, ptr: TilePtr) -> Var:
    """The post-update cursor of a pointer (elements from the tile's start): one per tile argument and
    pointer expression, shared by every ``post_update=True`` load / store of it and initialised once at
    the body's top level (the real backend hoists one ``vf_tile_ptr`` cursor per pointer before the
    ``__VEC_SCOPE__``); the pointer itself does not move."""
    off = ptr.offset
    key = (ptr.index, ("var", off.uid) if isinstance(off, Var) else ("const", off.value) if isinstance(off, Const)
           else ("expr", id(off)))
    var = p.vf.cursors.get(key)
    if var is None:
        var = p.new_var(f"cursor_{ptr.ref.buffer.name}", DT_INT64)
        p.vf.body.append(Assign(var, convert(off, DT_INT64), p.loc(node)))
        p.vf.cursors[key] = var
    return var


def post_address(p, node: ast.AST, ptr: TilePtr, write: bool) -> tuple[MemRef, Var]:
    """The address of a ``post_update=True`` access: the pointer's cursor (see :func:`cursor`)."""
    cur = cursor(p, node, ptr)
    (p.vf.written if write else p.vf.read).add(ptr.index)
    return MemRef(ptr.index, BinOp("*", cur, Const(width(ptr.dtype), DT_INT64))), cur


def advance(p, node: ast.AST, cur: Var, elements: Expr) -> None:
    """Move a post-update cursor by ``elements`` (after the access that used it)."""
    p.ctx.builder.emit(Assign(cur, BinOp("+", cur, convert(elements, DT_INT64)), p.loc(node)))


def width(dt: DataType | None) -> int:
    return max(1, (dt or DT_FP32).bits // 8)


__all__ = ["reg", "mask", "same_dtype", "dtype_arg", "enum_arg", "scalar", "dst", "read", "emit", "tile_ptr",
           "element_offset", "addr_elements", "address", "cursor", "post_address", "advance", "width", "VREG", "MASK", "ALIGN", "B8", "B16", "B32", "B64"]
