"""The VF fast paths compute the bytes of the slow ones (issue 15; a difference is a bug).

* The footprint analysis of a VF call (trace, UB accesses, cycles) is memoized per (slots, scalars,
  valid shapes) per call site (``vf/call.py``); scalars are keyed so ``-0.0`` / ``0.0`` and
  ``True`` / ``1`` stay apart.
* An instruction whose predicate the body set by ``pset`` / ``plt`` to all lanes takes its ``full``
  form (no per-lane merge): lane-wise ops, ``exp_sub``, ``astype``, reductions, NORM stores.

Each kernel below runs with ``call.FAST`` on and off on inputs full of NaN payloads, signed zeros,
subnormals and infinities; outputs and the whole launch report must be the same bytes, and the
fast run must really take the fast forms (counted).
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.backends.sim.vf import call
from pypto_pro.language import Vf as vf

from vf_kernels import ALL, to_mte3, to_v, vf_kernel

F32 = pl.DT_FP32


def specials(seed: int, n: int = 64) -> torch.Tensor:
    """fp32 bit patterns: random values with NaNs of both signs and several payloads, +-0, +-inf,
    subnormals mixed in."""
    g = np.random.default_rng(seed)
    x = (g.standard_normal(n) * 4).astype(np.float32)
    bits = x.view(np.uint32)
    special = np.array([0x7FC00000, 0xFFC00001, 0x7F800001, 0x7FBFFFFF, 0x00000000, 0x80000000,
                        0x7F800000, 0xFF800000, 0x00000001, 0x807FFFFF], np.uint32)
    at = g.choice(n, size=n // 4, replace=False)
    bits[at] = g.choice(special, size=at.size)
    return torch.from_numpy(bits.view(np.float32).reshape(1, n).copy())


def body_of(count: int, scale: float):
    """Lane-wise binary / scalar / merging ops, exp_sub, astype there and back, NORM stores, under a
    ``create_mask(ALL)`` predicate and an ``update_mask(count)`` one (all lanes when count >= 64)."""
    @pl.vector_function
    def body(ta, tb, to):
        full = vf.create_mask(pattern=ALL, dtype=F32)
        m = vf.update_mask(count, dtype=F32)
        x = vf.load_align(ta, 0)
        y = vf.load_align(tb, 0)
        s = vf.add(x, y, full)
        t = vf.mul(x, y, m)
        u = vf.max(s, t, m, mode=pl.MergeMode.MERGING)
        e = vf.exp_sub(x, y, m)
        w = vf.muls(u, scale, m)
        h = vf.astype(e, m, dtype=pl.DT_FP16)
        back = vf.astype(h, m, dtype=F32)
        rs = vf.reduce_sum(s, m)
        rm = vf.reduce_max(t, m)
        rs = vf.add(rs, rm, full)
        xb = vf.load_align(ta, 5, dist=pl.LoadDist.BRC_B32)
        rs = vf.or_(rs, xb, m)
        vf.store_align(to, s, full, 0)
        vf.store_align(to, t, full, 64)
        vf.store_align(to, u, m, 128)
        vf.store_align(to, e, full, 192)
        vf.store_align(to, w, m, 256)
        vf.store_align(to, back, full, 320)
        vf.store_align(to, rs, full, 384)
    return body


def _launch(count: int, scale: float, fast: bool):
    kernel = vf_kernel(body_of(count, scale), [(F32, [1, 64]), (F32, [1, 64])], (F32, [7, 64]), dynamic=True)
    a, b = specials(1), specials(2)
    out = torch.full((7, 64), 7.0)
    call.FAST = fast
    try:
        report = kernel[None, 1](a, b, out)
    finally:
        call.FAST = True
    rep = {f: v for f, v in dataclasses.asdict(report).items() if f != "trace_files"}
    return out.numpy().tobytes(), repr(rep)


@pytest.fixture
def fulls(monkeypatch):
    """Counts the steps of the plans that took a ``full`` form."""
    taken = []
    real = call._plan

    def counting(trace, runs, masks_of):
        plan = real(trace, runs, masks_of)
        taken.append(sum(f is not runs[k] for (f, _), (k, _) in zip(plan, trace)))
        return plan
    monkeypatch.setattr(call, "_plan", counting)
    return taken


@pytest.mark.parametrize("count,scale", [(64, 0.5), (200, -0.0), (37, 0.0), (1, -2.5)])
def test_fast_forms_give_the_slow_bytes(count, scale, fulls):
    fast = _launch(count, scale, True)
    assert sum(fulls) >= (10 if count >= 64 else 3), "the fast forms were not taken"
    slow = _launch(count, scale, False)
    assert fast == slow


def test_scalar_keys_tell_signed_zeros_and_bools_apart():
    keys = {call._scalar_key(x) for x in (0.0, -0.0, 1, True, 1.0)}
    assert len(keys) == 5
    assert call._scalar_key(float("nan")) != call._scalar_key(float("nan"))  # never a memo hit


def test_memo_distinguishes_signed_zero_scalars():
    """muls by 0.0 and by -0.0 in one body, with the scalar a launch argument: the memoized
    analysis of one must not answer the other (-x * 0.0 is -0.0, x * -0.0 flips the sign)."""
    @pl.vector_function
    def body(ta, to, k: pl.DT_FP32):
        full = vf.create_mask(pattern=ALL, dtype=F32)
        x = vf.load_align(ta, 0)
        y = vf.muls(x, k, full)
        vf.store_align(to, y, full)

    tt = pl.TileType(shape=[1, 64], dtype=F32, target_memory=pl.MemorySpace.Vec)
    T = pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], F32]

    @pl.jit()
    def kernel(a: T, out: T, k: pl.DT_FP32):
        ta = pl.make_tile(tt, addr=0, size=256)
        to = pl.make_tile(tt, addr=256, size=256)
        with pl.section_vector():
            pl.load(ta, a, [0, 0])
            to_v()
            body(ta, to, k)
            to_mte3()
            pl.store(out, to, [0, 0])

    a = torch.ones(1, 64)
    outs = []
    for k in (0.0, -0.0, 0.0):
        out = torch.full((1, 64), 7.0)
        kernel[None, 1](a, out, k)
        outs.append(np.signbit(out.numpy()).all())
    assert outs == [False, True, False]


@pytest.mark.parametrize("stride,count", [(1, 64), (2, 20), (3, 9), (0, 64)])
def test_data_block_store_strided_copy(stride, count):
    """vsstb: 8 blocks of 32 bytes, ``stride`` blocks apart, where the mask has a bit (one strided copy
    when the blocks are disjoint, block by block otherwise): the bytes of the block-by-block rule."""
    @pl.vector_function
    def body(ta, tb, to):
        m = vf.update_mask(count, dtype=F32)
        x = vf.load_align(ta, 0)
        vf.store_align(to, x, m, block_stride=stride, data_copy_mode=pl.DataCopyMode.DATA_BLOCK_COPY)

    kernel = vf_kernel(body, [(F32, [1, 64]), (F32, [1, 64])], (F32, [4, 64]), dynamic=True)
    a = specials(3)
    out = torch.full((4, 64), 7.0)
    kernel[None, 1](a, a, out)
    want = np.full(4 * 64 * 4, 0xFF, np.uint8)  # bytes no block reaches keep UB's poison
    reg = a.numpy().view(np.uint8).reshape(-1)
    for j in range(8):
        if j * 8 < count:  # block j holds lanes 8j .. 8j+7: stored when one of them is active
            at = j * stride * 32
            want[at:at + 32] = reg[32 * j:32 * j + 32]
    assert out.numpy().view(np.uint8).reshape(-1).tobytes() == want.tobytes()


def _definedness_kernel(leak: bool):
    """16 loaded elements in a 64-wide tile (lanes 16.. are padding: the definedness path runs); clean
    registers (a broadcast and what is computed from it only) beside dirty ones; stores a result that is
    defined (the masked-out padding) or, with ``leak``, one computed from padding."""
    @pl.vector_function
    def body(src, dst):
        m = vf.update_mask(16, dtype=F32)
        full = vf.create_mask(pattern=ALL, dtype=F32)
        x = vf.load_align(src, 0)
        c = vf.full(1.0, full, dtype=F32)
        c2 = vf.adds(c, 1.0, full)
        y = vf.add(x, c2, m)
        z = vf.mul(y, c2, full)
        w = vf.adds(x, 1.0, full)
        if leak:
            vf.store_align(dst, w, full)
        else:
            vf.store_align(dst, z, full)

    tt = pl.TileType(shape=[1, 64], dtype=F32, target_memory=pl.MemorySpace.Vec)

    @pl.jit()
    def k(a: pl.Tensor[[1, 16], F32], out: pl.Tensor[[1, 64], F32]):
        ta = pl.make_tile(tt, addr=0, size=256)
        to = pl.make_tile(tt, addr=512, size=256)
        with pl.section_vector():
            pl.set_validshape(ta, [1, 16])
            pl.load(ta, a, [0, 0])
            pl.set_validshape(ta, [1, 64])
            to_v()
            body(ta, to)
            to_mte3()
            pl.store(out, to, [0, 0])
    return k


@pytest.mark.parametrize("leak", [False, True])
def test_definedness_skips_clean_rules_with_the_same_outcome(leak):
    """The definedness run skips a pure rule whose operands are all defined: same outputs, same
    located error (or none) as running every rule."""
    outcomes = []
    for fast in (True, False):
        call.FAST = fast
        try:
            out = torch.full((1, 64), 9.0)
            try:
                _definedness_kernel(leak)[None, 1](torch.arange(16, dtype=torch.float32).reshape(1, 16), out)
                outcomes.append(("ok", out.numpy().tobytes()))
            except Exception as exc:  # noqa: BLE001 (the error itself is compared)
                outcomes.append((type(exc).__name__, str(exc)))
        finally:
            call.FAST = True
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0] == ("UninitializedReadError" if leak else "ok")
