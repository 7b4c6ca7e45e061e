"""vf.and_ / or_ / xor / not_ / shift_left / shift_right against NumPy references written from their
pages (``vf_computation/logical_computation``).

The bitwise ops work on the lanes' bit patterns whatever the dtype (the pages list float types too);
inactive lanes are 0 (ZEROING, the only mode the pages support: MERGING is a located error). The data
travels as unsigned integers of the lane width and is ``vf.bit_cast`` to the dtype under test in the
register, so the 8-bit float types need no host representation. Shifts: unsigned types shift
logically, signed ones arithmetically; a per-lane amount past the width gives 0, or -1 for a right
shift of a negative lane (the pages); the pages define that rule for the register form only, and the
scalar form is tested to follow it (our choice, see ``ops/vf/arith.py``). A negative amount is
undefined on the pages and is not tested.
"""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.language import Vf as vf

from vf_masked import NP, UINT, assert_refused, lanes, masked_kernel, random_data, run

COVERED = frozenset({"vf.and_", "vf.or_", "vf.xor", "vf.not_", "vf.shift_left", "vf.shift_right"})

F8 = [pl.DT_FP8E4M3FN, pl.DT_FP8E5M2, pl.DT_FP8E8M0, pl.DT_HF8]
INTS = [pl.DT_INT8, pl.DT_UINT8, pl.DT_INT16, pl.DT_UINT16, pl.DT_INT32, pl.DT_UINT32]
# the and_ / or_ / xor pages; the not_ page lists the integers, FP16 and FP32
BIT_TYPES = INTS + [pl.DT_FP16, pl.DT_BF16, pl.DT_FP32] + F8
NOT_TYPES = INTS + [pl.DT_FP16, pl.DT_FP32]
UDT = {8: pl.DT_UINT8, 16: pl.DT_UINT16, 32: pl.DT_UINT32}


def _bits_data(width: int, seed: int) -> np.ndarray:
    """One register of random bit patterns of ``width`` bits (every pattern possible: NaNs, -0.0 ...)."""
    g = np.random.default_rng(seed)
    u = UINT[width // 8]
    x = g.integers(0, 2 ** width, 256 // (width // 8), dtype=np.uint64).astype(u)
    x[:4] = np.array([0, 2 ** width - 1, 2 ** (width - 1), 1], np.uint64).astype(u)
    return x


def _bitwise_kernel(dt, with_not: bool):
    """Rows: and_, or_, xor (and not_) of a and b as ``dt`` under update_mask(n), stored as raw bits."""
    ut = UDT[dt.bits]

    @pl.vector_function
    def body(ta, tb, to, n: pl.DT_INT64):
        m = vf.update_mask(n, dtype=dt)
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=ut)
        ra = vf.load_align(ta, 0)
        rb = vf.load_align(tb, 0)
        x = vf.bit_cast(ra, dtype=dt)
        y = vf.bit_cast(rb, dtype=dt)
        z = vf.and_(x, y, m)
        zb = vf.bit_cast(z, dtype=ut)
        vf.store_align(to, zb, full, [0, 0])
        z = vf.or_(x, y, m)
        zb = vf.bit_cast(z, dtype=ut)
        vf.store_align(to, zb, full, [1, 0])
        z = vf.xor(x, y, m, mode=pl.MergeMode.ZEROING)
        zb = vf.bit_cast(z, dtype=ut)
        vf.store_align(to, zb, full, [2, 0])
        if with_not:
            z = vf.not_(x, m)
            zb = vf.bit_cast(z, dtype=ut)
            vf.store_align(to, zb, full, [3, 0])
    return masked_kernel(body, (ut, ut), ut, out_rows=4)


@pytest.mark.parametrize("dt", BIT_TYPES, ids=lambda d: d.name)
def test_bitwise_ops_every_dtype_partial_and_all_lanes(dt):
    a, b = _bits_data(dt.bits, 1), _bits_data(dt.bits, 2)
    n = lanes(dt)
    with_not = dt in NOT_TYPES
    kernel = _bitwise_kernel(dt, with_not)
    for active in (n, 29, 0):
        got = run(kernel, (a, b), UDT[dt.bits], active, out_rows=4)
        on = np.arange(n) < active
        refs = [a & b, a | b, a ^ b] + ([~a] if with_not else [])
        for j, (name, ref) in enumerate(zip(("and_", "or_", "xor", "not_"), refs)):
            np.testing.assert_array_equal(got[j], np.where(on, ref, 0).astype(a.dtype),
                                          err_msg=f"vf.{name} {dt.name}, {active} active lanes")


@pytest.mark.parametrize("op", ["and_", "or_", "xor", "not_"])
def test_bitwise_ops_on_mask_registers(op):
    """Mask operands (the pages' mask_tensor form): the predicate operation, lanes outside the last mask 0."""
    dt = pl.DT_FP16
    fn = getattr(vf, op)

    @pl.vector_function
    def body(ta, tb, to, n: pl.DT_INT64):
        sel = vf.update_mask(n, dtype=dt)
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        y = vf.load_align(tb, 0)
        p = vf.gt(x, y, full)
        q = vf.gt(x, 0.0, full)
        if op == "not_":
            k = fn(p, sel)
        else:
            k = fn(p, q, sel)
        one = vf.full(1, full, dtype=dt)
        zero = vf.full(0, full, dtype=dt)
        r = vf.select(one, zero, k)
        vf.store_align(to, r, full)
    a, b = random_data(dt, 5, specials=False), random_data(dt, 6, specials=False)
    kernel = masked_kernel(body, (dt, dt), dt)
    p, q = a > b, a > 0
    ref = {"and_": p & q, "or_": p | q, "xor": p ^ q, "not_": ~p}[op]
    for active in (128, 70, 0):
        got = run(kernel, (a, b), dt, active)
        np.testing.assert_array_equal(got, (ref & (np.arange(128) < active)).astype(np.float16))


# ---- shifts -------------------------------------------------------------------------------------------------


def _shift_ref(x: np.ndarray, amount: np.ndarray, left: bool) -> np.ndarray:
    """The pages' shift of each lane of x (its dtype) by ``amount`` (int64, >= 0), from Python integers."""
    w = x.dtype.itemsize * 8
    signed = x.dtype.kind == "i"
    out = []
    for v, s in zip(x.tolist(), amount.tolist()):
        if left:
            r = 0 if s >= w else (v << s)
        elif s >= w:
            r = -1 if (signed and v < 0) else 0
        else:
            r = v >> s  # Python's >> on a signed value is arithmetic, on a non-negative one logical
        out.append(r & (2 ** w - 1))
    return np.array(out, np.uint64).astype(UINT[w // 8]).view(x.dtype)


def _signed_of(dt):
    return {8: pl.DT_INT8, 16: pl.DT_INT16, 32: pl.DT_INT32}[dt.bits]


def _shift_kernel(dt):
    """Rows: shift_left / shift_right of a by the scalar s, by the register b (a's dtype), and by b read as
    the signed integer of a's width (the real backend's register type), all under update_mask(n)."""
    sdt = _signed_of(dt)

    @pl.vector_function
    def body(ta, tb, to, n: pl.DT_INT64, s: pl.DT_INT64):
        m = vf.update_mask(n, dtype=dt)
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        y = vf.load_align(tb, 0)
        ys = vf.bit_cast(y, dtype=sdt)
        r = vf.shift_left(x, s, m)
        vf.store_align(to, r, full, [0, 0])
        r = vf.shift_right(x, s, m)
        vf.store_align(to, r, full, [1, 0])
        r = vf.shift_left(x, y, m)
        vf.store_align(to, r, full, [2, 0])
        r = vf.shift_right(x, y, m, mode=pl.MergeMode.ZEROING)
        vf.store_align(to, r, full, [3, 0])
        r = vf.shift_left(x, ys, m)
        vf.store_align(to, r, full, [4, 0])
        r = vf.shift_right(x, ys, m)
        vf.store_align(to, r, full, [5, 0])
    return masked_kernel(body, (dt, dt), dt, out_rows=6, scalar=True)


@pytest.mark.parametrize("dt", INTS, ids=lambda d: d.name)
def test_shifts_every_int_dtype_scalar_and_per_lane_amounts(dt):
    """Amounts 0 .. width + 3 (past the width included) per lane and as scalars; a partial and an all-
    lanes mask; the data holds the type's min / max, 0, 1 and random values of both signs."""
    w, n = dt.bits, lanes(dt)
    x = random_data(dt, 41)
    amounts = np.random.default_rng(42).integers(0, w + 4, n)
    amounts[:4] = [0, w - 1, w, w + 1]
    b = amounts.astype(NP[dt])
    kernel = _shift_kernel(dt)
    for s in (0, 1, 3, w - 1, w, w + 5):
        for active in (n, 19):
            got = run(kernel, (x, b), dt, active, out_rows=6, s=s)
            on = np.arange(n) < active
            refs = [_shift_ref(x, np.full(n, s), True), _shift_ref(x, np.full(n, s), False),
                    _shift_ref(x, amounts, True), _shift_ref(x, amounts, False)]
            refs += refs[2:4]
            for j, ref in enumerate(refs):
                np.testing.assert_array_equal(got[j], np.where(on, ref, 0).astype(x.dtype),
                                              err_msg=f"{dt.name} row {j}, s={s}, {active} active lanes")


def test_the_pages_shift_examples():
    """0b1010101010101010 as UINT16: << 1 -> 0b0101010101010100, >> 1 -> 0b0101010101010101; as INT16:
    << 3 -> 0b0101010101010000, >> 1 -> 0b1101010101010101, >> 3 -> 0b1111010101010101 (the pages)."""
    pat = np.uint16(0b1010101010101010)
    for dt, s, left, want in ((pl.DT_UINT16, 1, True, 0b0101010101010100), (pl.DT_UINT16, 1, False, 0b0101010101010101),
                              (pl.DT_INT16, 3, True, 0b0101010101010000), (pl.DT_INT16, 1, False, 0b1101010101010101),
                              (pl.DT_INT16, 3, False, 0b1111010101010101)):
        x = np.full(128, pat, np.uint16).view(NP[dt])
        got = run(_shift_kernel(dt), (x, x), dt, 128, out_rows=6, s=s)
        assert (got[0 if left else 1].view(np.uint16) == want).all(), (dt.name, s, left)


# ---- refusals ---------------------------------------------------------------------------------------------------

def _merging_unary(fn, dt):
    def body(ta, to, n: pl.DT_INT64):
        m = vf.update_mask(n, dtype=dt)
        x = vf.load_align(ta, 0)
        y = fn(x, m, mode=pl.MergeMode.MERGING)  # <- here
        vf.store_align(to, y, m)
    return body


def _merging_shift(fn, dt):
    def body(ta, to, n: pl.DT_INT64):
        m = vf.update_mask(n, dtype=dt)
        x = vf.load_align(ta, 0)
        y = fn(x, 1, m, mode=pl.MergeMode.MERGING)  # <- here
        vf.store_align(to, y, m)
    return body


def _merging_binary(fn, dt):
    def body(ta, to, n: pl.DT_INT64):
        m = vf.update_mask(n, dtype=dt)
        x = vf.load_align(ta, 0)
        y = fn(x, x, m, mode=pl.MergeMode.MERGING)  # <- here
        vf.store_align(to, y, m)
    return body


@pytest.mark.parametrize("op", ["and_", "or_", "xor", "not_", "shift_left", "shift_right"])
def test_merging_is_a_located_error(op):
    """The pages: MergeMode.MERGING is not supported (the real backend checks ZEROING only)."""
    dt = pl.DT_INT16
    make = _merging_unary if op == "not_" else _merging_shift if op.startswith("shift") else _merging_binary
    assert_refused(make(getattr(vf, op), dt), (dt,), dt, "MERGING is not supported", "pl.MergeMode.MERGING")


@pytest.mark.parametrize("dt", [pl.DT_BF16, pl.DT_FP8E4M3FN], ids=lambda d: d.name)
def test_not_of_a_type_its_page_does_not_list_is_a_located_error(dt):
    ut = UDT[dt.bits]

    def body(ta, to, n: pl.DT_INT64):
        m = vf.update_mask(n, dtype=dt)
        r = vf.load_align(ta, 0)
        x = vf.bit_cast(r, dtype=dt)
        y = vf.not_(x, m)  # <- here
        z = vf.bit_cast(y, dtype=ut)
        vf.store_align(to, z, m)
    assert_refused(body, (ut,), ut, f"'src' is a register of {dt.name}", "x, m")


def test_a_shift_register_of_another_width_is_a_located_error():
    """The pages: the amount register has the source's dtype (the real backend: a signed int of its width)."""
    def body(ta, to, n: pl.DT_INT64):
        m = vf.update_mask(n, dtype=pl.DT_INT16)
        x = vf.load_align(ta, 0)
        r = vf.load_align(ta, 0, dtype=pl.DT_INT32)
        y = vf.shift_left(x, r, m)  # <- here
        vf.store_align(to, y, m)
    assert_refused(body, (pl.DT_INT16,), pl.DT_INT16, "'shift' is a register of DT_INT32", "r, m")


def test_a_shift_of_a_float_register_is_a_located_error():
    def body(ta, to, n: pl.DT_INT64):
        m = vf.update_mask(n, dtype=pl.DT_FP32)
        x = vf.load_align(ta, 0)
        y = vf.shift_right(x, 2, m)  # <- here
        vf.store_align(to, y, m)
    assert_refused(body, (pl.DT_FP32,), pl.DT_FP32, "'src' is a register of DT_FP32", "x, 2")
