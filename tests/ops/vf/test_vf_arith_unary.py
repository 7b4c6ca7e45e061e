"""vf.abs / neg / relu (vf_computation/basic_arithmetic, one register, exact) against an independent NumPy
reference: every dtype each page lists (abs, neg: INT8 / INT16 / INT32 / FP16 / FP32; relu: FP16 / INT32 /
FP32), a partial (M3) and an all-lanes predicate, the default and explicit ZEROING mode (the pages say
MERGING is "not supported yet": a located CompileError, as the real backend's VFZeroingOnly); an
unlisted dtype is a located CompileError.

Integers wrap (abs.md: the INT8 |-128| is -128); floats change only the sign bit (abs, neg: NaN lanes only
have to stay NaN, the pages say nothing of payloads). relu: relu.md writes max(0, src), the real
``_vf_api.py`` "src if src >= 0 else 0" and PTO-ISA's vrelu passes zeros unchanged: we take -0 -> -0 and
NaN -> NaN (NaN is not < 0)."""
from __future__ import annotations

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.errors import CompileError
from pypto_pro.language import Vf as vf

from arith_cases import ALL_TYPES, NP, check, launch, rand, unary_kernel, wrap
from located import check_location, marked_line
from vf_kernels import ALL, lanes, vf_kernel

COVERED = frozenset({"vf.abs", "vf.neg", "vf.relu"})

_SIGNED = [pl.DT_INT8, pl.DT_INT16, pl.DT_INT32, pl.DT_INT64, pl.DT_FP16, pl.DT_FP32]  # INT64: the real EmitVFAbs / EmitVFNeg take it (abs.md, neg.md list the rest)
TYPES = {"abs": _SIGNED, "neg": _SIGNED, "relu": [pl.DT_FP16, pl.DT_INT32, pl.DT_INT64, pl.DT_FP32]}


def reference(op: str, dt, a: np.ndarray) -> np.ndarray:
    t = NP[dt]
    if t.kind in "iu":
        x = [int(v) for v in a]
        return wrap({"abs": [abs(v) for v in x], "neg": [-v for v in x], "relu": [max(v, 0) for v in x]}[op], dt)
    bits = a.view(f"u{t.itemsize}")
    sign = t.type(-0.0).view(bits.dtype)
    if op == "abs":
        return (bits & ~sign).view(t)
    if op == "neg":
        return (bits ^ sign).view(t)
    return np.where(a.astype(np.float64) < 0, np.zeros_like(a), a)


CASES = [(op, dt, pattern, mode) for op in sorted(TYPES) for dt in TYPES[op]
         for pattern, mode in (("M3", "default"), ("ALL", "default"), ("M3", "ZEROING"))
         if mode != "ZEROING" or dt is TYPES[op][-1]]


@pytest.mark.parametrize("op,dt,pattern,mode", CASES, ids=lambda v: getattr(v, "name", v))
def test_unary_op_against_numpy(op, dt, pattern, mode):
    kernel = unary_kernel(op, dt, pattern, mode)
    for seed in (31, 32):
        a, old = rand(dt, seed), rand(dt, seed + 50)
        check(launch(kernel, dt, a, None, old), reference(op, dt, a), old, pattern, mode)


def test_hand_checked_lanes():
    """abs.md: INT8 |-128| = -128 (not saturated); neg of INT32 min is itself; relu keeps -0.0."""
    for op, dt, x, want in (("abs", pl.DT_INT8, -128, -128), ("neg", pl.DT_INT32, -2**31, -2**31),
                            ("abs", pl.DT_FP16, -0.0, 0.0), ("neg", pl.DT_FP32, 0.0, -0.0)):
        n, t = lanes(dt), NP[dt]
        got = launch(unary_kernel(op, dt, "ALL", "default"), dt, np.full(n, x, t), None, np.ones(n, t))
        np.testing.assert_array_equal(got.view(f"u{t.itemsize}"), np.full(n, want, t).view(f"u{t.itemsize}"))
    got = launch(unary_kernel("relu", pl.DT_FP32, "ALL", "default"), pl.DT_FP32, np.full(64, -0.0, np.float32),
                 None, np.ones(64, np.float32))
    assert np.signbit(got).all() and (got == 0).all()


REFUSED = [(op, dt) for op in sorted(TYPES) for dt in ALL_TYPES if dt not in TYPES[op]]


def _body(op, dt, mode=None):
    fn = getattr(vf, op)

    @pl.vector_function
    def body(ta, to):
        m = vf.create_mask(pattern=ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        x = fn(x, m, mode=mode)  # <- here
        vf.store_align(to, x, m)
    return body


@pytest.mark.parametrize("op,dt", REFUSED, ids=lambda v: getattr(v, "name", v))
def test_dtype_the_page_does_not_list_is_a_located_error(op, dt):
    body = _body(op, dt)
    with pytest.raises(CompileError, match=f"'src' is a register of {dt.name}") as info:
        vf_kernel(body, [(dt, [1, lanes(dt)])], (dt, [1, lanes(dt)])).compile()
    check_location(info.value, *marked_line(body), "x, m")


@pytest.mark.parametrize("op", sorted(TYPES))
def test_merging_is_a_located_error(op):
    body = _body(op, pl.DT_FP32, pl.MergeMode.MERGING)
    with pytest.raises(CompileError, match="MERGING is not supported here") as info:
        vf_kernel(body, [(pl.DT_FP32, [1, 64])], (pl.DT_FP32, [1, 64])).compile()
    check_location(info.value, *marked_line(body), "mode)")
