"""PTO-ISA C++ from the lowered per-engine programs (the same IR the simulator runs).

``emit_kernel(programs, kernel_name, arch)`` returns ``{"kernel.cpp": ..., "launcher.cpp": ...}``:

- kernel.cpp: ``#include <pto/pto-inst.hpp>``; a ``GlobalTensor`` window type per tensor parameter
  (row-major, run-time dims); one function per engine program (Cube under ``__DAV_CUBE__``, Vector
  under ``__DAV_VEC__``; both visible to the CPU model, ``-D__CPU_SIM``) with a ``Tile`` type per
  buffer and one ``TASSIGN`` per ring slot at the kernel's addresses; every tile op as its PTO-ISA
  instruction; every SyncOp exactly as the passes placed it; the scalar control flow as C++, each
  line commented with its ``file:line`` in the kernel source; and the ``extern "C"`` kernel entry.
- launcher.cpp: ``extern "C" int launch_<kernel>(block_dim, stream, tensor pointers..., dims...)``.

Mirrors ``backends/sim/codegen.py``: control flow is generated, each instruction is one call.
Where the IR holds something PTO-ISA (or this backend) cannot express, ``emit_kernel`` raises a
located ``CompileError`` naming the construct and why (docs/pto_backend.md lists them per op).
"""
from __future__ import annotations

import os

from pypto_pro.errors import CompileError
from pypto_pro.ir.expr import BinOp, Const, ListIndex, Var
from pypto_pro.ir.nodes import (Assign, Break, Continue, For, GMRef, If, KernelIR, Return, ScalarParam,
                                SetValidShape, StageSync, Stmt, SyncOp, TensorParam, TileOp, While, walk_stmts)
from pypto_pro.ir.storage import ArrayInit, ArrayStore, TilingParam
from pypto_pro.ir.views import TensorView
from pypto_pro.ir.printer import operand_str, sync_str
from pypto_pro.language.enums import SectionKind

from pypto_pro.backends.pto.cexpr import ExprWriter, Names, dim_name, scalar_ctype
from pypto_pro.backends.pto.ctypes_map import ctype, tile_type_expr
from pypto_pro.backends.pto.launcher import emit_launcher
from pypto_pro.backends.pto.preamble import HELPERS, INCLUDES, cpu_shims
from pypto_pro.backends.pto.storage import StorageEmitter, struct_definitions
from pypto_pro.backends.pto.sync import dcci_line, sync_line
from pypto_pro.backends.pto.tile_ops import OpContext, no_cpp, op_lines
from pypto_pro.ops.cpp import NoCpp

ENGINE_GUARD = {SectionKind.CUBE: "__DAV_CUBE__", SectionKind.VECTOR: "__DAV_VEC__"}
LOCAL_NAMES = {"gm", "rows", "cols", "r0", "c0", "block_idx", "block_num", "subblock_idx", "subblock_num",
               "ffts_addr"}


def _arch_name(arch) -> str:
    name = getattr(arch, "name", arch)
    return str(name)


def _loc(s) -> str:
    loc = getattr(s, "loc", None)
    return f"{os.path.basename(loc.path)}:{loc.line}" if loc else ""


class KernelSignature:
    """The kernel's run-time arguments: tensors (as typed GM pointers), dynamic dims, scalars."""

    def __init__(self, params: list, needs_ffts: bool):
        self.tensors = [p for p in params if isinstance(p, TensorParam)]
        self.scalars = [p for p in params if isinstance(p, ScalarParam) and p.ty != "constexpr"]
        self.tiling = next((p for p in params if isinstance(p, TilingParam)), None)  # last: a packed struct
        self.needs_ffts = needs_ffts

    def dynamic_dims(self) -> list[tuple[TensorParam, int]]:
        return [(t, a) for t in self.tensors for a, d in enumerate(t.type.dims) if not isinstance(d, int)]

    def params(self) -> list[str]:
        out = ["__gm__ uint64_t* ffts_addr"] if self.needs_ffts else []
        out += [f"__gm__ {ctype(t.type.dtype)}* {t.name}" for t in self.tensors]
        out += [f"int64_t {dim_name(t.name, a)}" for t, a in self.dynamic_dims()]
        out += [f"{scalar_ctype(s.dtype or s.ty)} {s.name}" for s in self.scalars]
        out += [f"__gm__ uint8_t* {self.tiling.name}"] if self.tiling is not None else []
        return out

    def args(self) -> list[str]:
        out = ["ffts_addr"] if self.needs_ffts else []
        out += [t.name for t in self.tensors]
        out += [dim_name(t.name, a) for t, a in self.dynamic_dims()]
        out += [s.name for s in self.scalars]
        out += [self.tiling.name] if self.tiling is not None else []
        return out


class ProgramEmitter:
    """C++ for one engine program."""

    def __init__(self, program: KernelIR, kernel_name: str, arch: str, sig: KernelSignature):
        self.p = program
        self.arch = arch
        self.sig = sig
        self.engine = program.kind or SectionKind.VECTOR
        self.fn_name = f"{kernel_name}_{self.engine.value}"
        reserved = set(LOCAL_NAMES) | {t.name for t in sig.tensors} | {s.name for s in sig.scalars}
        reserved |= {sig.tiling.name} if sig.tiling is not None else set()
        reserved |= {dim_name(t.name, a) for t, a in sig.dynamic_dims()}
        self.names = Names(reserved)
        for name, v in program.param_vars.items():  # scalar parameters keep their names
            self.names.by_uid[v.uid] = name
        self.tile_names: dict[int, str] = {}
        self.type_names: dict[int, str] = {}
        for b in program.buffers:
            self.tile_names[b.uid] = self.names.fresh(b.name)
            self.type_names[b.uid] = self.names.fresh(b.name + "_t")
        self.storage = StorageEmitter(self.names.fresh)
        self.cexpr = ExprWriter(self.names, {t.name: t for t in sig.tensors})
        self.cexpr.storage = self.storage
        # pl.set_stride: each program (core) holds its own descriptor per tensor, set in program order
        self.strided = {t: tuple(self.names.fresh(f"{t}_{x}") for x in ("strided", "row_stride", "col_stride"))
                        for t in strided_tensors(program)}
        self.ctx = OpContext(self.cexpr, lambda b: self.tile_names[b.uid], lambda b: self.type_names[b.uid],
                             lambda n: f"{n}_gm_t", self._dims, self.strided.get)
        self.shims: set[str] = set()
        self.lines: list[str] = []

    def _dims(self, tensor: str) -> list[str]:
        t = next(t for t in self.sig.tensors if t.name == tensor)
        return [str(d) if isinstance(d, int) else dim_name(t.name, a) for a, d in enumerate(t.type.dims)]

    # ---- declarations -------------------------------------------------------------------------

    def _tiles(self, pad: str) -> None:
        if not self.p.buffers:
            return
        self.lines.append(f"{pad}// tiles: one TASSIGN per slot, at the kernel's addresses")
        for b in self.p.buffers:
            tname, ttype = self.tile_names[b.uid], self.type_names[b.uid]
            where = f"  // {_loc(b)}" if b.loc else ""
            self.lines.append(f"{pad}using {ttype} = {tile_type_expr(b)};")
            r, c = b.tile_type.static_valid or b.tile_type.shape  # run-time valid shapes: set where placed
            if b.view_starts is not None:  # a subview at a run-time start: addressed where it is taken
                self.lines.append(f"{pad}{ttype} {tname};{where}")
            elif b.is_group:
                self.lines.append(f"{pad}{ttype} {tname}[{b.depth}];{where}")
                for i, a in enumerate(b.addrs):
                    self.lines.append(f"{pad}TASSIGN({tname}[{i}], 0x{a:05x}); {tname}[{i}].SetValidShape({r}, {c});")
            else:
                self.lines.append(f"{pad}{ttype} {tname};{where}")
                self.lines.append(f"{pad}TASSIGN({tname}, 0x{b.addrs[0]:05x}); {tname}.SetValidShape({r}, {c});")

    def _scalars(self, pad: str) -> None:
        seen: dict[int, Var] = {}
        for s in walk_stmts(self.p.body):
            if isinstance(s, Assign):
                seen.setdefault(s.var.uid, s.var)
            elif isinstance(s, For):
                seen.setdefault(s.var.uid, s.var)
            elif isinstance(s, TileOp) and s.attrs.get("result") is not None:  # pl.getval's register(s)
                res = s.attrs["result"]
                for v in res if isinstance(res, tuple) else (res,):
                    seen.setdefault(v.uid, v)
        params = {v.uid for v in self.p.param_vars.values()}
        decls = [v for uid, v in seen.items() if uid not in params]
        structs = self.storage.declarations(self.p, pad)
        if structs:
            self.lines.append(f"{pad}// structs (pl.struct / pl.struct_array) and the tiling fields")
            self.lines += structs
        if self.strided:
            self.lines.append(f"{pad}// pl.set_stride descriptors: until set, a window walks the tensor's own strides")
            for flag, row, col in self.strided.values():
                self.lines.append(f"{pad}bool {flag} = false; int64_t {row} = 0, {col} = 0;")
        if decls:
            self.lines.append(f"{pad}// scalars (the scalar unit's registers)")
            for v in decls:
                ct = scalar_ctype(v.dtype)
                init = {"bool": "false", "int": "0"}.get(v.ty, "0.0f" if ct == "float" else f"{ct}(0.0f)")
                self.lines.append(f"{pad}{ct} {self.names.var(v)} = {init};")

    # ---- body ---------------------------------------------------------------------------------

    def _block(self, body: list[Stmt], depth: int) -> None:
        pad = "    " * depth
        for s in body:
            loc = _loc(s)
            tail = f"  // {loc}" if loc else ""
            if isinstance(s, Assign):
                self.lines.append(f"{pad}{self.names.var(s.var)} = {self.cexpr.operand(s.value, s.var.dtype)};{tail}")
            elif isinstance(s, For):
                self._for(s, depth, tail)
            elif isinstance(s, While):
                self.lines.append(f"{pad}while ({self.cexpr(s.cond)}) {{{tail}")
                self._block(s.body, depth + 1)
                self.lines.append(f"{pad}}}")
            elif isinstance(s, (Break, Continue)):
                self.lines.append(f"{pad}{type(s).__name__.lower()};{tail}")
            elif isinstance(s, Return):
                self.lines.append(f"{pad}return;{tail}")
            elif isinstance(s, If):
                self.lines.append(f"{pad}if ({self.cexpr(s.cond)}) {{{tail}")
                self._block(s.then_body, depth + 1)
                if s.else_body:
                    self.lines.append(f"{pad}}} else {{")
                    self._block(s.else_body, depth + 1)
                self.lines.append(f"{pad}}}")
            elif isinstance(s, TileOp):
                self._tile_op(s, depth, loc)
            elif isinstance(s, SetValidShape):
                self._set_validshape(s, pad, tail)
            elif isinstance(s, SyncOp):
                try:
                    line = dcci_line(s, self.ctx, self.shims) if s.kind == "dcci" else \
                        sync_line(s, self.arch, self.engine, self.cexpr, self.shims)
                except NoCpp as exc:
                    raise no_cpp(sync_str(s).strip(), str(exc), s.loc) from None
                comment = f"  // {sync_str(s).strip()}" + (f"  @ {loc}" if loc else "")
                self.lines.append(f"{pad}{line}{comment}")
            elif isinstance(s, StageSync):
                raise no_cpp(f"pipeline.{s.kind}", "it was not lowered by the pipeline_sync pass", s.loc)
            elif isinstance(s, (ArrayStore, ArrayInit)):
                self.lines += self.storage.statement(s, self.cexpr, pad, tail)
            else:
                raise no_cpp(f"a {type(s).__name__} statement", "it has no C++ form", getattr(s, "loc", None))

    def _for(self, s: For, depth: int, tail: str) -> None:
        pad = "    " * depth
        var = self.names.var(s.var)
        start, stop, step = self.cexpr(s.start), self.cexpr(s.stop), self.cexpr(s.step)
        cmp = ">" if isinstance(s.step, Const) and isinstance(s.step.value, int) and s.step.value < 0 else "<"
        bound_vars = {e.uid for e in (s.stop, s.step) if isinstance(e, Var)}
        if all(isinstance(e, (Const, Var)) for e in (s.stop, s.step)) and not self._assigned_in(s.body, bound_vars):
            incr = f"++{var}" if step == "1" else f"{var} += {step}"
            self.lines.append(f"{pad}for ({var} = {start}; {var} {cmp} {stop}; {incr}) {{{tail}")
            self._block(s.body, depth + 1)
            self.lines.append(f"{pad}}}")
            return
        # range() evaluates its bounds once: hoist them.
        end, stride = self.names.fresh(f"{var}_end"), self.names.fresh(f"{var}_step")
        self.lines.append(f"{pad}{{")
        self.lines.append(f"{pad}    const int64_t {end} = {stop}, {stride} = {step};")
        self.lines.append(f"{pad}    for ({var} = {start}; {var} {cmp} {end}; {var} += {stride}) {{{tail}")
        self._block(s.body, depth + 2)
        self.lines.append(f"{pad}    }}")
        self.lines.append(f"{pad}}}")

    @staticmethod
    def _assigned_in(body: list[Stmt], uids: set[int]) -> bool:
        return any(isinstance(s, (Assign, For)) and s.var.uid in uids for s in walk_stmts(body))

    def _tile_op(self, s: TileOp, depth: int, loc: str) -> None:
        pad = "    " * depth
        lines = op_lines(s, self.ctx, self.arch)
        tail = f"  // {loc}" if loc else ""
        if len(lines) <= 2 and not any(line.startswith("const ") for line in lines):
            for i, line in enumerate(lines):
                self.lines.append(line if line.startswith("#") else f"{pad}{line}{tail if i == len(lines) - 1 else ''}")
            return
        what = f"{s.op}({', '.join(operand_str(o) for o in (s.dst, *s.srcs))})"
        self.lines.append(f"{pad}{{  // {what}" + (f"  @ {loc}" if loc else ""))
        for i, line in enumerate(lines):
            self.lines.append(line if line.startswith("#") else
                              f"{pad}    {line}{tail if i == len(lines) - 1 else ''}")
        self.lines.append(f"{pad}}}")

    def _set_validshape(self, s: SetValidShape, pad: str, tail: str) -> None:
        b = s.buffer
        name = self.tile_names[b.uid]
        rows, cols = self.cexpr(s.rows), self.cexpr(s.cols)
        if s.slot is None:
            slots = [str(i) for i in range(b.depth)] if b.is_group else [None]
        else:
            slots = [self.cexpr(s.slot) if b.is_group else None]
        if b.view_starts is not None:  # a subview at a run-time start (ir/subview.py): address it here
            self._runtime_subview(s, pad, tail)
            return
        for slot in slots:
            ref = f"{name}[{slot}]" if slot is not None else name
            if s.clamp_to is not None:  # a subview: clamped to its tile's valid shape
                base, r0, c0 = s.clamp_to
                src = self.tile_names[base.uid] + (f"[{slot}]" if base.is_group and slot is not None else "")
                want_r, want_c = self.cexpr(s.rows), self.cexpr(s.cols)
                rows = f"pp_min(static_cast<int64_t>({src}.GetValidRow()) - {r0}, static_cast<int64_t>({want_r}))"
                cols = f"pp_min(static_cast<int64_t>({src}.GetValidCol()) - {c0}, static_cast<int64_t>({want_c}))"
            self.lines.append(f"{pad}{ref}.SetValidShape({rows}, {cols});{tail}")

    def _runtime_subview(self, s: SetValidShape, pad: str, tail: str) -> None:
        """``tile[r:, c:]`` at a run-time start, as the real backend emits ``block.subview``: the view's
        descriptor TASSIGNed at the tile's address plus the start's byte offset (row-major ND: ``r * cols
        + c`` elements; DN: ``c * rows + r``), then its window clamped to the tile's valid shape."""
        view, slot = s.buffer, s.slot
        base = view.alias_of
        rows, cols = base.tile_type.shape
        row = slot.row if slot.row is not None else Const(view.view_starts.r0)  # type: ignore[union-attr]
        col = slot.col if slot.col is not None else Const(view.view_starts.c0)  # type: ignore[union-attr]
        bslot = slot.base  # type: ignore[union-attr]
        addr = Const(base.addrs[0]) if base.depth == 1 else ListIndex(base.addrs, bslot)
        nd = base.tile_type.effective_layout(self.arch).name == "ND"
        elems = BinOp("+", BinOp("*", row, Const(cols)), col) if nd else BinOp("+", BinOp("*", col, Const(rows)), row)
        offset = BinOp("*", elems, Const(base.tile_type.dtype.itemsize))
        name = self.tile_names[view.uid]
        src = self.tile_names[base.uid] + (f"[{self.cexpr(bslot)}]" if base.is_group else "")
        r0, c0 = self.cexpr(row), self.cexpr(col)
        want_r, want_c = self.cexpr(s.rows), self.cexpr(s.cols)
        self.lines.append(f"{pad}TASSIGN({name}, {self.cexpr(BinOp('+', addr, offset))});{tail}")
        self.lines.append(f"{pad}{name}.SetValidShape("
                          f"pp_min(static_cast<int64_t>({src}.GetValidRow()) - {r0}, static_cast<int64_t>({want_r})), "
                          f"pp_min(static_cast<int64_t>({src}.GetValidCol()) - {c0}, static_cast<int64_t>({want_c})));")

    # ---- whole function -----------------------------------------------------------------------

    def emit(self) -> str:
        p = self.p
        header = (f"// ---- {self.engine.value} program: {p.name}, from {os.path.basename(p.source_path)} "
                  + "-" * max(4, 60 - len(p.name)))
        body_start = len(self.lines)
        self._tiles("    ")
        self._scalars("    ")
        self.lines.append("")
        self._block(p.body, 1)
        body = self.lines[body_start:]
        text = "\n".join(body)
        # as the real backend answers them per core: an AIV's block index is the flattened
        # block * subblocks + subblock, an AIC has one subblock
        vector = self.engine is SectionKind.VECTOR
        specials = ["    const int64_t block_idx = "
                    + ("get_block_idx() * get_subblockdim() + get_subblockid();" if vector else "get_block_idx();"),
                    "    const int64_t block_num = get_block_num();",
                    "    const int64_t subblock_idx = get_subblockid();",
                    "    const int64_t subblock_num = " + ("get_subblockdim();" if vector else "1;")]
        used_specials = [line for line in specials if _uses(text, line.split()[2])]
        params = ",\n    ".join(self.sig.params())
        out = [header,
               f"#if defined({ENGINE_GUARD[self.engine]}) || defined(__CPU_SIM)",
               f"AICORE inline void {self.fn_name}(\n    {params})",
               "{"]
        if self.sig.needs_ffts:
            out.append("    (void)ffts_addr;")
        out += used_specials + body + ["}", f"#endif  // {ENGINE_GUARD[self.engine]}"]
        return "\n".join(out)


def _uses(text: str, ident: str) -> bool:
    import re
    return re.search(rf"\b{re.escape(ident)}\b", text) is not None


def emit_kernel(programs: dict, kernel_name: str, arch) -> dict[str, str]:
    """PTO-ISA C++ for the lowered ``programs`` (``CompiledPrograms.programs``) of one kernel."""
    arch_name = _arch_name(arch)
    if arch_name not in ("a2a3", "a5"):
        raise ValueError(f"unknown arch {arch_name!r}")
    progs = {k: programs[k] for k in (SectionKind.CUBE, SectionKind.VECTOR) if k in programs}
    if not progs:
        raise ValueError("no Cube or Vector program to emit")
    first = next(iter(progs.values()))
    cross = any(isinstance(s, SyncOp) and s.kind in ("xset", "xwait")
                for p in progs.values() for s in walk_stmts(p.body))
    sig = KernelSignature(first.params, needs_ffts=cross and arch_name == "a2a3")
    _check_no_views(progs.values())
    _check_element_types(progs.values(), sig)
    emitters = [ProgramEmitter(p, kernel_name, arch_name, sig) for p in progs.values()]
    bodies = [e.emit() for e in emitters]
    shims = set().union(*(e.shims for e in emitters))
    if sig.needs_ffts:
        shims.add("set_ffts_base_addr")

    gm_lines = ["// ---- global tensors: a row-major window of each tensor parameter (shape and row stride "
                "at run time; the column stride too for a tensor a pl.set_stride rewrites)"]
    strided = set().union(*(strided_tensors(p) for p in progs.values()))
    for t in sig.tensors:
        dims = ", ".join("DYNAMIC" if not isinstance(d, int) else str(d) for d in t.type.dims)
        col = "DYNAMIC" if t.name in strided else "1"
        gm_lines.append(f"using {t.name}_gm_t = GlobalTensor<{ctype(t.type.dtype)}, Shape<1, 1, 1, DYNAMIC, DYNAMIC>, "
                        f"Stride<1, 1, 1, DYNAMIC, {col}>>;  // {t.name}: [{dims}]")

    entry = _entry(kernel_name, sig, emitters)
    src = os.path.basename(first.source_path)
    head = (f"// Generated by pypto_pro (PTO-ISA backend) from {src}: kernel {kernel_name}, arch {arch_name}.\n"
            f"// Programs: {', '.join(e.engine.value for e in emitters)}. Build for the CPU model with\n"
            f"//   clang++ -std=c++20 -D__CPU_SIM -I$PTO_ISA_ROOT/include -c kernel.cpp\n"
            f"// Every sync line is one SyncOp of the lowered program; '// file:line' points into {src}.")
    structs = struct_definitions(list(progs.values()), sig.tiling.cls if sig.tiling is not None else None)
    parts = [head, INCLUDES, cpu_shims(shims), HELPERS, structs, "\n".join(gm_lines), *bodies, entry]
    kernel_cpp = "\n\n".join(x for x in parts if x) + "\n"
    return {"kernel.cpp": kernel_cpp,
            "launcher.cpp": emit_launcher(kernel_name, arch_name, sig, [e.engine for e in emitters])}


def strided_tensors(program: KernelIR) -> set[str]:
    """The tensor parameters a ``pl.set_stride`` of this program rewrites."""
    return {s.attrs["tensor"] for s in walk_stmts(program.body) if isinstance(s, TileOp) and s.op == "set_stride"}


def _check_element_types(programs, sig: KernelSignature) -> None:
    """Every tile and tensor needs a PTO-ISA element type (the 4-bit DT_INT4 / DT_FP4 / DT_HF4 have none)."""
    from pypto_pro.backends.pto.ctypes_map import has_ctype
    for t in sig.tensors:
        if not has_ctype(t.type.dtype):
            raise CompileError(f"the PTO-ISA C++ backend cannot emit tensor parameter '{t.name}': "
                               f"{t.type.dtype.name} has no PTO-ISA element type", getattr(t, "loc", None),
                               kind="unsupported")
    for p in programs:
        for b in p.buffers:
            if not has_ctype(b.tile_type.dtype):
                raise CompileError(f"the PTO-ISA C++ backend cannot emit tile '{b.name}': {b.tile_type.dtype.name} "
                                   "has no PTO-ISA element type", b.loc, kind="unsupported")


def _check_no_views(programs) -> None:
    """``pl.make_tensor`` views (strided GM windows of a parameter) have a C++ form for pl.load /
    pl.store (a GlobalTensor over the view's strides) and element reads / writes; other instructions
    on a view do not yet."""
    for p in programs:
        for s in walk_stmts(p.body):
            if isinstance(s, TileOp) and s.op not in ("load", "store", "getval", "setval"):
                for o in (s.dst, *s.srcs):
                    if isinstance(o, GMRef) and isinstance(o.param, TensorView):
                        raise CompileError(f"the PTO-ISA C++ backend cannot emit pl.{s.attrs.get('api', s.op)} on a "
                                           f"pl.make_tensor view ('{o.param.name}' of '{o.param.base.name}') in "
                                           "this release (only pl.load / pl.store windows and element reads / writes of a view are emitted); the simulator runs it", s.loc,
                                           kind="unsupported")


def _entry(kernel_name: str, sig: KernelSignature, emitters: list[ProgramEmitter]) -> str:
    params = ",\n    ".join(sig.params())
    args = ", ".join(sig.args())
    by_kind = {e.engine: e for e in emitters}
    lines = ["// ---- kernel entry: each core runs its engine's program", 
             f'extern "C" __global__ AICORE void {kernel_name}(\n    {params})',
             "{"]
    if sig.needs_ffts:
        lines.append("    set_ffts_base_addr(reinterpret_cast<uint64_t>(ffts_addr));")
    # PTO-ISA's arch_macro.hpp defines both __DAV_CUBE__ and __DAV_VEC__ under __CPU_SIM: test it first.
    lines.append("#if defined(__CPU_SIM)")
    if len(by_kind) == 2:
        lines.append('#error "mixed Cube + Vector kernel: the PTO-ISA CPU model runs one engine program per '
                     'simulated core and cannot pair a Cube core with its two Vector cores (cross-core flags, '
                     'per-core on-chip memories); build each engine for the NPU"')
    else:
        lines.append(f"    {emitters[0].fn_name}({args});")
    lines.append("#elif defined(__DAV_CUBE__)")
    lines.append(f"    {by_kind[SectionKind.CUBE].fn_name}({args});" if SectionKind.CUBE in by_kind else
                 "    // no Cube program")
    lines.append("#elif defined(__DAV_VEC__)")
    lines.append(f"    {by_kind[SectionKind.VECTOR].fn_name}({args});" if SectionKind.VECTOR in by_kind else
                 "    // no Vector program")
    lines.append("#endif")
    lines.append("}")
    return "\n".join(lines)
