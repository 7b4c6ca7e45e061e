"""``pl.struct``, ``pl.struct_array``, ``pl.make_tuple`` and the tiling parameter in kernel code.

A struct is scalar storage the scalar unit owns (``pypto_pro.ir.storage``): its fields are read
(``s.f``, ``s.arr[i]``) and written (``s.f = v``, ``s.arr[i] = v``, ``s.arr = [...]``) with
compile-time or run-time indices, in loops and branches, and passed by reference (``t = s`` is
an alias; a helper that writes ``entry.f`` writes the caller's struct). ``arr[i]`` of a struct
array is a reference to slot ``i`` (the index is taken when the subscript runs). The tiling
parameter is a read-only struct whose values the launch provides.

``pl.make_tuple(f=v, ...)`` only groups values under names at compile time: ``t.f`` is ``v``
(scalars are taken when the tuple is made); nothing is stored.

Compile-time indices are checked here; run-time ones where they are used (the simulator reports
a located fault).
"""
from __future__ import annotations

import ast
import keyword
import numbers
from typing import TYPE_CHECKING, Any

from pypto_pro.backends.pto.cexpr import CPP_KEYWORDS
from pypto_pro.frontend.diagnostics import did_you_mean
from pypto_pro.frontend.intrinsics import handler
from pypto_pro.frontend.operands import Args
from pypto_pro.frontend.scalars import is_scalar_value
from pypto_pro.frontend.values import FrontendObject
from pypto_pro.ir.expr import BinOp, Compare, Const, Expr, Var
from pypto_pro.ir.nodes import Assign
from pypto_pro.ir.storage import ArrayInit, ArrayLoad, ArrayStore, ScalarArray, StructStorage

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser


# ---- values ---------------------------------------------------------------------------------------


class StructValue(FrontendObject):
    """One struct: ``storage`` and the slot (a constant or a run-time index taken at ``arr[i]``)."""

    def __init__(self, storage: StructStorage, slot: Expr):
        self.storage = storage
        self.slot = slot

    def describe(self) -> str:
        if self.storage.kind == "tiling":
            return f"tiling parameter '{self.storage.param}'"
        return f"struct {self.storage.type_name!r}"

    def field(self, p: "FunctionParser", node: ast.AST, name: str) -> ScalarArray:
        fields = self.storage.fields
        if name not in fields:
            p.fail(node, f"{self.describe()} has no field '{name}'{did_you_mean(name, fields)} "
                         f"(fields: {', '.join(fields)})")
        return fields[name]

    def frontend_getattr(self, p: "FunctionParser", node: ast.AST, attr: str) -> Any:
        array = self.field(p, node, attr)
        if array.width is not None:
            return FieldArrayValue(self, array)
        return ArrayLoad(array, self.slot, None, p.loc(node))

    def frontend_setattr(self, p: "FunctionParser", node: ast.AST, attr: str, value: Any) -> None:
        array = self.field(p, node, attr)
        self.check_writable(p, node)
        if array.width is None:
            store(p, node, array, self.slot, None, value)
            return
        if not isinstance(value, (list, tuple)):
            p.fail(node, f"'{self.storage.var}.{attr}' is an array of {array.width}: assign a list of "
                         f"{array.width} values or one element ('{attr}[i] = v'), not {p.describe(value)}")
        if len(value) != array.width:
            p.fail(node, f"'{self.storage.var}.{attr}' has {array.width} elements; the list has {len(value)}")
        for i, v in enumerate(value):
            store(p, node, array, self.slot, Const(i), v)

    def check_writable(self, p: "FunctionParser", node: ast.AST) -> None:
        if self.storage.read_only:
            p.fail(node, f"the fields of {self.describe()} are read-only in the kernel (the host sets them)")

    def frontend_getitem(self, p: "FunctionParser", node: ast.AST, index: Any) -> Any:
        p.fail(node, f"{self.describe()} cannot be indexed; read a field with '.name'")

    def frontend_setitem(self, p: "FunctionParser", node: ast.AST, index: Any, value: Any) -> None:
        self.frontend_getitem(p, node, index)


class FieldArrayValue(FrontendObject):
    """``s.arr``: an array field of one struct, indexed by ``[elem]``."""

    def __init__(self, struct: StructValue, array: ScalarArray):
        self.struct = struct
        self.array = array

    def describe(self) -> str:
        return f"array field '{self.array.label}' ({self.array.ty}[{self.array.width}])"

    def element(self, p: "FunctionParser", node: ast.AST, index: Any) -> Expr:
        return checked_index(p, node, index, self.array.width or 1, f"'{self.array.label}'", "elements")

    def frontend_getitem(self, p: "FunctionParser", node: ast.AST, index: Any) -> Any:
        return ArrayLoad(self.array, self.struct.slot, self.element(p, node, index), p.loc(node))

    def frontend_setitem(self, p: "FunctionParser", node: ast.AST, index: Any, value: Any) -> None:
        self.struct.check_writable(p, node)
        store(p, node, self.array, self.struct.slot, self.element(p, node, index), value)

    def frontend_getattr(self, p: "FunctionParser", node: ast.AST, attr: str) -> Any:
        p.fail(node, f"{self.describe()} has no attribute '{attr}'; index it: '{self.array.field}[i]'")

    def frontend_setattr(self, p: "FunctionParser", node: ast.AST, attr: str, value: Any) -> None:
        self.frontend_getattr(p, node, attr)


class StructArrayValue(FrontendObject):
    """``pl.struct_array(n, ...)``: ``arr[i]`` is a reference to slot ``i``."""

    def __init__(self, storage: StructStorage):
        self.storage = storage

    def describe(self) -> str:
        return f"struct_array {self.storage.type_name!r} of {self.storage.slots}"

    def frontend_getitem(self, p: "FunctionParser", node: ast.AST, index: Any) -> Any:
        slot = checked_index(p, node, index, self.storage.slots, f"struct_array '{self.storage.var}'", "slots")
        if not isinstance(slot, Const):  # the slot is taken now: later changes to the index do not move it
            var = Var(p.ctx.fresh_name(f"{self.storage.var}_slot"))
            p.ctx.builder.emit(Assign(var, slot, p.loc(node)))
            slot = var
        return StructValue(self.storage, slot)

    def frontend_setitem(self, p: "FunctionParser", node: ast.AST, index: Any, value: Any) -> None:
        p.fail(node, f"a slot of {self.describe()} cannot be replaced; assign its fields ('arr[i].f = v')")

    def frontend_getattr(self, p: "FunctionParser", node: ast.AST, attr: str) -> Any:
        hint = " (struct arrays have a fixed size)" if attr in ("append", "extend", "insert", "pop") else ""
        p.fail(node, f"{self.describe()} has no attribute '{attr}'{hint}; index a slot: 'arr[i].field'")

    def frontend_setattr(self, p: "FunctionParser", node: ast.AST, attr: str, value: Any) -> None:
        self.frontend_getattr(p, node, attr)


class TupleValue(FrontendObject):
    """``pl.make_tuple(f=v, ...)``: named values, resolved at compile time (nothing is stored)."""

    def __init__(self, fields: dict[str, Any]):
        self.fields = fields

    def describe(self) -> str:
        return f"make_tuple({', '.join(self.fields)})"

    def frontend_getattr(self, p: "FunctionParser", node: ast.AST, attr: str) -> Any:
        if attr not in self.fields:
            p.fail(node, f"{self.describe()} has no field '{attr}'{did_you_mean(attr, self.fields)}")
        return self.fields[attr]

    def frontend_setattr(self, p: "FunctionParser", node: ast.AST, attr: str, value: Any) -> None:
        p.fail(node, f"the fields of {self.describe()} are fixed when it is made; use pl.struct for mutable fields")

    def frontend_getitem(self, p: "FunctionParser", node: ast.AST, index: Any) -> Any:
        p.fail(node, f"{self.describe()} is read by field name ('t.{next(iter(self.fields))}'), not by index")

    def frontend_setitem(self, p: "FunctionParser", node: ast.AST, index: Any, value: Any) -> None:
        self.frontend_setattr(p, node, "", value)


# ---- indices and stores ---------------------------------------------------------------------------


def checked_index(p: "FunctionParser", node: ast.AST, index: Any, size: int, what: str, unit: str) -> Expr:
    """A slot / element index: a compile-time int in range, or a run-time integer scalar."""
    if isinstance(index, numbers.Integral) and not isinstance(index, bool):
        index = int(index)
        if index < 0:
            p.fail(node, f"{what}: negative index {index} is not supported (indices are 0 .. {size - 1})")
        if index >= size:
            p.fail(node, f"{what}: GetItemExpr index {index} out of bounds for tuple with {size} elements "
                         f"(it has {size} {unit})")
        return Const(index)
    if isinstance(index, slice) or isinstance(index, (list, tuple)):
        p.fail(node, f"{what} takes one integer index (no slices or several indices)")
    if not isinstance(index, Expr) or index.ty != "int":
        p.fail(node, f"{what}: the index must be an integer, got {p.describe(index)}")
    return index


def store(p: "FunctionParser", node: ast.AST, array: ScalarArray, slot: Expr, elem: Expr | None, value: Any) -> None:
    p.ctx.builder.emit(ArrayStore(array, slot, elem, converted(p, node, array, value), p.loc(node)))


def converted(p: "FunctionParser", node: ast.AST, array: ScalarArray, value: Any) -> Expr:
    """``value`` as a value of the field's type: ints widen to float fields and become bools in
    bool fields (``!= 0``); a float into an int or bool field is an error (no silent truncation)."""
    value = _plain(value)
    if not is_scalar_value(value):
        p.fail(node, f"'{array.label}' holds {array.ty} values; cannot store {p.describe(value)}")
    ty = value.ty if isinstance(value, Expr) else _const_ty(value)
    if array.ty == "int":
        if ty == "float":
            p.fail(node, f"'{array.label}' holds int values; cannot store a float (convert it with int(...) "
                         "at compile time, or make the field a float)")
        return value if isinstance(value, Expr) else Const(int(value))
    if array.ty == "float":
        if isinstance(value, Expr):
            return value if ty == "float" else BinOp("*", value, Const(1.0))
        return Const(float(value))
    if ty == "float":
        p.fail(node, f"'{array.label}' holds bool values; cannot store a float")
    if isinstance(value, Expr):
        return value if ty == "bool" else Compare("!=", value, Const(0))
    return Const(bool(value))


def _plain(v: Any) -> Any:
    """NumPy scalars as Python ones."""
    if isinstance(v, (bool, int, float, Expr)):
        return v
    if isinstance(v, numbers.Number) and hasattr(v, "item"):
        return v.item()
    return v


def _const_ty(v: Any) -> str:
    return "bool" if isinstance(v, bool) else "float" if isinstance(v, float) else "int"


# ---- creation -------------------------------------------------------------------------------------


def _type_name(p: "FunctionParser", node: ast.AST, value: Any, arg: ast.AST | None, what: str) -> str:
    if not isinstance(arg, ast.Constant) or not isinstance(value, str):
        p.fail(arg or node, f"{what}: the struct type name must be a string literal, e.g. "
                            f'{what}("RunInfo", field=0)')
    if not value.isidentifier() or not value.isascii() or keyword.iskeyword(value) or value in CPP_KEYWORDS:
        p.fail(arg, f"{what}: struct type name {value!r} must be a valid C identifier")
    return value


def _field_specs(p: "FunctionParser", node: ast.Call, fields: dict[str, Any], what: str) -> list[tuple]:
    """(name, type, width or None, initial values) of each keyword field."""
    if not fields:
        p.fail(node, f'{what}("Name", ...) requires at least one keyword field (field=value)')
    nodes = {k.arg: k.value for k in node.keywords if k.arg}
    specs = []
    for name, init in fields.items():
        at = nodes.get(name, node)
        if name in CPP_KEYWORDS or not name.isascii():
            p.fail(at, f"{what}: field name '{name}' is not a valid C identifier")
        if isinstance(init, (list, tuple)):
            if not init:
                p.fail(at, f"{what}: array field '{name}' needs at least one element")
            values = [_plain(v) for v in init]
            width: int | None = len(values)
        else:
            values, width = [_plain(init)], None
        for v in values:
            if isinstance(v, (list, tuple)):
                p.fail(at, f"{what}: field '{name}': nested lists are not supported (one array dimension)")
            if not is_scalar_value(v):
                p.fail(at, f"{what}: field '{name}' must be a scalar or a list of scalars, got {p.describe(v)}")
        tys = {v.ty if isinstance(v, Expr) else _const_ty(v) for v in values}
        ty = "float" if "float" in tys else "int" if "int" in tys else "bool"
        specs.append((name, ty, width, values))
    return specs


def _declare(p: "FunctionParser", node: ast.Call, type_name: str, slots: int, is_array: bool,
             specs: list[tuple]) -> StructStorage:
    layout = tuple((name, ty, width) for name, ty, width, _ in specs)
    if type_name in p.ctx.reserved_struct_names:
        p.fail(node, f"struct type name {type_name!r} is the kernel's tiling class (its C struct); use another name")
    known = p.ctx.struct_types.setdefault(type_name, layout)
    if known != layout:
        p.fail(node, f"struct type {type_name!r} is already defined with fields "
                     f"{', '.join(_field_text(f) for f in known)}; a second definition has "
                     f"{', '.join(_field_text(f) for f in layout)} (use another name)")
    storage = StructStorage(type_name, p.ctx.fresh_name(type_name.lower()), slots, is_array, loc=p.loc(node))
    for name, ty, width, values in specs:
        array = ScalarArray(storage, name, ty, width)
        storage.fields[name] = array
        init = tuple(converted(p, node, array, v) for v in values)
        p.ctx.builder.emit(ArrayInit(array, init, p.loc(node)))
    return storage


def _field_text(f: tuple) -> str:
    name, ty, width = f
    return f"{name}: {ty}" + (f"[{width}]" if width is not None else "")


@handler("struct")
def pl_struct(p: "FunctionParser", node: ast.Call, a: Args) -> StructValue:
    args, fields = a["args"], a["fields"]
    if not args:
        p.fail(node, 'pl.struct() needs its C struct type name first: pl.struct("Name", field=value, ...)')
    if len(args) > 1:
        p.fail(node.args[1], 'pl.struct("Name", field=value, ...) takes one positional argument, the type name')
    name = _type_name(p, node, args[0], node.args[0], "pl.struct")
    storage = _declare(p, node, name, 1, False, _field_specs(p, node, fields, "pl.struct"))
    return StructValue(storage, Const(0))


@handler("struct_array")
def pl_struct_array(p: "FunctionParser", node: ast.Call, a: Args) -> StructArrayValue:
    size, args, fields = a["size"], a["args"], a["fields"]
    size_node = node.args[0] if node.args else node
    if not isinstance(size, numbers.Integral) or isinstance(size, bool):
        p.fail(size_node, f"pl.struct_array() requires an integer size as first argument, got {p.describe(size)}")
    if size < 1:
        p.fail(size_node, f"pl.struct_array() size must be a positive integer, got {size}")
    if len(args) != 1:
        p.fail(node, 'pl.struct_array(N, "Name", ...) requires a string struct name as second arg')
    name = _type_name(p, node, args[0], node.args[1] if len(node.args) > 1 else None, "pl.struct_array")
    storage = _declare(p, node, name, int(size), True, _field_specs(p, node, fields, "pl.struct_array"))
    return StructArrayValue(storage)


@handler("make_tuple")
def pl_make_tuple(p: "FunctionParser", node: ast.Call, a: Args) -> TupleValue:
    if node.args:
        p.fail(node, "pl.make_tuple() does not accept positional arguments; use keyword args")
    fields = dict(a["fields"])
    if not fields:
        p.fail(node, "pl.make_tuple() requires at least one keyword argument (field=value)")
    for name, v in fields.items():
        if isinstance(v, Expr) and not isinstance(v, Const):  # the value now, as a Python tuple would hold it
            var = Var(p.ctx.fresh_name(f"tuple_{name}"), "float" if v.ty == "float" else v.ty)
            p.ctx.builder.emit(Assign(var, v, p.loc(node)))
            fields[name] = var
    return TupleValue(fields)


def tiling_value(storage: StructStorage) -> StructValue:
    """The kernel-side value of the tiling parameter."""
    return StructValue(storage, Const(0))
