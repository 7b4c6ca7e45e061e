"""vf.mull / addc / subc (vf_computation/basic_arithmetic: 32-bit lanes with a second result) against an
independent Python-integer reference: INT32 and UINT32 (every page lists those two; the others are a
located CompileError), a partial (M3) and an all-lanes predicate, the default / explicit ZEROING mode
and MERGING, lanes with int min / max, 0, +-1 and wrap-around.

- mull.md: ``dst_lo = product mod 2**32``, ``dst_hi = floor(product / 2**32)`` of the exact product
  (signed for INT32: the high word is the arithmetic shift).
- addc.md: ``{carry, dst} = src0 + src1 + carry_src`` on the 32-bit patterns; the carry is set where the
  sum carries out of bit 31.
- subc.md's formula reads ``{borrow, dst} = src0 - src1 - borrow_src``, but its mechanism (two's complement:
  ``src0 + ~src1 + borrow_src``, the flag set where that sum has no carry out) and its runnable example
  (borrow_src set in every lane, expecting ``src0 - src1``) say ``borrow_src`` set means "no borrow
  pending". We follow the mechanism and the example: ``dst = src0 - src1 - 1 + borrow_src`` (wrapping),
  the flag where that difference of the unsigned patterns is negative (docs/vf.md states the open question
  about the flag's polarity).

Unselected lanes: the pages' prototypes take ``mode=``, but their tables do not describe it, the real
backend emits vmull / vaddcs / vsubcs with no mode operand (so ``mode=MERGING`` is dropped), and
AscendC's C API pages for these instructions (asc_mull / asc_addc / asc_subc) say unselected elements
are zeroed in the outputs: every output, the carry / borrow mask included, is 0 there whatever ``mode``
says."""
from __future__ import annotations

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.errors import CompileError
from pypto_pro.language import Vf as vf

from arith_cases import ALL_TYPES, MODES, NP, PATTERNS, active_lanes, check, from_torch, rand, to_torch, wrap
from located import check_location, marked_line
from vf_kernels import ALL, lanes, vf_kernel

COVERED = frozenset({"vf.mull", "vf.addc", "vf.subc"})

TYPES = [pl.DT_INT32, pl.DT_UINT32]
N = 64
CARRY_IN = pl.MaskPattern.H  # carry / borrow in: the low half of the lanes (mask_pattern.md)


def mull_kernel(dt, pattern: str, mode: str):
    mp, md = PATTERNS[pattern], MODES[mode]

    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=mp, dtype=dt)
        full = vf.create_mask(pattern=ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        y = vf.load_align(ta, N)
        lo = vf.load_align(tb, 0)
        hi = vf.load_align(tb, 0)
        lo, hi = vf.mull(x, y, m, mode=md)
        vf.store_align(to, lo, full)
        vf.store_align(to, hi, full, N)
    return vf_kernel(body, [(dt, [2, N]), (dt, [1, N])], (dt, [2, N]))


def carry_kernel(op: str, dt, pattern: str, mode: str):
    """``flag, d = vf.addc / subc(x, y, carry_in, m)``; stores d, then the flag as 1 / 0 lanes."""
    fn, mp, md = getattr(vf, op), PATTERNS[pattern], MODES[mode]

    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=mp, dtype=dt)
        full = vf.create_mask(pattern=ALL, dtype=dt)
        cin = vf.create_mask(pattern=CARRY_IN, dtype=dt)
        flag = vf.create_mask(pattern=ALL, dtype=dt)
        one = vf.full(1, full, dtype=dt)
        zero = vf.full(0, full, dtype=dt)
        x = vf.load_align(ta, 0)
        y = vf.load_align(ta, N)
        d = vf.load_align(tb, 0)
        flag, d = fn(x, y, cin, m, mode=md)
        f = vf.select(one, zero, flag)
        vf.store_align(to, d, full)
        vf.store_align(to, f, full, N)
    return vf_kernel(body, [(dt, [2, N]), (dt, [1, N])], (dt, [2, N]))


def _launch(kernel, dt, a, b, old):
    out = to_torch(np.zeros((2, N), NP[dt]))
    kernel[None, 1](to_torch(np.stack([a, b])), to_torch(old[None]), out)
    return from_torch(out, dt)


def _u32(x):
    return [int(v) & 0xFFFFFFFF for v in x]


CASES = [(dt, pattern, mode) for dt in TYPES
         for pattern, mode in (("M3", "default"), ("ALL", "default"), ("M3", "ZEROING"), ("M3", "MERGING"))]


@pytest.mark.parametrize("dt,pattern,mode", CASES, ids=lambda v: getattr(v, "name", v))
def test_mull_against_python_ints(dt, pattern, mode):
    k = mull_kernel(dt, pattern, mode)
    for seed in (51, 52):
        a, b, old = rand(dt, seed), rand(dt, seed + 10), rand(dt, seed + 20)
        prod = [int(x) * int(y) for x, y in zip(a, b)]
        got = _launch(k, dt, a, b, old)
        check(got[0], wrap([q % 2**32 for q in prod], dt), old, pattern, "ZEROING")  # whatever mode says
        check(got[1], wrap([q >> 32 for q in prod], dt), old, pattern, "ZEROING")


@pytest.mark.parametrize("op", ["addc", "subc"])
@pytest.mark.parametrize("dt,pattern,mode", CASES, ids=lambda v: getattr(v, "name", v))
def test_carry_ops_against_python_ints(op, dt, pattern, mode):
    k = carry_kernel(op, dt, pattern, mode)
    cin = (np.arange(N) < N // 2).astype(int)
    act = active_lanes(pattern, N)
    for seed in (61, 62):
        a, b, old = rand(dt, seed), rand(dt, seed + 10), rand(dt, seed + 20)
        if op == "addc":
            total = [x + y + c for x, y, c in zip(_u32(a), _u32(b), cin)]
            flag = np.array([t >= 2**32 for t in total])
        else:
            total = [x - y - 1 + c for x, y, c in zip(_u32(a), _u32(b), cin)]
            flag = np.array([t < 0 for t in total])
        got = _launch(k, dt, a, b, old)
        check(got[0], wrap([t % 2**32 for t in total], dt), old, pattern, "ZEROING")  # whatever mode says
        np.testing.assert_array_equal(got[1], np.where(act, flag, False).astype(NP[dt]), err_msg=f"{op} flag")


def test_subc_with_every_borrow_in_set_is_the_difference():
    """subc.md's example: borrow_src set in every lane (no borrow pending) gives src0 - src1, wrapping; the
    flag is set where src0 < src1 (no carry out of src0 + ~src1 + 1)."""
    dt = pl.DT_UINT32

    @pl.vector_function
    def body(ta, tb, to):
        full = vf.create_mask(pattern=ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        y = vf.load_align(ta, N)
        flag, d = vf.subc(x, y, full, full)
        one = vf.full(1, full, dtype=dt)
        zero = vf.full(0, full, dtype=dt)
        f = vf.select(one, zero, flag)
        vf.store_align(to, d, full)
        vf.store_align(to, f, full, N)
    k = vf_kernel(body, [(dt, [2, N]), (dt, [1, N])], (dt, [2, N]))
    a = np.array([5, 7, 0, 2**32 - 1] * 16, np.uint32)
    b = np.array([7, 5, 1, 2**32 - 1] * 16, np.uint32)
    got = _launch(k, dt, a, b, np.zeros(N, np.uint32))
    np.testing.assert_array_equal(got[0], ((a.astype(np.int64) - b) % 2**32).astype(np.uint32))
    np.testing.assert_array_equal(got[1], (a < b).astype(np.uint32))


REFUSED = [dt for dt in ALL_TYPES if dt not in TYPES]


def _mull_body(dt):
    @pl.vector_function
    def body(ta, to):
        m = vf.create_mask(pattern=ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        lo, _hi = vf.mull(x, x, m)  # <- here
        vf.store_align(to, lo, m)
    return body


def _addc_body(dt):
    @pl.vector_function
    def body(ta, to):
        m = vf.create_mask(pattern=ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        _c, s = vf.addc(x, x, m, m)  # <- here
        vf.store_align(to, s, m)
    return body


def _subc_body(dt):
    @pl.vector_function
    def body(ta, to):
        m = vf.create_mask(pattern=ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        _c, s = vf.subc(x, x, m, m)  # <- here
        vf.store_align(to, s, m)
    return body


@pytest.mark.parametrize("make", [_mull_body, _addc_body, _subc_body], ids=["mull", "addc", "subc"])
@pytest.mark.parametrize("dt", REFUSED, ids=lambda v: v.name)
def test_dtype_the_page_does_not_list_is_a_located_error(make, dt):
    body = make(dt)
    with pytest.raises(CompileError, match=f"'src0' is a register of {dt.name}") as info:
        vf_kernel(body, [(dt, [1, lanes(dt)])], (dt, [1, lanes(dt)])).compile()
    check_location(info.value, *marked_line(body), "x, x")
