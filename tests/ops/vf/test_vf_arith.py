"""vf.add / sub / mul / div / max / min / prelu (vf_computation/basic_arithmetic, two registers) against
an independent NumPy reference: every dtype each page lists, a partial (M3) and an all-lanes predicate,
the default / explicit ZEROING mode and MERGING where the page takes it (add, max, min); a dtype the page
does not list and MERGING where the page says "not supported yet" are located CompileErrors.

References: integers computed exactly (Python ints) and wrapped to the width; floats computed in float64
and rounded once to the lane type (for + - * / that is the IEEE result of fp32 / fp16 / bf16, since 53 >=
2p + 2 bits). Results are compared as bit patterns; a NaN result only has to be a NaN (the pages say
nothing of NaN payloads)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.errors import CompileError
from pypto_pro.language import Vf as vf

from arith_cases import ALL_TYPES, FLOATS, NP, binary_kernel, check, launch, rand, round_to, specials, wrap
from located import check_location, marked_line
from vf_kernels import ALL, lanes, vf_kernel

COVERED = frozenset({"vf.add", "vf.sub", "vf.mul", "vf.div", "vf.max", "vf.min", "vf.prelu"})

F16_32 = [pl.DT_FP16, pl.DT_FP32]
TYPES = {  # the dtypes each page lists
    "add": ALL_TYPES, "sub": ALL_TYPES, "max": ALL_TYPES, "min": ALL_TYPES,
    "mul": [pl.DT_INT16, pl.DT_UINT16, pl.DT_INT32, pl.DT_UINT32, pl.DT_FP16, pl.DT_BF16, pl.DT_FP32],
    "div": [pl.DT_INT16, pl.DT_UINT16, pl.DT_INT32, pl.DT_UINT32, pl.DT_FP16, pl.DT_FP32],
    "prelu": F16_32}
MERGING = {"add", "max", "min"}  # the pages of the others: MERGING "not supported yet"


def _f64(x):
    return np.asarray(x).astype(np.float64)


def _int(x):
    return [int(v) for v in x]


def _max_ref(a, b):
    """max.md: the larger; max(-0, +0) = +0 (a -0 only from two -0); a NaN operand gives NaN (PTO-ISA
    vmax; the page is silent)."""
    out = []
    for x, y in zip(_f64(a), _f64(b)):
        if np.isnan(x) or np.isnan(y):
            out.append(np.nan)
        elif x == y == 0:
            out.append(-0.0 if np.signbit(x) and np.signbit(y) else 0.0)
        else:
            out.append(x if x > y else y)
    return np.array(out)


def _min_ref(a, b):
    """min.md: the smaller; min(-0, +0) = -0 (the page gives src0 = -0; we take the same for +0, -0)."""
    out = []
    for x, y in zip(_f64(a), _f64(b)):
        if np.isnan(x) or np.isnan(y):
            out.append(np.nan)
        elif x == y == 0:
            out.append(-0.0 if np.signbit(x) or np.signbit(y) else 0.0)
        else:
            out.append(x if x < y else y)
    return np.array(out)


def _idiv_ref(a, b):
    """Integer division truncating toward zero (C semantics); INT_MIN / -1 wraps (the page is silent:
    our choice, the two's complement result)."""
    return [(abs(x) // abs(y)) * (1 if (x < 0) == (y < 0) else -1) for x, y in zip(_int(a), _int(b))]


def reference(op: str, dt, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    t = NP[dt]
    if t.kind in "iu":
        if op in ("max", "min"):
            return np.array([(max if op == "max" else min)(x, y) for x, y in zip(_int(a), _int(b))]).astype(t)
        f = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y}.get(op)
        return wrap(_idiv_ref(a, b) if op == "div" else [f(x, y) for x, y in zip(_int(a), _int(b))], dt)
    with np.errstate(all="ignore"):
        x, y = _f64(a), _f64(b)
        r = {"add": lambda: x + y, "sub": lambda: x - y, "mul": lambda: x * y, "div": lambda: x / y,
             "max": lambda: _max_ref(a, b), "min": lambda: _min_ref(a, b),
             # prelu.md: src where src >= 0, else src * slope (one rounding of the product)
             "prelu": lambda: np.where(x >= 0, x, x * y)}[op]()
    return round_to(r, dt)


def _operands(op: str, dt, seed: int):
    a, b = rand(dt, seed), rand(dt, seed + 100)
    if op == "div" and NP[dt].kind in "iu":
        b[b == 0] = 1  # integer division by zero: the page does not say what it gives
    return a, b


def _pairs(dt, n):
    """Every (special, special) pair, over as many registers as it takes."""
    sp = specials(dt)
    pairs = list(itertools.product(sp, sp))
    for k in range(0, len(pairs), n):
        chunk = pairs[k:k + n]
        chunk += [(sp[0], sp[0])] * (n - len(chunk))
        yield np.array([p[0] for p in chunk], sp.dtype), np.array([p[1] for p in chunk], sp.dtype)


# explicit ZEROING (the default's path) once per op, on its last dtype; MERGING where the page takes it
CASES = [(op, dt, pattern, mode) for op in sorted(TYPES) for dt in TYPES[op]
         for pattern, mode in (("M3", "default"), ("ALL", "default"), ("M3", "ZEROING"), ("M3", "MERGING"))
         if (mode != "MERGING" or op in MERGING) and (mode != "ZEROING" or dt is TYPES[op][-1])]


@pytest.mark.parametrize("op,dt,pattern,mode", CASES, ids=lambda v: getattr(v, "name", v))
def test_binary_op_against_numpy(op, dt, pattern, mode):
    """Random lanes with the dtype's special values mixed in, then every pair of special values."""
    kernel = binary_kernel(op, dt, pattern, mode)
    a, b = _operands(op, dt, 11)
    old = rand(dt, 12)
    check(launch(kernel, dt, a, b, old), reference(op, dt, a, b), old, pattern, mode)
    if pattern == "ALL":
        for a, b in _pairs(dt, lanes(dt)):
            if op == "div" and NP[dt].kind in "iu":
                b = np.where(b == 0, np.ones_like(b), b)
            check(launch(kernel, dt, a, b, old), reference(op, dt, a, b), old, pattern, mode)


def test_int_wraparound_and_truncation():
    """Hand-checked lanes: INT8 127 + 1 = -128, UINT8 0 - 1 = 255, INT16 -32768 * -1 = -32768, INT32
    -7 / 2 = -3 (toward zero), UINT32 7 / 2 = 3."""
    cases = [("add", pl.DT_INT8, 127, 1, -128), ("sub", pl.DT_UINT8, 0, 1, 255),
             ("mul", pl.DT_INT16, -32768, -1, -32768), ("div", pl.DT_INT32, -7, 2, -3),
             ("div", pl.DT_UINT32, 7, 2, 3), ("max", pl.DT_UINT16, 65535, 0, 65535),
             ("min", pl.DT_INT32, -2**31, 2**31 - 1, -2**31)]
    for op, dt, x, y, want in cases:
        n, t = lanes(dt), NP[dt]
        got = launch(binary_kernel(op, dt, "ALL", "default"), dt, np.full(n, x, t), np.full(n, y, t),
                     np.zeros(n, t))
        assert (got == t.type(want)).all(), (op, dt.name, got[:4])


def test_signed_zeros_of_max_and_min():
    """max.md: max(-0, +0) = +0; min.md: min(-0, +0) = -0 (both operand orders, fp32 / fp16 / bf16)."""
    for dt in FLOATS:
        n, t = lanes(dt), NP[dt]
        a = np.resize(np.array([-0.0, 0.0], t), n)
        b = np.resize(np.array([0.0, -0.0], t), n)
        for op, neg in (("max", False), ("min", True)):
            got = launch(binary_kernel(op, dt, "ALL", "default"), dt, a, b, np.ones(n, t))
            assert (got == 0).all() and (np.signbit(_f64(got)) == neg).all(), (op, dt.name)


REFUSED = [(op, dt) for op in sorted(TYPES) for dt in ALL_TYPES if dt not in TYPES[op]]


def _plain_body(op, dt):
    fn = getattr(vf, op)

    @pl.vector_function
    def body(ta, to):
        m = vf.create_mask(pattern=ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        z = fn(x, x, m)  # <- here
        vf.store_align(to, z, m)
    return body


@pytest.mark.parametrize("op,dt", REFUSED, ids=lambda v: getattr(v, "name", v))
def test_dtype_the_page_does_not_list_is_a_located_error(op, dt):
    body = _plain_body(op, dt)
    k = vf_kernel(body, [(dt, [1, lanes(dt)])], (dt, [1, lanes(dt)]))
    with pytest.raises(CompileError, match=f"'src0?' is a register of {dt.name}") as info:
        k.compile()
    check_location(info.value, *marked_line(body), "x, x")


def _merging_body(op):
    fn, dt = getattr(vf, op), pl.DT_FP32

    @pl.vector_function
    def body(ta, to):
        m = vf.create_mask(pattern=ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        x = fn(x, x, m, mode=pl.MergeMode.MERGING)  # <- here
        vf.store_align(to, x, m)
    return body


@pytest.mark.parametrize("op", sorted(set(TYPES) - MERGING))
def test_merging_where_the_page_says_not_supported_is_a_located_error(op):
    """sub / mul / div / prelu pages: MERGING "not supported yet" (the real backend: VFZeroingOnly)."""
    body = _merging_body(op)
    with pytest.raises(CompileError, match="MERGING is not supported here") as info:
        vf_kernel(body, [(pl.DT_FP32, [1, 64])], (pl.DT_FP32, [1, 64])).compile()
    check_location(info.value, *marked_line(body), "pl.MergeMode")
