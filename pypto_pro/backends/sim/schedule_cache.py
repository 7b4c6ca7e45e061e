"""Reuse of one block's schedule by the blocks whose instruction streams time the same way.

SPMD kernels give most blocks the same instruction stream up to global addresses: same pipes,
costs, issue times, sync structure and on-chip tiles. The scheduler's decisions (start and end
of every instruction, vector clocks, the order of starts and finishes) depend on nothing else,
so a block whose :func:`schedule_signature` equals an earlier block's gets that block's schedule
replayed: its logged numerics and their commits run in the recorded order, exactly as the
scheduler would run them, and its own records are never built (except for a trace, where they
get the recorded times and clocks).

The signature also fixes every on-chip access (a tile instruction's on-chip footprint is a
function of its statement, its tile slots and its work size, all in the signature), and the
on-chip checker starts each block afresh; a schedule is kept only if its block reported no
fault, so a replayed block cannot have on-chip faults either and only the global-memory checker
(other addresses, other blocks) runs during a replay. Blocks that differ (edge tiles, another
wave's bandwidth share, other L2 reuse or trip counts) are scheduled and checked from scratch.
"""
from __future__ import annotations

from array import array
from itertools import compress
from operator import is_not
from typing import Callable, Iterator

from pypto_pro.backends.sim.inst import Inst


class TokenPool:
    """The distinct token sequences of a launch's cores, while its blocks are logged: a logged core's
    tokens become an encoding shared with every earlier core that logged the same sequence (the blocks of
    an SPMD launch mostly do), so a launch holds one copy of each while its blocks wait to run, and
    equal sequences compare by identity; its hash is computed once (:class:`Signature` reuses it).

    Equal tokens also mean an equal call log and equal cost entries: an op's token is its cost
    entry's id (an entry belongs to one call site's cache, shared by every lane) and its tile slots,
    a sync's is its (site, event, statement id) (a ``bar_all``'s only its statement: its logged
    event, which no builder reads, may differ). So such a core shares the earlier one's ``log`` and
    ``used`` lists too (never mutated once logged); only its numerics and GM windows are its own, and
    its numerics are kept as a :class:`PrepDelta` against the first such core's where few differ."""

    def __init__(self) -> None:
        self._by_hash: dict[int, list[tuple[bytes, list, list, list]]] = {}
        self._codes = _Codes()

    def encode(self, tokens: list) -> bytes | tuple:
        """The token sequence as bytes: each distinct token (compared as a tuple compares its items) gets
        the next small code, and the codes are packed 2 bytes each, or 4 when one passes 65535 (a type
        byte first), so equal sequences give equal bytes and unequal ones unequal bytes; a tuple if a
        token cannot be a dict key."""
        try:
            codes = array("I", map(self._codes.__getitem__, tokens))
        except TypeError:
            return tuple(tokens)
        if not codes or max(codes) < 65536:
            return b"H" + array("H", codes).tobytes()
        return b"I" + codes.tobytes()

    def intern(self, rec) -> None:
        """Replace ``rec.tokens`` (a list) by the pooled encoding equal to it (:meth:`encode`: a launch
        holds each distinct sequence once, 2 bytes a token instead of a tuple's 8), keep its hash on
        ``rec``, and share the ``log`` and ``used`` of the first core that logged it."""
        tokens = self.encode(rec.tokens)
        h = hash(tokens)
        same = self._by_hash.setdefault(h, [])
        for known, log, used, preps in same:
            if known == tokens:
                rec.tokens, rec.tokens_hash, rec.log, rec.used = known, h, log, used
                rec.preps = PrepDelta.of(preps, rec.preps)
                return
        same.append((tokens, rec.log, rec.used, rec.preps))
        rec.tokens, rec.tokens_hash = tokens, h


class _Codes(dict):
    """token -> its code, the next one for a token not seen yet."""

    def __missing__(self, token) -> int:
        code = self[token] = len(self)
        return code


class PrepDelta:
    """A core's logged ops as the positions where they differ from an equal core's (same tokens, so the
    same number of ops): SPMD blocks mostly get the very same memoized ``Prepared`` records
    (prep_memo) and differ in their GM loads and stores, so a launch holds one list of a sequence and
    a short delta per other core, instead of one pointer per op per core while its blocks wait to run.
    Iterating yields exactly the objects the core logged, in order (a list, made on demand)."""

    __slots__ = ("base", "at", "preps")

    def __init__(self, base: list, at: array, preps: list) -> None:
        self.base, self.at, self.preps = base, at, preps

    @staticmethod
    def of(base: list, preps: list):
        """``preps`` as a delta against ``base`` when at most a quarter of them differ, else ``preps``."""
        if len(preps) != len(base):  # (equal tokens mean equal lengths: kept as they are, to be safe)
            return preps
        at = list(compress(range(len(preps)), map(is_not, preps, base)))
        if 4 * len(at) > len(preps):
            return preps
        return PrepDelta(base, array("i", at), [preps[i] for i in at])

    def materialize(self) -> list:
        out = self.base.copy()
        for i, prep in zip(self.at, self.preps):
            out[i] = prep
        return out

    def __iter__(self) -> Iterator:
        return iter(self.materialize())

    def __len__(self) -> int:
        return len(self.base)


class Signature:
    """A block's schedule signature: its cores' token sequences and its L2 miss fractions, with its hash
    computed once (equal signatures of pooled tokens compare by identity, element by element)."""

    __slots__ = ("cores", "fractions", "_hash")

    def __init__(self, cores: tuple, hashes: tuple[int, ...], fractions: tuple[float, ...]) -> None:
        self.cores = cores
        self.fractions = fractions
        self._hash = hash((hashes, fractions))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Signature) or self._hash != other._hash or len(self.cores) != len(other.cores):
            return False
        return self.fractions == other.fractions and all(a is b or a == b for a, b in zip(self.cores, other.cores))


def schedule_signature(recorders: list, fractions: tuple[float, ...]) -> Signature:
    """What a block's schedule depends on: its cores' recorder tokens (which cost entry and tile
    slots each op call used, which statement and event each sync had; the recorder is
    deterministic in these, so they fix every record's pipe, cost, issue time, sync effects and
    on-chip accesses), core by core, and the L2 miss fraction of each priced GM access. Global
    addresses and numerics are left out. Tokens pooled by :class:`TokenPool` are used as they are."""
    cores, hashes = [], []
    for rec in recorders:
        pooled = not isinstance(rec.tokens, list) and rec.tokens_hash is not None
        tokens = rec.tokens if pooled else tuple(rec.tokens)
        cores.append(tokens)
        hashes.append(rec.tokens_hash if pooled else hash(tokens))
    return Signature(tuple(cores), tuple(hashes), fractions)


class ReplayPlan:
    """The steps a replay acts on, as two flat int arrays (8 bytes a step instead of a tuple and its ints):
    iterating gives ``(record, its logged op)`` at a start and ``(~record, -1)`` at a finish."""

    __slots__ = ("records", "ops")

    def __init__(self, steps: list[int], prep_of: list[int]) -> None:
        self.records, self.ops = array("i"), array("i")
        add_record, add_op = self.records.append, self.ops.append
        for k in steps:
            if k >= 0:
                j = prep_of[k]
                if j >= 0:  # a standalone sync's start and finish run no numerics: left out
                    add_record(k)
                    add_op(j)
            elif prep_of[~k] >= 0:
                add_record(k)
                add_op(-1)

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return zip(self.records, self.ops)

    def __len__(self) -> int:
        return len(self.records)


class RecordedSchedule:
    """A scheduled block: its records (templates: same statements, pipes, clocks and times for
    every block that replays it), which logged op each record runs, and the order of starts
    (``i``) and finishes (``~i``) that the scheduler went through (kept only as the replay's
    :class:`ReplayPlan`)."""

    def __init__(self, insts: list[Inst], op_insts: list[Inst], steps: list[int], busy: list[float],
                 end_time: float, flows: list[tuple[Inst, Inst, str]] | None):
        self.templates = insts
        op_index = {id(inst): j for j, inst in enumerate(op_insts)}
        prep_of = [op_index.get(id(inst), -1) for inst in insts]  # -1: a standalone sync
        del op_index
        self.plan = ReplayPlan(steps, prep_of)
        self.busy = list(busy)
        self.end_time = end_time
        self.flows = [(a.seq, b.seq, label) for a, b, label in flows] if flows is not None else None

    def replay(self, preps: list, gm_check: Callable[[Inst, tuple], None] | None, defer: bool,
               watch: dict | None = None, landed: Callable[[Inst], None] | None = None) -> None:
        """Run a block's numerics (``preps``: its logged ops, in order) in this schedule's order,
        checking each global-memory access as its instruction starts (and, for the writes in
        ``watch``, calling ``landed`` once their bytes are in memory)."""
        templates = self.templates
        pending: dict[int, Callable] = {}
        for k, j in self.plan:
            if j >= 0:
                prep = preps[j]
                if gm_check is not None and prep.gm:
                    gm_check(templates[k], prep.gm)
                commit = prep.run(defer)
                if commit is not None:
                    pending[k] = commit
                elif watch and templates[k] in watch:
                    landed(templates[k])  # type: ignore[misc]
            elif pending:
                commit = pending.pop(~k, None)
                if commit is not None:
                    commit()
                    if watch and templates[~k] in watch:
                        landed(templates[~k])  # type: ignore[misc]

    def check(self, preps: list, gm_check: Callable[[Inst, tuple], None]) -> None:
        """The global-memory checker's calls of :meth:`replay` (the same calls in the same order) without
        the numerics: for a block whose numerics ran elsewhere (``parallel_replay``)."""
        templates = self.templates
        for k, j in self.plan:
            if j >= 0:
                gm = preps[j].gm
                if gm:
                    gm_check(templates[k], gm)

    def assign(self, insts: list[Inst]) -> list[tuple[Inst, Inst, str]] | None:
        """Give a replayed block's own records (built for a trace) this schedule's times and clocks;
        return its flow arrows."""
        for inst, t in zip(insts, self.templates):
            inst.start, inst.end, inst.cycles, inst.vc, inst.drained = t.start, t.end, t.cycles, t.vc, t.drained
        if self.flows is None:
            return None
        return [(insts[a], insts[b], label) for a, b, label in self.flows]
