"""vf.eq / ne / lt / gt / le / ge, vf.select and vf.squeeze against NumPy references written from their
pages (``vf_computation/comparison_and_selection``).

A comparison writes a mask register: lane i is set when the mask selects it and ``a[i] <op> b[i]``
holds; lanes the mask does not select are 0 (each page: "unselected elements are zeroed in the
destination"). The mask is read back through ``vf.select(ones, zeros, k)`` (exactly 1 / 0 of the
dtype per lane), for every dtype the pages list, a register or a scalar right operand, a partial
(``update_mask(n)``) and an all-lanes mask. Floats compare as IEEE values (the pages' formulas on
real numbers): NaN is unordered (only ``ne`` holds), -0.0 equals +0.0, subnormals are not flushed.
A scalar ``b`` is taken in a's dtype (the pages: "the same dtype as a").
"""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.language import Vf as vf

from vf_masked import NP, assert_refused, bits, lanes, masked_kernel, random_data, run

COVERED = frozenset({"vf.eq", "vf.ne", "vf.lt", "vf.gt", "vf.le", "vf.ge", "vf.select", "vf.squeeze"})

# the dtypes the six comparison pages list (identical lists)
CMP_TYPES = [pl.DT_INT8, pl.DT_UINT8, pl.DT_INT16, pl.DT_UINT16, pl.DT_FP16, pl.DT_BF16, pl.DT_INT32,
             pl.DT_UINT32, pl.DT_FP32]
CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "gt": np.greater, "le": np.less_equal,
       "ge": np.greater_equal}


def _compare_pair(dt):
    """(a, b): random data with specials, and b equal to a in a third of the lanes (so every relation
    has both outcomes), NaN against numbers and NaN, -0.0 against +0.0, min/max against each other."""
    a = random_data(dt, 11)
    b = random_data(dt, 12, specials=False)
    n = lanes(dt)
    same = np.arange(n) % 3 == 0
    b[same] = a[same]
    if dt.is_float():  # lanes 0..10 hold NaN, inf, -inf, 0, -0, tiny, -tiny, max, -max, 1, -1
        b[:11] = np.array([np.nan, -np.inf, -np.inf, -0.0, 0.0, 0.0, 0.0, np.inf, -np.inf, 1.0, np.nan],
                          np.float64).astype(NP[dt])
    else:              # lanes 0..5 hold min, max, 0, 1, max-1, min+1
        b[:6] = np.array([a[1], a[0], a[0], a[1], a[1], a[0]], NP[dt])
    return a, b


OPS = ("eq", "ne", "lt", "gt", "le", "ge")  # the out tile's rows, in this order


def _cmp_kernel(dt, scalar):
    """Row j of the out tile: OPS[j](a, b or scalar) under update_mask(n), read back as 1 / 0 lanes."""
    @pl.vector_function
    def body(ta, tb, to, n: pl.DT_INT64):
        m = vf.update_mask(n, dtype=dt)
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        if scalar is None:
            y = vf.load_align(tb, 0)
        else:
            y = scalar
        one = vf.full(1, full, dtype=dt)
        zero = vf.full(0, full, dtype=dt)
        k = vf.eq(x, y, m)
        r = vf.select(one, zero, k)
        vf.store_align(to, r, full, [0, 0])
        k = vf.ne(x, y, m)
        r = vf.select(one, zero, k)
        vf.store_align(to, r, full, [1, 0])
        k = vf.lt(x, y, m)
        r = vf.select(one, zero, k)
        vf.store_align(to, r, full, [2, 0])
        k = vf.gt(x, y, m)
        r = vf.select(one, zero, k)
        vf.store_align(to, r, full, [3, 0])
        k = vf.le(x, y, m)
        r = vf.select(one, zero, k)
        vf.store_align(to, r, full, [4, 0])
        k = vf.ge(x, y, m)
        r = vf.select(one, zero, k)
        vf.store_align(to, r, full, [5, 0])
    return masked_kernel(body, (dt, dt), dt, out_rows=len(OPS))


def _scalar_of(dt, a, which: int):
    """A scalar right operand: 0: lane 20's value (a finite number some lanes equal); 1: -0.0 (equal to
    both zeros) or the type's minimum; 2: NaN (unordered: only ne holds) or the type's maximum."""
    if which == 0:
        v = a[20]
        return float(v) if dt.is_float() else int(v)
    if dt.is_float():
        return -0.0 if which == 1 else float("nan")
    info = np.iinfo(NP[dt])
    return int(info.min if which == 1 else info.max)


@pytest.mark.parametrize("dt", CMP_TYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("form", ["register", "scalar", "scalar_low", "scalar_high"])
def test_compare_mask_every_dtype_partial_and_all_lanes(dt, form):
    a, b = _compare_pair(dt)
    scalar = None
    if form != "register":
        scalar = _scalar_of(dt, a, ["scalar", "scalar_low", "scalar_high"].index(form))
        a[21::7] = a[20]  # more lanes equal to lane 20
    k = _cmp_kernel(dt, scalar)
    n = lanes(dt)
    wide = a.astype(np.float64) if dt.is_float() else a.astype(np.int64)
    other = np.float64(scalar) if scalar is not None else (b.astype(np.float64) if dt.is_float() else b.astype(np.int64))
    for active in (n, 37, 0):
        got = run(k, (a, b), dt, active, out_rows=len(OPS))
        for j, op in enumerate(OPS):
            with np.errstate(invalid="ignore"):
                holds = CMP[op](wide, other)
            ref = np.where(holds & (np.arange(n) < active), 1, 0).astype(NP[dt])
            np.testing.assert_array_equal(bits(got[j]), bits(ref),
                                          err_msg=f"vf.{op} {dt.name} {form}, {active} active lanes")


# ---- vf.select ---------------------------------------------------------------------------------------

SELECT_TYPES = CMP_TYPES  # the select page: BOOL (mask registers, below) and these nine


def _select_kernel(dt, mode):
    """Row 0: select(a, b, update_mask(n)); row 1: select(a, b, lt(a, b)) (a data-dependent mask)."""
    @pl.vector_function
    def body(ta, tb, to, n: pl.DT_INT64):
        m = vf.update_mask(n, dtype=dt)
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        y = vf.load_align(tb, 0)
        if mode is None:
            r = vf.select(x, y, m)
        else:
            r = vf.select(x, y, m, mode=mode)
        vf.store_align(to, r, full, [0, 0])
        k = vf.lt(x, y, full)
        s = vf.select(x, y, k)
        vf.store_align(to, s, full, [1, 0])
    return masked_kernel(body, (dt, dt), dt, out_rows=2)


@pytest.mark.parametrize("dt", SELECT_TYPES, ids=lambda d: d.name)
def test_select_takes_src_true_where_the_mask_is_set(dt):
    """The bytes of a[i] where the mask is set, b[i] elsewhere (NaN payloads and -0.0 kept)."""
    a, b = _compare_pair(dt)
    n = lanes(dt)
    k = _select_kernel(dt, None)
    with np.errstate(invalid="ignore"):
        lt = (a.astype(np.float64) < b.astype(np.float64)) if dt.is_float() else a.astype(np.int64) < b.astype(np.int64)
    for active in (n, 37, 0):
        got = run(k, (a, b), dt, active, out_rows=2)
        np.testing.assert_array_equal(bits(got[0]), bits(np.where(np.arange(n) < active, a, b)))
        np.testing.assert_array_equal(bits(got[1]), bits(np.where(lt, a, b)))


def test_select_mode_zeroing_is_the_default():
    """The page lists ``mode`` without effect (select writes every lane): ZEROING gives the default bytes."""
    dt = pl.DT_FP16
    a, b = _compare_pair(dt)
    got = run(_select_kernel(dt, pl.MergeMode.ZEROING), (a, b), dt, 50, out_rows=2)
    np.testing.assert_array_equal(bits(got[0]), bits(np.where(np.arange(lanes(dt)) < 50, a, b)))


def test_select_of_mask_registers():
    """select(mask_t, mask_f, sel): mask_t's lanes where sel is set, mask_f's elsewhere (the page's
    mask_tensor form, psel), read back through a data select."""
    dt = pl.DT_FP32

    @pl.vector_function
    def body(ta, tb, to, n: pl.DT_INT64):
        sel = vf.update_mask(n, dtype=dt)
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        y = vf.load_align(tb, 0)
        gt = vf.gt(x, y, full)
        lt = vf.lt(x, y, full)
        k = vf.select(gt, lt, sel)
        one = vf.full(1, full, dtype=dt)
        zero = vf.full(0, full, dtype=dt)
        r = vf.select(one, zero, k)
        vf.store_align(to, r, full)
    a, b = _compare_pair(dt)
    kernel = masked_kernel(body, (dt, dt), dt)
    with np.errstate(invalid="ignore"):
        gt, lt = a > b, a < b
    for active in (64, 23, 0):
        got = run(kernel, (a, b), dt, active)
        np.testing.assert_array_equal(got, np.where(np.arange(64) < active, gt, lt).astype(np.float32))


# ---- vf.squeeze ----------------------------------------------------------------------------------------

SQUEEZE_TYPES = [pl.DT_INT8, pl.DT_UINT8, pl.DT_INT16, pl.DT_UINT16, pl.DT_FP16, pl.DT_INT32, pl.DT_UINT32,
                 pl.DT_FP32]  # the squeeze page (no BF16)


def _squeeze_kernel(dt, mode):
    @pl.vector_function
    def body(ta, to, n: pl.DT_INT64):
        m = vf.update_mask(n, dtype=dt)
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        k = vf.gt(x, 0, m)  # a scattered selection: the positive lanes below n
        if mode is None:
            y = vf.squeeze(x, k)
        else:
            y = vf.squeeze(x, k, gather_mode=mode)
        vf.store_align(to, y, full)
    return masked_kernel(body, (dt,), dt)


@pytest.mark.parametrize("dt", SQUEEZE_TYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("mode", [None, pl.SqueezeMode.NO_STORE_REG, pl.SqueezeMode.STORE_REG],
                         ids=["default", "NO_STORE_REG", "STORE_REG"])
def test_squeeze_packs_the_selected_lanes_from_lane_0(dt, mode):
    """The selected elements in order from lane 0, every later lane 0 (the page); STORE_REG changes only
    the AR byte count (test_vf_ar_stream.py), not the register."""
    x = random_data(dt, 31)
    n = lanes(dt)
    kernel = _squeeze_kernel(dt, mode)
    with np.errstate(invalid="ignore"):
        pos = x.astype(np.float64) > 0
    for active in (n, 45, 0):
        keep = pos & (np.arange(n) < active)
        ref = np.zeros(n, NP[dt])
        ref[:keep.sum()] = x[keep]
        np.testing.assert_array_equal(bits(run(kernel, (x,), dt, active)), bits(ref))


def test_squeeze_dtype_reinterprets_the_result():
    """``dtype=`` names the result's type (same width: the real backend's ``(RegTensor<dtype>&)`` cast of
    src): the packed bits are those of the FP32 source."""
    @pl.vector_function
    def body(ta, to, n: pl.DT_INT64):
        m = vf.update_mask(n, dtype=pl.DT_FP32)
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_UINT32)
        x = vf.load_align(ta, 0)
        k = vf.lt(x, 0.0, m)
        y = vf.squeeze(x, k, dtype=pl.DT_UINT32)
        vf.store_align(to, y, full)
    x = random_data(pl.DT_FP32, 33)
    kernel = masked_kernel(body, (pl.DT_FP32,), pl.DT_UINT32)
    with np.errstate(invalid="ignore"):
        keep = (x < 0) & (np.arange(64) < 40)
    ref = np.zeros(64, np.uint32)
    ref[:keep.sum()] = bits(x)[keep]
    np.testing.assert_array_equal(run(kernel, (x,), pl.DT_UINT32, 40), ref)


def test_squeeze_dtype_of_another_width_is_a_located_error():
    dt = pl.DT_FP32

    def body(ta, to, n: pl.DT_INT64):
        m = vf.update_mask(n, dtype=dt)
        x = vf.load_align(ta, 0)
        y = vf.squeeze(x, m, dtype=pl.DT_UINT16)  # <- here
        vf.store_align(to, y, m)
    assert_refused(body, (dt,), dt, "must have the width of DT_FP32", "pl.DT_UINT16")


# ---- refused dtypes --------------------------------------------------------------------------------------

def test_squeeze_of_bf16_is_a_located_error():
    dt = pl.DT_BF16

    def body(ta, to, n: pl.DT_INT64):
        m = vf.update_mask(n, dtype=dt)
        x = vf.load_align(ta, 0)
        y = vf.squeeze(x, m)  # <- here
        vf.store_align(to, y, m)
    assert_refused(body, (dt,), dt, "'src' is a register of DT_BF16", "x, m")


@pytest.mark.parametrize("op", sorted(CMP))
def test_compare_of_a_64_bit_register_is_a_located_error(op):
    """The pages list no 64-bit type."""
    dt = pl.DT_INT64
    fn = getattr(vf, op)

    def body(ta, to, n: pl.DT_INT64):
        m = vf.update_mask(n, dtype=dt)
        x = vf.load_align(ta, 0)
        k = fn(x, x, m)  # <- here
        y = vf.select(x, x, k)
        vf.store_align(to, y, m)
    assert_refused(body, (dt,), dt, "'a' is a register of DT_INT64", "x, x")
