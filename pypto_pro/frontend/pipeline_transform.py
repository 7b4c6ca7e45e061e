"""The pipeline transform: rewrites a kernel's Python AST so that Cube and Vector stages overlap.

A loop ``for j in pl.range(a, b, s)`` whose body calls ``@pl.pipeline.stage`` functions in order
(plus scalar assignments) becomes prologue / steady state / epilogue loops over a step counter
``t``: stage k handles iteration ``t - delay_k``, with the real transform's delays (the first
stage 0, the first stage of the other engine one more than the stage before it, a later stage of
an engine ``preload`` more than that engine's previous one). Around each stage call the transform
puts the shared groups' cross-core sync: the producer waits for a free slot and signals ready,
the consumer waits for ready and signals free (a one-way group, with only ``fwd_ids`` or only
``bwd_ids``, gets only its direction); the consumer's engine pre-signals every slot free before
the loop and the producer's engine consumes the last signals after it, so no flag is left pending.
A bare ``@pl.pipeline.stage`` (the real form) gets its roles from its body (``pipeline_roles.py``).

The result is DSL source text (``pipeline_generated.py``) with a map from each generated line to
the user's line. Each stage runs every scalar assignment of the loop body on its own copy of the
loop's variables (``_pl_<name>_s<k>``), once per iteration and in order, so a value carried
across iterations (a counter) is the serial loop's in every stage.
"""
from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field
from typing import Any

from pypto_pro.errors import CompileError
from pypto_pro.frontend.diagnostics import SourceFile, fail
from pypto_pro.frontend.pipeline_roles import stage_roles
from pypto_pro.frontend.scope import MISSING, Scope
from pypto_pro.frontend.source import parse_function
from pypto_pro.language.pipeline import PipelineConfig


@dataclass
class StageCall:
    node: ast.Expr
    name: str
    engine: str              # "cube" | "vector"
    produces: list[str]      # kernel-side names of shared groups it writes
    consumes: list[str]
    delay: int = 0
    wrapped: bool = False    # the real form: ``with pl.section_x(): stage(...)`` in the loop body


@dataclass
class Generated:
    """Generated kernel text, its line map, and what the transform found (for the dump)."""

    kernel_text: str
    line_map: dict[int, tuple[int, int]]   # generated line -> (user line, user column)
    notes: list[str] = field(default_factory=list)
    stage_fns: dict[str, Any] = field(default_factory=dict)   # stage name -> function


class _Emitter:
    def __init__(self, src: SourceFile):
        self.src = src
        self.lines: list[str] = []
        self.map: dict[int, tuple[int, int]] = {}

    def emit(self, text: str, indent: int, node: ast.AST | None = None, comment: str = "") -> None:
        orig = (node.lineno + self.src.line_offset, node.col_offset + self.src.col_offset) if node is not None \
            and hasattr(node, "lineno") else None
        for i, line in enumerate(text.splitlines() or [""]):
            tail = f"  # {comment}" if comment and i == 0 else ""
            self.lines.append("    " * indent + line + tail)
            if orig is not None:
                self.map[len(self.lines)] = orig


def _engine_of(fdef: ast.FunctionDef) -> str | None:
    engines = set()
    for n in ast.walk(fdef):
        if isinstance(n, ast.With):
            for item in n.items:
                call = item.context_expr
                if isinstance(call, ast.Call):
                    f = call.func
                    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
                    if name in ("section_cube", "section_vector"):
                        engines.add("cube" if name == "section_cube" else "vector")
    return engines.pop() if len(engines) == 1 else ("both" if engines else None)


def _section_of(stmt: ast.stmt) -> tuple[str, ast.Expr] | None:
    """``with pl.section_cube(): stage(...)`` (one section, one call in it): (engine, the call)."""
    if not (isinstance(stmt, ast.With) and len(stmt.items) == 1 and isinstance(stmt.items[0].context_expr, ast.Call)):
        return None
    f = stmt.items[0].context_expr.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    body = [b for b in stmt.body if not (isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant))]
    if name not in ("section_cube", "section_vector") or len(body) != 1:
        return None
    if not (isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Call)):
        return None
    return ("cube" if name == "section_cube" else "vector"), body[0]


def _call_target(scope: Scope, call: ast.Call) -> Any:
    f = call.func
    if isinstance(f, ast.Name):
        v = scope.lookup(f.id)
        return None if v is MISSING else v
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
        base = scope.lookup(f.value.id)
        return getattr(base, f.attr, None) if base is not MISSING else None
    return None


def _shared_groups(kernel: ast.FunctionDef) -> dict[str, ast.Call]:
    """Kernel names bound to ``pl.make_tile_group(..., fwd_ids=..., bwd_ids=...)``."""
    out: dict[str, ast.Call] = {}
    for n in ast.walk(kernel):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                and isinstance(n.value, ast.Call):
            f = n.value.func
            if (isinstance(f, ast.Attribute) and f.attr == "make_tile_group") or \
                    (isinstance(f, ast.Name) and f.id == "make_tile_group"):
                if any(k.arg in ("fwd_ids", "bwd_ids") for k in n.value.keywords):
                    out[n.targets[0].id] = n.value
    return out


def _literal_depth(call: ast.Call) -> int | None:
    for k in call.keywords:
        if k.arg in ("fwd_ids", "bwd_ids") and isinstance(k.value, (ast.List, ast.Tuple)):
            return len(k.value.elts)
    return None


class PipelineTransform:
    def __init__(self, kernel: ast.FunctionDef, src: SourceFile, scope: Scope, config: PipelineConfig):
        self.kernel = kernel
        self.src = src
        self.scope = scope
        self.config = config
        self.shared = _shared_groups(kernel)
        self.em = _Emitter(src)
        self.loops = 0
        self.notes: list[str] = []
        self.stage_fns: dict[str, Any] = {}

    def fail(self, node: ast.AST, message: str) -> None:
        fail(self.src, node, message)

    # ---- analysis ------------------------------------------------------------------------

    def stage_call(self, stmt: ast.stmt) -> StageCall | None:
        section = _section_of(stmt)
        outer = stmt
        if section is not None:
            stmt = section[1]
        if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
            return None
        fn = _call_target(self.scope, stmt.value)
        roles = getattr(fn, "__pypto_stage__", None)
        if roles is None:
            return None
        fdef, fsrc = parse_function(fn)
        self.stage_fns[fn.__name__] = fn
        engine = _engine_of(fdef)
        if section is not None:  # called inside a section (the real form): the stage itself holds none
            if engine is not None:
                self.fail(outer, f"pipeline stage '{fn.__name__}' holds its own section and is also called inside "
                                 f"pl.section_{section[0]}(); use one of the two")
            engine = section[0]
        elif engine not in ("cube", "vector"):
            raise CompileError(f"pipeline stage '{fn.__name__}' must contain exactly one of pl.section_cube() or "
                               "pl.section_vector(), or be called inside one", fsrc.loc(fdef))
        params = [a.arg for a in fdef.args.args]
        call = stmt.value
        bound: dict[str, ast.expr] = dict(zip(params, call.args))
        for k in call.keywords:
            if k.arg:
                bound[k.arg] = k.value
        produces, consumes = [], []
        if not roles[0] and not roles[1]:  # the real bare @pl.pipeline.stage: roles from its body
            shared = {pn: arg.id for pn, arg in bound.items() if isinstance(arg, ast.Name) and arg.id in self.shared}
            produces, consumes = stage_roles(fn, shared)
            return StageCall(stmt, fn.__name__, engine, produces, consumes, wrapped=section is not None)
        for role, names, out in (("produces", roles[0], produces), ("consumes", roles[1], consumes)):
            for pname in names:
                if pname not in params:
                    raise CompileError(f"stage '{fn.__name__}' {role} '{pname}', which is not one of its parameters",
                                       fsrc.loc(fdef))
                arg = bound.get(pname)
                if not isinstance(arg, ast.Name) or arg.id not in self.shared:
                    self.fail(arg if arg is not None else stmt,
                              f"stage '{fn.__name__}' {role} '{pname}': pass a tile group declared with fwd_ids "
                              "and/or bwd_ids (a shared group)")
                out.append(arg.id)
        return StageCall(stmt, fn.__name__, engine, produces, consumes, wrapped=section is not None)

    # ---- rewriting ---------------------------------------------------------------------------

    def run(self) -> Generated:
        k = self.kernel
        args = ast.unparse(k.args)
        self.em.emit(f"def {k.name}({args}):", 0, k)
        self.block(k.body, 1)
        return Generated("\n".join(self.em.lines) + "\n", self.em.map, self.notes, self.stage_fns)

    def block(self, body: list[ast.stmt], indent: int) -> None:
        for stmt in body:
            if isinstance(stmt, ast.For) and any(self.stage_call(s) for s in stmt.body):
                self.pipelined_loop(stmt, indent)
            elif isinstance(stmt, (ast.For, ast.While, ast.If, ast.With)) and self._has_stage_call(stmt):
                self.compound(stmt, indent)
            else:
                if self.stage_call(stmt) is not None:
                    self.fail(stmt, "a pipeline stage must be called from a pl.range loop")
                self.plain(stmt, indent)

    def plain(self, stmt: ast.stmt, indent: int) -> None:
        """Re-emit a statement, keeping every nested statement mapped to its own user line."""
        if isinstance(stmt, ast.With):
            self.em.emit(f"with {', '.join(ast.unparse(i) for i in stmt.items)}:", indent, stmt)
            for s in stmt.body:
                self.plain(s, indent + 1)
        elif isinstance(stmt, ast.For) and not stmt.orelse:
            self.em.emit(f"for {ast.unparse(stmt.target)} in {ast.unparse(stmt.iter)}:", indent, stmt)
            for s in stmt.body:
                self.plain(s, indent + 1)
        elif isinstance(stmt, ast.While) and not stmt.orelse:
            self.em.emit(f"while {ast.unparse(stmt.test)}:", indent, stmt)
            for s in stmt.body:
                self.plain(s, indent + 1)
        elif isinstance(stmt, ast.If):
            self.em.emit(f"if {ast.unparse(stmt.test)}:", indent, stmt)
            for s in stmt.body:
                self.plain(s, indent + 1)
            if stmt.orelse:
                self.em.emit("else:", indent, stmt)
                for s in stmt.orelse:
                    self.plain(s, indent + 1)
        else:
            self.em.emit(ast.unparse(stmt), indent, stmt)

    def _has_stage_call(self, stmt: ast.stmt) -> bool:
        return any(isinstance(n, ast.stmt) and self.stage_call(n) is not None for n in ast.walk(stmt)
                   if n is not stmt)

    def compound(self, stmt: ast.stmt, indent: int) -> None:
        """Re-emit an if / for / with around a pipelined loop, rewriting its bodies."""
        if isinstance(stmt, ast.For):
            self.em.emit(f"for {ast.unparse(stmt.target)} in {ast.unparse(stmt.iter)}:", indent, stmt)
            self.block(stmt.body, indent + 1)
        elif isinstance(stmt, ast.If):
            self.em.emit(f"if {ast.unparse(stmt.test)}:", indent, stmt)
            self.block(stmt.body, indent + 1)
            if stmt.orelse:
                self.em.emit("else:", indent, stmt)
                self.block(stmt.orelse, indent + 1)
        elif isinstance(stmt, ast.With):
            self.fail(stmt, "pipeline stages hold their own section; call them outside pl.section_*()")
        else:
            self.fail(stmt, "pipeline stages can only be called from pl.range loops")

    def pipelined_loop(self, loop: ast.For, indent: int) -> None:
        cfg = self.config
        it = loop.iter
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr == "range"):
            self.fail(loop.iter, "a loop that calls pipeline stages must iterate over pl.range(...)")
        if not isinstance(loop.target, ast.Name):
            self.fail(loop.target, "the pipelined loop variable must be a single name")
        if loop.orelse:
            self.fail(loop, "for ... else is not supported")
        items: list[Any] = []  # the body in order: scalar assignments and stage calls
        stages: list[tuple[StageCall, list[ast.stmt]]] = []
        for s in loop.body:
            call = self.stage_call(s)
            if call is not None:
                stages.append((call, []))
                items.append(call)
            elif isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                items.append(s)
            elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):
                continue
            elif any(isinstance(n, (ast.Break, ast.Continue, ast.Return)) for n in ast.walk(s)):
                jump = next(n for n in ast.walk(s) if isinstance(n, (ast.Break, ast.Continue, ast.Return)))
                word = type(jump).__name__.lower()
                self.fail(jump, f"'{word}' cannot be used in a pipelined loop: its iterations are rescheduled "
                                "over a prologue, a steady state and an epilogue, so no iteration can end early "
                                "(move the condition into the stages)")
            else:
                self.fail(s, "a pipelined loop may contain only stage calls and scalar assignments "
                             "(move other work into a stage)")
        # delays, the real rule: the first stage 0; the first stage of the other engine one more than the
        # stage before it; every later stage of an engine `preload` more than that engine's previous stage
        last: dict[str, int] = {}
        for i, (call, _) in enumerate(stages):
            if cfg.sync_only or i == 0:
                call.delay = 0
            elif call.engine not in last:
                call.delay = stages[i - 1][0].delay + 1
            else:
                call.delay = last[call.engine] + cfg.preload
            last[call.engine] = call.delay
        self.check_groups(loop, [c for c, _ in stages])
        n = self.loops
        self.loops += 1
        tv, nv = f"_pl_t{n}", f"_pl_n{n}"
        args = [ast.unparse(a) for a in it.args]
        start, stop, step = (args + ["1"])[:3] if len(args) >= 2 else ("0", args[0], "1")
        depth = max(c.delay for c, _ in stages)
        summary = ", ".join(f"{c.name} ({c.engine}, delay {c.delay})" for c, _ in stages)
        self.notes.append(f"line {loop.lineno + self.src.line_offset}: preload={cfg.preload}"
                          f"{' sync_only' if cfg.sync_only else ''}: {summary}")
        self.em.emit(f"# ---- pipelined loop (user line {loop.lineno + self.src.line_offset}): {summary}", indent, loop)
        carried = sorted(_assigned(loop.body) - {loop.target.id})
        known = self._defined_before(loop)
        for k in range(len(stages)):
            for name in carried:
                if name in known:
                    self.em.emit(f"_pl_{name}_s{k} = {name}", indent, loop, comment=f"stage {k}'s own copy")
        self.presignal([c for c, _ in stages], indent, loop)
        self.em.emit(f"{nv} = ({stop} - {start} + {step} - 1) // {step}  # iterations of the user's loop",
                     indent, loop)
        var = loop.target.id
        parts = [("prologue", f"0, min({depth}, {nv} + {depth})", True),
                 ("steady state", f"{depth}, {nv}", False),
                 ("epilogue", f"max({depth}, {nv}), {nv} + {depth}", True)] if depth else [("loop", f"0, {nv}", False)]
        for label, rng, guarded in parts:
            self.em.emit(f"for {tv} in pl.range({rng}, 1):", indent, loop, comment=label)
            for k, (call, _) in enumerate(stages):
                ren = _Rename({name: f"_pl_{name}_s{k}" for name in carried})
                inner = indent + 1
                if guarded:
                    self.em.emit(f"if {tv} - {call.delay} >= 0 and {tv} - {call.delay} < {nv}:", inner, call.node,
                                 comment=f"stage {call.name} handles iteration t - {call.delay}")
                    inner += 1
                self.em.emit(f"{var} = {start} + ({tv} - {call.delay}) * {step}", inner, loop,
                             comment=f"{call.name}: the user's {var}")
                # every scalar assignment of the iteration, on this stage's own copies of the loop's
                # variables: a stage runs each iteration once, in order, so its copies hold the values the
                # serial loop has at that point (a counter carried across iterations too)
                at = items.index(call)
                for a in (x for x in items[:at] if not isinstance(x, StageCall)):
                    self.em.emit(ast.unparse(ren.visit(copy.deepcopy(a))), inner, a)
                call_text = ast.unparse(ren.visit(copy.deepcopy(call.node)))
                waits = [f"pl.pipeline.wait_free({g}, min_depth={self.min_depth(g, stages)})" for g in call.produces
                         if self.has(g, "bwd_ids")]
                waits += [f"pl.pipeline.wait_ready({g}, min_depth={self.min_depth(g, stages)})" for g in call.consumes
                          if self.has(g, "fwd_ids")]
                signals = [f"pl.pipeline.signal_ready({g})" for g in call.produces if self.has(g, "fwd_ids")]
                signals += [f"pl.pipeline.signal_free({g})" for g in call.consumes if self.has(g, "bwd_ids")]
                if waits:
                    self.em.emit(f"with pl.section_{call.engine}():", inner, call.node,
                                 comment=f"{call.name}: wait for its shared slots")
                    for w in waits:
                        self.em.emit(w, inner + 1, call.node)
                if call.wrapped:
                    self.em.emit(f"with pl.section_{call.engine}():", inner, call.node)
                self.em.emit(call_text, inner + call.wrapped, call.node, comment=f"stage {call.name} ({call.engine})")
                if signals:
                    self.em.emit(f"with pl.section_{call.engine}():", inner, call.node,
                                 comment=f"{call.name}: hand its slots on")
                    for sig in signals:
                        self.em.emit(sig, inner + 1, call.node)
                for a in items[at + 1:]:
                    if not isinstance(a, StageCall):
                        self.em.emit(ast.unparse(ren.visit(copy.deepcopy(a))), inner, a)
        self.drain([c for c, _ in stages], indent, loop)
        for name in carried:
            if name in known:
                self.em.emit(f"{name} = _pl_{name}_s0", indent, loop, comment="its value after the loop")

    def _defined_before(self, loop: ast.For) -> set[str]:
        """Names the kernel binds before ``loop`` (its parameters, earlier assignments and loop targets)."""
        names = {a.arg for a in self.kernel.args.args}
        for n in ast.walk(self.kernel):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.lineno < loop.lineno:
                names.add(n.id)
        return names

    def has(self, g: str, ids: str) -> bool:
        """Whether shared group ``g`` declares ``ids`` (``fwd_ids`` / ``bwd_ids``): either alone is a
        one-way notification, and the sync of the other direction is left out (the real page)."""
        return any(k.arg == ids and not (isinstance(k.value, ast.Constant) and k.value.value is None)
                   for k in self.shared[g].keywords)

    def min_depth(self, g: str, stages) -> int:
        w = [c.delay for c, _ in stages if g in c.produces]
        r = [c.delay for c, _ in stages if g in c.consumes]
        return (max(r) - min(w) + 1) if w and r else 1

    def check_groups(self, loop: ast.For, calls: list[StageCall]) -> None:
        for g in {g for c in calls for g in c.produces + c.consumes}:
            writers = [c for c in calls if g in c.produces]
            readers = [c for c in calls if g in c.consumes]
            if not writers:
                self.fail(readers[0].node, f"stage '{readers[0].name}' reads shared group '{g}' but no stage of this "
                                           "loop writes it")
            if len(writers) > 1:
                self.fail(writers[1].node, f"shared group '{g}' is written by two stages ('{writers[0].name}' and "
                                           f"'{writers[1].name}'); each shared group has one producer")
            if not readers:
                self.fail(writers[0].node, f"stage '{writers[0].name}' writes shared group '{g}' but no stage reads it")
            for r in readers:
                if r.engine == writers[0].engine:
                    self.fail(r.node, f"'{g}' is written and read on the {r.engine} engine; fwd/bwd ids sync the Cube "
                                      "and Vector engines (use mutex_ids within one engine)")
            need = max(r.delay for r in readers) - writers[0].delay + 1
            depth = _literal_depth(self.shared[g])
            if depth is not None and depth < need and self.has(g, "bwd_ids"):
                self.fail(self.shared[g], f"ring '{g}' has {depth} slots but preload={self.config.preload} keeps {need} "
                                          f"iterations in flight ({writers[0].name} at delay {writers[0].delay}, "
                                          f"{readers[0].name} at delay {max(r.delay for r in readers)}): give it at "
                                          f"least {need} slots")

    def presignal(self, calls: list[StageCall], indent: int, loop: ast.For) -> None:
        """Before the loop, each consumer engine signals every slot free."""
        self._every_slot(calls, "consumes", "signal_free", "every slot of {g} starts free", indent, loop)

    def drain(self, calls: list[StageCall], indent: int, loop: ast.For) -> None:
        """After the loop, each producer engine consumes the last free signals."""
        self._every_slot(calls, "produces", "wait_free", "consume the last free signals of {g}: none left pending",
                         indent, loop)

    def _every_slot(self, calls: list[StageCall], role: str, intrinsic: str, comment: str, indent: int,
                    loop: ast.For) -> None:
        for g in sorted({g for c in calls for g in getattr(c, role) if self.has(g, "bwd_ids")}):
            stage = next(c for c in calls if g in getattr(c, role))
            self.em.emit(f"with pl.section_{stage.engine}():", indent, loop, comment=comment.format(g=g))
            self.em.emit(f"for _pl_s in range({g}.depth):", indent + 1, loop)
            self.em.emit(f"pl.pipeline.{intrinsic}({g}, slot=_pl_s)", indent + 2, loop)


class _Rename(ast.NodeTransformer):
    def __init__(self, names: dict[str, str]):
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.Name:
        new = self.names.get(node.id)
        return ast.copy_location(ast.Name(new, node.ctx), node) if new else node


def _assigned(body: list[ast.stmt]) -> set[str]:
    """Names the top-level scalar assignments of a loop body bind."""
    out: set[str] = set()
    for s in body:
        targets = s.targets if isinstance(s, ast.Assign) else [s.target] if isinstance(s, (ast.AugAssign,
                                                                                          ast.AnnAssign)) else []
        for t in targets:
            out.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
    return out


def transform(kernel: ast.FunctionDef, src: SourceFile, scope: Scope, config: PipelineConfig) -> Generated:
    return PipelineTransform(kernel, src, scope, config).run()

