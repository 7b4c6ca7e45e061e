"""The transposed row-reduction tree (``numerics_reduce.TRANSPOSED_ROWS``) computes the bytes of the
original one wherever it is taken: integer reductions and sums of NaN-free floats (issue 15)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from pypto_pro.backends.sim import numerics, numerics_reduce

BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32 = np.dtype(np.float16), np.dtype(np.float32)
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32}
SHAPES = [(1, 1), (1, 7), (3, 2), (5, 8), (9, 17), (16, 64), (64, 128), (7, 100), (70, 33), (2, 130), (64, 1)]


def _values(dt: np.dtype, rng: np.random.Generator, n: int, nan_free: bool) -> np.ndarray:
    """Random bit patterns with signed zeros, infinities, subnormals and huge values mixed in (NaNs
    replaced by +-inf when ``nan_free``)."""
    u = np.dtype(_UINT[dt.itemsize])
    bits = rng.integers(0, 1 << (8 * dt.itemsize), n, dtype=np.uint64).astype(u)
    if dt.kind in "iu":
        return bits.view(dt)
    sign = 1 << (8 * dt.itemsize - 1)
    exp = {2: 0x7C00 if dt == F16 else 0x7F80, 4: 0x7F800000}[dt.itemsize]
    special = np.array([0, sign, exp, sign | exp, 1, sign | 5, exp - 1, sign | (exp - 1)], np.uint64).astype(u)
    use = rng.random(n) < 0.4
    bits[use] = special[rng.integers(0, len(special), n)[use]]
    x = bits.view(dt)
    if nan_free:
        bad = np.isnan(x)
        x[bad] = np.where(rng.random(int(bad.sum())) < 0.5, np.inf, -np.inf).astype(dt)
    return x


def _with_nans(x: np.ndarray, rng: np.random.Generator, frac: float = 0.15) -> np.ndarray:
    """``x`` with a fraction of its elements replaced by NaNs of random payloads and signs (quiet and
    signalling): rows where two payloads meet, whose surviving payload depends on NumPy's loop."""
    if x.dtype.kind in "iu":
        return x
    u = np.dtype(_UINT[x.dtype.itemsize])
    bits = x.view(u)
    nbits = 8 * x.dtype.itemsize
    man = {F16: 10, BF16: 7, F32: 23}[x.dtype]
    exp_all = ((1 << (nbits - 1 - man)) - 1) << man
    pick = rng.random(x.shape) < frac
    payload = rng.integers(1, 1 << man, x.shape, dtype=np.uint64).astype(u)
    sign = (rng.random(x.shape) < 0.5).astype(u) << (nbits - 1)
    bits[pick] = (payload | exp_all | sign)[pick]
    return x


def _both(op: str, x: np.ndarray, monkeypatch) -> tuple[bytes, bytes]:
    out = []
    for fast in (True, False):
        monkeypatch.setattr(numerics_reduce, "TRANSPOSED_ROWS", fast)
        dst = np.full((x.shape[0], 3), 7, x.dtype)[:, 1:2]  # a strided column, as a DN tile's window
        with numerics.launch_errstate():
            numerics.reduce(op, dst, x, 1)
        out.append(dst.tobytes())
    return out[0], out[1]


@pytest.mark.parametrize("dt", [F16, BF16, F32], ids=str)
def test_sums_of_nan_free_rows_are_the_same_transposed(dt, monkeypatch):
    rng = np.random.default_rng(1)
    for rows, cols in SHAPES:
        for extra in (0, 5):  # full-width and strided sources
            for _ in range(3):
                x = _values(dt, rng, rows * (cols + extra), True).reshape(rows, cols + extra)[:, :cols]
                fast, slow = _both("sum", x, monkeypatch)
                assert fast == slow, (rows, cols, extra)


@pytest.mark.parametrize("op", ["sum", "max", "min"])
@pytest.mark.parametrize("dt", [np.dtype(np.int16), np.dtype(np.int32)],
                         ids=str)
def test_integer_row_reductions_are_the_same_transposed(op, dt, monkeypatch):
    rng = np.random.default_rng(2)
    for rows, cols in SHAPES:
        x = _values(dt, rng, rows * cols, True).reshape(rows, cols)
        fast, slow = _both(op, x, monkeypatch)
        assert fast == slow, (rows, cols)


def test_rows_with_nans_are_summed_again_by_the_original_tree(monkeypatch):
    """A tile with a row whose source holds a NaN is summed again by the tree, whole (NumPy's loop, which
    depends on the work buffer's shape, decides which payload survives); a NaN-free tile is not."""
    seen = []
    orig = numerics_reduce._tree
    monkeypatch.setattr(numerics_reduce, "_tree", lambda op_, dst, src, *a: seen.append(src.shape) or orig(op_, dst, src, *a))
    x = np.ones((4, 16), np.float32)
    out = np.zeros((4, 1), np.float32)
    numerics.reduce("sum", out, x, 1)
    assert seen == [] and out[:, 0].tolist() == [16.0] * 4
    x[2, 3] = np.nan
    numerics.reduce("sum", out, x, 1)
    assert seen == [(4, 16)] and np.isnan(out[2, 0]) and out[[0, 1, 3], 0].tolist() == [16.0] * 3


@pytest.mark.parametrize("dt", [F16, BF16, F32], ids=str)
def test_sums_of_rows_with_nan_payloads_are_the_same_transposed(dt, monkeypatch):
    rng = np.random.default_rng(4)
    for rows, cols in SHAPES:
        for extra in (0, 5):
            for _ in range(3):
                x = _values(dt, rng, rows * (cols + extra), False).reshape(rows, cols + extra)[:, :cols]
                x = _with_nans(x.copy(), rng)
                fast, slow = _both("sum", x, monkeypatch)
                assert fast == slow, (rows, cols, extra)


def _extremes_both(op: str, x: np.ndarray, dim: int, monkeypatch) -> tuple[bytes, bytes]:
    out = []
    for fast in (True, False):
        monkeypatch.setattr(numerics_reduce, "DIRECT_EXTREMES", fast)
        shape = (x.shape[0], 3) if dim == 1 else (3, x.shape[1])
        dst = np.full(shape, 7, x.dtype)[:, 1:2] if dim == 1 else np.full(shape, 7, x.dtype)[1:2]
        with numerics.launch_errstate():
            numerics.reduce(op, dst, x, dim)
        out.append(dst.tobytes())
    return out[0], out[1]


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dt", [F16, BF16, F32, np.dtype(np.int16), np.dtype(np.int32)], ids=str)
def test_direct_extremes_give_the_tree_bytes(dt, op, dim, monkeypatch):
    """NaN payloads, signed zeros, infinities: NumPy's reduction where the extreme is unique, the tree
    where it is a NaN or a zero; the bytes of the tree everywhere (``DIRECT_EXTREMES``)."""
    rng = np.random.default_rng(3)
    for rows, cols in SHAPES:
        for extra in (0, 5):
            for nan_free in (False, True):
                x = _values(dt, rng, rows * (cols + extra), nan_free).reshape(rows, cols + extra)[:, :cols]
                if not nan_free:
                    x = _with_nans(x.copy(), rng)
                fast, slow = _extremes_both(op, x, dim, monkeypatch)
                assert fast == slow, (rows, cols, extra, nan_free)


@pytest.mark.parametrize("op", ["max", "min"])
def test_direct_extremes_redo_tiles_with_nan_or_zero_lines(op, monkeypatch):
    """A tile where a line's extreme is a NaN or a zero runs the tree (whole); other tiles do not."""
    seen = []
    orig = numerics_reduce._tree
    monkeypatch.setattr(numerics_reduce, "_tree", lambda op_, dst, src, *a: seen.append(src.shape) or orig(op_, dst, src, *a))
    x = np.full((5, 8), 3.0 if op == "max" else -3.0, np.float32)
    dst = np.zeros((5, 1), np.float32)
    numerics.reduce(op, dst, x, 1)
    assert seen == [] and dst[:, 0].tolist() == [x[0, 0]] * 5
    x[1] = 0.0
    x[1, 2] = -0.0
    x[3, 4] = np.float32(np.nan)
    dst = np.zeros((5, 1), np.float32)
    numerics.reduce(op, dst, x, 1)
    assert seen == [(5, 8)]
    assert np.isnan(dst[3, 0]) and dst[1, 0] == 0 and dst[0, 0] == x[0, 0]
