"""Lowers ``pl.pipeline.wait_free / signal_ready / wait_ready / signal_free`` (StageSync) to
cross-core waits and sets on the right pipe, with the group's per-slot event ids. A group declared
with ``fwd_ids`` only (or ``bwd_ids`` only) has syncs of that direction only (the real transform's
``_sync_graph``: "enough slots that overwrite protection is unnecessary"): the pipeline transform
emits none for the other, and ``pl.pipeline.*`` of an undeclared direction is a CompileError.

A wait belongs to the stage region that follows it (up to the matching signal); a signal to the
region before it. The pipe is that of the region's first (wait) or last (signal) access to the
shared group; when the stage reaches the data through global memory instead (a2a3 workspaces),
that of its first / last store (producer) or load (consumer). Syncs outside a stage region (the
pre-signals and drains around a pipelined loop) take the pipe of the same group's in-loop sync of
that kind, so they stay ordered with it in its queue.
"""
from __future__ import annotations

import dataclasses

from pypto_pro.errors import CompileError
from pypto_pro.ir.expr import Const
from pypto_pro.ir.nodes import (Buffer, GMRef, KernelIR, Stmt, StageSync, SyncOp, TileOp, child_bodies, walk_stmts,
                                with_bodies)
from pypto_pro.language.enums import PipeType
from pypto_pro.passes.auto_sync import slot_id

_PAIR = {"wait_free": "signal_ready", "wait_ready": "signal_free"}
_PRODUCER = ("wait_free", "signal_ready")


def _ops(stmts: list[Stmt]):
    for s in walk_stmts(stmts):
        if isinstance(s, TileOp):
            yield s


def _region_pipe(region: list[Stmt], b: Buffer, kind: str, first: bool) -> PipeType:
    ops = list(_ops(region))
    if not first:
        ops.reverse()
    for op in ops:
        if any(t.buffer.root is b.root for t in op.tile_operands()):
            return op.pipe
    producer = kind in _PRODUCER
    for op in ops:
        touches_gm = isinstance(op.dst, GMRef) if producer else any(isinstance(s, GMRef) for s in op.srcs)
        if touches_gm:
            return op.pipe
    return PipeType.S


def _region_of(body: list[Stmt], i: int, s: StageSync) -> list[Stmt] | None:
    """The stage statements a sync guards: after a wait up to its signal, or before a signal from its wait."""
    b = s.buffer
    one_way = b.fwd_ids is None or b.bwd_ids is None  # no matching sync of the other direction: the region
    # runs to the group's next (wait) / from its previous (signal) sync, or to the end / start of the body
    if s.kind in _PAIR:
        end = next((j for j in range(i + 1, len(body)) if isinstance(body[j], StageSync)
                    and body[j].kind == _PAIR[s.kind] and body[j].buffer is b), None)
        if end is None and one_way:
            end = next((j for j in range(i + 1, len(body)) if isinstance(body[j], StageSync)
                        and body[j].buffer is b), len(body))
        return body[i + 1:end] if end is not None else None
    opener = {v: k for k, v in _PAIR.items()}[s.kind]
    start = next((j for j in range(i - 1, -1, -1) if isinstance(body[j], StageSync)
                  and body[j].kind == opener and body[j].buffer is b), None)
    if start is None and one_way:
        start = next((j for j in range(i - 1, -1, -1) if isinstance(body[j], StageSync) and body[j].buffer is b), -1)
    return body[start + 1:i] if start is not None else None


def _stage_pipes(body: list[Stmt], found: dict) -> None:
    """Pipe of every stage-region sync, per (group, kind): also used by the pre-signals and drains,
    which must sit in the same queue to stay ordered with the loop's syncs."""
    for i, s in enumerate(body):
        if isinstance(s, StageSync):
            region = _region_of(body, i, s)
            if region is not None:
                found.setdefault((s.buffer.uid, s.kind), _region_pipe(region, s.buffer, s.kind, s.kind in _PAIR))
        else:
            for b in child_bodies(s):
                _stage_pipes(b, found)


def _lower(body: list[Stmt], pipes: dict) -> list[Stmt]:
    out: list[Stmt] = []
    for i, s in enumerate(body):
        if isinstance(s, StageSync):
            b = s.buffer
            ids = b.bwd_ids if s.kind in ("wait_free", "signal_free") else b.fwd_ids
            region = _region_of(body, i, s)
            if region is not None:
                pipe = _region_pipe(region, b, s.kind, s.kind in _PAIR)
            else:
                pipe = pipes.get((b.uid, s.kind), PipeType.S)
            kind = "xwait" if s.kind in _PAIR else "xset"
            out.append(SyncOp(kind, pipe, None, slot_id(ids, s.slot), s.loc, origin=f"pipeline {s.kind}({b.name})"))
        else:
            out.append(with_bodies(s, lambda body_: _lower(body_, pipes)))
    return out


def pipeline_sync(program: KernelIR) -> KernelIR:
    shared = {e: b for b in program.buffers for ids in (b.fwd_ids, b.bwd_ids) if ids for e in ids}
    for s in walk_stmts(program.body):
        if isinstance(s, SyncOp) and s.kind in ("xset", "xwait") and s.origin == "user" \
                and isinstance(s.event, Const) and s.event.value in shared:
            owner = shared[s.event.value]
            raise CompileError(f"cross-core event id {s.event.value} is also a fwd/bwd id of shared group "
                               f"'{owner.name}'; use another id", s.loc)
    if not any(isinstance(s, StageSync) for s in walk_stmts(program.body)):
        return program
    pipes: dict = {}
    _stage_pipes(program.body, pipes)
    return dataclasses.replace(program, body=_lower(program.body, pipes))
