"""A VF call (``ir.vf.VfCall``, a ``@pl.vector_function`` called from a ``pl.section_vector()``) as
PTO-ISA C++ for a5: one ``__VEC_SCOPE__ { ... }`` block of vector micro-instructions, as the real
PyPTO Pro inlines a VF section (and as PTO-ISA's a5 headers write theirs, e.g. ``npu/a5/TBinOp.hpp``).

- Before the scope: each tile argument as a ``__ubuf__ T*`` at the tile's UB address
  (``(__ubuf__ T*)tile.data()``), each scalar argument as a ``const`` local.
- At the top of the scope: every register of the body declared with its type (``RegTensor<T>``,
  ``MaskReg``, ``UnalignReg``) and every scalar the body assigns.
- The body: its scalar control flow as C++ (loops count in ``uint16_t``, as the real backend and
  PTO-ISA's headers write VF loops) and each ``VfInstr`` as the spelling its declaration gives
  (``ops/vf/*``, ``cpp=``; builders in ``ops/vf/cpp.py``), commented with its ``file:line``.

An op without a spelling is a located CompileError at the op's own line in the VF body, naming the
op. PTO-ISA's CPU model (``include/pto/cpu``) has no micro-instructions, so the block is guarded:
under ``__CPU_SIM`` an ``#error`` says so.
"""
from __future__ import annotations

import os

from pypto_pro.backends.pto.cexpr import scalar_ctype
from pypto_pro.backends.pto.ctypes_map import ctype
from pypto_pro.backends.pto.tile_ops import no_cpp
from pypto_pro.ir.expr import BinOp, Const, Expr
from pypto_pro.ir.nodes import Assign, Break, Continue, For, If, Stmt, While, walk_stmts
from pypto_pro.ir.vf import ALIGN, MASK, MemRef, RegRead, VfCall, VfInstr, VReg
from pypto_pro.ops.cpp import NoCpp

CPU_MODEL_ERROR = ('#error "a @pl.vector_function body is PTO-ISA a5 vector micro-instructions (__VEC_SCOPE__); '
                   'PTO-ISA\'s CPU model has none of them: run VF kernels on the pypto_pro simulator"')


def _loc(s) -> str:
    loc = getattr(s, "loc", None)
    return f"{os.path.basename(loc.path)}:{loc.line}" if loc else ""


class VfOperands:
    """What a VF spelling (``ops/vf/cpp.py``) writes its operands with: register, pointer and scalar
    names of this call, and the declarations an instruction needs before it (``temp``)."""

    def __init__(self, body: VfBodyEmitter):
        self.b = body
        self.instr: VfInstr | None = None
        self.pending: list[str] = []

    def dst(self, k: int) -> str:
        return self.b.reg_name(self.instr.dsts[k])  # type: ignore[union-attr]

    def reg(self, arg, dtype=None) -> str:
        """A register operand; read as another dtype (``vf.bit_cast``, or ``dtype``) through a
        ``(RegTensor<U>&)`` reference cast, as the real backend and PTO-ISA's headers write it."""
        if arg is None:
            raise NoCpp("an operand is missing")
        reg = arg.reg if isinstance(arg, RegRead) else arg
        name = self.b.reg_name(reg)
        if reg.kind != "vreg":
            return name
        want = dtype or (arg.dtype if isinstance(arg, RegRead) else None) or reg.dtype
        return name if ctype(want) == ctype(reg.dtype) else f"(RegTensor<{ctype(want)}>&){name}"

    def ptr(self, ref: MemRef, dtype) -> tuple[str, str]:
        """``(pointer, element offset)`` of a UB address read as ``dtype`` elements."""
        base, tile_dt = self.b.ptrs[ref.tile]
        w = max(1, dtype.bits // 8)
        ptr = base if ctype(dtype) == ctype(tile_dt) else f"(__ubuf__ {ctype(dtype)}*){base}"
        return ptr, self._elements(ref.offset, w)

    def _elements(self, nbytes: Expr, w: int) -> str:
        if isinstance(nbytes, Const):
            if int(nbytes.value) % w:
                raise NoCpp(f"UB byte offset {nbytes.value} is not a whole number of {w}-byte elements")
            return str(int(nbytes.value) // w)
        if isinstance(nbytes, BinOp) and nbytes.op == "*" and isinstance(nbytes.rhs, Const) \
                and int(nbytes.rhs.value) % w == 0:
            k = int(nbytes.rhs.value) // w
            inner = self.b.cexpr(nbytes.lhs)
            return inner if k == 1 else f"({inner}) * {k}"
        return f"({self.b.cexpr(nbytes)}) / {w}"

    def own_ptr(self, ref: MemRef, dtype) -> str:
        """A pointer local of its own at the UB address (``__ubuf__ T* p = ptr + off;``), for the
        POST_UPDATE / in-place forms that move the pointer they are given."""
        ptr, off = self.ptr(ref, dtype)
        return self.temp(f"__ubuf__ {ctype(dtype)}*", f"{ptr} + {off}")

    def scalar(self, e: Expr, dtype) -> str:
        text = self.b.cexpr(e)
        return text if dtype is None else f"static_cast<{scalar_ctype(dtype)}>({text})"

    def mode(self, instr) -> str:
        from pypto_pro.ops.vf.cpp import MODE
        return MODE[bool(instr.attrs.get("merging"))]

    def temp(self, ctype_: str, init: str | None) -> str:
        """A local declared just before the instruction (``init`` None: default-constructed)."""
        name = self.b.names.fresh("vf_u" if init is None else "vf_n")
        self.pending.append(f"{ctype_} {name};" if init is None else f"{ctype_} {name} = {init};")
        return name

    def ctype(self, dtype) -> str:
        return ctype(dtype)


class VfBodyEmitter:
    """The lines of one VF call (see the module docstring)."""

    def __init__(self, op: VfCall, ctx, arch: str):
        self.op, self.ctx, self.arch = op, ctx, arch
        self.cexpr = ctx.cexpr
        self.names = ctx.cexpr.names
        self.regs: dict[int, str] = {}
        self.ptrs: dict[int, tuple[str, object]] = {}
        self.e = VfOperands(self)

    def reg_name(self, reg: VReg) -> str:
        name = self.regs.get(reg.uid)
        if name is None:
            name = self.regs[reg.uid] = self.names.fresh(f"vf_{reg.name}")
        return name

    def lines(self) -> list[str]:
        op = self.op
        vf = op.attrs.get("vf", "vector_function")
        if self.arch != "a5":
            raise no_cpp(f"the call of @pl.vector_function {vf}", "VF (register-level vector code) exists on "
                          "a5 only; a2a3 has no VF unit", op.loc)
        head: list[str] = []
        for k, t in enumerate(op.tiles):
            dt = t.tile_type.dtype
            name = self.names.fresh(f"vf_{t.buffer.name}")
            self.ptrs[k] = (name, dt)
            head.append(f"__ubuf__ {ctype(dt)}* {name} = (__ubuf__ {ctype(dt)}*){self.ctx.tile(t)}.data();")
        for var, value in zip(op.params, op.scalars):
            ct = scalar_ctype(var.dtype)
            head.append(f"const {ct} {self.names.var(var)} = {self.cexpr.operand(value, var.dtype)};")
        body: list[str] = []
        self._block(op.body, 1, body)
        decls = self._declarations()
        return (["#if defined(__CPU_SIM)", CPU_MODEL_ERROR, "#else"] + head
                + [f"__VEC_SCOPE__ {{  // @pl.vector_function {vf}"]
                + ["    " + d for d in decls] + body + ["}", "#endif"])

    def _declarations(self) -> list[str]:
        out: list[str] = []
        seen: set[int] = set()
        for s in walk_stmts(self.op.body):
            if isinstance(s, VfInstr):
                for r in (*s.dsts, *(a.reg for a in s.args if isinstance(a, RegRead))):
                    if r.uid not in seen:
                        seen.add(r.uid)
                        kind = "MaskReg" if r.kind == MASK else "UnalignReg" if r.kind == ALIGN else \
                            f"RegTensor<{ctype(r.dtype)}>"
                        out.append(f"{kind} {self.reg_name(r)};")
        loop_vars = {s.var.uid for s in walk_stmts(self.op.body) if isinstance(s, For)}
        params = {v.uid for v in self.op.params}
        scalars: dict[int, object] = {}
        for s in walk_stmts(self.op.body):
            if isinstance(s, Assign) and s.var.uid not in loop_vars | params:
                scalars.setdefault(s.var.uid, s.var)
        for v in scalars.values():
            out.append(f"{scalar_ctype(v.dtype)} {self.names.var(v)} = 0;")
        return out

    def _block(self, body: list[Stmt], depth: int, out: list[str]) -> None:
        pad = "    " * depth
        for s in body:
            loc = _loc(s)
            tail = f"  // {loc}" if loc else ""
            if isinstance(s, VfInstr):
                lines = self._instr(s)
                out += [pad + line for line in lines[:-1]]
                out.append(pad + lines[-1] + tail)
            elif isinstance(s, Assign):
                out.append(f"{pad}{self.names.var(s.var)} = {self.cexpr.operand(s.value, s.var.dtype)};{tail}")
            elif isinstance(s, For):
                v = self.names.var(s.var)
                stop = self.cexpr(s.stop)
                stop = stop if isinstance(s.stop, Const) else f"(uint16_t)({stop})"
                step = self.cexpr(s.step)
                if isinstance(s.step, Const) and isinstance(s.step.value, int) and s.step.value < 0:
                    raise no_cpp("a VF loop with a negative step", "VF loops count up in uint16_t", s.loc)
                incr = f"++{v}" if step == "1" else f"{v} += {step}"
                out.append(f"{pad}for (uint16_t {v} = {self.cexpr(s.start)}; {v} < {stop}; {incr}) {{{tail}")
                self._block(s.body, depth + 1, out)
                out.append(f"{pad}}}")
            elif isinstance(s, If):
                out.append(f"{pad}if ({self.cexpr(s.cond)}) {{{tail}")
                self._block(s.then_body, depth + 1, out)
                if s.else_body:
                    out.append(f"{pad}}} else {{")
                    self._block(s.else_body, depth + 1, out)
                out.append(f"{pad}}}")
            elif isinstance(s, While):
                out.append(f"{pad}while ({self.cexpr(s.cond)}) {{{tail}")
                self._block(s.body, depth + 1, out)
                out.append(f"{pad}}}")
            elif isinstance(s, (Break, Continue)):
                out.append(f"{pad}{type(s).__name__.lower()};{tail}")
            else:
                raise no_cpp(f"a {type(s).__name__} statement in a VF body", "it has no C++ form",
                              getattr(s, "loc", None))

    def _instr(self, s: VfInstr) -> list[str]:
        from pypto_pro.ops.vf.decl import VF_INSTRS
        d = VF_INSTRS.get(s.op)
        what = f"vf.{s.attrs.get('api', s.op)}"
        if d is None:
            raise no_cpp(what, f"VF instruction '{s.op}' has no declaration", s.loc)
        if d.cpp is None:
            raise no_cpp(what, d.cpp_missing, s.loc)
        self.e.instr, self.e.pending = s, []
        try:
            lines = d.cpp(s, self.e)
        except NoCpp as exc:
            raise no_cpp(what, str(exc), s.loc) from None
        return self.e.pending + list(lines)


def emit_vf_call(op: VfCall, ctx, arch: str) -> list[str]:
    """The C++ lines of one VF call (``ops/vf/call.py``'s ``vf_call`` spelling)."""
    return VfBodyEmitter(op, ctx, arch).lines()
