"""End-to-end checks of the Cube examples (examples/matmul.py, examples/matmul_softmax.py) and of
small custom Cube kernels (int8 matmul, transposed operand move, bias) against NumPy, on both archs.

Shapes are not multiples of the tiles (partial M / N edge tiles, K chunks and 64-deep K steps past
the edge), and block counts are below and above the number of output tiles (blocks loop over
several tiles and the double-buffer rings wrap; or some blocks get no work at all; 25+ blocks need
two waves on the 24 modeled cores). Outputs start as NaN (or a sentinel) so that an element the
kernel never writes fails the comparison.

Tolerances.
* fp16 x fp16 -> fp32: every product of two fp16 values is exact in fp32 (11 + 11 significant bits
  <= 24), so the only error is the fp32 summation. The simulator sums each 64-deep K step with
  NumPy (<= 63 roundings in any order) and adds each step into the accumulator (ceil(K / 64) - 1
  more roundings), so to first order |c - exact| <= (63 + ceil(K / 64)) * 2^-24 * sum_k |a||b|:
  at most 72 * 6e-8 = 4.3e-6 relative for K <= 520. We assert 1e-5 * (|A| @ |B|) against a
  float64 reference: a rigorous bound with a 2x margin (typical errors are ~sqrt(K) u, 1e-6).
* fp16 output: the fixpipe rounds the fp32 accumulator once to fp16 (round to nearest even), so
  the fp16 result must equal the fp32 kernel's result rounded to fp16 *exactly*, and lie within one
  fp16 ulp of the exact product (plus the fp32 bound above, which matters only where cancellation
  makes the result much smaller than sum |a||b|).
* int8 x int8 -> int32: exact (integer accumulation; no overflow at these K).
* matmul_softmax: logits are fp32 (errors ~1e-5 absolute, see above), softmax in fp32, one final
  rounding to fp16: the output is within 1 fp16 ulp of the float64 reference rounded to fp16 (the
  same criterion as tests/examples/test_examples.py: rtol 2^-10, atol 2^-24 and <= 1 ulp apart).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import CompileError, UninitializedReadError
from pypto_pro.testing import max_ulp_distance
from example_modules import load_example

ARCHS = ("a5", "a2a3")
DYN = pl.DYNAMIC


matmul_example = load_example("matmul")
mms_example = load_example("matmul_softmax")

_KERNELS: dict = {}


def cached(key, make):
    """One jit kernel per (example, arch, ...): compiled once per test session."""
    if key not in _KERNELS:
        _KERNELS[key] = make()
    return _KERNELS[key]


def matmul_kernel(arch: str, out):
    return cached(("matmul", arch, out.name), lambda: matmul_example.make_matmul(arch, out))


def mms_kernel(arch: str):
    return cached(("mms", arch), lambda: mms_example.make_matmul_softmax(arch))


def fp32_bound(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rigorous (first-order) bound of the fp32 accumulation error: see the module docstring."""
    return 1e-5 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))


# =================================================================================================
# examples/matmul.py
# =================================================================================================

TM, TN = matmul_example.TM, matmul_example.TN

MATMUL_CASES = [  # (M, N, K, block counts): one below / at and one above the number of output tiles
    ((1, 1, 1), (1, 3)),            # 1 tile; 2 blocks idle
    ((17, 33, 65), (1, 25)),        # 1 tile; 25 blocks = two waves on 24 cores, 24 idle
    ((300, 200, 520), (4, 8)),      # 3 x 2 tiles; K = 256 + 256 + 8: 3 of the last chunk's 4 steps are empty
    ((128, 128, 256), (1, 2)),      # exactly one tile and one K chunk: no edges at all
    ((129, 257, 300), (5, 7)),      # 2 x 3 tiles with 1-row / 1-column edge tiles; K = 256 + 44
]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("mnk,blocks", [pytest.param(mnk, b, id=f"{mnk[0]}x{mnk[1]}x{mnk[2]}-b{b}")
                                        for mnk, bs in MATMUL_CASES for b in bs])
def test_matmul(arch, mnk, blocks):
    m, n, k = mnk
    rng = np.random.default_rng(m * 31 + n * 7 + k + blocks)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    bound = fp32_bound(a, b)

    c32 = np.full((m, n), np.nan, np.float32)
    report = matmul_kernel(arch, pl.DT_FP32)[None, blocks](a, b, c32)
    assert report.block_num == blocks and report.arch == arch and not report.faults
    assert np.isfinite(c32).all(), "output elements not written"
    err = np.abs(c32.astype(np.float64) - exact)
    assert (err <= bound).all(), f"max error {err.max():.3g}, worst ratio {(err / bound).max():.3g}"

    c16 = np.full((m, n), np.nan, np.float16)
    matmul_kernel(arch, pl.DT_FP16)[None, blocks](a, b, c16)
    assert np.isfinite(c16).all(), "output elements not written"
    # the fixpipe rounds the same fp32 accumulator once, to nearest even
    np.testing.assert_array_equal(c16, c32.astype(np.float16))
    ulp = np.spacing(np.abs(exact).astype(np.float16)).astype(np.float64)
    err16 = np.abs(c16.astype(np.float64) - exact)
    assert (err16 <= ulp + bound).all(), f"fp16 error {(err16 - ulp - bound).max():.3g} over 1 ulp + bound"
    if m * n > 1:  # away from cancellation the result is exactly the neighbour-or-equal of fp16(exact)
        far = bound < 0.25 * ulp
        assert far.any()
        assert max_ulp_distance(c16[far], exact[far].astype(np.float16)) <= 1


def test_matmul_zero_and_integer_inputs_exact():
    """Small integers: every partial sum is an integer below 2^24, so fp32 accumulation is exact."""
    rng = np.random.default_rng(5)
    m, n, k = 130, 140, 270
    a = rng.integers(-4, 5, (m, k)).astype(np.float16)
    b = rng.integers(-4, 5, (k, n)).astype(np.float16)
    b[:, 3] = 0
    for arch in ARCHS:
        c = np.full((m, n), np.nan, np.float32)
        matmul_kernel(arch, pl.DT_FP32)[None, 3](a, b, c)
        np.testing.assert_array_equal(c, (a.astype(np.int64) @ b.astype(np.int64)).astype(np.float32))
        assert (c[:, 3] == 0).all()


@pytest.mark.parametrize("arch", ARCHS)
def test_matmul_report_is_cube_bound_work(arch):
    m, n, k = 300, 200, 520
    rng = np.random.default_rng(1)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.zeros((m, n), np.float32)
    report = matmul_kernel(arch, pl.DT_FP32)[None, 4](a, b, c)
    assert report.timed and report.cycles > 0
    assert "Cube" in report.roofline.bounds_us and report.roofline.bounds_us["Cube"] > 0
    assert report.pipe_busy.get("AIC.M", 0) > 0
    assert report.pipe_busy.get("AIC.MTE1", 0) > 0 and report.pipe_busy.get("AIC.FIX", 0) > 0
    # a pure Cube kernel: the Vector cores of each block do nothing
    assert not any(p.startswith("AIV") for p in report.pipe_busy)
    # FLOPs: 2 M N K exactly (edge tiles only multiply their valid region)
    assert report.flops == 2 * m * n * k
    assert report.path_bytes.get("Acc->GM", 0) == m * n * 4


# =================================================================================================
# Custom Cube kernels: int8, transposed move, bias
# =================================================================================================

I8 = 64  # int8 tiles: 64 x 64 (Mat/Left: cols multiple of 32 bytes; Right: K multiple of 32)


def int8_matmul(a: pl.Tensor[[DYN, DYN], pl.DT_INT8],
                b: pl.Tensor[[DYN, DYN], pl.DT_INT8],
                c: pl.Tensor[[DYN, DYN], pl.DT_INT32]):
    a_l1 = pl.make_tile_group(type=pl.TileType([I8, I8], pl.DT_INT8, pl.MemorySpace.Mat), addrs=0x0000,
                              mutex_ids=[0, 1])
    b_l1 = pl.make_tile_group(type=pl.TileType([I8, I8], pl.DT_INT8, pl.MemorySpace.Mat), addrs=0x4000,
                              mutex_ids=[2, 3])
    # single-slot groups: plain pl.make_tile tiles get no automatic ordering (only mutex_ids slots do)
    a_l0 = pl.make_tile_group(type=pl.TileType([I8, I8], pl.DT_INT8, pl.MemorySpace.Left), addrs=[0], mutex_ids=[4])[0]
    b_l0 = pl.make_tile_group(type=pl.TileType([I8, I8], pl.DT_INT8, pl.MemorySpace.Right), addrs=[0], mutex_ids=[5])[0]
    acc = pl.make_tile_group(type=pl.TileType([I8, I8], pl.DT_INT32, pl.MemorySpace.Acc), addrs=[0], mutex_ids=[6])[0]
    with pl.section_cube():
        m, k, n = a.shape[0], a.shape[1], b.shape[1]
        m_tiles = (m + I8 - 1) // I8
        n_tiles = (n + I8 - 1) // I8
        k_tiles = (k + I8 - 1) // I8
        for t in pl.range(pl.get_block_idx(), m_tiles * n_tiles, pl.get_block_num()):
            i = t // n_tiles
            j = t % n_tiles
            rows, cols = min(I8, m - i * I8), min(I8, n - j * I8)
            pl.set_validshape(acc, [rows, cols])
            for kk in pl.range(0, k_tiles, 1):
                kv = min(I8, k - kk * I8)
                la = a_l1.next()
                lb = b_l1.next()
                pl.set_validshape(la, [rows, kv])
                pl.set_validshape(lb, [kv, cols])
                pl.set_validshape(a_l0, [rows, kv])
                pl.set_validshape(b_l0, [kv, cols])
                pl.load_tile(la, a, [i, kk])
                pl.load_tile(lb, b, [kk, j])
                pl.move(a_l0, la)
                pl.move(b_l0, lb)
                if kk == 0:
                    pl.matmul(acc, a_l0, b_l0)
                else:
                    pl.matmul_acc(acc, acc, a_l0, b_l0)
            pl.store_tile(c, acc, [i, j])


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("m,n,k,blocks", [(1, 1, 1, 1), (70, 50, 130, 2), (130, 150, 100, 1), (128, 192, 200, 7)])
def test_int8_matmul_exact(arch, m, n, k, blocks):
    kern = cached(("int8", arch), lambda: pl.jit(int8_matmul, arch=arch))
    rng = np.random.default_rng(m + n + k)
    a = rng.integers(-128, 128, (m, k), dtype=np.int8)
    b = rng.integers(-128, 128, (k, n), dtype=np.int8)
    a[0, :] = -128   # extreme row / column: |sum| up to K * 2^14
    b[:, 0] = -128
    c = np.full((m, n), -7777777, np.int32)
    kern[None, blocks](a, b, c)
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64))


TT_M, TT_N, TT_K, TT_KSTEP = 64, 64, 64, 32


def matmul_bt(a: pl.Tensor[[DYN, DYN], pl.DT_FP16],
              bt: pl.Tensor[[DYN, DYN], pl.DT_FP16],
              c: pl.Tensor[[DYN, DYN], pl.DT_FP32]):
    """c = a @ bt^T with bt stored [N, K]: the Right operand is moved out of L1 transposed."""
    a_l1 = pl.make_tile_group(type=pl.TileType([TT_M, TT_K], pl.DT_FP16, pl.MemorySpace.Mat), addrs=[0x0000],
                              mutex_ids=[4])[0]
    b_l1 = pl.make_tile_group(type=pl.TileType([TT_N, TT_K], pl.DT_FP16, pl.MemorySpace.Mat), addrs=[0x4000],
                              mutex_ids=[5])[0]
    a_l0 = pl.make_tile_group(type=pl.TileType([TT_M, TT_KSTEP], pl.DT_FP16, pl.MemorySpace.Left), addrs=0,
                              mutex_ids=[0, 1])
    b_l0 = pl.make_tile_group(type=pl.TileType([TT_KSTEP, TT_N], pl.DT_FP16, pl.MemorySpace.Right), addrs=0,
                              mutex_ids=[2, 3])
    acc = pl.make_tile_group(type=pl.TileType([TT_M, TT_N], pl.DT_FP32, pl.MemorySpace.Acc), addrs=[0],
                             mutex_ids=[6])[0]
    with pl.section_cube():
        m, k, n = a.shape[0], a.shape[1], bt.shape[0]
        m_tiles = (m + TT_M - 1) // TT_M
        n_tiles = (n + TT_N - 1) // TT_N
        k_tiles = (k + TT_K - 1) // TT_K
        for t in pl.range(pl.get_block_idx(), m_tiles * n_tiles, pl.get_block_num()):
            i = t // n_tiles
            j = t % n_tiles
            rows, cols = min(TT_M, m - i * TT_M), min(TT_N, n - j * TT_N)
            pl.set_validshape(acc, [rows, cols])
            for kk in pl.range(0, k_tiles, 1):
                kv = min(TT_K, k - kk * TT_K)
                pl.set_validshape(a_l1, [rows, kv])
                pl.set_validshape(b_l1, [cols, kv])
                pl.load_tile(a_l1, a, [i, kk])
                pl.load_tile(b_l1, bt, [j, kk])
                for s in pl.range(0, (kv + TT_KSTEP - 1) // TT_KSTEP, 1):
                    ks = min(TT_KSTEP, kv - s * TT_KSTEP)
                    xa = a_l0.next()
                    xb = b_l0.next()
                    pl.set_validshape(xa, [rows, ks])
                    pl.set_validshape(xb, [ks, cols])
                    pl.move(xa, a_l1, offset=[0, s * TT_KSTEP])
                    pl.move(xb, b_l1, offset=[0, s * TT_KSTEP], transpose=True)  # [N, Kstep] -> [Kstep, N]
                    if s == 0 and kk == 0:           # the first product of the tile starts the sum
                        pl.matmul(acc, xa, xb)
                    else:
                        pl.matmul_acc(acc, acc, xa, xb)
            pl.store_tile(c, acc, [i, j])


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("m,n,k,blocks", [(64, 64, 64, 1), (50, 70, 90, 2), (130, 20, 200, 5)])
def test_transposed_move_matmul(arch, m, n, k, blocks):
    kern = cached(("bt", arch), lambda: pl.jit(matmul_bt, arch=arch))
    rng = np.random.default_rng(m * n + k)
    a = rng.standard_normal((m, k)).astype(np.float16)
    bt = rng.standard_normal((n, k)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float32)
    kern[None, blocks](a, bt, c)
    exact = a.astype(np.float64) @ bt.astype(np.float64).T
    assert np.isfinite(c).all()
    err = np.abs(c - exact)
    assert (err <= fp32_bound(a, bt.T)).all(), f"max error {err.max():.3g}"
    # not the untransposed product (guards against a move that ignores transpose=True)
    if m == n == k:
        assert not np.allclose(c, a.astype(np.float64) @ bt.astype(np.float64), atol=1e-2)


# ---- bias --------------------------------------------------------------------------------------------
# pl.matmul takes a Bias tile [1, N] of the accumulator dtype (intrinsics_cube._matmul), but nothing can
# fill one: pl.load only loads into Vec or Mat tiles (registry.LOAD_PIPES) and pl.move has no path into
# Bias (intrinsics_cube.MOVE_PATHS). So a matmul with bias cannot be tested numerically; we test that the
# frontend accepts the bias operand and reports the two ways one would try to fill it.

BIAS_N = 64


def _bias_kernel(fill: str):
    def bias_kernel(a: pl.Tensor[[DYN, DYN], pl.DT_FP16], b: pl.Tensor[[DYN, DYN], pl.DT_FP16],
                    bias: pl.Tensor[[1, DYN], pl.DT_FP32], c: pl.Tensor[[DYN, DYN], pl.DT_FP32]):
        # single-slot groups: the framework orders every op on them (plain make_tile tiles are not ordered)
        a_l1 = pl.make_tile_group(type=pl.TileType([64, 64], pl.DT_FP16, pl.MemorySpace.Mat), addrs=[0x0000],
                                  mutex_ids=[0])[0]
        b_l1 = pl.make_tile_group(type=pl.TileType([64, BIAS_N], pl.DT_FP16, pl.MemorySpace.Mat), addrs=[0x4000],
                                  mutex_ids=[1])[0]
        bias_l1 = pl.make_tile_group(type=pl.TileType([1, BIAS_N], pl.DT_FP32, pl.MemorySpace.Mat),
                                     addrs=[0x8000], mutex_ids=[2])[0]
        xa = pl.make_tile_group(type=pl.TileType([64, 64], pl.DT_FP16, pl.MemorySpace.Left), addrs=[0],
                                mutex_ids=[3])[0]
        xb = pl.make_tile_group(type=pl.TileType([64, BIAS_N], pl.DT_FP16, pl.MemorySpace.Right), addrs=[0],
                                mutex_ids=[4])[0]
        bt = pl.make_tile_group(type=pl.TileType([1, BIAS_N], pl.DT_FP32, pl.MemorySpace.Bias), addrs=[0],
                                mutex_ids=[5])[0]
        acc = pl.make_tile_group(type=pl.TileType([64, BIAS_N], pl.DT_FP32, pl.MemorySpace.Acc), addrs=[0],
                                 mutex_ids=[6])[0]
        with pl.section_cube():
            pl.load(a_l1, a, [0, 0])
            pl.load(b_l1, b, [0, 0])
            if fill == "load":
                pl.load(bt, bias, [0, 0])
            elif fill == "move":
                pl.load(bias_l1, bias, [0, 0])
                pl.move(bt, bias_l1)
            pl.move(xa, a_l1)
            pl.move(xb, b_l1)
            pl.matmul(acc, xa, xb, bt)
            pl.store(c, acc, [0, 0])
    return bias_kernel


@pytest.mark.parametrize("arch", ARCHS)
def test_matmul_bias_operand_compiles_but_reads_unwritten_bias(arch):
    """The bias operand itself is accepted; since nothing can fill the Bias tile, running the kernel
    reads bias bytes nothing wrote, which the simulator reports."""
    kern = pl.jit(_bias_kernel("none"), arch=arch)
    assert kern.compile() is not None
    a = np.ones((64, 64), np.float16)
    b = np.ones((64, BIAS_N), np.float16)
    bias = np.ones((1, BIAS_N), np.float32)
    c = np.zeros((64, BIAS_N), np.float32)
    with pytest.raises(UninitializedReadError, match=r"matmul on M .* reads Bias bytes"):
        kern[None, 1](a, b, bias, c)


@pytest.mark.parametrize("arch", ARCHS)
def test_matmul_bias_cannot_be_loaded(arch):
    with pytest.raises(CompileError, match=r"pl.load loads into Vec \(UB\) or Mat \(L1\) tiles only; 'bt' is in Bias"):
        pl.jit(_bias_kernel("load"), arch=arch).compile()


@pytest.mark.parametrize("arch", ARCHS)
def test_matmul_bias_through_l1(arch):
    """GM -> Mat (fp32 here) -> Bias (pl.move, MTE1), then matmul adds it to every row."""
    kern = pl.jit(_bias_kernel("move"), arch=arch)
    rng = np.random.default_rng(3)
    a = rng.standard_normal((64, 64)).astype(np.float16)
    b = rng.standard_normal((64, BIAS_N)).astype(np.float16)
    bias = rng.standard_normal((1, BIAS_N)).astype(np.float32)
    c = np.zeros((64, BIAS_N), np.float32)
    report = kern[None, 1](a, b, bias, c)
    assert not report.faults
    ref = a.astype(np.float64) @ b.astype(np.float64) + bias
    np.testing.assert_allclose(c, ref, rtol=1e-6, atol=1e-5)


# =================================================================================================
# examples/matmul_softmax.py
# =================================================================================================

MMS_CASES = [  # (rows, K, blocks); row tiles = ceil(rows / 128)
    (1, 16, 1),      # one row: AIV1 has no rows of the only tile
    (64, 100, 2),    # exactly AIV0's half; one idle block
    (65, 17, 1),     # one row for AIV1; K not a multiple of 16
    (128, 128, 1),   # one full tile, one full K chunk
    (128, 300, 3),
    (300, 200, 1),   # 3 tiles through one block: both workspace / UB slots reused
    (300, 64, 2),
    (300, 257, 4),   # 4 blocks for 3 tiles
]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("rows,k,blocks", MMS_CASES)
def test_matmul_softmax(arch, rows, k, blocks):
    rng = np.random.default_rng(rows * 1000 + k + blocks)
    n = mms_example.N
    x = (rng.standard_normal((rows, k)) * 0.1).astype(np.float16)
    w = (rng.standard_normal((k, n)) * 0.1).astype(np.float16)
    ws = np.zeros((blocks * 2 * mms_example.TM, n), np.float32)
    out = np.full((rows, n), np.nan, np.float16)
    report = mms_kernel(arch)[None, blocks](x, w, ws, out)
    assert not report.faults
    y = x.astype(np.float64) @ w.astype(np.float64)
    y = np.exp(y - y.max(axis=1, keepdims=True))
    ref = (y / y.sum(axis=1, keepdims=True)).astype(np.float16)
    assert np.isfinite(out).all(), "output rows not written"
    np.testing.assert_allclose(out.astype(np.float32), ref.astype(np.float32), rtol=2 ** -10, atol=2 ** -24)
    assert max_ulp_distance(out, ref) <= 1
    # the example's own (fp32) reference agrees too
    assert max_ulp_distance(out, mms_example.reference(x, w).astype(np.float16)) <= 1


def test_matmul_softmax_a5_direct_path_is_faster():
    """Same problem: a5 moves L0C -> UB directly; a2a3 round-trips through the GM workspace."""
    reports = {}
    for arch in ARCHS:
        _, _, reports[arch] = mms_example.run(arch, 300, 200, 3)
    a5, a2a3 = reports["a5"], reports["a2a3"]
    assert a5.cycles < a2a3.cycles, (a5.summary(), a2a3.summary())
    assert a5.path_bytes.get("Acc->Vec", 0) > 0 and "Acc->GM" not in a5.path_bytes
    assert a2a3.path_bytes.get("Acc->GM", 0) > 0 and "Acc->Vec" not in a2a3.path_bytes
    for r in (a5, a2a3):
        assert r.pipe_busy.get("AIC.M", 0) > 0 and r.pipe_busy.get("AIV0.V", 0) > 0
        assert r.pipe_busy.get("AIV1.V", 0) > 0


# ---- traces ---------------------------------------------------------------------------------------------


def test_matmul_trace_files(tmp_path):
    a = np.ones((20, 40), np.float16)
    b = np.ones((40, 30), np.float16)
    c = np.zeros((20, 30), np.float32)
    report = matmul_kernel("a5", pl.DT_FP32).options(trace=str(tmp_path))[None, 2](a, b, c)
    assert (c == 40).all()
    assert report.trace_files and all(Path(f).is_file() for f in report.trace_files)


@pytest.mark.parametrize("arch", ARCHS)
def test_matmul_softmax_trace_files(arch, tmp_path):
    x = np.ones((1, 16), np.float16)
    w = np.ones((16, mms_example.N), np.float16)
    ws = np.zeros((2 * mms_example.TM, mms_example.N), np.float32)
    out = np.zeros((1, mms_example.N), np.float16)
    report = mms_kernel(arch).options(trace=str(tmp_path))[None, 1](x, w, ws, out)
    assert report.trace_files and all(Path(f).is_file() for f in report.trace_files)
    assert np.allclose(out.astype(np.float32), 1 / mms_example.N)
