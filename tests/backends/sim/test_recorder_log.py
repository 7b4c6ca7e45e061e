"""A timed launch holds every block's log until the block runs, so the log is kept compact
(recorder.py, schedule_cache.TokenPool): one list slot per call (an op's call site, or one shared
(site, event, statement id) tuple per sync site and event), and the cores whose token sequences
are equal share one copy of the tokens, the call log and the cost entries. Each test can fail:
a tuple made per call, or a pool that stops sharing, shows in the identities it checks."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

import pypto_pro.language as pl
from example_modules import load_example
from kernels import add_fn
from pypto_pro.backends.sim import executor
from pypto_pro.backends.sim.schedule_cache import Signature, schedule_signature


def _logged(monkeypatch, kernel, args: list[np.ndarray], blocks: int) -> list[list]:
    """Launch once; return every block's logs (per core) as the executor hands them to the signatures
    (a block's recorder drops them once it has run)."""
    seen: list[list] = []

    def capture(recs, fractions):
        seen.append([SimpleNamespace(tokens=r.tokens, tokens_hash=r.tokens_hash, log=r.log, used=r.used,
                                     preps=r.preps) for r in recs])
        return schedule_signature(recs, fractions)
    monkeypatch.setattr(executor, "schedule_signature", capture)
    kernel[None, blocks](*args)
    return seen


def _check_log_items(rec) -> None:
    sync_items = [item for item in rec.log if item.__class__ is not int]
    assert sync_items and all(item.__class__ is tuple and len(item) == 3 for item in sync_items)
    # one object per (site, event): equal items are the same tuple, not one made per call
    assert len({id(item) for item in sync_items}) == len(set(sync_items))
    ops = sum(item.__class__ is int for item in rec.log)
    assert ops == len(rec.used) == len(rec.preps)


def test_uniform_blocks_share_one_log(monkeypatch):
    """Blocks of one wave log equal sequences: one tokens tuple, one call log and one list of cost
    entries for all of them; the numerics (GM addresses) stay each block's own."""
    rng = np.random.default_rng(0)
    x = rng.random((128 * 6, 256)).astype(np.float16)
    z = np.zeros_like(x)
    seen = _logged(monkeypatch, pl.jit(add_fn, arch="a5"), [x, x, z], 6)
    assert np.array_equal(z, x + x)
    assert len(seen) == 6
    first = seen[0][0]
    _check_log_items(first)
    assert isinstance(first.tokens, bytes) and first.tokens_hash == hash(first.tokens)
    for recs in seen[1:]:
        rec = recs[0]
        assert rec.tokens is first.tokens and rec.log is first.log and rec.used is first.used
        assert rec.preps is not first.preps and list(rec.preps) != list(first.preps)  # other GM windows


def test_blocks_that_differ_keep_their_own_logs(monkeypatch):
    """Causal flash attention (Cube + Vector cores, cross-core flags): blocks with other trip counts
    log other sequences and keep their own lists; equal ones still share."""
    fa = load_example("flash_attention")
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((1, 2, 256, 128)).astype(np.float16) for _ in range(3))
    args = [q, k, v, np.zeros_like(q), fa.causal_mask(), *fa.workspaces(4, 128, 1)]
    seen = _logged(monkeypatch, fa.make_flash_attention("a5", 128, True, 1), args, 4)
    for recs in seen:
        for rec in recs:
            _check_log_items(rec)
    for core in range(len(seen[0])):
        by_tokens: dict = {}
        for recs in seen:
            rec = recs[core]
            other = by_tokens.setdefault(rec.tokens, rec)
            assert (other.log is rec.log) and (other.tokens is rec.tokens)  # equal tokens: one copy
        if core == 0:
            assert len(by_tokens) > 1  # the trip counts differ: several sequences


def test_signature_equality_is_the_token_sequences():
    """Signatures of pooled and unpooled tokens compare by content, core by core."""
    class Rec:
        def __init__(self, tokens, pooled=False):
            self.tokens = tuple(tokens) if pooled else list(tokens)
            self.tokens_hash = hash(self.tokens) if pooled else None
    a = schedule_signature([Rec([1, 2]), Rec([(3, 0, 7)])], (0.5,))
    b = schedule_signature([Rec([1, 2], True), Rec([(3, 0, 7)], True)], (0.5,))
    assert isinstance(a, Signature) and a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != schedule_signature([Rec([1]), Rec([2, (3, 0, 7)])], (0.5,))  # the same tokens, split otherwise
    assert a != schedule_signature([Rec([1, 2]), Rec([(3, 0, 7)])], (0.25,))
    assert a != schedule_signature([Rec([1, 2]), Rec([(3, 1, 7)])], (0.5,))
