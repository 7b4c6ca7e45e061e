"""Turns a lowered program into Python source: scalar control flow runs as plain Python, each
tile instruction is a call to its prebuilt closure. The source is written to the build
directory (``sim_program.<engine>.py``) so what the simulator runs can be read.

Scalar arithmetic is generated as the C++ the real PyPTO Pro emits computes it (``scalar_math``):
each operand is converted to the operation's dtype (``pl.ir.expr.promote``), then C++'s own rules
apply: integers narrower than 32 bits compute as ``int`` (the integer promotions) and narrow again
only where a value is converted (a variable, a cast, ``min`` / ``max``, a conditional); integer
results wrap at their width; ``//`` / ``%`` truncate; floats round to their width every operation.
"""
from __future__ import annotations

import math
import os
import re

from pypto_pro.backends.sim import scalar_math
from pypto_pro.backends.sim.scalar_math import FLOAT_ROUND, round_value, wrap_code
from pypto_pro.backends.sim.tile_ops import operand_exprs
from pypto_pro.backends.sim.storage_ops import StorageCodegen
from pypto_pro.ir.expr import (BinOp, BoolOp, Cast, Compare, Const, Expr, ListIndex, Select, Special, TensorDim,
                               UnaryOp, Var, int_range, literal_value, numeric)
from pypto_pro.ir.nodes import (Assign, Break, Continue, For, If, KernelIR, Return, SetValidShape, Stmt, SyncOp,
                                TileOp, While)
from pypto_pro.ir.printer import sync_str
from pypto_pro.ir.storage import ArrayInit, ArrayLoad, ArrayStore, arrays_used
from pypto_pro.language.dtypes import DT_FP32, DT_INT32, DT_INT64, DT_UINT64, DataType


def var_name(v: Var) -> str:
    return f"{re.sub(r'[^0-9A-Za-z_]', '_', v.name)}__{v.uid}"


def _float_literal(value: float) -> str:
    if not math.isfinite(value):
        return f"float({str(value)!r})"  # repr gives bare inf / nan, which are not Python names
    return repr(value)


def value_dtype(e: Expr) -> DataType:
    """The C++ type of the value ``e`` computes: its dtype, except that integer arithmetic on types
    narrower than 32 bits yields ``int`` (C++'s integer promotions)."""
    if isinstance(e, BinOp):
        return e.dtype if e.op in ("min", "max") else _computed(e.dtype)
    if isinstance(e, UnaryOp):
        return e.dtype if e.op == "not" else _computed(e.dtype)
    if isinstance(e, Const):  # a C++ literal: an integer literal keeps its value, a float one is a float
        if e.dtype.is_bool():
            return e.dtype
        if e.dtype.is_float():
            return DT_FP32
        return DT_UINT64 if int(e.value) > int_range(DT_INT64)[1] else DT_INT64
    return e.dtype


def _computed(t: DataType) -> DataType:
    return DT_INT32 if t.is_int() and t.bits < 32 else t


class TypedExprWriter:
    """Python source of a scalar expression computing the value the generated C++ computes."""

    def __init__(self, storage: StorageCodegen | None = None) -> None:
        self.where = ""  # file:line of the statement being generated (named by run-time faults)
        self.storage = storage  # struct / tiling field reads (ArrayLoad), when the program has any

    def __call__(self, e: Expr) -> str:
        return self.expr(e)

    # ---- conversions ----------------------------------------------------------------------

    def convert(self, code: str, src: DataType, dst: DataType) -> str:
        """``code`` (a value of ``src``) converted to ``dst`` as C converts."""
        if src is dst:
            return code
        if dst.is_bool():
            return f"bool({code})"
        if dst.is_float():
            if src.is_float() and src.bits <= dst.bits and not (src.name == "DT_BF16" and dst.name == "DT_FP16"):
                return code  # widening between floats is exact
            if not src.is_float() and src.bits <= 16 and dst.name == "DT_FP32":
                return f"float({code})"  # small ints are exact in FP32
            return self.round(f"float({code})", dst)
        lo, hi = int_range(dst)
        if src.is_float():
            return f"_f2i({code}, {lo}, {hi}, {self.where!r})"
        slo, shi = int_range(src)
        if src.is_bool():
            return f"int({code})"
        if lo <= slo and shi <= hi:
            return code
        return wrap_code(code, dst)

    def round(self, code: str, dtype: DataType) -> str:
        fn = FLOAT_ROUND.get(dtype.name)
        return f"_{fn}({code})" if fn else code

    def as_(self, e: Expr, dtype: DataType) -> str:
        """``e`` converted to ``dtype`` (an explicit or implicit C++ conversion)."""
        return self.convert(self.expr(e), value_dtype(e), dtype)

    def operand(self, e: Expr, dtype: DataType) -> str:
        """An operand of an operation on ``dtype``: cast when its dtype differs (the real MaybeCast)."""
        return self.expr(e) if e.dtype is dtype else self.as_(e, dtype)

    # ---- expressions ----------------------------------------------------------------------

    def expr(self, e: Expr) -> str:
        if isinstance(e, Const):
            return self.const(e)
        if isinstance(e, Var):
            return var_name(e)
        if isinstance(e, BinOp):
            return self.binop(e)
        if isinstance(e, Compare):
            t = e.operand_dtype
            return f"({self.operand(e.lhs, t)} {e.op} {self.operand(e.rhs, t)})"
        if isinstance(e, BoolOp):
            parts = [self.expr(v) if v.dtype.is_bool() else f"bool({self.expr(v)})" for v in e.values]
            return "(" + f" {e.op} ".join(parts) + ")"
        if isinstance(e, UnaryOp):
            return self.unary(e)
        if isinstance(e, Select):
            return (f"({self.as_(e.if_true, e.dtype)} if {self.expr(e.cond)} else "
                    f"{self.as_(e.if_false, e.dtype)})")
        if isinstance(e, Cast):
            return self.as_(e.operand, e.dtype)
        if isinstance(e, TensorDim):
            return f"dim_{e.param}_{e.axis}"
        if isinstance(e, Special):
            return e.name
        if isinstance(e, ListIndex):
            return f"{tuple(e.values)!r}[{self.expr(e.index)}]"
        if isinstance(e, ArrayLoad) and self.storage is not None:
            return self.storage.load(e, self)
        if hasattr(e, "sim_code"):  # an expression an op module declares (ops/getval.py GmRead)
            return e.sim_code(self)
        raise TypeError(f"cannot generate {type(e).__name__}")

    def const(self, e: Const) -> str:
        """The literal the real backend writes: ``std::to_string`` of the value (floats then ``f``)."""
        d, v = e.dtype, e.value
        if d.is_bool():
            return repr(bool(v))
        if d.is_float():
            return _float_literal(round_value(literal_value(float(v)), DT_FP32))
        return repr(int(v))

    def binop(self, e: BinOp) -> str:
        if e.op in ("min", "max"):  # std::min<T>(a, b): both converted to T
            return f"{e.op}({self.as_(e.lhs, e.dtype)}, {self.as_(e.rhs, e.dtype)})"
        a, b = self.operand(e.lhs, e.dtype), self.operand(e.rhs, e.dtype)
        t = _computed(e.dtype)
        where = repr(self.where)
        if t.is_float():
            if e.op in ("/", "//"):  # C++ '/' on floats: a true division
                return self.round(f"_fdiv({a}, {b})", t)
            if e.op == "%":
                return self.round(f"_fmod({a}, {b})", t)
            return self.round(f"({a} {e.op} {b})", t)
        if e.op == "/":  # not produced: '/' of ints promotes to FP32
            raise TypeError("integer '/'")
        if e.op == "//":  # only INT_MIN // -1 leaves the range
            q = f"_idiv({a}, {b}, {where})"
            return q if isinstance(e.rhs, Const) and e.rhs.value not in (-1, 0) else wrap_code(q, t)
        if e.op == "%":
            return f"_imod({a}, {b}, {where})"
        if e.op == "<<":
            return wrap_code(f"_shl({a}, {b}, {where})", t)
        if e.op == ">>":
            return f"_shr({a}, {b}, {where})"
        if e.op in ("&", "|", "^"):
            return f"({a} {e.op} {b})"
        return wrap_code(f"{a} {e.op} {b}", t)

    def unary(self, e: UnaryOp) -> str:
        if e.op == "not":
            return f"(not {self.expr(e.operand)})"
        a = self.operand(e.operand, numeric(e.operand.dtype))
        t = _computed(e.dtype)
        if t.is_float():
            return f"(-{a})"
        return wrap_code(f"{e.op}{a}", t)


py_expr = TypedExprWriter()


class ProgramSource:
    """Python source for one program plus the list of instructions its calls index into."""

    def __init__(self, program: KernelIR, live_gm: frozenset[str] = frozenset()):
        self.program = program
        self.instructions: list[TileOp | SetValidShape | SyncOp] = []
        self.lines: list[str] = []
        self.storage = StorageCodegen()
        self.namespace = self.storage.namespace  # helpers the generated code calls (struct fields)
        self.expr = TypedExprWriter(self.storage)
        # an instruction inside an expression (a pl.getval of a GM tensor the kernel writes: live_gm)
        self.expr.instruction = self.inline  # type: ignore[attr-defined]
        self.expr.live_gm = live_gm  # type: ignore[attr-defined]

    def inline(self, stmt: TileOp) -> str:
        """The call of an instruction whose value an expression uses."""
        k = len(self.instructions)
        self.instructions.append(stmt)
        return f"ops[{k}]({', '.join(self.expr(e) for e in operand_exprs(stmt))})"

    def generate(self) -> str:
        p = self.program
        helpers = ", ".join(f"{h} as _{h}" for h in scalar_math.HELPERS)
        self.lines = [f"# generated by pypto_pro from {p.source_path}: {p.name} ({p.kind.value if p.kind else ''} program)",
                      "# scalar code computes as the generated C++ does: _i64(...) etc. wrap an integer to its width,",
                      "# _idiv / _imod are C '/' / '%', _f32(...) rounds to FP32 (pypto_pro/backends/sim/scalar_math.py)",
                      f"from pypto_pro.backends.sim.scalar_math import {helpers}",
                      "def program(ctx, ops, prange):",
                      "    block_idx, block_num = ctx.block_idx, ctx.block_num",
                      "    subblock_idx, subblock_num = ctx.subblock_idx, ctx.subblock_num"]
        for t in p.tensor_params():
            for axis in range(t.type.rank):
                self.lines.append(f"    dim_{t.name}_{axis} = ctx.dims[{t.index}][{axis}]")
        for name, v in p.param_vars.items():
            self.lines.append(f"    {var_name(v)} = ctx.scalars[{name!r}]")
        self.lines += self.storage.declarations(arrays_used(p.body))
        self.block(p.body, 1)
        self.lines.append("    return None")
        return "\n".join(self.lines) + "\n"

    def block(self, body: list[Stmt], depth: int) -> None:
        pad = "    " * depth
        start = len(self.lines)
        for s in body:
            sloc = getattr(s, "loc", None)
            loc = f"  # {os.path.basename(sloc.path)}:{sloc.line}" if sloc else ""
            self.expr.where = f"{os.path.basename(sloc.path)}:{sloc.line}" if sloc else ""
            ex = self.expr
            if isinstance(s, Assign):
                self.lines.append(f"{pad}{var_name(s.var)} = {ex.as_(s.value, s.var.dtype)}{loc}")
            elif isinstance(s, For):
                step = s.step
                if isinstance(step, Const):
                    rng = f"range({ex(s.start)}, {ex(s.stop)}, {ex(step)})"
                else:
                    rng = f"prange({ex(s.start)}, {ex(s.stop)}, {ex(step)})"
                self.lines.append(f"{pad}for {var_name(s.var)} in {rng}:{loc}")
                self.block(s.body, depth + 1)
            elif isinstance(s, While):
                self.lines.append(f"{pad}while {ex(s.cond)}:{loc}")
                self.block(s.body, depth + 1)
            elif isinstance(s, If):
                self.lines.append(f"{pad}if {ex(s.cond)}:{loc}")
                self.block(s.then_body, depth + 1)
                if s.else_body:
                    self.lines.append(f"{pad}else:")
                    self.block(s.else_body, depth + 1)
            elif isinstance(s, (Break, Continue)):
                self.lines.append(f"{pad}{type(s).__name__.lower()}{loc}")
            elif isinstance(s, Return):
                self.lines.append(f"{pad}return None{loc}")
            elif isinstance(s, (TileOp, SetValidShape)):
                k = len(self.instructions)
                self.instructions.append(s)
                args = ", ".join(ex(e) for e in operand_exprs(s))
                what = s.op if isinstance(s, TileOp) else "set_validshape"
                res = s.attrs.get("result") if isinstance(s, TileOp) else None  # a scalar read (getval)
                if isinstance(res, tuple):  # several scalars (ssbuf_load)
                    lhs = "".join(f"{var_name(v)}, " for v in res) + "= "
                else:
                    lhs = f"{var_name(res)} = " if res is not None else ""
                self.lines.append(f"{pad}{lhs}ops[{k}]({args})  # {what}{loc[3:] and ' @ ' + loc[4:]}")
            elif isinstance(s, (ArrayStore, ArrayInit)):
                self.lines.append(f"{pad}{self.storage.statement(s, self.expr)}{loc}")
            elif isinstance(s, SyncOp):
                k = len(self.instructions)
                self.instructions.append(s)
                ev = ex(s.event) if s.event is not None else "0"
                self.lines.append(f"{pad}ops[{k}]({ev})  # {sync_str(s).strip()}")
            else:
                self.statement(s, pad, loc)
        if all(line.lstrip().startswith("#") for line in self.lines[start:]):
            self.lines.append(f"{pad}pass")

    def statement(self, s: Stmt, pad: str, loc: str) -> bool:
        """A statement kind only a subclass generates (a VF body's instructions); False: none."""
        return False
