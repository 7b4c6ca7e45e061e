"""Loops and jumps of kernel code: ``while``, ``break``, ``continue``, ``return``.

As in the real PyPTO Pro, ``while cond:`` is a run-time loop (``while True: if not cond: break``
when evaluating ``cond`` needs statements of its own); ``break`` / ``continue`` leave or restart
the innermost loop; a kernel's ``return`` under run-time control flow ends the program there.
A ``return`` of an inlined helper under run-time control flow is lowered the real way: the
helper's body runs inside a once-through ``while True`` loop, each such ``return`` assigns the
merged result and breaks out, and every loop of the helper that holds one is followed by
``if returned: break``. Inside a compile-time (unrolled) loop, ``break`` and ``continue`` act
while compiling.
"""
from __future__ import annotations

import ast
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator

from pypto_pro.frontend.context import _Break, _Continue, _Return
from pypto_pro.frontend.scalars import known
from pypto_pro.frontend.scope import MISSING
from pypto_pro.frontend.values import TileValue
from pypto_pro.ir.expr import Const, Expr, UnaryOp, Var
from pypto_pro.ir.nodes import Break, Continue, If, Return, Stmt, While
from pypto_pro.language.dtypes import DT_BOOL

# Iterations of all compile-time loops of one kernel together: nested unrolled loops multiply, and a
# budget keeps a typo (range(4096) inside range(4096)) a located error instead of minutes and gigabytes.
MAX_UNROLLED_TOTAL = 1 << 14


@dataclass
class LoopFrame:
    """A loop around the statement being compiled: run-time (IR) or compile-time (unrolled)."""

    runtime: bool
    depth: int  # ctx.runtime_depth inside its body


class _ReturnMarker(Stmt):
    """Where a run-time ``return`` of a helper sits until the merged result is known."""

    def __init__(self, loc):
        self.loc = loc


@dataclass
class ReturnSite:
    block: list[Stmt]
    marker: _ReturnMarker
    value: Any
    node: ast.AST


@dataclass
class HelperReturns:
    """The ``return`` statements of one inlined helper call that sit under run-time control flow."""

    sites: list[ReturnSite] = field(default_factory=list)
    flag: Var | None = None  # the real lowering's ``returned``: set before each run-time return


class ControlFlowParser:
    """The loop and jump visitors of :class:`pypto_pro.frontend.parser.FunctionParser`."""

    @contextmanager
    def runtime_block(self, what: str) -> Iterator[None]:
        """Compile the statements inside ``what`` (a run-time if or loop)."""
        self.runtime_blocks.append(what)
        self.ctx.runtime_depth += 1
        try:
            yield
        finally:
            self.ctx.runtime_depth -= 1
            self.runtime_blocks.pop()

    @contextmanager
    def loop_frame(self, runtime: bool) -> Iterator[LoopFrame]:
        frame = LoopFrame(runtime, self.ctx.runtime_depth)
        self.loops.append(frame)
        try:
            yield frame
        finally:
            self.loops.pop()

    def new_var(self, name: str, dtype) -> Var:
        """A fresh scalar register for ``name``, created at the current run-time depth."""
        var = Var(self.ctx.fresh_name(name), dtype=dtype)
        self.ctx.var_depth[var.uid] = self.ctx.runtime_depth
        return var

    # ---- while --------------------------------------------------------------------------------

    def st_While(self, node: ast.While) -> None:
        if node.orelse:
            self.fail(node.orelse[0], "while ... else is not supported in kernels")
        self.materialize(node.body, node)
        before = dict(self.scope.locals)
        sites = self.return_sites()
        loop: Stmt | None = None
        with self.runtime_block("a while loop"), self.loop_frame(runtime=True):
            with self.ctx.builder.block() as body:
                with self.ctx.builder.block() as cond_stmts:
                    cond = self.eval(node.test)
                ok, value = known(cond)
                if ok and not self.py_call(node.test, bool, value):
                    loop = None  # never iterates: only the condition's own statements run, once
                else:
                    if ok:
                        test: Expr = Const(True)
                        body.extend(cond_stmts)
                    elif cond_stmts:
                        test = Const(True)
                        body.extend(cond_stmts)
                        body.append(If(UnaryOp("not", self.as_condition(node.test, cond)), [Break(self.loc(node))],
                                       [], self.loc(node)))
                    else:
                        test = self.as_condition(node.test, cond)
                    self.visit_body(node.body)
                    loop = While(test, body, self.loc(node))
        self.terminated = False
        if loop is None:
            for s in cond_stmts:
                self.ctx.builder.emit(s)
            return
        self.ctx.builder.emit(loop)
        self.after_loop(node, before, sites, None)

    def after_loop(self, node: ast.AST, before: dict[str, Any], sites: int, target: str | None) -> None:
        """After a run-time loop: forget what it alone defined; in a helper, pass its returns on."""
        self.forget_loop_locals(node, before, target)
        ret = self.helper_ret
        if ret is not None and len(ret.sites) > sites:
            self.ctx.builder.emit(If(self.returned_flag(), [Break(self.loc(node))], [], self.loc(node)))

    def forget_loop_locals(self, node: ast.AST, before: dict[str, Any], target: str | None) -> None:
        """Run-time values first set inside a run-time loop (and its variable) have no value after a
        loop that ran zero times: using them after the loop is an error, not an unset register."""
        line = self.loc(node).line
        kind = "pl.range loop" if isinstance(node, ast.For) else "while loop"
        for name, value in list(self.scope.locals.items()):
            runtime = isinstance(value, Expr) or (isinstance(value, TileValue) and not isinstance(value.ref.slot, Const))
            if before.get(name, MISSING) is value or not runtime:
                continue
            del self.scope.locals[name]
            self.unmerged[name] = (
                f"'{name}' is the variable of the {kind} at line {line}; it has no value after the loop "
                "(the loop may run zero times)" if name == target else
                f"'{name}' is assigned inside the {kind} at line {line}, which may run zero times, so it "
                "cannot be used after the loop; assign it before the loop")

    def run_unrolled(self, node: ast.For, items) -> None:
        """A compile-time loop: its body is compiled once per item; ``break`` / ``continue`` act now."""
        with self.loop_frame(runtime=False):
            for item in items:
                self.ctx.unrolled_iterations += 1
                if self.ctx.unrolled_iterations > MAX_UNROLLED_TOTAL:
                    self.fail(node.iter, f"compile-time loops unroll more than {MAX_UNROLLED_TOTAL} iterations in all "
                                         "(nested or repeated unrolled loops multiply); use pl.range for a run-time loop")
                self.assign_target(node.target, item, node)
                try:
                    self.visit_body(node.body)
                except _Continue:
                    continue
                except _Break:
                    break

    # ---- jumps --------------------------------------------------------------------------------

    def _jump(self, node: ast.stmt, kind: type, exc: type) -> None:
        word = kind.__name__.lower()
        if not self.loops:
            self.fail(node, f"'{word}' statement outside of a loop")
        frame = self.loops[-1]
        if not frame.runtime:
            if self.ctx.runtime_depth != frame.depth:
                self.fail(node, f"'{word}' inside {self.runtime_blocks[-1]} cannot leave this loop: the loop is "
                                "unrolled at compile time (it does not iterate pl.range); write "
                                "'for ... in pl.range(...)' to make it a run-time loop")
            raise exc()
        self.ctx.builder.emit(kind(self.loc(node)))
        self.terminated = True

    def st_Break(self, node: ast.Break) -> None:
        self._jump(node, Break, _Break)

    def st_Continue(self, node: ast.Continue) -> None:
        self._jump(node, Continue, _Continue)

    def st_Return(self, node: ast.Return) -> None:
        bare = node.value is None or (isinstance(node.value, ast.Constant) and node.value.value is None)
        if not self.in_inline:
            if not bare:
                self.fail(node, "a kernel cannot return a value (only a bare 'return' or 'return None'); "
                                "write results to an output tensor")
            if self.runtime_blocks:
                self.ctx.builder.emit(Return(self.loc(node)))
                self.terminated = True
                return
            raise _Return(None)
        value = None if bare else self.eval(node.value)
        if not self.runtime_blocks:
            raise _Return(value)
        marker = _ReturnMarker(self.loc(node))
        self.ctx.builder.emit(marker)
        self.helper_ret.sites.append(ReturnSite(self.ctx.builder.current, marker, value, node))
        self.terminated = True

    # ---- helper returns -----------------------------------------------------------------------

    def return_sites(self) -> int:
        return len(self.helper_ret.sites) if self.helper_ret is not None else 0

    def returned_flag(self) -> Var:
        ret = self.helper_ret
        if ret.flag is None:
            ret.flag = Var(self.ctx.fresh_name("returned"), dtype=DT_BOOL)
        return ret.flag
