"""The Cube's bound float64 product (``ops/matrix.py`` ``BOUND``, ``ops/matrix_bound.py``, issue 15) computes
the per-call fused path's bytes: box views found at dispatch, pooled float64 scratch, the same casts,
``dgemm``, in-place add and store. Whole launches with NaN payloads (signalling and quiet, both signs),
infinities, signed zeros and subnormals, compared with ``BOUND`` on and off: outputs and every report
field; and the bound path is really taken (a count of the records it binds)."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.ops import matrix, matrix_bound

from cube_kernels import matmul_tiles
from fast_switch import count_taken, run_both

T = 64
_SPECIAL16 = np.array([0x0000, 0x8000, 0x7C00, 0xFC00, 0x7C01, 0xFE3F, 0x7E00, 0x0001, 0x8005, 0x03FF],
                      np.uint16)
_SPECIAL_BF16 = np.array([0x0000, 0x8000, 0x7F80, 0xFF80, 0x7F81, 0xFFC1, 0x7FC0, 0x0001, 0x8005, 0x007F],
                         np.uint16)


def _operand(rng: np.random.Generator, shape: tuple[int, int], frac: float, dtype=np.float16) -> np.ndarray:
    """Values of ``dtype`` (fp16 or bf16) with a fraction of the elements replaced by special bit patterns."""
    x = rng.standard_normal(shape).astype(dtype)
    flat = x.reshape(-1).view(np.uint16)
    specials = _SPECIAL16 if dtype == np.float16 else _SPECIAL_BF16
    pick = rng.random(flat.size) < frac
    flat[pick] = specials[rng.integers(0, specials.size, int(pick.sum()))]
    return x


@pytest.fixture
def bound_count(monkeypatch):
    """How many records the bound path binds (``bind`` returning a compute)."""
    return count_taken(monkeypatch, matrix_bound, "bind")


def _both(run, monkeypatch) -> list:
    return run_both(run, monkeypatch, matrix, "BOUND")


@pytest.mark.parametrize("arch", ["a2a3", "a5"])
@pytest.mark.parametrize("out_dtype", [pl.DT_FP32, pl.DT_FP16], ids=lambda d: d.name)
@pytest.mark.parametrize("check", ["raise", "warn"])
def test_gemm_launch_is_the_same_bound(arch, out_dtype, check, monkeypatch, bound_count):
    """The example GEMM (matmul then matmul_acc chains into an NZ Acc; edge tiles whose partial boxes keep
    the per-call path) on operands with specials: the same outputs and report bound or not, undeferred
    (raise) and deferred (warn)."""
    from example_modules import load_example
    mm = load_example("matmul")
    rng = np.random.default_rng(21)
    a, b = _operand(rng, (300, 530), 0.02), _operand(rng, (530, 260), 0.02)

    def run():
        kern = mm.make_matmul(arch, out_dtype).options(check=check)
        c = np.zeros((300, 260), out_dtype.np_dtype)
        report = kern[None, 3](a, b, c)
        return c.tobytes(), dataclasses.asdict(report)
    _both(run, monkeypatch)
    assert bound_count[0] > 0


@pytest.mark.parametrize("dt", [pl.DT_FP16, pl.DT_BF16], ids=lambda d: d.name)
@pytest.mark.parametrize("arch", ["a2a3", "a5"])
def test_matmul_then_acc_in_place(dt, arch, monkeypatch, bound_count):
    """``acc = a @ b`` then ``acc = acc + a @ b`` twice (dst is the accumulator: it is read before it is
    stored), fp16 and bf16 operands full of specials, on both archs' layouts."""
    def kernel(a: pl.Tensor[[T, T], dt], b: pl.Tensor[[T, T], dt], out: pl.Tensor[[T, T], pl.DT_FP32]):
        a1, b1, xa, xb, acc = matmul_tiles(T, dt, dt)
        with pl.section_cube():
            pl.load(a1, a, [0, 0])
            pl.load(b1, b, [0, 0])
            pl.move(xa, a1)
            pl.move(xb, b1)
            pl.matmul(acc, xa, xb)
            pl.matmul_acc(acc, acc, xa, xb)
            pl.matmul_acc(acc, acc, xa, xb)
            pl.store(out, acc, [0, 0])
    rng = np.random.default_rng(22)
    a, b = _operand(rng, (T, T), 0.05, dt.np_dtype), _operand(rng, (T, T), 0.05, dt.np_dtype)

    def run():
        out = np.zeros((T, T), np.float32)
        report = pl.jit(kernel, auto_mutex=True, arch=arch)(a, b, out)
        return out.tobytes(), dataclasses.asdict(report)
    got = _both(run, monkeypatch)
    assert bound_count[0] > 0
    assert np.isnan(np.frombuffer(got[0][0], np.float32)).any()  # the specials reached the output


def test_nan_payloads_meet_in_the_accumulator(monkeypatch, bound_count):
    """Two NaNs of different payloads meet in the in-place add: the payload kept is the per-call path's."""
    from example_modules import load_example
    mm = load_example("matmul")
    a = np.ones((128, 512), np.float16)
    b = np.ones((512, 128), np.float16)
    a.view(np.uint16)[3, 10] = 0x7C01
    a.view(np.uint16)[3, 300] = 0xFE3F
    b.view(np.uint16)[70, 5] = 0x7D55
    b.view(np.uint16)[400, 9] = 0x8000
    a[7, :] = -0.0
    b[:, 11] = np.float16(6e-8)

    def run():
        c = np.zeros((128, 128), np.float32)
        report = mm.make_matmul("a2a3")[None, 1](a, b, c)
        return c.tobytes(), dataclasses.asdict(report)
    _both(run, monkeypatch)
    assert bound_count[0] > 0


def test_a_busy_scratch_takes_the_per_call_path(monkeypatch):
    """A bound run that finds the scratch in use computes through the per-call path (the same bytes)."""
    from example_modules import load_example
    mm = load_example("matmul")
    rng = np.random.default_rng(23)
    a, b = _operand(rng, (256, 256), 0.01), _operand(rng, (256, 256), 0.01)

    def run():
        c = np.zeros((256, 256), np.float32)
        mm.make_matmul("a2a3")[None, 2](a, b, c)
        return c.tobytes()
    free = run()
    monkeypatch.setattr(matrix_bound, "_BUSY", [True])  # the binds made now see it busy on every run
    assert run() == free


def test_views_it_does_not_bind():
    """Partial-box windows, shape mismatches and other objects keep the per-call path (None)."""
    a = np.zeros((16, 8))
    assert matrix_bound.bind(a, np.zeros((8, 4)), None, np.zeros((16, 4)), 16, 8, 4, lambda out: None) is not None
    assert matrix_bound.bind(a, np.zeros((8, 4)), None, np.zeros((16, 5)), 16, 8, 4, lambda out: None) is None
    assert matrix_bound.bind([[0.0]], np.zeros((8, 4)), None, np.zeros((16, 4)), 16, 8, 4, lambda out: None) is None
    assert matrix_bound.bind(a, np.zeros((8, 4)), np.zeros((1, 4)), np.zeros((16, 4)), 16, 8, 4,
                             lambda out: None) is None  # a bias row (broadcast): the per-call path
