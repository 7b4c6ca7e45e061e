"""Groups bound to their arena rows (``batch.BIND``; ``ops/vf/lanes.py`` ``_direct``: the ufunc straight into
the destination rows) give the bytes of the unbound group kernels and of the one-by-one run: max / add /
mul chains and scalar forms over NaN payloads in both operands, signed zeros, infinities, subnormals,
int32 wrap-around, fp16 registers."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.backends.sim.vf import batch, bind
from pypto_pro.language import Vf as vf
from pypto_pro.ops.vf import lanes

from test_vf_batch import _run, softmax_body, specials
from vf_kernels import vf_kernel

F32, F16, I32 = pl.DT_FP32, pl.DT_FP16, pl.DT_INT32
P = pl.MaskPattern


def chains_body(scale: float):
    @pl.vector_function
    def body(ta, tb, to):
        full = vf.create_mask(pattern=P.ALL, dtype=F32)
        m0 = vf.full(-1.0)
        m1 = vf.full(-1.0)
        s0 = vf.full(0.0, full)
        s1 = vf.full(0.0, full)
        for i in pl.range(0, 4):
            x = vf.load_align(ta, i * 128)
            y = vf.load_align(ta, i * 128 + 64)
            z = vf.load_align(tb, i * 64)
            m0 = vf.max(m0, x, full)
            m1 = vf.min(m1, y, full)
            s0 = vf.add(x, s0, full)
            s1 = vf.mul(s1, z, full)
            w = vf.muls(z, scale, full)
            w = vf.sub(w, x, full)
            vf.store_align(to, w, full, (4 + i) * 64)
        vf.store_align(to, m0, full, 0)
        vf.store_align(to, m1, full, 64)
        vf.store_align(to, s0, full, 128)
        vf.store_align(to, s1, full, 192)
    return body


def _both(kernel_of, args, out_shape, monkeypatch):
    bound = []
    real = lanes._direct

    def counting(*a):
        got = real(*a)
        bound.append(got is not None)
        return got
    monkeypatch.setattr(lanes, "_direct", counting)
    on, ran = _run(kernel_of(), args, torch.full(out_shape, 5.0), True)
    monkeypatch.setattr(batch, "BIND", False)
    off, ran_off = _run(kernel_of(), args, torch.full(out_shape, 5.0), True)
    monkeypatch.setattr(batch, "BIND", True)
    one, _ = _run(kernel_of(), args, torch.full(out_shape, 5.0), False)
    return on, off, one, ran, ran_off, bound


@pytest.mark.parametrize("scale", [0.5, -0.0, float("inf"), float("nan"), 1e-40])
def test_bound_groups_give_the_unbound_bytes(scale, monkeypatch):
    def kernel():
        return vf_kernel(chains_body(scale), [(F32, [4, 128]), (F32, [4, 64])], (F32, [8, 64]), dynamic=True)
    g = np.random.default_rng(3)
    a, b = specials(21, (4, 128)), specials(22, (4, 64))
    nan = a.numpy().view(np.uint32)
    nan[:, ::3] = g.choice([0x7FC00000, 0xFFC00001, 0x7F800001, 0x7FA00000], size=nan[:, ::3].shape)  # many NaN pairs
    gathering = []
    real = bind.bound_step

    def spy(*args):
        got = real(*args)
        gathering.append(got is not None and got.__name__ == "step")  # gathers scattered operand rows
        return got
    monkeypatch.setattr(batch, "bound_step", spy)
    on, off, one, ran, ran_off, bound = _both(kernel, (a, b), (8, 64), monkeypatch)
    assert ran and ran_off and any(bound) and any(gathering), "the bound paths were not taken"
    assert on[0] != "SimulationError" and on == off == one


def test_bound_groups_in_the_softmax_body(monkeypatch):
    def kernel():
        return vf_kernel(softmax_body(37, 0.5), [(F32, [8, 64]), (F32, [8, 64])], (F32, [24, 64]), dynamic=True)
    on, off, one, ran, _, bound = _both(kernel, (specials(1, (8, 64)), specials(2, (8, 64))), (24, 64), monkeypatch)
    assert ran and any(bound) and on == off == one


def int_body():
    @pl.vector_function
    def body(ta, to):
        full = vf.create_mask(pattern=P.ALL, dtype=I32)
        acc = vf.full(2**31 - 7, full, dtype=I32)
        for i in pl.range(0, 4):
            x = vf.load_align(ta, i * 64, dtype=I32)
            acc = vf.add(acc, x, full)
            y = vf.adds(x, 2**31 - 1, full)
            vf.store_align(to, y, full, (1 + i) * 64)
        vf.store_align(to, acc, full, 0)
    return body


def test_bound_int_groups_wrap_as_unbound(monkeypatch):
    x = torch.from_numpy(np.random.default_rng(5).integers(-2**31, 2**31, (4, 64), dtype=np.int64)
                         .astype(np.int32).view(np.float32))

    def kernel():
        return vf_kernel(int_body(), [(F32, [4, 64])], (F32, [5, 64]), dynamic=True)
    on, off, one, ran, _, _ = _both(kernel, (x,), (5, 64), monkeypatch)
    assert ran and on == off == one and on[0] != "SimulationError"


def zeros_body():
    @pl.vector_function
    def body(ta, tb, to):
        full = vf.create_mask(pattern=P.ALL, dtype=F32)
        m0 = vf.load_align(tb, 0)
        m1 = vf.load_align(tb, 0)
        for i in pl.range(0, 4):
            x = vf.load_align(ta, i * 128)
            y = vf.load_align(ta, i * 128 + 64)
            m0 = vf.max(m0, x, full)
            m1 = vf.min(m1, y, full)
            w = vf.max(x, y, full)
            vf.store_align(to, w, full, (2 + i) * 64)
        vf.store_align(to, m0, full, 0)
        vf.store_align(to, m1, full, 64)
    return body


def test_bound_max_min_give_the_pages_zero_signs(monkeypatch):
    """max / min chains (scan form) and groups (bound form) over +0 / -0 only: the bound, unbound and
    one-by-one runs equal each other and the pages' signs (max -0 only of two -0, min -0 of any -0)."""
    g = np.random.default_rng(9)
    a = np.where(g.random((4, 128)) < 0.5, np.float32(-0.0), np.float32(0.0)).astype(np.float32)
    b = np.where(g.random((1, 64)) < 0.5, np.float32(-0.0), np.float32(0.0)).astype(np.float32)

    def kernel():
        return vf_kernel(zeros_body(), [(F32, [4, 128]), (F32, [1, 64])], (F32, [6, 64]), dynamic=True)
    on, off, one, ran, _, bound = _both(kernel, (torch.from_numpy(a), torch.from_numpy(b)), (6, 64), monkeypatch)
    assert ran and any(bound) and on[0] != "SimulationError" and on == off == one
    got = np.frombuffer(on[0], np.float32).reshape(6, 64)
    neg = np.signbit
    want_max = neg(b[0]) & neg(a[:, :64]).all(axis=0)
    want_min = neg(b[0]) | neg(a[:, 64:]).any(axis=0)
    assert (neg(got[0]) == want_max).all() and (neg(got[1]) == want_min).all()
    assert (neg(got[2:]) == (neg(a[:, :64]) & neg(a[:, 64:]))).all()
    assert (got == 0).all()
