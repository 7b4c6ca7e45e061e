"""Batched ``pset`` / ``plt`` / ``vdup`` (ops/vf/batched_masks.py) give the bytes of the one-by-one run:
every mask pattern and granularity, ``plt`` counts from negative (all lanes: the count is a uint32) to
past the lanes, broadcasts of NaN payloads, signed zeros, infinities, subnormals and values fp16 cannot
hold, unmasked, MERGING and ZEROING under partial predicates, fp32 / fp16 / int32 registers."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.language import Vf as vf

from test_vf_batch import _run, specials
from vf_kernels import vf_kernel

F32, F16, I32 = pl.DT_FP32, pl.DT_FP16, pl.DT_INT32
MERGING = pl.MergeMode.MERGING
P = pl.MaskPattern


def masks_body(value: float, ivalue: int):
    @pl.vector_function
    def body(ta, to):
        full = vf.create_mask(pattern=P.ALL, dtype=F32)
        for i in pl.range(0, 4):  # four of each per level: groups of their own
            m = vf.update_mask(i * 23 - 5, dtype=F32)  # -5 is 2**32 - 5: every lane
            h = vf.update_mask(i * 50 + 1, dtype=F16)
            q = vf.create_mask(pattern=P.M3, dtype=F16)
            r = vf.create_mask(pattern=P.H, dtype=F32)
            x = vf.load_align(ta, i * 64)
            a = vf.full(value, m, dtype=F32)                       # ZEROING under m
            b = vf.full(value, r, dtype=F32, mode=MERGING)         # MERGING into the loaded-over register
            b = vf.add(b, x, full)
            c = vf.full(value, dtype=F16)                          # unmasked, rounded to fp16
            c2 = vf.full(-value, h, dtype=F16, mode=MERGING)
            d = vf.full(ivalue, q, dtype=I32)
            e = vf.select(x, a, r)
            vf.store_align(to, e, full, i * 64)
            vf.store_align(to, b, m, (4 + i) * 64)
            vf.store_align(to, c, h, 8 * 64 + i * 128)
            vf.store_align(to, c2, q, 8 * 64 + i * 128 + 64)
            vf.store_align(to, d, full, (16 + i) * 64)
    return body


VALUES = [(float("nan"), 7), (-0.0, -1), (math.inf, 2**31 - 1), (1e-45, 0), (7.0e4, -(2**31)), (-3.3e38, 12345)]


@pytest.mark.parametrize("value,ivalue", VALUES)
def test_batched_masks_and_broadcasts_give_the_one_by_one_bytes(value, ivalue):
    def kernel():  # a kernel of its own per run: its registers start as poison (MERGING keeps some of it)
        return vf_kernel(masks_body(value, ivalue), [(F32, [4, 64])], (F32, [20, 64]), dynamic=True)
    args = (specials(11, (4, 64)),)
    on, ran = _run(kernel(), args, torch.full((20, 64), 5.0), True)
    off, ran_off = _run(kernel(), args, torch.full((20, 64), 5.0), False)
    assert ran and not ran_off and on[0] != "SimulationError" and on == off
    # 4 x 15 instructions + 1 in 33 steps; with pset / plt / vdup one at a time it was not worth batching
    assert ran[0] <= 33


def test_the_batched_forms_are_taken(monkeypatch):
    from pypto_pro.ops.vf import batched_masks
    made = []
    for name in ("pset", "plt", "vdup"):
        real = getattr(batched_masks, name)

        def spy(run, *a, _real=real, _name=name):
            _real(run, *a)
            make = run.batched.make

            def counted(bases, scs, size):
                made.append((_name, len(scs)))
                return make(bases, scs, size)
            run.batched.make = counted
        monkeypatch.setattr(batched_masks, name, spy)
    kernel = vf_kernel(masks_body(1.5, 3), [(F32, [4, 64])], (F32, [20, 64]), dynamic=True)
    on, ran = _run(kernel, (specials(12, (4, 64)),), torch.full((20, 64), 5.0), True)
    assert {n for n, k in made if k == 4} == {"pset", "plt", "vdup"}
    assert ran and np.isfinite(np.frombuffer(on[0], np.float32)).any()
    for name in ("pset", "plt", "vdup"):  # without them the trace is not worth batching
        monkeypatch.setattr(batched_masks, name, lambda *a: None)
    kernel = vf_kernel(masks_body(1.5, 3), [(F32, [4, 64])], (F32, [20, 64]), dynamic=True)
    _, ran = _run(kernel, (specials(12, (4, 64)),), torch.full((20, 64), 5.0), True)
    assert ran == []
