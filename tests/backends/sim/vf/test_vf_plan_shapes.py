"""A plan shape kept for one tile placement is the shape built afresh for another with the same signature
(``backends/sim/vf/plan_shapes.py``; issue 15, wave 11).

The FA-like softmax body of ``test_vf_batch.py`` (loads and stores over three tiles, a value stored and
loaded back, overlapping DataBlock stores) is analysed once; its build arguments are then built again
at other placements: every tile moved by the same amount, the tiles moved apart, the output tile over
an input tile (the accesses meet: another signature, a shape of its own), partly out of UB (no
signature). A kept shape must equal the fresh one field for field (then ``batch._program`` makes the
same steps from it), a moved-onto placement must not take the kept shape (and its fresh shape must
differ, or the test would not tell), and the launch with reuse off gives the same bytes.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

from pypto_pro.backends.sim.vf import batch, plan_shapes

from test_vf_batch import F32, _run, softmax_body, specials
from vf_kernels import vf_kernel


def _captured(monkeypatch) -> list:
    calls = []
    real = batch.build

    def spy(*a):
        calls.append(a)
        return real(*a)
    monkeypatch.setattr(batch, "build", spy)
    kernel = vf_kernel(softmax_body(37, 0.5), [(F32, [8, 64]), (F32, [8, 64])], (F32, [24, 64]), dynamic=True)
    _run(kernel, (specials(1, (8, 64)), specials(2, (8, 64))), torch.full((24, 64), 7.0), True)
    monkeypatch.setattr(batch, "build", real)
    assert calls
    return calls


def _fields(shape) -> tuple | None:
    if shape is None:
        return None
    return tuple(getattr(shape, k) for k in batch._Shape.__slots__)


def _shape_at(args, bases, cache):
    trace, plan, static, foots, _, slot_bytes, ub_size = args[:7]
    return plan_shapes.shape_of(cache, trace, plan, static, foots, list(bases), slot_bytes, ub_size, batch._shape)


def test_kept_shapes_are_the_fresh_shapes(monkeypatch):
    calls = _captured(monkeypatch)
    trace, plan, static, foots, bases, slot_bytes, ub_size = calls[0][:7]
    bases = list(bases)
    moves = {"same": (bases, True), "all +512": ([b + 512 for b in bases], True),
             "apart": ([b + 4096 * i for i, b in enumerate(bases)], True),
             "out over a": ([bases[0], bases[1], bases[0]], False),
             "out near a": ([bases[0], bases[1], bases[0] + 256], False),
             "past UB": ([bases[0], bases[1], ub_size - 128], None)}
    cache: dict = {}
    first = _fields(_shape_at(calls[0], bases, cache))
    assert first is not None
    differs = False
    for name, (at, reused) in moves.items():
        sig = plan_shapes.signature(plan_shapes.envelopes(trace, static, foots, slot_bytes), at, ub_size)
        kept = _fields(_shape_at(calls[0], at, cache))
        fresh = _fields(batch._shape(trace, plan, static, foots, at, slot_bytes, ub_size))
        assert kept == fresh, name
        if reused is None:
            assert sig is None, name
        else:
            assert (sig == plan_shapes.signature(plan_shapes.envelopes(trace, static, foots, slot_bytes), bases,
                                                 ub_size)) is reused, name
        differs |= fresh != first
    assert differs, "no placement changed the shape: the comparison would not see a wrong reuse"


def test_reuse_off_gives_the_same_plans(monkeypatch):
    """Every captured build, at its own placement and at a shifted one, with and without a shared cache:
    the same steps (their rows and classes) and the same bytes when run."""
    calls = _captured(monkeypatch)
    cache: dict = {}
    for args in calls:
        for shift in (0, 256, 0):
            at = [b + shift for b in args[4]]
            a = (*args[:4], at, *args[5:7])
            kept = batch.build(*a, cache)
            monkeypatch.setattr(plan_shapes, "REUSE", False)
            fresh = batch.build(*a, cache)
            monkeypatch.setattr(plan_shapes, "REUSE", True)
            assert _steps(kept) == _steps(fresh)
    assert any(len(e[1]) for e in cache.values())


def _steps(plan) -> list | None:
    if plan is None:
        return None
    out = [plan.nv, plan.nm, plan.init, plan.final]
    for s in plan.steps:
        d = []
        for k in s.__slots__:
            v = getattr(s, k)
            if k in ("kernel", "scan"):
                v = type(v).__name__
            elif isinstance(v, np.ndarray):
                v = v.tolist()
            d.append((k, repr(v)))
        out.append((type(s).__name__, d))
    return out


@pytest.mark.parametrize("reuse", [True, False])
def test_launch_bytes_with_and_without_reuse(reuse, monkeypatch):
    monkeypatch.setattr(plan_shapes, "REUSE", reuse)
    kernel = vf_kernel(softmax_body(37, 0.5), [(F32, [8, 64]), (F32, [8, 64])], (F32, [24, 64]), dynamic=True)
    args = (specials(1, (8, 64)), specials(2, (8, 64)))
    got, ran = _run(kernel, args, torch.full((24, 64), 7.0), True)
    one, _ = _run(kernel, args, torch.full((24, 64), 7.0), False)
    assert ran and got == one


def _trace_memo_kernel():
    """A body whose int scalar ``n`` only picks a branch (n = 1, 2, 3: one trace under three memo keys) and
    whose float scalar ``k`` is an instruction operand (0.0 / -0.0: two traces)."""
    from pypto_pro.language import Vf as vf
    import pypto_pro.language as pl
    from vf_kernels import ALL, to_mte3, to_v

    @pl.vector_function
    def body(ta, to, n: pl.DT_INT32, k: pl.DT_FP32):
        full = vf.create_mask(pattern=ALL, dtype=F32)
        m = vf.update_mask(37, dtype=F32)
        for i in pl.range(0, 4):
            x = vf.load_align(ta, i * 64)
            y = vf.muls(x, k, m)
            z = vf.add(x, y, full)
            vf.store_align(to, z, full, i * 64)
        if n > 100:
            vf.store_align(to, y, full, 4 * 64)

    tt = pl.TileType(shape=[8, 64], dtype=F32, target_memory=pl.MemorySpace.Vec)
    T = pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], F32]

    @pl.jit()
    def kernel(a: T, out: T, n: pl.DT_INT32, k: pl.DT_FP32):
        ta = pl.make_tile(tt, addr=0, size=2048)
        to = pl.make_tile(tt, addr=2048, size=2048)
        with pl.section_vector():
            pl.load(ta, a, [0, 0])
            to_v()
            body(ta, to, n, k)
            to_mte3()
            pl.store(out, to, [0, 0])
    return kernel


def test_trace_memo_gives_the_bytes_of_fresh_analyses(monkeypatch):
    """``call.TRACE_MEMO``: the load windows and plan of a trace seen under another memo key are reused;
    the launches give the bytes and reports of fresh analyses, and the reuse really happens."""
    import dataclasses

    from pypto_pro.backends.sim.vf import call
    a = specials(3, (8, 64))
    runs = [(1, 0.0), (2, 0.0), (3, -0.0), (200, 0.0), (5, -0.0), (7, 0.0)]

    def launches(on: bool) -> tuple[list, int]:
        monkeypatch.setattr(call, "TRACE_MEMO", on)
        planned = []
        real = call._plan
        monkeypatch.setattr(call, "_plan", lambda *x: planned.append(1) or real(*x))
        kernel = _trace_memo_kernel()
        got = []
        for n, k in runs:
            out = torch.full((8, 64), 7.0)
            rep = kernel[None, 1](a, out, n, k)
            got.append((out.numpy().tobytes(), repr({f: v for f, v in dataclasses.asdict(rep).items()
                                                     if f != "trace_files"})))
        monkeypatch.setattr(call, "_plan", real)
        return got, len(planned)
    on, n_on = launches(True)
    off, n_off = launches(False)
    assert on == off
    assert n_off == len(runs) and n_on == 3  # traces: (k 0.0, no branch), (k -0.0), (k 0.0, branch)
