"""Compiles the body of a ``@pl.vector_function`` (the real PyPTO Pro's VF section).

Inside a VF body: ``vf`` names the VF namespace without an import (``pl.Vf``); ``vf.*`` calls
emit VF instructions; a result-producing ``vf.*`` call must be the value of an assignment, whose
target names the destination register (an existing register of that name is reused, otherwise a
new one is declared: the real assignment form); tiles are UB pointers (``tile + k`` and
``tile[k]`` move them by ``k`` elements); scalars, ``pl.range`` loops, ``if`` / ``while`` and
compile-time Python work as in kernel code; another ``@pl.vector_function`` called here is
inlined; tile operations (``pl.add`` ...) and synchronisation are errors.
"""
from __future__ import annotations

import ast
from typing import Any

from pypto_pro.frontend.parser import FunctionParser
from pypto_pro.frontend.scalars import is_scalar_value
from pypto_pro.frontend.scope import MISSING
from pypto_pro.frontend.vf.values import AddrValue, RegValue, TilePtr, VfState
from pypto_pro.ir.expr import BinOp, Var, convert
from pypto_pro.ir.nodes import Assign
from pypto_pro.language.dtypes import DT_INT64
from pypto_pro.language.intrinsic import intrinsic_name

# language constructs allowed inside a VF body (scalar helpers and loops; everything else is tile code)
_ALLOWED = {"range", "min", "max", "const", "constexpr"}


class VfBodyParser(FunctionParser):
    """A :class:`FunctionParser` for a VF body; ``vf`` is the state of the VF call being compiled."""

    def __init__(self, ctx, src, scope, vf: VfState):
        super().__init__(ctx, src, scope, in_inline=True)
        self.vf = vf

    # ---- calls --------------------------------------------------------------------------------

    def ev_Call(self, node: ast.Call) -> Any:
        func = self.eval(node.func)
        name = intrinsic_name(func)
        if name is not None and not name.startswith("vf.") and name not in _ALLOWED:
            shown = name if name.startswith("pipeline.") else f"pl.{name}"
            self.fail(node, f"{shown}() cannot be used inside a @pl.vector_function: its body holds VF "
                            "instructions (vf.*) and scalar code only; call tile operations from the kernel")
        # vf.bit_cast is a view (no instruction): bit_cast.md shows it as an operand of another call too
        if name is not None and name.startswith("vf.") and node is not self.vf.target_call and _produces(name) \
                and name != "vf.bit_cast":
            self.fail(node, f"{name}() produces a result and must be the value of an assignment "
                            f"('dst = {name}(...)'); it cannot be an argument of another call")
        return super().ev_Call(node)

    def inline_call(self, node: ast.Call, fn, args: list, kwargs: dict) -> Any:
        """A plain Python helper called with run-time values: the real parser refuses it in a VF body (only
        another @pl.vector_function is inlined there). With compile-time arguments ``helper_call`` then
        runs it in Python instead, as in kernel code."""
        self.fail(node, f"a @pl.vector_function cannot call the non-vector Python function '{fn.name}' with "
                        "run-time values (registers, masks, tiles or scalars): make it a @pl.vector_function, "
                        "or write its vf.* instructions in the body")

    def st_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Call):
            func = self.eval(node.value.func)
            name = intrinsic_name(func)
            if name is not None and name.startswith("vf.") and _produces(name):
                self.fail(node, f"{name}() produces a result and must use the assignment form: "
                                f"dst = {name}(...)")
        super().st_Expr(node)

    def st_Assign(self, node: ast.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.value, ast.Call):
            name = intrinsic_name(self.eval(node.value.func))
            if name is not None and name.startswith("vf."):
                saved = (self.vf.target, self.vf.target_call)
                self.vf.target, self.vf.target_call = node.targets[0], node.value
                try:
                    value = self.eval(node.value)
                finally:
                    self.vf.target, self.vf.target_call = saved
                if value is None:
                    self.fail(node.value, f"{name}() returns nothing; call it as a statement")
                self.assign_target(node.targets[0], value, node)
                return
        super().st_Assign(node)

    def st_Return(self, node: ast.Return) -> None:
        if node.value is not None and not (isinstance(node.value, ast.Constant) and node.value.value is None):
            self.fail(node, "a @pl.vector_function returns nothing (it writes its results to tiles)")
        if self.runtime_blocks:
            self.fail(node, "'return' under run-time control flow is not supported in a vector function")
        from pypto_pro.frontend.context import _Return
        raise _Return(None)

    # ---- pointers -----------------------------------------------------------------------------

    def binop(self, node: ast.AST, op: ast.operator, a: Any, b: Any) -> Any:
        if isinstance(a, TilePtr) or isinstance(b, TilePtr):
            if isinstance(a, TilePtr) and isinstance(op, (ast.Add, ast.Sub)) and is_scalar_value(b):
                return self.move_ptr(node, a, b, negate=isinstance(op, ast.Sub))
            if isinstance(b, TilePtr) and isinstance(op, ast.Add) and is_scalar_value(a):
                return self.move_ptr(node, b, a)
            self.fail(node, "a tile inside a vector function is a UB pointer: only 'tile + k' / 'tile - k' "
                            "(k elements) are supported")
        for v in (a, b):
            if isinstance(v, (RegValue, AddrValue)):
                self.fail(node, f"operators do not apply to {v.describe()}; use the vf.* operations")
        return super().binop(node, op, a, b)

    def move_ptr(self, node: ast.AST, ptr: TilePtr, k: Any, negate: bool = False) -> TilePtr:
        e = self.scalar_expr(node, k)
        if not e.dtype.is_int():
            self.fail(node, f"a pointer moves by an integer number of elements, got {e.dtype.short}")
        e = convert(e, DT_INT64)
        off = BinOp("-" if negate else "+", ptr.offset, e)
        folded = self.fold(node, off.op, ptr.offset, e, DT_INT64)
        return TilePtr(ptr.index, ptr.ref, folded if folded is not None else off)

    def ev_Subscript(self, node: ast.Subscript) -> Any:
        base = self.eval(node.value)
        if isinstance(base, TilePtr):
            index = self.eval(node.slice)
            if not is_scalar_value(index):
                self.fail(node.slice, "a tile is indexed by one element offset inside a vector function "
                                      "(use vf.load_align(tile, [row, col]) for a 2-D offset)")
            return self.move_ptr(node, base, index)
        return super().ev_Subscript(node)

    def bind(self, name: str, value: Any, node: ast.AST) -> None:
        """A pointer bound to a name is a pointer variable (a loop may move it); registers and
        address registers are bound as they are."""
        if isinstance(value, TilePtr):
            current = self.scope.locals.get(name, MISSING)
            if isinstance(current, TilePtr) and current.index == value.index and isinstance(current.offset, Var) \
                    and current.offset.uid not in self.vf.params and current.offset.name.startswith("ptr_"):
                if value.offset is not current.offset:
                    self.ctx.builder.emit(Assign(current.offset, value.offset, self.loc(node)))
                return
            var = self.new_var(f"ptr_{name}", DT_INT64)
            self.ctx.builder.emit(Assign(var, value.offset, self.loc(node)))
            self.scope.locals[name] = TilePtr(value.index, value.ref, var)
            self.unmerged.pop(name, None)
            return
        super().bind(name, value, node)

    def materialize(self, body: list[ast.stmt], node: ast.AST) -> None:
        super().materialize(body, node)
        from pypto_pro.frontend.scalars import assigned_names
        for name in sorted(assigned_names(body)):
            current = self.scope.locals.get(name, MISSING)
            if isinstance(current, TilePtr) and not (isinstance(current.offset, Var)
                                                     and current.offset.name.startswith("ptr_")):
                self.bind(name, current, node)

    # ---- registers ----------------------------------------------------------------------------

    def target_names(self) -> list[str | None]:
        t = self.vf.target
        if isinstance(t, ast.Name):
            return [t.id]
        if isinstance(t, (ast.Tuple, ast.List)):
            return [e.id if isinstance(e, ast.Name) else None for e in t.elts]
        return []

    def target_value(self, index: int = 0) -> Any:
        """What the ``index``-th assignment target currently holds (MISSING if unbound)."""
        names = self.target_names()
        if index >= len(names) or names[index] is None:
            return MISSING
        return self.scope.locals.get(names[index], MISSING)


def _produces(name: str) -> bool:
    from pypto_pro.ops.vf.decl import VF_RESULTS
    return VF_RESULTS.get(name[3:], 0) > 0
