"""Structs, tiling fields and GM scalar writes as C++ (``pypto_pro.ir.storage``, ``pl.setval``).

- ``pl.struct("Name", ...)`` / ``pl.struct_array(n, "Name", ...)``: a ``struct Name { ... };`` at
  file scope (one per type name: the frontend checks a name keeps its layout) and a local
  ``Name var;`` / ``Name var[n];`` in each program that uses it; fields are ``int32_t`` / ``float``
  / ``bool`` (arrays ``T f[N];``), initialised where ``pl.struct`` runs.
- the tiling dataclass: its C struct (the layout the host packs, ``language/tiling.py``) and, at
  the top of each program, a copy from the kernel's ``__gm__ uint8_t*`` argument.
- ``pl.setval(tensor, offset, value)``: a store through the tensor's GM pointer.

Run-time indices are not checked in C++ (the simulator checks them).
"""
from __future__ import annotations

from typing import Callable

from pypto_pro.ir.expr import Expr
from pypto_pro.ir.nodes import GMRef, KernelIR, TileOp
from pypto_pro.ir.storage import ArrayInit, ArrayLoad, ArrayStore, ScalarArray, StructStorage, arrays_used
from pypto_pro.language import tiling as tiling_mod

C_FIELD = {"int": "int32_t", "float": "float", "bool": "bool"}


def _c_type(a: ScalarArray) -> str:
    return "int64_t" if a.ty == "int" and a.cbits == 64 else C_FIELD[a.ty]


def storages(program: KernelIR) -> list[StructStorage]:
    seen: dict[int, StructStorage] = {}
    for a in arrays_used(program.body):
        seen.setdefault(a.storage.uid, a.storage)
    return list(seen.values())


def struct_definitions(programs: list[KernelIR], tiling_cls: type | None) -> str:
    """File-scope C struct types of every struct the programs use, and of the tiling class."""
    out: dict[str, str] = {}
    if tiling_cls is not None:
        out[tiling_cls.__name__] = tiling_mod.c_struct_decl(tiling_cls)
    for p in programs:
        for st in storages(p):
            if st.kind == "tiling" or st.type_name in out:
                continue
            body = "\n".join(f"    {_c_type(a)} {a.field}" + (f"[{a.width}]" if a.width is not None else "") + ";"
                             for a in st.fields.values())
            out[st.type_name] = f"struct {st.type_name} {{\n{body}\n}};"
    if not out:
        return ""
    return "// ---- structs (pl.struct / pl.struct_array) and the tiling struct\n" + "\n".join(out.values())


class StorageEmitter:
    """C++ for one program's struct storage: declarations, field references, statements."""

    def __init__(self, fresh: Callable[[str], str]):
        self.fresh = fresh
        self.var: dict[int, str] = {}

    def declarations(self, program: KernelIR, pad: str) -> list[str]:
        lines = []
        for st in storages(program):
            name = self.var[st.uid] = self.fresh(st.var)
            if st.kind == "tiling":
                lines.append(f"{pad}const {st.type_name} {name} = *reinterpret_cast<__gm__ const {st.type_name}*>"
                             f"({st.param});  // the tiling struct the host packed")
            else:
                size = f"[{st.slots}]" if st.is_array else ""
                lines.append(f"{pad}{st.type_name} {name}{size};")
        return lines

    def ref(self, array: ScalarArray, slot: Expr, elem: Expr | None, cexpr: Callable[[Expr], str]) -> str:
        st = array.storage
        head = self.var[st.uid] + (f"[{cexpr(slot)}]" if st.is_array else "")
        return f"{head}.{array.field}" + (f"[{cexpr(elem)}]" if elem is not None else "")

    def expr(self, e: Expr, cexpr: Callable[[Expr], str]) -> str | None:
        if isinstance(e, ArrayLoad):
            return self.ref(e.array, e.slot, e.elem, cexpr)
        return None

    def statement(self, s, cexpr: Callable[[Expr], str], pad: str, tail: str) -> list[str]:
        if isinstance(s, ArrayStore):
            return [f"{pad}{self.ref(s.array, s.slot, s.elem, cexpr)} = {cexpr(s.value)};{tail}"]
        assert isinstance(s, ArrayInit)
        a = s.array
        st = a.storage
        name = self.var[st.uid]
        lines = []
        slots = [f"{name}[{i}]" for i in range(st.slots)] if st.is_array else [name]
        same = all(cexpr(v) == cexpr(s.values[0]) for v in s.values)
        for head in slots:
            if a.width is None:
                lines.append(f"{pad}{head}.{a.field} = {cexpr(s.values[0])};{tail}")
            elif same:
                lines.append(f"{pad}for (int32_t e = 0; e < {a.width}; ++e) {head}.{a.field}[e] = "
                             f"{cexpr(s.values[0])};{tail}")
            else:
                lines += [f"{pad}{head}.{a.field}[{i}] = {cexpr(v)};{tail}" for i, v in enumerate(s.values)]
        return lines


def gm_element(param, offset: str, cexpr: Callable[[Expr], str]) -> str:
    """The C++ lvalue of element ``offset`` (row-major) of a GM tensor parameter or ``pl.make_tensor``
    view: for a view, the offset unravelled over its shape and walked with its strides from its byte
    offset into the base (as ``backends/sim/gm_views.element``)."""
    if not hasattr(param, "view_exprs"):
        return f"{param.name}[{offset}]"
    from pypto_pro.backends.pto.ctypes_map import ctype
    dims = [f"({cexpr(d)})" for d in param.shape]
    terms = []
    for k, stride in enumerate(param.strides):
        inner = " * ".join(dims[k + 1:])
        idx = f"({offset})" if not inner else f"(({offset}) / ({inner}))"
        if k > 0:
            idx = f"({idx} % {dims[k]})"
        terms.append(f"{idx} * ({cexpr(stride)})")
    el = ctype(param.type.dtype)
    base = (f"reinterpret_cast<__gm__ {el}*>(reinterpret_cast<__gm__ uint8_t*>({param.base.name}) + "
            f"({cexpr(param.offset)}))")
    return f"{base}[{' + '.join(terms) or '0'}]"


def setval_lines(s: TileOp, cexpr: Callable[[Expr], str], ctype: Callable) -> list[str]:
    """``pl.setval`` on a GM tensor parameter or view: one element through its pointer."""
    ref = s.dst
    assert isinstance(ref, GMRef)
    param = ref.param
    t = ctype(param.type.dtype)
    return [f"{gm_element(param, cexpr(ref.offsets[0]), cexpr)} = static_cast<{t}>({cexpr(s.scalars[0])});"]
