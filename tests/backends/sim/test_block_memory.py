"""What a timed launch holds while its blocks wait and run stays small (issue 15, peak memory): equal
cores keep their logged ops as a delta against one list (schedule_cache.PrepDelta), a recorded
schedule keeps its replay steps in flat arrays (ReplayPlan), a sync's (kind, key, statement) origin is
made once per site and event, and a scheduled block's records die before the next block is built.
Each test can fail: a wrong delta, a plan that drops or reorders a step, an origin made per call or a
scheduler kept alive shows in what it checks."""
from __future__ import annotations

import random
import weakref

import numpy as np

import pypto_pro.language as pl
from example_modules import load_example
from kernels import add_fn
from pypto_pro.backends.sim import executor, recorder, schedule_cache
from pypto_pro.backends.sim.inst import NPIPES, Inst
from pypto_pro.backends.sim.schedule_cache import PrepDelta, ReplayPlan


def _fa_args(blocks: int, seq: int = 256):
    fa = load_example("flash_attention")
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((1, 2, seq, 128)).astype(np.float16) for _ in range(3))
    return fa, [q, k, v, np.zeros_like(q), fa.causal_mask(), *fa.workspaces(blocks, 128, 1)]


def test_equal_cores_keep_their_ops_as_a_delta(monkeypatch):
    """Blocks of one flash-attention launch log equal sequences: all but the first keep a delta, and
    iterating it yields exactly the records each core logged (the same objects, in order)."""
    logged: list[tuple] = []
    intern = schedule_cache.TokenPool.intern

    def watch(self, rec):
        before = list(rec.preps)
        intern(self, rec)
        logged.append((before, rec.preps))
    monkeypatch.setattr(schedule_cache.TokenPool, "intern", watch)
    fa, args = _fa_args(4)
    report = fa.make_flash_attention("a5", 128, False, 1)[None, 4](*args)
    assert not report.faults
    deltas = [after for _, after in logged if isinstance(after, PrepDelta)]
    assert deltas and len(deltas) < len(logged)
    assert any(d.at for d in deltas)  # some ops (the GM loads and stores) differ from the first block's
    for before, after in logged:
        got = list(after)
        assert len(got) == len(before) == len(after) and all(a is b for a, b in zip(got, before))
    np.testing.assert_allclose(args[3].astype(np.float32), fa.reference(*args[:3]).astype(np.float32), atol=2e-3)


def test_ops_that_mostly_differ_stay_a_list():
    base = [object() for _ in range(8)]
    mine = list(base)
    mine[2], mine[5] = object(), object()
    delta = PrepDelta.of(base, mine)
    assert isinstance(delta, PrepDelta) and list(delta.at) == [2, 5] and list(delta) == mine
    mostly = [object() for _ in range(8)]
    assert PrepDelta.of(base, mostly) is mostly
    assert PrepDelta.of(base, mine[:7]) == mine[:7]


def test_replay_plan_is_the_steps_that_run_numerics():
    """The plan is the (record, op) of each start and (~record, -1) of each finish of a record that
    runs numerics, in the scheduler's order; standalone syncs (op -1) are left out."""
    rnd = random.Random(5)
    for _ in range(50):
        n = rnd.randrange(1, 40)
        prep_of = [rnd.choice([-1, rnd.randrange(100)]) for _ in range(n)]
        steps = [k for i in range(n) for k in (i, ~i)]
        rnd.shuffle(steps)
        want = [(k, prep_of[k]) if k >= 0 else (k, -1) for k in steps if prep_of[k if k >= 0 else ~k] >= 0]
        plan = ReplayPlan(steps, prep_of)
        assert list(plan) == want and len(plan) == len(want)


def test_sync_origins_are_made_once_per_site_and_event(monkeypatch):
    """Equal (kind, key, statement) origins of one core's records are one object, not one per call or
    per block (two cores may make equal ones: each logs its own)."""
    built = []
    build = executor.build_block

    def keep(recs, fractions):
        insts, op_insts = build(recs, fractions)
        built.append(insts)
        return insts, op_insts
    monkeypatch.setattr(executor, "build_block", keep)
    fa, args = _fa_args(4)
    fa.make_flash_attention("a5", 128, True, 1)[None, 4](*args)
    for core in range(3):
        origins = [o for insts in built for inst in insts if inst.extra is not None and inst.pipe // NPIPES == core
                   for o in inst.extra.origins]
        assert len(origins) > len(set(origins)) > 10
        assert len({id(o) for o in origins}) == len(set(origins))
        for stmt in {id(o[2]) for o in origins}:  # one key object per site and event too
            keys = [o[1] for o in origins if id(o[2]) == stmt]
            assert len({id(k) for k in keys}) == len(set(keys))


class _Tracked(Inst):
    __slots__ = ("__weakref__",)


def test_a_scheduled_blocks_records_die_before_the_next_block_is_built(monkeypatch):
    """Causal flash attention schedules every block: when block b+1 is built, the records of block b
    that no checker keeps (those without GM accesses, but for the on-chip checker's last access per
    slot) are gone."""
    alive: list[list] = []
    build = executor.build_block
    checked = [0]

    def watch(recs, fractions):
        for refs in alive:  # (the on-chip checker keeps each slot's last accesses until the block is reset)
            left = sum(r() is not None for r in refs)
            assert left * 5 < len(refs), f"{left} of an earlier block's {len(refs)} records are still alive"
            checked[0] += 1
        alive.clear()
        insts, op_insts = build(recs, fractions)
        alive.append([weakref.ref(i) for i in insts if not i.gm])
        return insts, op_insts
    monkeypatch.setattr(executor, "build_block", watch)
    monkeypatch.setattr(recorder, "Inst", _Tracked)
    fa, args = _fa_args(4, 512)
    report = fa.make_flash_attention("a5", 128, True, 1)[None, 4](*args)
    assert report.blocks_scheduled == 4 and checked[0] == 3


def test_uniform_add_is_unchanged(monkeypatch):
    """A kernel whose ops all differ per block (every op a load, store or add of its own window) keeps
    lists, and still computes its sum."""
    x = np.random.default_rng(0).random((128 * 4, 256)).astype(np.float16)
    z = np.zeros_like(x)
    pl.jit(add_fn, arch="a5")[None, 4](x, x, z)
    assert np.array_equal(z, x + x)


def test_token_encoding_is_injective():
    """Pooled tokens are bytes: equal sequences encode equal, any other sequence (another order, a
    token of another value, a prefix, a token past 65535 codes) encodes otherwise; tokens compare as a
    tuple compares its items (1 == 1.0)."""
    pool = schedule_cache.TokenPool()
    a = [7, 3, (1, 2, 3), 3, 10**12]
    assert pool.encode(a) == pool.encode(list(a)) == pool.encode([7, 3, (1, 2, 3), 3.0, 10**12])
    for other in ([3, 7, (1, 2, 3), 3, 10**12], [7, 3, (1, 2, 4), 3, 10**12], a[:-1], a + [0], [7, 3]):
        assert pool.encode(other) != pool.encode(a)
    many = list(range(70000))
    wide = pool.encode(many)
    assert wide[:1] == b"I" and wide == pool.encode(list(many)) and wide != pool.encode(many[:-1] + [-1])
    assert pool.encode(a)[:1] == b"H"
    assert pool.encode([[1]]) == ([1],)  # an unhashable token: kept as a tuple
