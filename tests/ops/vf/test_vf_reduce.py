"""vf.reduce_sum / reduce_max / reduce_min / pair_reduce_sum against NumPy references written from
their pages (``vf_computation/reduction``), every dtype listed, an all-lanes, a partial and an empty
mask (``update_mask(n)``, n = lanes / some / 0).

- reduce_sum: the active lanes summed by the binary tree of adjacent pairs of the page's figure
  (inactive lanes count 0), fp16 accumulated in fp32 and rounded once at the end (the page); the
  result in lane 0, the other lanes 0; an empty mask gives 0. Integers: the page says dst has the
  source's dtype, so the sum wraps at that width (PTO-ISA's TRowReduce notes that the chip's int16
  vcadd produces an int32; the page's same-dtype rule is followed here).
- reduce_max / reduce_min: the extreme in lane 0, the index of its first lane in lane 1 (an unsigned
  integer of the lane width), the rest 0; a NaN wins and the index is the first NaN's; ``max(-0, +0)
  = +0``, ``min(-0, +0) = -0``; an empty mask gives the type's minimum (max) / maximum (min) with
  index 0. The page says "the type's NaN" without a payload: ours keeps the first NaN's own bits,
  which the reference checks only as "a NaN" plus the index. For floats "the minimum" is taken as
  -inf (PTO-ISA's vcmax pseudocode starts from -INF).
- datablock=True: one result per 32-byte block, in lanes 0..7 (PTO-ISA's a5 TQuant stores vcgmax's
  results so; the pages say "the first element of each block": ours follows the instruction's use,
  see ``ops/vf/reduce.py``), a block with no active lane as an empty mask, no index.
- pair_reduce_sum (FP16 / FP32): dst[i] = src[2i] + src[2i+1] for the lower half of the lanes, the
  upper half 0. The page's "unselected elements become 0" does not say whether the mask selects
  source or destination lanes; ours zeroes inactive *source* lanes before adding (as PTO-ISA's
  TPairReduceSum uses it: the mask counts source elements), which the test pins.
"""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.language import Vf as vf

from vf_masked import NP, UINT, assert_refused, bits, lanes, masked_kernel, random_data, run

COVERED = frozenset({"vf.reduce_sum", "vf.reduce_max", "vf.reduce_min", "vf.pair_reduce_sum"})

RED_TYPES = [pl.DT_INT16, pl.DT_UINT16, pl.DT_INT32, pl.DT_UINT32, pl.DT_FP16, pl.DT_FP32]  # all three pages
OPS = ("reduce_sum", "reduce_max", "reduce_min")


def _reduce_kernel(dt, datablock: bool):
    """Rows 0..2: reduce_sum, reduce_max, reduce_min of a under update_mask(n), every lane stored."""
    @pl.vector_function
    def body(ta, to, n: pl.DT_INT64):
        m = vf.update_mask(n, dtype=dt)
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        r = vf.reduce_sum(x, m, datablock=datablock)
        vf.store_align(to, r, full, [0, 0])
        r = vf.reduce_max(x, m, datablock=datablock, merge_mode=pl.MergeMode.ZEROING)
        vf.store_align(to, r, full, [1, 0])
        r = vf.reduce_min(x, m, datablock=datablock)
        vf.store_align(to, r, full, [2, 0])
    return masked_kernel(body, (dt,), dt, out_rows=3)


# ---- the references -----------------------------------------------------------------------------------------


def ref_sum(x: np.ndarray, act: np.ndarray) -> np.ndarray:
    """The page's sum of the active lanes: floats by the binary tree of adjacent pairs in fp32, rounded
    once to the type; integers exactly, wrapped to the width."""
    if x.dtype.kind == "f":
        level = np.where(act, x.astype(np.float32), np.float32(0))
        with np.errstate(all="ignore"):
            while level.size > 1:
                level = level[0::2] + level[1::2]
        return level.astype(x.dtype)
    total = sum(int(v) for v in x[act].tolist())
    w = x.dtype.itemsize * 8
    return np.array([total & (2 ** w - 1)], np.uint64).astype(UINT[w // 8]).view(x.dtype)


def _order_key(v) -> tuple:
    """A lane's place in the pages' order: -0.0 below +0.0, otherwise the value."""
    return (float(v), 0 if (float(v) == 0 and np.signbit(v)) else 1)


def ref_extreme(x: np.ndarray, act: np.ndarray, kind: str) -> tuple[np.ndarray, int]:
    """(the page's max / min of the active lanes as x's dtype, the first index), from a plain scan."""
    idx = [i for i in range(x.size) if act[i]]
    if not idx:
        if x.dtype.kind == "f":
            return np.array([-np.inf if kind == "max" else np.inf], x.dtype), 0
        info = np.iinfo(x.dtype)
        return np.array([info.min if kind == "max" else info.max], x.dtype), 0
    if x.dtype.kind == "f":
        nans = [i for i in idx if np.isnan(x[i])]
        if nans:
            return x[nans[0]:nans[0] + 1], nans[0]
    best = idx[0]
    for i in idx[1:]:
        k, b = _order_key(x[i]), _order_key(x[best])
        if (k > b) if kind == "max" else (k < b):
            best = i
    return x[best:best + 1], best


def _check_extreme(got: np.ndarray, x: np.ndarray, act: np.ndarray, kind: str, what: str) -> None:
    val, idx = ref_extreme(x, act, kind)
    if x.dtype.kind == "f" and np.isnan(val[0]):
        assert np.isnan(got[0]), f"{what}: a NaN is among the active lanes, got {got[0]}"
    else:
        np.testing.assert_array_equal(bits(got[:1]), bits(val), err_msg=what)
    assert int(bits(got[1:2])[0]) == idx, f"{what}: index {int(bits(got[1:2])[0])}, want {idx}"
    assert not bits(got[2:]).any(), f"{what}: lanes 2.. must be 0"


# ---- whole-register reductions -----------------------------------------------------------------------------------


def _reduce_data(dt, seed: int) -> list[np.ndarray]:
    """Registers of dt: random with specials (NaN, inf, -0.0 ... or int min / max), a repeated maximum
    and minimum (the first index counts), signed zeros only (floats), two NaNs of different payloads
    (floats)."""
    n = lanes(dt)
    x = random_data(dt, seed)
    dup = random_data(dt, seed + 1, specials=False)
    dup[[5, 9, 40]] = dup.max()
    dup[[7, 11, 50]] = dup.min()
    out = [x, dup]
    if dt.is_float():
        z = np.zeros(n, NP[dt])
        z[::3] = -0.0
        out.append(z)
        nan = random_data(dt, seed + 2, specials=False)
        u = bits(nan)
        u[30] = (0x7FC00001 if dt.bits == 32 else 0x7E01)
        u[12] = (0xFFC00002 if dt.bits == 32 else 0xFE02)  # a negative NaN first
        out.append(u.view(NP[dt]))
    else:
        info = np.iinfo(NP[dt])
        w = np.full(n, info.max, NP[dt])  # a sum that wraps
        out.append(w)
    return out


@pytest.mark.parametrize("dt", RED_TYPES, ids=lambda d: d.name)
def test_reductions_every_dtype_full_partial_and_empty_mask(dt):
    n = lanes(dt)
    kernel = _reduce_kernel(dt, False)
    for x in _reduce_data(dt, 3):
        for active in (n, 33, 1, 0):
            act = np.arange(n) < active
            got = run(kernel, (x,), dt, active, out_rows=3)
            what = f"{dt.name}, {active} active lanes"
            want = ref_sum(x, act)
            if dt.is_float() and np.isnan(want[0]):
                assert np.isnan(got[0, 0]), what
            else:
                np.testing.assert_array_equal(bits(got[0, :1]), bits(want), err_msg="reduce_sum " + what)
            assert not bits(got[0, 1:]).any(), "reduce_sum: lanes 1.. must be 0, " + what
            _check_extreme(got[1], x, act, "max", "reduce_max " + what)
            _check_extreme(got[2], x, act, "min", "reduce_min " + what)


@pytest.mark.parametrize("dt", RED_TYPES, ids=lambda d: d.name)
def test_reductions_under_a_scattered_mask(dt):
    """The mask of a comparison (a < b, below n): the reductions see only those lanes, wherever they are
    (the index counts from lane 0 of the register, not among the active lanes)."""
    @pl.vector_function
    def body(ta, tb, to, n: pl.DT_INT64):
        m = vf.update_mask(n, dtype=dt)
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        y = vf.load_align(tb, 0)
        k = vf.lt(x, y, m)
        r = vf.reduce_sum(x, k)
        vf.store_align(to, r, full, [0, 0])
        r = vf.reduce_max(x, k)
        vf.store_align(to, r, full, [1, 0])
        r = vf.reduce_min(x, k)
        vf.store_align(to, r, full, [2, 0])
    n = lanes(dt)
    kernel = masked_kernel(body, (dt, dt), dt, out_rows=3)
    x, y = random_data(dt, 51, specials=False), random_data(dt, 52, specials=False)
    for active in (n, 50):
        act = (x.astype(np.float64) < y.astype(np.float64)) & (np.arange(n) < active)
        got = run(kernel, (x, y), dt, active, out_rows=3)
        np.testing.assert_array_equal(bits(got[0, :1]), bits(ref_sum(x, act)))
        assert not bits(got[0, 1:]).any()
        _check_extreme(got[1], x, act, "max", f"reduce_max {dt.name}")
        _check_extreme(got[2], x, act, "min", f"reduce_min {dt.name}")


def test_fp32_sum_is_the_pages_binary_tree():
    """Lanes [1e8, 1, -1e8, 1, 0 ...]: the tree adds (1e8 + 1) and (-1e8 + 1) first, each rounding the 1
    away, so the sum is 0; a left-to-right sum would give 1. Two runs give the same bytes."""
    x = np.zeros(64, np.float32)
    x[:4] = [1e8, 1, -1e8, 1]
    kernel = _reduce_kernel(pl.DT_FP32, False)
    got = run(kernel, (x,), pl.DT_FP32, 64, out_rows=3)
    assert bits(got[0, :1])[0] == 0 and ref_sum(x, np.ones(64, bool))[0] == 0
    np.testing.assert_array_equal(bits(got), bits(run(kernel, (x,), pl.DT_FP32, 64, out_rows=3)))


@pytest.mark.parametrize("dt", [pl.DT_FP16, pl.DT_FP32], ids=lambda d: d.name)
def test_a_sum_of_exact_data_is_exact(dt):
    """Small integers (every partial sum exact in fp32): any order gives the exact total."""
    x = np.random.default_rng(8).integers(-20, 21, lanes(dt)).astype(NP[dt])
    got = run(_reduce_kernel(dt, False), (x,), dt, lanes(dt), out_rows=3)
    assert got[0, 0] == x.astype(np.int64).sum()


def test_fp16_sum_accumulates_in_fp32():
    """2048 and 127 ones: in fp32 the sum is 2175, rounded once to fp16 2176; an fp16 tree would round
    2048 + 1 to 2048 on the first level and end at 2174. 128 lanes of 1000: 128000 overflows fp16: +inf."""
    x = np.ones(128, np.float16)
    x[0] = 2048
    kernel = _reduce_kernel(pl.DT_FP16, False)
    assert run(kernel, (x,), pl.DT_FP16, 128, out_rows=3)[0, 0] == np.float16(2176)
    big = np.full(128, 1000, np.float16)
    assert run(kernel, (big,), pl.DT_FP16, 128, out_rows=3)[0, 0] == np.inf


# ---- datablock=True -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dt", RED_TYPES, ids=lambda d: d.name)
def test_datablock_reductions_one_result_per_block(dt):
    n, per = lanes(dt), 32 // (dt.bits // 8)
    kernel = _reduce_kernel(dt, True)
    x = _reduce_data(dt, 13)[0]
    for active in (n, n // 2 + 3, 0):  # the partial mask: a block cut in two and blocks with no active lane
        act = np.arange(n) < active
        got = run(kernel, (x,), dt, active, out_rows=3)
        what = f"{dt.name} datablock, {active} active lanes"
        for j, kind in enumerate(OPS):
            want = []
            for blk in range(8):
                sl = slice(blk * per, (blk + 1) * per)
                want.append(ref_sum(x[sl], act[sl])[0] if kind == "reduce_sum" else
                            ref_extreme(x[sl], act[sl], kind[7:])[0][0])
            want = np.array(want, x.dtype)
            g = got[j, :8]
            nan = np.isnan(want) if dt.is_float() else np.zeros(8, bool)
            np.testing.assert_array_equal(bits(g[~nan]), bits(want[~nan]), err_msg=f"{kind} {what}")
            assert np.isnan(g[nan]).all(), f"{kind} {what}"
            assert not bits(got[j, 8:]).any(), f"{kind} {what}: lanes 8.. must be 0"


# ---- pair_reduce_sum ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dt", [pl.DT_FP16, pl.DT_FP32], ids=lambda d: d.name)
def test_pair_reduce_sum(dt):
    n = lanes(dt)

    @pl.vector_function
    def body(ta, to, n_act: pl.DT_INT64):
        m = vf.update_mask(n_act, dtype=dt)
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        r = vf.pair_reduce_sum(x, m)
        vf.store_align(to, r, full)
    kernel = masked_kernel(body, (dt,), dt)
    x = random_data(dt, 21)
    x[20:24] = np.array([np.finfo(NP[dt]).max, np.finfo(NP[dt]).max, 1.0, -1.0], NP[dt])  # overflow, cancellation
    for active in (n, 37, 0):
        act = np.arange(n) < active
        src = np.where(act, x, NP[dt].type(0))
        with np.errstate(all="ignore"):
            pair = (src[0::2].astype(np.float64) + src[1::2].astype(np.float64)).astype(NP[dt])  # one rounding
        want = np.concatenate([pair, np.zeros(n // 2, NP[dt])])
        got = run(kernel, (x,), dt, active)
        nan = np.isnan(want)
        np.testing.assert_array_equal(bits(got[~nan]), bits(want[~nan]), err_msg=f"{dt.name}, {active} active lanes")
        assert np.isnan(got[nan]).all()


# ---- refusals -------------------------------------------------------------------------------------------------------


def _reduce_line(fn, dt):
    def body(ta, to, n: pl.DT_INT64):
        m = vf.update_mask(n, dtype=dt)
        x = vf.load_align(ta, 0)
        y = fn(x, m)  # <- here
        vf.store_align(to, y, m)
    return body


@pytest.mark.parametrize("op", OPS + ("pair_reduce_sum",))
@pytest.mark.parametrize("dt", [pl.DT_BF16, pl.DT_INT8, pl.DT_UINT8], ids=lambda d: d.name)
def test_a_dtype_the_page_does_not_list_is_a_located_error(op, dt):
    assert_refused(_reduce_line(getattr(vf, op), dt), (dt,), dt, f"'src' is a register of {dt.name}", "x, m")


@pytest.mark.parametrize("dt", [pl.DT_INT32, pl.DT_UINT16], ids=lambda d: d.name)
def test_pair_reduce_sum_of_an_integer_is_a_located_error(dt):
    """The page and the real backend: FP16 / FP32 only."""
    assert_refused(_reduce_line(vf.pair_reduce_sum, dt), (dt,), dt, f"'src' is a register of {dt.name}", "x, m")


def _merging_body(fn, dt, kw: str):
    if kw == "mode":
        def body(ta, to, n: pl.DT_INT64):
            m = vf.update_mask(n, dtype=dt)
            x = vf.load_align(ta, 0)
            y = fn(x, m, mode=pl.MergeMode.MERGING)  # <- here
            vf.store_align(to, y, m)
    else:
        def body(ta, to, n: pl.DT_INT64):
            m = vf.update_mask(n, dtype=dt)
            x = vf.load_align(ta, 0)
            y = fn(x, m, merge_mode=pl.MergeMode.MERGING)  # <- here
            vf.store_align(to, y, m)
    return body


@pytest.mark.parametrize("op,kw", [("reduce_sum", "merge_mode"), ("reduce_max", "merge_mode"),
                                   ("reduce_min", "merge_mode"), ("pair_reduce_sum", "mode")])
def test_merging_is_a_located_error(op, kw):
    """The pages: MergeMode.MERGING is not supported."""
    dt = pl.DT_FP32
    assert_refused(_merging_body(getattr(vf, op), dt, kw), (dt,), dt, "MERGING is not supported", "pl.MergeMode")
