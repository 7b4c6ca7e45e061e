"""Automatic synchronisation of tile-group slots that carry ``mutex_ids`` (``auto_mutex=True``).

Every op on such a slot is ordered against the earlier and later ops on the same slot.

a5 has hardware buffer mutexes: each op is bracketed by ``lock``/``unlock`` of every id of every
slot it touches (a slot may carry several ids, ``mutex_ids=[[0, 1], [2, 3]]``), each distinct id
once (a run-time id that may equal an earlier one of another slot is guarded by ``!=``), locks and
unlocks in the same order; the hardware grants them in dispatch order.

a2a3 has none, so the pass emulates them with ``set_flag``/``wait_flag`` pairs and event ids it
allocates per (src pipe, dst pipe):

* Ring pattern (the multi-buffering idiom: ``g.next()`` calls at the top level of one loop body,
  every access to the group in that body after them; an access unit is any statement of that body
  — an op, an ``if``, a nested loop — whose accesses to the group are all on one pipe, and every
  generation (the units between two ``next()``) has the same pipe sequence): within one generation each change
  of pipe gets ``set_flag`` right after the releasing op and ``wait_flag`` right before the
  acquiring op; the back edge from the generation's last pipe to the first pipe of the generation
  that reuses the slot gets its own per-slot event, pre-set for every slot before the loop nest
  and drained after it, so no flag is left pending. One event id per slot keeps ``depth``
  generations in flight: the load of tile i+1 runs while tile i is computed.
  Loops are ``for`` and ``while`` loops alike. A ``break`` / ``continue`` / ``return`` that could
  leave the body in the middle of a generation (between its first and its last access) would leave
  a flag pending, so such a group uses ownership transfer instead; a ``return`` elsewhere inside the
  loop nest drains the per-slot events before it.
* Any other use (plain indexing, ``current()``, accesses under ``if``): ownership transfer. The
  group has an owner pipe; an access by another pipe is preceded by ``set_flag(owner, pipe)`` +
  ``wait_flag(owner, pipe)``; loop bodies and branches hand ownership back at their end (and a
  ``break`` / ``continue`` before it jumps) so the state is the same on every path. Always correct,
  less overlap.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from pypto_pro.arch.model import ArchModel
from pypto_pro.errors import CompileError
from pypto_pro.ir.expr import BinOp, BoolOp, Compare, Const, Expr, ListIndex, Var
from pypto_pro.ir.nodes import (LOOPS, Assign, Break, Buffer, Continue, For, If, KernelIR, Return, Stmt, SyncOp,
                                TileOp, TileRef, While, child_bodies, jumps_out, with_bodies)
from pypto_pro.language.enums import PipeType


def slot_id(ids: tuple[int, ...], slot: Expr) -> Expr:
    """The id of a run-time slot in a per-slot id table (folded when the slot is constant)."""
    if len(ids) == 1:
        return Const(ids[0])  # one counting id shared by every slot
    if isinstance(slot, Const):
        return Const(ids[int(slot.value)])
    if all(ids[i] == ids[0] + i for i in range(len(ids))):
        return slot if ids[0] == 0 else BinOp("+", Const(ids[0]), slot)
    return ListIndex(ids, slot)


def _managed(ref: TileRef) -> Buffer | None:
    root = ref.buffer.root
    return root if root.mutex_ids else None


def _accesses(op: TileOp) -> dict[Buffer, TileRef]:
    out: dict[Buffer, TileRef] = {}
    for t in op.tile_operands():
        root = _managed(t)
        if root is not None and root not in out:
            out[root] = t
    return out


# ---- a5: buffer-id lock / unlock --------------------------------------------------------------


def _slot_ids(root: Buffer, slot: Expr) -> list[Expr]:
    """The buffer ids of one (possibly run-time) slot of ``root``: one per id column of its table."""
    width = len(root.mutex_ids[0])
    return [slot_id(tuple(row[j] for row in root.mutex_ids), slot) for j in range(width)]


def _components(refs: list[tuple[Buffer, Expr]]) -> list[list[int]]:
    """Indices of the refs grouped by overlapping candidate ids (only those can coincide at run time),
    each group in operand order, the groups in the order of their first ref (the real auto_mutex's order)."""
    parent = list(range(len(refs)))

    def find(x: int) -> int:
        while parent[x] != x:
            x = parent[x]
        return x

    sets = [set(r.mutex_union) for r, _ in refs]
    for i in range(len(refs)):
        for j in range(i + 1, len(refs)):
            if sets[i] & sets[j]:
                parent[find(i)] = find(j)
    groups: dict[int, list[int]] = {}
    for i in range(len(refs)):
        groups.setdefault(find(i), []).append(i)
    return list(groups.values())


def _lock_body(body: list[Stmt]) -> list[Stmt]:
    out: list[Stmt] = []
    for s in body:
        if isinstance(s, TileOp):
            refs: list[tuple[Buffer, Expr]] = []
            slots: set[tuple[int, int]] = set()
            for t in s.tile_operands():  # every distinct slot: an op may read one slot and write another
                root = _managed(t)
                slot = t.root_slot  # a subview's slot may also encode its start
                if root is not None and (root.uid, id(slot)) not in slots:
                    slots.add((root.uid, id(slot)))
                    refs.append((root, slot))
            plan: list[tuple[Buffer, Expr, Expr | None]] = []  # (group, id, guard) in lock (= unlock) order
            for comp in _components(refs):
                seen: list[tuple[int, Expr]] = []  # (owner ref, id) already locked in this component
                keys: set[tuple] = set()  # groups may share buffer ids: lock each id once per op
                for owner in comp:
                    root, slot = refs[owner]
                    for ev in _slot_ids(root, slot):
                        key = ("c", ev.value) if isinstance(ev, Const) else ("v", ev.uid) if isinstance(ev, Var) \
                            else None
                        if key is not None and key in keys:
                            continue
                        if key is not None:
                            keys.add(key)
                        # the ids of one slot are distinct by construction: guard only against other slots'
                        plan.append((root, ev, _distinct_from(ev, [e for o, e in seen if o != owner])))
                        seen.append((owner, ev))
            for root, ev, guard in plan:
                _guarded(out, guard, SyncOp("lock", s.pipe, None, ev, s.loc, origin=f"acquire {root.name}"), s.loc)
            out.append(s)
            for root, ev, guard in plan:
                _guarded(out, guard, SyncOp("unlock", s.pipe, None, ev, s.loc, origin=f"release {root.name}"), s.loc)
        else:
            out.append(with_bodies(s, _lock_body))
    return out


def _distinct_from(ev: Expr, earlier: list[Expr]) -> Expr | None:
    """The run-time condition that buffer id ``ev`` differs from the ids an op already locks (groups
    sharing ids on a5 may select the same id at run time); None when it always does."""
    conds = [Compare("!=", ev, e) for e in earlier if not (isinstance(ev, Const) and isinstance(e, Const))]
    if not conds:
        return None
    return conds[0] if len(conds) == 1 else BoolOp("and", tuple(conds))


def _guarded(out: list[Stmt], guard: Expr | None, op: SyncOp, loc) -> None:
    out.append(op if guard is None else If(guard, [op], [], loc))


# ---- a2a3: event pairs --------------------------------------------------------------------------


@dataclass
class EventAllocator:
    """Hands out event ids per (src pipe, dst pipe); fails clearly when a pair runs out."""

    arch: ArchModel
    next_id: dict[tuple[PipeType, PipeType], int] = field(default_factory=dict)
    users: dict[tuple[PipeType, PipeType], list[str]] = field(default_factory=dict)

    def take(self, src: PipeType, dst: PipeType, count: int, owner: Buffer) -> int:
        key = (src, dst)
        base = self.next_id.get(key, 0)
        limit = int(self.arch.event_ids_per_pipe_pair.value)
        self.users.setdefault(key, []).append(f"{owner.name} ({count})")
        if base + count > limit:
            raise CompileError(
                f"auto sync needs {base + count} event ids for {src.name}->{dst.name} but {self.arch.name} has "
                f"{limit} per pipe pair (users: {', '.join(self.users[key])}); reduce group depths or share buffers",
                owner.loc)
        self.next_id[key] = base + count
        return base


@dataclass
class Generation:
    """The accesses to one ring slot between a ``next()`` and the following one."""

    slot: Var                 # snapshot of the ring position taken after next()
    units: list[Stmt]         # statements of the body that access the group, in order
    pipes: list[PipeType]     # the one pipe each unit accesses the group on


@dataclass
class Ring:
    """A group used in the ring pattern: where its generations live and their pipe sequence."""

    buffer: Buffer
    body: list[Stmt]          # the loop body holding the next() calls and every access
    generations: list[Generation]
    outer_loop: Stmt          # outermost loop (For / While) of the nest around body (pre-set / drain go around it)
    outer_list: list[Stmt]    # the statement list holding outer_loop


def _unit_access(stmt: Stmt, b: Buffer) -> tuple[set[PipeType], set[int]] | None:
    """Pipes on which ``stmt`` (and everything nested in it) accesses ``b``, and the slot vars used."""
    pipes: set[PipeType] = set()
    slots: set[int] = set()

    def visit(s: Stmt) -> None:
        if isinstance(s, TileOp):
            ref = _accesses(s).get(b)
            if ref is not None:
                pipes.add(s.pipe)
                slots.add(id(ref.root_slot))
        else:
            for body in child_bodies(s):
                for x in body:
                    visit(x)

    visit(stmt)
    return (pipes, slots) if pipes else None


def _generations(body: list[Stmt], b: Buffer) -> list[Generation] | None:
    """Split ``body`` at each ``next()`` of ``b``; None unless every access fits the ring pattern."""
    gens: list[Generation] = []
    i = 0
    while i < len(body):
        s = body[i]
        if isinstance(s, Assign) and s.var is b.ring_counter:
            snap = body[i + 1] if i + 1 < len(body) else None
            if not (isinstance(snap, Assign) and snap.value is b.ring_counter):
                return None
            gens.append(Generation(snap.var, [], []))
            i += 2
            continue
        acc = _unit_access(s, b)
        if acc is not None:
            pipes, slots = acc
            if not gens or len(pipes) != 1 or slots != {id(gens[-1].slot)}:
                return None
            gens[-1].units.append(s)
            gens[-1].pipes.append(next(iter(pipes)))
        i += 1
    if not gens or any(not g.units for g in gens) or any(g.pipes != gens[0].pipes for g in gens):
        return None
    return gens


def _find_rings(program: KernelIR, managed: set[Buffer]) -> dict[Buffer, Ring]:
    """Groups whose every access fits the ring pattern (see module docstring)."""
    homes: dict[Buffer, list[list[Stmt]]] = {b: [] for b in managed}   # bodies holding a next() of b
    parents: dict[int, tuple[For, list[Stmt]]] = {}  # id(body list) -> (its For, the list holding that For)

    def visit(body: list[Stmt]) -> None:
        for s in body:
            if isinstance(s, Assign):
                for b in managed:
                    if s.var is b.ring_counter and not isinstance(s.value, Const) and \
                            (not homes[b] or homes[b][-1] is not body):
                        homes[b].append(body)
            elif isinstance(s, LOOPS):
                parents[id(s.body)] = (s, body)
                visit(s.body)
            else:
                for b in child_bodies(s):
                    visit(b)

    visit(program.body)
    rings: dict[Buffer, Ring] = {}
    for b in managed:
        if not b.is_group or len(homes[b]) != 1 or id(homes[b][0]) not in parents:
            continue
        body = homes[b][0]
        gens = _generations(body, b)
        if gens is None:
            continue
        counted = sum(len(g.units) for g in gens)
        if counted != sum(1 for s in body if _unit_access(s, b) is not None):
            continue
        if not _only_in(program.body, body, b) or not _jumps_between_generations(body, b, gens):
            continue
        loop, holder = parents[id(body)]
        while id(holder) in parents:
            loop, holder = parents[id(holder)]
        rings[b] = Ring(b, body, gens, loop, holder)
    return rings


def _jumps_between_generations(body: list[Stmt], b: Buffer, gens: list[Generation]) -> bool:
    """False when a break / continue / return could leave ``body`` in the middle of a generation
    (after its first access, before its last), which would skip a set_flag the next use waits for."""
    index = {id(s): i for i, s in enumerate(body)}
    spans = [(index[id(g.units[0])], index[id(g.units[-1])]) for g in gens]
    for i, s in enumerate(body):
        if any(True for _ in jumps_out([s])) and any(lo <= i <= hi for lo, hi in spans):
            return False
    return True


def _only_in(program_body: list[Stmt], body: list[Stmt], b: Buffer) -> bool:
    """True when every access to ``b`` in the program lies inside ``body``."""
    inside = sum(1 for s in body for _ in _ops_on(s, b))
    total = sum(1 for s in program_body for _ in _ops_on(s, b))
    return inside == total


def _ops_on(s: Stmt, b: Buffer):
    if isinstance(s, TileOp):
        if b in _accesses(s):
            yield s
    for body in child_bodies(s):
        for x in body:
            yield from _ops_on(x, b)


def _event(base: int, slot: Expr) -> Expr:
    return Const(base + int(slot.value)) if isinstance(slot, Const) else (
        slot if base == 0 else BinOp("+", Const(base), slot))


class EventSync:
    """Inserts the a2a3 set/wait pairs for one program."""

    def __init__(self, program: KernelIR, arch: ArchModel):
        self.program = program
        self.alloc = EventAllocator(arch)
        self.managed = {b.root for b in program.buffers if b.root.mutex_ids}
        self.rings = _find_rings(program, self.managed)
        self.before: dict[int, list[Stmt]] = {}  # id(stmt) -> statements to insert before it
        self.after: dict[int, list[Stmt]] = {}
        self.ids: dict[tuple[Buffer, PipeType, PipeType], int] = {}
        self.loop_owner: list[dict[Buffer, PipeType | None]] = []  # owners at the start of each enclosing loop

    def events(self, b: Buffer, src: PipeType, dst: PipeType, count: int) -> int:
        key = (b, src, dst)
        if key not in self.ids:
            self.ids[key] = self.alloc.take(src, dst, count, b)
        return self.ids[key]

    def run(self) -> KernelIR:
        for ring in sorted(self.rings.values(), key=lambda r: r.buffer.uid):
            self.plan_ring(ring)
        body = self.rewrite(self.program.body)
        fallback = self.managed - set(self.rings)
        if fallback:
            body, _ = self.ownership(body, {b: None for b in sorted(fallback, key=lambda b: b.uid)})
        return dataclasses.replace(self.program, body=body)

    # ring pattern --------------------------------------------------------------------------

    def plan_ring(self, r: Ring) -> None:
        b, d = r.buffer, r.buffer.depth
        pipes = r.generations[0].pipes
        for g in r.generations:
            for prev, nxt, p, q in zip(g.units, g.units[1:], pipes, pipes[1:]):
                if p is q:
                    continue
                ev = _event(self.events(b, p, q, d), g.slot)
                why = f"{b.name}: {p.name} done -> {q.name}"
                self.after.setdefault(id(prev), []).append(SyncOp("set_flag", p, q, ev, prev.loc, why))
                self.before.setdefault(id(nxt), []).append(SyncOp("wait_flag", p, q, ev, nxt.loc, why))
        first, last = pipes[0], pipes[-1]
        if first is last:
            return
        base = self.events(b, last, first, d)
        why = f"{b.name}: slot free again ({last.name} -> {first.name})"
        for g in r.generations:
            self.after.setdefault(id(g.units[-1]), []).append(
                SyncOp("set_flag", last, first, _event(base, g.slot), g.units[-1].loc, why))
            self.before.setdefault(id(g.units[0]), []).append(
                SyncOp("wait_flag", last, first, _event(base, g.slot), g.units[0].loc, why))
        loop = r.outer_loop
        self.before.setdefault(id(loop), []).extend(
            SyncOp("set_flag", last, first, Const(base + s), loop.loc, f"{b.name}: pre-set slot {s} free")
            for s in range(d))
        self.after.setdefault(id(loop), []).extend(
            SyncOp("wait_flag", last, first, Const(base + s), loop.loc, f"{b.name}: drain slot {s}")
            for s in range(d))
        for ret in (j for j in jumps_out(loop.body) if isinstance(j, Return)):  # a return skips the drain
            self.before.setdefault(id(ret), []).extend(
                SyncOp("wait_flag", last, first, Const(base + s), ret.loc, f"{b.name}: drain slot {s} (return)")
                for s in range(d))

    def rewrite(self, body: list[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        for s in body:
            key = id(s)
            out.extend(self.before.get(key, ()))
            out.append(with_bodies(s, self.rewrite))
            out.extend(self.after.get(key, ()))
        return out

    # ownership transfer ----------------------------------------------------------------------

    def transfer(self, b: Buffer, src: PipeType, dst: PipeType, loc, why: str) -> list[Stmt]:
        ev = Const(self.events(b, src, dst, 1))
        return [SyncOp("set_flag", src, dst, ev, loc, why), SyncOp("wait_flag", src, dst, ev, loc, why)]

    def first_pipe(self, body: list[Stmt], b: Buffer) -> PipeType | None:
        for s in body:
            if isinstance(s, TileOp) and b in _accesses(s):
                return s.pipe
            p = next((q for q in (self.first_pipe(x, b) for x in child_bodies(s)) if q), None)
            if p is not None:
                return p
        return None

    def hand_back(self, current: dict[Buffer, PipeType | None], target: dict[Buffer, PipeType | None], loc,
                  why: str) -> list[Stmt]:
        out: list[Stmt] = []
        for b, p in current.items():
            want = target.get(b)
            if p is not want and want is not None and p is not None:
                out += self.transfer(b, p, want, loc, f"{b.name}: {why} {want.name}")
        return out

    def ownership(self, body: list[Stmt], owner: dict[Buffer, PipeType | None]):
        out: list[Stmt] = []
        for s in body:
            if isinstance(s, TileOp):
                for b in _accesses(s):
                    if b in owner:
                        cur = owner[b]
                        if cur is not None and cur is not s.pipe:
                            out += self.transfer(b, cur, s.pipe, s.loc, f"{b.name}: {cur.name} -> {s.pipe.name}")
                        owner[b] = s.pipe
                out.append(s)
            elif isinstance(s, (For, While, If)):
                bodies = list(child_bodies(s))
                for b in owner:
                    if owner[b] is None:
                        owner[b] = next((p for p in (self.first_pipe(x, b) for x in bodies) if p), None)
                loop = isinstance(s, LOOPS)
                if loop:
                    self.loop_owner.append(dict(owner))
                new_bodies = []
                for x in bodies:
                    inner = dict(owner)
                    nb, inner = self.ownership(x, inner)
                    nb += self.hand_back(inner, owner, s.loc, "hand back to")
                    new_bodies.append(nb)
                if loop:
                    self.loop_owner.pop()
                    s = dataclasses.replace(s, body=new_bodies[0])
                else:
                    s = dataclasses.replace(s, then_body=new_bodies[0], else_body=new_bodies[1])
                out.append(s)
            elif isinstance(s, (Break, Continue)):
                # the loop resumes (or ends) with the owners it had at the start of the iteration
                out += self.hand_back(owner, self.loop_owner[-1], s.loc, f"{type(s).__name__.lower()}: hand back to")
                out.append(s)
            else:
                out.append(s)
        return out, owner


def auto_sync(program: KernelIR, arch: ArchModel) -> KernelIR:
    """Insert the synchronisation the program's tile groups need on ``arch``."""
    if arch.has_buffer_mutex:
        return dataclasses.replace(program, body=_lock_body(program.body))
    return EventSync(program, arch).run()
