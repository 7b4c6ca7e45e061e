"""Readable text form of the IR, written into the build directory after each stage."""
from __future__ import annotations

import os

from pypto_pro.ir.expr import (BinOp, BoolOp, Cast, Compare, Const, Expr, ListIndex, Select, Special,
                               TensorDim, UnaryOp, Var, literal_dtype)
from pypto_pro.ir.nodes import (Assign, Break, Buffer, Continue, For, GMRef, If, KernelIR, Return, Section,
                                SetValidShape, StageSync, Stmt, SyncOp, TileOp, TileRef, While)
from pypto_pro.ir.storage import ArrayInit, ArrayStore


class PyExprWriter:
    """Writes an expression in Python syntax. The structure (operators, parentheses) is shared;
    subclasses choose how leaves are spelled: this dump names things as the user wrote them, the
    simulator's generated program (``backends/sim/codegen.py``) uses unique, executable names."""

    def __call__(self, e: Expr) -> str:
        if isinstance(e, Const):
            if e.dtype is not literal_dtype(e.value):
                return self.typed_const(e)
            return self.const(e.value)
        if isinstance(e, Var):
            return self.var(e)
        if isinstance(e, BinOp):
            if e.op in ("min", "max"):
                return f"{e.op}({self(e.lhs)}, {self(e.rhs)})"
            return f"({self(e.lhs)} {e.op} {self(e.rhs)})"
        if isinstance(e, UnaryOp):
            sep = " " if e.op == "not" else ""
            return f"({e.op}{sep}{self(e.operand)})"
        if isinstance(e, Compare):
            return f"({self(e.lhs)} {e.op} {self(e.rhs)})"
        if isinstance(e, BoolOp):
            return "(" + f" {e.op} ".join(self(v) for v in e.values) + ")"
        if isinstance(e, Select):
            return f"({self(e.if_true)} if {self(e.cond)} else {self(e.if_false)})"
        if isinstance(e, TensorDim):
            return self.tensor_dim(e)
        if isinstance(e, Special):
            return self.special(e)
        if isinstance(e, ListIndex):
            return f"{self.values(e.values)}[{self(e.index)}]"
        if isinstance(e, Cast):
            return self.cast(e)
        return self.unknown(e)

    def const(self, value) -> str:
        return repr(value)

    def typed_const(self, e: Const) -> str:
        return f"pl.const({self.const(e.value)}, pl.{e.dtype.name})"

    def cast(self, e: Cast) -> str:
        return f"{e.dtype.short}({self(e.operand)})"

    def var(self, v: Var) -> str:
        return v.name

    def tensor_dim(self, e: TensorDim) -> str:
        return f"{e.param}.shape[{e.axis}]"

    def special(self, e: Special) -> str:
        return f"{e.name}()"

    def values(self, values) -> str:
        return str(list(values))

    def unknown(self, e: Expr) -> str:
        from pypto_pro.ir.storage import ArrayLoad
        if isinstance(e, ArrayLoad):
            return storage_ref(e.array, e.slot, e.elem, self)
        if hasattr(e, "text"):  # an expression that spells itself (ir/simt.py)
            return e.text(self)
        return f"<{type(e).__name__}>"


def storage_ref(array, slot: Expr, elem: Expr | None, write) -> str:
    """``s.f`` / ``s.f[e]`` / ``arr[i].f[e]`` of a struct or tiling field, as the user wrote it."""
    st = array.storage
    head = f"{st.var}[{write(slot)}]" if st.is_array else st.var
    return f"{head}.{array.field}" + (f"[{write(elem)}]" if elem is not None else "")


expr_str = PyExprWriter()


def operand_str(o) -> str:
    if isinstance(o, TileRef):
        if o.buffer.is_group:
            return f"{o.buffer.name}[{expr_str(o.slot)}]"
        return o.buffer.name
    if isinstance(o, GMRef):
        return f"{o.param.name}[{', '.join(expr_str(x) for x in o.offsets)}]"
    if o is None:  # an instruction that writes nothing (pl.printf)
        return "-"
    return expr_str(o)


def _loc(s: Stmt) -> str:
    loc = getattr(s, "loc", None)
    return f"  # {os.path.basename(loc.path)}:{loc.line}" if loc else ""


def stmt_lines(body: list[Stmt], indent: int = 0, show_pipes: bool = True) -> list[str]:
    pad = "    " * indent
    out: list[str] = []
    for s in body:
        if isinstance(s, Assign):
            ann = "" if s.var.dtype.name == "DT_INT64" else f": {s.var.dtype.short}"
            out.append(f"{pad}{s.var.name}{ann} = {expr_str(s.value)}{_loc(s)}")
        elif isinstance(s, For):
            out.append(f"{pad}for {s.var.name} in range({expr_str(s.start)}, {expr_str(s.stop)}, "
                       f"{expr_str(s.step)}):{_loc(s)}")
            out.extend(stmt_lines(s.body, indent + 1, show_pipes) or [pad + "    pass"])
        elif isinstance(s, While):
            out.append(f"{pad}while {expr_str(s.cond)}:{_loc(s)}")
            out.extend(stmt_lines(s.body, indent + 1, show_pipes) or [pad + "    pass"])
        elif isinstance(s, (Break, Continue, Return)):
            out.append(f"{pad}{type(s).__name__.lower()}{_loc(s)}")
        elif isinstance(s, If):
            out.append(f"{pad}if {expr_str(s.cond)}:{_loc(s)}")
            out.extend(stmt_lines(s.then_body, indent + 1, show_pipes) or [pad + "    pass"])
            if s.else_body:
                out.append(f"{pad}else:")
                out.extend(stmt_lines(s.else_body, indent + 1, show_pipes))
        elif isinstance(s, Section):
            out.append(f"{pad}section {s.kind.value}:{_loc(s)}")
            out.extend(stmt_lines(s.body, indent + 1, show_pipes) or [pad + "    pass"])
        elif isinstance(s, TileOp):
            args = [operand_str(o) for o in (s.dst, *s.srcs) if o is not None] + [expr_str(x) for x in s.scalars]
            args += [f"{k}={v!r}" for k, v in s.attrs.items()]
            pipe = f"[{s.pipe.name:4}] " if show_pipes else ""
            out.append(f"{pad}{pipe}{s.op}({', '.join(args)}){_loc(s)}")
            sub = getattr(s, "sub_body", None)  # the body an instruction runs (a SIMT launch's function)
            if sub is not None:
                out.extend(stmt_lines(sub, indent + 1, show_pipes))
        elif isinstance(s, SetValidShape):
            target = s.buffer.name + (f"[{expr_str(s.slot)}]" if s.slot is not None else "")
            out.append(f"{pad}[S   ] set_validshape({target}, {expr_str(s.rows)}, {expr_str(s.cols)}){_loc(s)}")
        elif isinstance(s, SyncOp):
            out.append(f"{pad}{sync_str(s)}{_loc(s)}")
        elif isinstance(s, StageSync):
            out.append(f"{pad}[S   ] pipeline.{s.kind}({s.buffer.name}[{expr_str(s.slot)}]){_loc(s)}")
        elif isinstance(s, ArrayStore):
            out.append(f"{pad}{storage_ref(s.array, s.slot, s.elem, expr_str)} = {expr_str(s.value)}{_loc(s)}")
        elif isinstance(s, ArrayInit):
            st = s.array.storage
            what = f"{st.type_name}[{st.slots}]" if st.is_array else st.type_name
            vals = ", ".join(expr_str(v) for v in s.values)
            out.append(f"{pad}{st.var}.{s.array.field} = init {what}: [{vals}]{_loc(s)}")
        elif hasattr(s, "text"):  # a statement that spells itself (ir/simt.py)
            out.append(f"{pad}{s.text(expr_str)}{_loc(s)}")
        else:
            out.append(f"{pad}<{type(s).__name__}>")
    return out


def sync_str(s: SyncOp) -> str:
    tag = "" if s.origin == "user" else f"    <- auto: {s.origin}"
    ev = expr_str(s.event) if s.event is not None else ""
    if s.kind in ("set_flag", "wait_flag"):
        return f"[{s.pipe.name:4}] {s.kind}({s.src.name}, {s.dst.name}, event={ev}){tag}"
    if s.kind in ("lock", "unlock"):
        return f"[{s.pipe.name:4}] {s.kind}(buf_id={ev}){tag}"
    if s.kind in ("xset", "xwait"):
        name = "set_cross_core" if s.kind == "xset" else "wait_cross_core"
        mode = s.attrs.get("sync_mode")
        shown = f", {mode.name}" if mode is not None and mode.name != "INTRA_BLOCK" else ""
        return f"[{s.pipe.name:4}] {name}(event={ev}{shown}){tag}"
    if s.kind == "sync_all":
        ct, mode = s.attrs.get("core_type"), s.attrs.get("mode")
        parts = [x.name for x in (ct, mode) if x is not None]
        return f"[{s.pipe.name:4}] sync_all({', '.join(parts)}){tag}"
    if s.kind == "dcci":
        target = s.attrs.get("tensor") or s.attrs.get("tile")
        name = getattr(target, "name", None) or getattr(getattr(target, "buffer", None), "name", "?")
        return f"[{s.pipe.name:4}] dcci({name}, {s.attrs['cache_line'].name}, {s.attrs['dst'].name}){tag}"
    return f"[{s.pipe.name:4}] {s.kind}({s.src.name}){tag}"


def buffer_line(b: Buffer) -> str:
    t = b.tile_type
    addrs = ", ".join(f"0x{a:05x}" for a in b.addrs)
    ids = ""
    if b.mutex_ids:
        multi = any(len(row) != 1 for row in b.mutex_ids)
        ids = f" mutex_ids={[list(r) for r in b.mutex_ids] if multi else [r[0] for r in b.mutex_ids]}"
    alias = f" view_of={b.alias_of.name}" if b.alias_of is not None else ""
    where = f"  # {os.path.basename(b.loc.path)}:{b.loc.line}" if b.loc else ""
    return (f"{b.name}: {t.target_memory.name} {t.dtype.name}[{t.rows}x{t.cols}] "
            f"{t.nbytes} B x{b.depth} @ [{addrs}]{ids}{alias}{where}")


def _scalar_kind(p) -> str:
    dtype = getattr(p, "dtype", None)
    return dtype.short if dtype is not None else p.ty


def kernel_str(k: KernelIR, show_pipes: bool = True) -> str:
    head = f"kernel {k.name}" + (f" ({k.kind.value} program)" if k.kind else "")
    params = ", ".join(f"{p.name}: {p.type!r}" if hasattr(p, "type") else f"{p.name}: {_scalar_kind(p)}"
                       for p in k.params)
    lines = [f"{head}({params})"]
    if k.constants:
        lines.append("constants: " + ", ".join(f"{n}={v!r}" for n, v in k.constants.items()))
    lines.append("buffers:")
    lines += ["    " + buffer_line(b) for b in k.buffers] or ["    (none)"]
    lines.append("body:")
    lines += stmt_lines(k.body, 1, show_pipes) or ["    pass"]
    return "\n".join(lines) + "\n"
