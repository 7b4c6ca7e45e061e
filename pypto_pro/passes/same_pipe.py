"""Barriers inside one pipe (``auto_mutex=True``): on a pipe whose queue is not in order on the
target arch (``pypto_pro.arch.pipes``: a2a3's V / M / MTE1 / MTE2 / MTE3 / FIX, a5's MTE2 / MTE3),
a tile op that reads bytes an earlier op of the same pipe wrote, or writes bytes it wrote (or, on a
copy engine, read), gets ``barrier(pipe)`` right before it, unless a barrier of that pipe (or
``bar_all`` / ``sync_all``) already separates them.

Footprints are on-chip byte ranges: a run-time ring slot counts as every slot of its group, so the
pass is conservative (an extra barrier costs a cycle; a missing one is a hazard the simulator
reports). Loop-carried dependences are found by running a loop body once more from the state at its
end; an ``if`` continues from the union of its branches. A flag round trip through another pipe
would order the two as well, but is not relied on here: the barrier is cheap and visible in the dump.
"""
from __future__ import annotations

import dataclasses

from pypto_pro.arch.model import ArchModel
from pypto_pro.arch.pipes import unordered_pipes
from pypto_pro.ir.expr import Const
from pypto_pro.ir.nodes import For, GMRef, If, KernelIR, Stmt, SyncOp, TileOp, TileRef, While
from pypto_pro.language.enums import PipeType

# pipe -> accesses since its last barrier: (is_write, space, lo, hi)
State = dict[PipeType, frozenset[tuple[bool, object, int, int]]]
COPY_PIPES = (PipeType.MTE1, PipeType.MTE2, PipeType.MTE3)
_PRE = ("wait_flag", "lock", "xwait")


def _footprint(ref: TileRef) -> list[tuple[object, int, int]]:
    b, slot = ref.buffer, ref.slot
    if b.view_starts is not None:  # a subview at a run-time start lies somewhere in its tile's slot
        b, slot = b.root, ref.root_slot
    size = b.slot_bytes
    addrs = b.addrs
    if isinstance(slot, Const) and 0 <= int(slot.value) < len(addrs):
        addrs = (addrs[int(slot.value)],)
    return [(b.space, a, a + size) for a in addrs]


def _accesses(op: TileOp) -> set[tuple[bool, object, int, int]]:
    out = {(True, *f) for r in op.tile_writes() for f in _footprint(r)}
    out |= {(False, *f) for r in op.tile_reads() for f in _footprint(r)}
    # GM writes: a window at constant offsets is the same window on every iteration; a window at
    # run-time offsets may be any window of the tensor, except that one statement's own earlier
    # iterations are taken to write other windows (the simulator's checker reports them if not)
    if isinstance(op.dst, GMRef):
        ref = op.dst
        if all(isinstance(o, Const) for o in ref.offsets):
            out.add((True, ("gm", ref.param.name, tuple(o.value for o in ref.offsets)), 0, 1))
        else:
            out.add((True, ("gm", ref.param.name, id(op)), 0, 1))
    return out


def _depends(new: set, old: frozenset, war: bool) -> bool:
    for w, space, lo, hi in new:
        for ow, ospace, olo, ohi in old:
            if isinstance(space, tuple):  # GM windows of one tensor: equal constant windows, or any run-time one
                if isinstance(ospace, tuple) and space[1] == ospace[1] and (
                        space[2] == ospace[2] if isinstance(space[2], tuple) and isinstance(ospace[2], tuple)
                        else space[2] != ospace[2] or isinstance(space[2], tuple)):
                    return True
            elif space is ospace and lo < ohi and olo < hi and (ow or (w and war)):
                return True
    return False


class _SamePipe:
    def __init__(self, arch: ArchModel):
        self.unordered = frozenset(unordered_pipes(arch.name))

    def body(self, stmts: list[Stmt], state: State, emit: bool) -> tuple[list[Stmt], State]:
        out: list[Stmt] = []
        for s in stmts:
            if isinstance(s, TileOp) and s.pipe in self.unordered:
                acc = _accesses(s)
                old = state.get(s.pipe, frozenset())
                if _depends(acc, old, s.pipe in COPY_PIPES):
                    if emit:  # before the op's own waits / locks, which the recorder fuses into it
                        at = len(out)
                        while at and isinstance(out[at - 1], SyncOp) and out[at - 1].kind in _PRE \
                                and out[at - 1].pipe is s.pipe:
                            at -= 1
                        out.insert(at, SyncOp("barrier", s.pipe, None, None, s.loc, origin="auto"))
                    old = frozenset()
                state = {**state, s.pipe: old | acc}
                out.append(s)
            elif isinstance(s, SyncOp) and (s.kind == "sync_all" or (s.kind == "barrier" and s.src is PipeType.ALL)):
                state = {}
                out.append(s)
            elif isinstance(s, SyncOp) and s.kind == "barrier":
                state = {k: v for k, v in state.items() if k is not s.src}
                out.append(s)
            elif isinstance(s, (For, While)):
                _, end = self.body(s.body, state, False)  # the state a second iteration starts from
                entry = _union(state, end)
                new_body, after = self.body(s.body, entry, emit)
                out.append(dataclasses.replace(s, body=new_body) if emit else s)
                state = _union(entry, after)  # zero iterations, or any number
            elif isinstance(s, If):
                then_body, a = self.body(s.then_body, state, emit)
                else_body, b = self.body(s.else_body, state, emit)
                out.append(dataclasses.replace(s, then_body=then_body, else_body=else_body) if emit else s)
                state = _union(a, b)
            else:
                out.append(s)
        return out, state


def _union(a: State, b: State) -> State:
    return {k: a.get(k, frozenset()) | b.get(k, frozenset()) for k in set(a) | set(b)}


def same_pipe_barriers(prog: KernelIR, arch: ArchModel) -> KernelIR:
    """``prog`` with ``barrier(pipe)`` before each tile op that depends on an earlier op of its own
    out-of-order pipe (see the module docstring)."""
    sp = _SamePipe(arch)
    if not sp.unordered:
        return prog
    body, _ = sp.body(prog.body, {}, True)
    return dataclasses.replace(prog, body=body)
