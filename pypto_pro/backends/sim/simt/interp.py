"""Runs a SIMT function's body for all threads of a launch at once (NumPy over the thread axis).

Control flow is executed with *active masks*, as a warp executes it: an ``if`` runs its ``then``
branch for the threads whose condition holds and its ``else`` branch for the others; a loop runs
while any thread is still in it; ``break`` / ``continue`` / ``return`` retire threads from the
loop iteration, the loop or the function. Values are per-thread arrays (``values.py``).

The same interpreter runs in two modes:

* ``run``: the numerics. Loads read the launch's memories, stores write per-parameter scratch
  copies (committed when the instruction ends), and every element access is logged by thread for
  the race check (``races.py``).
* ``price``: at dispatch, before the data exists, for the cost model and the memory checkers.
  Loaded values are *unknown* (``None``); what depends on them is unknown too. A condition that is
  unknown sends every active thread down both branches (the worst case of a divergent warp), an
  unknown loop bound runs the body once; everything else (thread ids, scalars, valid shapes) is
  exact. It counts the warp-instructions issued and the memory each access touches.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from pypto_pro.backends.sim.codegen import value_dtype
from pypto_pro.backends.sim.simt import values as V
from pypto_pro.errors import SimulationError
from pypto_pro.errors_sim import OutOfBoundsError
from pypto_pro.ir.expr import (BinOp, BoolOp, Cast, Compare, Const, Expr, Select, Special, UnaryOp, Var, walk)
from pypto_pro.ir.nodes import Assign, Break, Continue, For, If, Return, Stmt, While
from pypto_pro.ir.simt import ElementLoad, ElementStore, SimtFunction, SimtParam, ThreadQuery, ValidDim

MAX_ITERATIONS = 1 << 22  # a SIMT loop still running after this many iterations is reported as a hang


def where_of(node: Any) -> str:
    loc = getattr(node, "loc", None)
    return f"{loc.path}:{loc.line}" if loc else "<SIMT code>"


class Memory:
    """One tile or tensor parameter of a launch: its array (``base``; any strides) and, once the
    body stores to it, a scratch copy the stores go to and the mask of stored elements."""

    def __init__(self, param: SimtParam, base: np.ndarray):
        self.param = param
        self.base = base
        self.shape = tuple(param.shape)
        self.size = param.size
        self.scratch: np.ndarray | None = None
        self.stored: np.ndarray | None = None

    def index(self, offsets: np.ndarray) -> tuple:
        return np.unravel_index(offsets, self.shape)

    def load(self, offsets: np.ndarray) -> np.ndarray:
        src = self.scratch if self.scratch is not None else self.base
        return src[self.index(offsets)]

    def store(self, offsets: np.ndarray, values: np.ndarray) -> None:
        if self.scratch is None:
            self.scratch = np.array(self.base, copy=True)
            self.stored = np.zeros(self.shape, bool)
        idx = self.index(offsets)
        self.scratch[idx] = values
        self.stored[idx] = True  # type: ignore[index]

    def commit(self) -> None:
        if self.scratch is not None:
            self.base[self.stored] = self.scratch[self.stored]


class Threads:
    """The launch's thread context: ``threads`` (x, y, z), the block's index and count, warp size."""

    def __init__(self, dims: tuple[int, int, int], block_idx: int, block_num: int, warp: int):
        self.dims = dims
        self.total = dims[0] * dims[1] * dims[2]
        self.linear = np.arange(self.total, dtype=np.uint32)
        x = self.linear % dims[0]
        y = (self.linear // dims[0]) % dims[1]
        z = self.linear // (dims[0] * dims[1])
        self.idx = (x, y, z)
        self.block = (block_idx, 0, 0)
        self.grid = (block_num, 1, 1)
        self.warp = warp
        self.nwarps = -(-self.total // warp)
        self.pad = self.nwarps * warp - self.total

    def query(self, q: ThreadQuery) -> np.ndarray:
        if q.name == "thread_idx":
            return self.idx[q.axis]
        if q.name == "linear_thread_idx":
            return self.linear
        if q.name == "warp_size":
            return np.asarray(self.warp, np.int32)
        table = {"block_dim": self.dims, "block_idx": self.block, "grid_dim": self.grid}[q.name]
        return np.asarray(table[q.axis], np.uint32)

    def warps(self, mask: np.ndarray) -> int:
        """Warps with at least one active thread (each issues the instruction once)."""
        m = np.concatenate([mask, np.zeros(self.pad, bool)]) if self.pad else mask
        return int(m.reshape(self.nwarps, self.warp).any(axis=1).sum())


class _Exit(Exception):
    """Every thread of the launch has returned."""


class _Frame:
    """Threads retired from the innermost loop's iteration (``continue``) or from the loop (``break``)."""

    def __init__(self, n: int):
        self.broken = np.zeros(n, bool)
        self.continued = np.zeros(n, bool)


class Interpreter:
    """One execution of a SIMT body (see the module docstring for ``mode``).

    ``memories``: by parameter index (tile / tensor parameters); ``scalars``: by parameter index,
    the launch's scalar values; ``valid``: by parameter index, a tile's valid (rows, cols);
    ``on_access(param, offsets, lanes, is_write, stmt)`` logs each element access."""

    def __init__(self, fn: SimtFunction, threads: Threads, mode: str, memories: dict[int, Memory],
                 scalars: dict[int, Any], valid: dict[int, tuple[int, int]], special: dict[str, int],
                 on_access: Callable[..., None] | None = None):
        self.fn = fn
        self.t = threads
        self.price = mode == "price"
        self.memories = memories
        self.valid = valid
        self.special = special
        self.on_access = on_access
        self.vars: dict[Var, Any] = {}
        for prm in fn.params:
            if prm.kind == "scalar":
                v = scalars[prm.index]
                self.vars[prm.var] = None if v is None else np.asarray(v, V.np_type(prm.dtype))  # type: ignore[index]
        self.returned = np.zeros(threads.total, bool)
        self.frames: list[_Frame] = []
        self.issued = 0      # warp-instructions issued
        self.stmt: Stmt | None = None
        self._nodes: dict[int, int] = {}
        self._quiet = np.zeros(threads.total, bool)  # the price pass reports no faults: it may take
        # both sides of a branch it cannot decide, so its threads need not be the ones that run

    def faults(self, m: np.ndarray) -> np.ndarray:
        """The threads whose faults are reported (none in the price pass: the run reports them)."""
        return self._quiet if self.price else m

    # ---- statements ---------------------------------------------------------------------------

    def run(self) -> None:
        try:
            self.block(self.fn.body, np.ones(self.t.total, bool))
        except _Exit:
            pass

    def live(self, mask: np.ndarray) -> np.ndarray:
        m = mask & ~self.returned
        if self.frames:
            f = self.frames[-1]
            m &= ~(f.broken | f.continued)
        return m

    def block(self, body: list[Stmt], mask: np.ndarray) -> None:
        for s in body:
            m = self.live(mask)
            if not m.any():
                return
            self.stmt = s
            self.issue(s, m)
            self.statement(s, m)

    def issue(self, s: Stmt, m: np.ndarray) -> None:
        """Count the warp-instructions of ``s``'s own expressions (loop iterations count themselves)."""
        n = self._nodes.get(id(s))
        if n is None:
            exprs: list[Expr] = []
            if isinstance(s, Assign):
                exprs = [s.value]
            elif isinstance(s, ElementStore):
                exprs = [s.offset, s.value]
            elif isinstance(s, For):
                exprs = [s.start, s.stop, s.step]
            elif isinstance(s, If):
                exprs = [s.cond]
            n = 1 + sum(1 for e in exprs for x in walk(e) if not isinstance(x, (Const, Var)))
            self._nodes[id(s)] = n
        self.issued += n * self.t.warps(m)

    def statement(self, s: Stmt, m: np.ndarray) -> None:
        if isinstance(s, Assign):
            self.assign(s.var, self.expr(s.value, m), m)
        elif isinstance(s, ElementStore):
            self.element_store(s, m)
        elif isinstance(s, If):
            c = self.expr(s.cond, m)
            if c is None:  # unknown (price mode): both branches, every thread
                self.block(s.then_body, m)
                self.block(s.else_body, m)
            else:
                c = V.truth(c, s.cond)
                self.block(s.then_body, m & c)
                self.block(s.else_body, m & ~c)
        elif isinstance(s, For):
            self.for_loop(s, m)
        elif isinstance(s, While):
            self.while_loop(s, m)
        elif isinstance(s, Break):
            self.frames[-1].broken |= m
        elif isinstance(s, Continue):
            self.frames[-1].continued |= m
        elif isinstance(s, Return):
            self.returned |= m
            if self.returned.all():
                raise _Exit
        else:
            raise SimulationError(f"{where_of(s)}: {type(s).__name__} is not supported in SIMT code")

    def assign(self, var: Var, value: Any, m: np.ndarray) -> None:
        if value is None:
            self.vars[var] = None
            return
        value = np.asarray(value)
        old = self.vars.get(var)
        if old is None or m.all():
            self.vars[var] = np.broadcast_to(value, (self.t.total,)).copy() if not m.all() else value
        else:
            self.vars[var] = np.where(m, value, old)

    def _loop(self, s: Stmt, m: np.ndarray, step: Callable[[np.ndarray], tuple[np.ndarray, bool]]) -> None:
        """Iterate ``s``'s body. ``step(live)`` gives the threads of ``live`` (still in the loop: not
        broken out, not returned) that run the next iteration, and whether that was unknown (the
        price pass then prices the body once); a thread that leaves the loop never re-enters it."""
        frame = _Frame(self.t.total)
        self.frames.append(frame)
        inloop = m.copy()
        try:
            for _ in range(MAX_ITERATIONS):
                live = inloop & ~frame.broken & ~self.returned
                if not live.any():
                    return
                inloop, unknown = step(live)
                if not inloop.any():
                    return
                self.issued += 2 * self.t.warps(inloop)  # the test and the branch of each iteration
                frame.continued[:] = False
                self.block(s.body, inloop)  # type: ignore[attr-defined]
                if unknown:
                    return
            raise SimulationError(f"{where_of(s)}: a SIMT loop is still running after {MAX_ITERATIONS} iterations")
        finally:
            self.frames.pop()

    def for_loop(self, s: For, m: np.ndarray) -> None:
        start, stop, step = (self.expr(e, m) for e in (s.start, s.stop, s.step))
        t = s.var.dtype
        if start is None or stop is None or step is None:
            self.assign(s.var, start, m)
            self._loop(s, m, lambda live: (live, True))
            return
        start, stop, step = (V.convert(v, value_dtype(e), t, self.faults(m), where_of(s)) for v, e in
                             zip((start, stop, step), (s.start, s.stop, s.step)))
        if (np.broadcast_to(step, m.shape)[self.faults(m)] <= 0).any():
            raise SimulationError(f"{where_of(s)}: pl.range step must be positive in SIMT code")
        counter = np.broadcast_to(start, m.shape).copy()
        first = [True]

        def next_iteration(live: np.ndarray) -> tuple[np.ndarray, bool]:
            if not first[0]:
                with np.errstate(over="ignore"):
                    counter[live] = (counter + step)[live]
            first[0] = False
            active = live & (counter < stop)
            self.assign(s.var, counter.copy(), active)
            return active, False
        self._loop(s, m, next_iteration)

    def while_loop(self, s: While, m: np.ndarray) -> None:
        def next_iteration(live: np.ndarray) -> tuple[np.ndarray, bool]:
            c = self.expr(s.cond, live)
            return (live, True) if c is None else (live & V.truth(c, s.cond), False)
        self._loop(s, m, next_iteration)

    # ---- memory -------------------------------------------------------------------------------

    def _offsets(self, prm: SimtParam, e: Expr, m: np.ndarray, at: Any) -> np.ndarray | None:
        off = self.expr(e, m)
        if off is None:
            if self.on_access is not None:
                self.on_access(prm, None, m, isinstance(at, ElementStore), at)
            return None
        off = np.broadcast_to(np.asarray(off).astype(np.int64), m.shape)
        act = off[m]
        bad = (act < 0) | (act >= prm.size)
        if self.price and bad.any():  # the run reports it, if a thread that really runs does it
            m = m.copy()
            m[np.flatnonzero(m)[bad]] = False
            act = act[~bad]
        elif bad.any():
            what = f"{prm.kind} '{prm.name}' of shape {list(prm.shape)}"
            raise OutOfBoundsError(f"{where_of(at)}: SIMT thread {int(np.flatnonzero(m)[bad][0])} accesses element "
                                   f"{int(act[bad][0])} (row-major) of {what}, outside its {prm.size} elements")
        if self.on_access is not None:
            self.on_access(prm, act, m, isinstance(at, ElementStore), at)
        return off

    def element_load(self, e: ElementLoad, m: np.ndarray) -> Any:
        off = self._offsets(e.param, e.offset, m, e)
        if self.price or off is None:
            return None
        mem = self.memories[e.param.index]
        return mem.load(np.where(m, off, 0))

    def element_store(self, s: ElementStore, m: np.ndarray) -> None:
        off = self._offsets(s.param, s.offset, m, s)
        value = self.expr(s.value, m)
        if self.price or off is None or value is None:
            return
        value = np.broadcast_to(value, m.shape)
        self.memories[s.param.index].store(off[m], value[m])

    # ---- expressions --------------------------------------------------------------------------

    def operand(self, e: Expr, dtype, m: np.ndarray) -> Any:
        v = self.expr(e, m)
        return None if v is None else V.convert(v, value_dtype(e), dtype, self.faults(m), where_of(self.stmt))

    def expr(self, e: Expr, m: np.ndarray) -> Any:
        if isinstance(e, Const):
            return np.asarray(e.value, V.np_type(value_dtype(e)))
        if isinstance(e, Var):
            if e not in self.vars:
                raise SimulationError(f"{where_of(self.stmt)}: SIMT variable '{e.name}' is read before it is set")
            return self.vars[e]
        if isinstance(e, ThreadQuery):
            return self.t.query(e)
        if isinstance(e, ValidDim):
            return np.asarray(self.valid[e.param.index][e.axis], np.uint32)
        if isinstance(e, ElementLoad):
            return self.element_load(e, m)
        if isinstance(e, BinOp):
            a, b = self.operand(e.lhs, e.dtype, m), self.operand(e.rhs, e.dtype, m)
            return None if a is None or b is None else V.binop(e, a, b, self.faults(m), where_of(self.stmt))
        if isinstance(e, Compare):
            t = e.operand_dtype
            a, b = self.operand(e.lhs, t, m), self.operand(e.rhs, t, m)
            return None if a is None or b is None else V.compare(e.op, a, b)
        if isinstance(e, BoolOp):
            return self.bool_op(e, m)
        if isinstance(e, UnaryOp):
            return self.unary(e, m)
        if isinstance(e, Select):
            c = self.expr(e.cond, m)
            if c is None:
                self.operand(e.if_true, e.dtype, m)
                self.operand(e.if_false, e.dtype, m)
                return None
            c = V.truth(c, e.cond)
            a, b = self.operand(e.if_true, e.dtype, m & c), self.operand(e.if_false, e.dtype, m & ~c)
            return None if a is None or b is None else np.where(c, a, b)
        if isinstance(e, Cast):
            return self.operand(e.operand, e.dtype, m)
        if isinstance(e, Special):
            return np.asarray(self.special[e.name], np.int64)
        raise SimulationError(f"{where_of(self.stmt)}: {type(e).__name__} is not supported in SIMT code")

    def bool_op(self, e: BoolOp, m: np.ndarray) -> Any:
        """C ``&&`` / ``||``: each operand is evaluated only by the threads it is not decided for."""
        result = np.full(m.shape, e.op == "and")
        pending = m.copy()
        unknown = False
        for v in e.values:
            x = self.expr(v, pending)
            if x is None:
                unknown = True
                continue
            x = np.broadcast_to(V.truth(x, v), m.shape)
            if e.op == "and":
                result &= x | ~pending
                pending &= x
            else:
                result |= x & pending
                pending &= ~x
        return None if unknown else result

    def unary(self, e: UnaryOp, m: np.ndarray) -> Any:
        if e.op == "not":
            x = self.expr(e.operand, m)
            return None if x is None else ~V.truth(x, e.operand)
        t = value_dtype(e)
        x = self.operand(e.operand, e.dtype, m)
        if x is None:
            return None
        x = x.astype(V.np_type(t), copy=False)
        with np.errstate(all="ignore"):
            return np.negative(x) if e.op == "-" else np.invert(x)
