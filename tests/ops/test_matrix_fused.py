"""The Cube's fused float64 epilogue (``ops/matrix.py`` ``FUSED``, issue 15) computes the unfused path's
bytes: the accumulator added in place, the result cast as it is stored into its (boxed) Acc window, no
scratch copy in an undeferred run. Whole launches with NaN payloads (signalling and quiet, both signs),
infinities, signed zeros and subnormals in the operands, the bias and the accumulator, compared with
``FUSED`` on and off: outputs and every report field."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.ops import matrix

from cube_kernels import load_and_move, matmul_tiles

T = 64
_SPECIAL16 = np.array([0x0000, 0x8000, 0x7C00, 0xFC00, 0x7C01, 0xFE3F, 0x7E00, 0x0001, 0x8005, 0x03FF],
                      np.uint16)


def _operand(rng: np.random.Generator, shape: tuple[int, int], frac: float) -> np.ndarray:
    """fp16 values with a fraction of the elements replaced by special bit patterns."""
    x = rng.standard_normal(shape).astype(np.float16)
    flat = x.reshape(-1).view(np.uint16)
    pick = rng.random(flat.size) < frac
    flat[pick] = _SPECIAL16[rng.integers(0, _SPECIAL16.size, int(pick.sum()))]
    return x


def _both(run) -> None:
    got = []
    for fused in (True, False):
        old = matrix.FUSED
        matrix.FUSED = fused
        try:
            got.append(run())
        finally:
            matrix.FUSED = old
    assert got[0] == got[1]


@pytest.mark.parametrize("arch", ["a2a3", "a5"])
@pytest.mark.parametrize("out_dtype", [pl.DT_FP32, pl.DT_FP16], ids=lambda d: d.name)
@pytest.mark.parametrize("check", ["raise", "warn"])
def test_gemm_launch_is_the_same_fused(arch, out_dtype, check):
    """The example GEMM (matmul then matmul_acc chains into an NZ Acc, edge tiles with partial boxes) on
    operands with specials: the same outputs and report fused or not, undeferred (raise) and deferred."""
    from example_modules import load_example
    mm = load_example("matmul")
    rng = np.random.default_rng(11)
    a, b = _operand(rng, (200, 330), 0.02), _operand(rng, (330, 150), 0.02)

    def run():
        kern = mm.make_matmul(arch, out_dtype).options(check=check)
        c = np.zeros((200, 150), out_dtype.np_dtype)
        report = kern[None, 3](a, b, c)
        return c.tobytes(), dataclasses.asdict(report)
    _both(run)


def test_bias_matmul_is_the_same_fused():
    """``pl.matmul`` with a bias row (broadcast over the rows by the in-place add), specials everywhere."""
    def kernel(bias: pl.Tensor[[1, T], pl.DT_FP16], a: pl.Tensor[[T, T], pl.DT_FP16],
               b: pl.Tensor[[T, T], pl.DT_FP16], out: pl.Tensor[[T, T], pl.DT_FP32]):
        c1 = pl.make_tile_group(type=pl.TileType([1, T], pl.DT_FP16, pl.MemorySpace.Mat), addrs=0x10000,
                                mutex_ids=[0])[0]
        bt = pl.make_tile_group(type=pl.TileType([1, T], pl.DT_FP32, pl.MemorySpace.Bias), addrs=0,
                                mutex_ids=[1])[0]
        tiles = a1, b1, xa, xb, acc = matmul_tiles(T, ids=(2, 3, 4, 5, 6))
        with pl.section_cube():
            pl.load(c1, bias, [0, 0])
            pl.move(bt, c1)
            load_and_move(tiles, a, b)
            pl.matmul(acc, xa, xb, bt)
            pl.store(out, acc, [0, 0])
    rng = np.random.default_rng(12)
    bias, a, b = _operand(rng, (1, T), 0.3), _operand(rng, (T, T), 0.05), _operand(rng, (T, T), 0.05)

    def run():
        out = np.zeros((T, T), np.float32)
        report = pl.jit(kernel, auto_mutex=True, arch="a5")(bias, a, b, out)
        return out.tobytes(), dataclasses.asdict(report)
    _both(run)


def test_nan_payloads_meet_in_the_accumulator():
    """Two NaNs of different payloads meet in the accumulator's add (a NaN row of A against a NaN column
    of B, then again with other payloads): which payload the in-place add keeps is the unfused one."""
    from example_modules import load_example
    mm = load_example("matmul")
    a = np.ones((128, 512), np.float16)
    b = np.ones((512, 128), np.float16)
    a.view(np.uint16)[3, 10] = 0x7C01   # signalling NaN in K step 0
    a.view(np.uint16)[3, 300] = 0xFE3F  # another payload, negative, in a later K chunk
    b.view(np.uint16)[70, 5] = 0x7D55
    b.view(np.uint16)[400, 9] = 0x8000  # -0
    a[7, :] = -0.0
    b[:, 11] = np.float16(6e-8)         # subnormal

    def run():
        c = np.zeros((128, 128), np.float32)
        report = mm.make_matmul("a2a3")[None, 1](a, b, c)
        return c.tobytes(), dataclasses.asdict(report)
    _both(run)
    c = np.zeros((128, 128), np.float32)
    mm.make_matmul("a2a3")[None, 1](a, b, c)
    assert np.isnan(c[3]).all() and np.isnan(c[:, 5]).all()
