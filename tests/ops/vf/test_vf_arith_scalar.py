"""vf.adds / subs / muls / maxs / mins / leaky_relu (vf_computation/basic_arithmetic, a register and a
scalar) against an independent NumPy reference: every dtype each page lists, a partial (M3) and an
all-lanes predicate, the default and explicit ZEROING mode (every one of these pages says MERGING is
"not supported yet": a located CompileError, as the real backend's VFZeroingOnly), special scalars (int
min / max, +-0, +-inf, NaN) and special lanes.

The scalar is converted to the register's dtype first (each op's C++ form takes a scalar of the lane
type), then the op is computed as in test_vf_arith.py: integers exactly and wrapped, floats in float64
rounded once. ``vf.subs`` has no page: the real ``_vf_api.py`` declares it (``src - scalar``, emitted as
``vadds(src, -scalar)``, the same value in two's complement and in IEEE arithmetic) and the real backend
takes the dtypes of ``adds``, so it is tested as adds is. ``leaky_relu``: the page names its scalar
``scalar``, the real ``_vf_api.py`` (what kernels call) ``alpha``; we follow ``_vf_api.py``."""
from __future__ import annotations

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.errors import CompileError
from pypto_pro.language import Vf as vf

from arith_cases import ALL_TYPES, NP, check, from_torch, launch, rand, round_to, scalar_kernel, to_torch, wrap
from located import check_location, marked_line
from vf_kernels import ALL, lanes, to_mte3, to_v, vf_kernel

COVERED = frozenset({"vf.adds", "vf.subs", "vf.muls", "vf.maxs", "vf.mins", "vf.leaky_relu"})

TYPES = {"adds": ALL_TYPES, "subs": ALL_TYPES, "maxs": ALL_TYPES, "mins": ALL_TYPES,
         "muls": [pl.DT_INT16, pl.DT_UINT16, pl.DT_INT32, pl.DT_UINT32, pl.DT_FP16, pl.DT_FP32],
         "leaky_relu": [pl.DT_FP16, pl.DT_FP32]}


def scalars(op: str, dt) -> list:
    """An ordinary scalar first, then the special ones."""
    t = NP[dt]
    if t.kind in "iu":
        info = np.iinfo(t)
        return [7, int(info.min), int(info.max)] + ([-1] if t.kind == "i" else [])
    if op == "leaky_relu":
        return [0.1, -2.5, 0.0, float("inf")]
    return [0.1, -0.0, 0.0, float("inf"), float("-inf"), float("nan")]


def _f64(x):
    return np.asarray(x).astype(np.float64)


def reference(op: str, dt, a: np.ndarray, s) -> np.ndarray:
    t = NP[dt]
    s_t = np.array([s]).astype(t)[0]  # the scalar in the lane type
    if t.kind in "iu":
        x, y = [int(v) for v in a], int(s_t)
        r = {"adds": [v + y for v in x], "subs": [v - y for v in x], "muls": [v * y for v in x],
             "maxs": [max(v, y) for v in x], "mins": [min(v, y) for v in x]}[op]
        return wrap(r, dt)
    x, y = _f64(a), float(s_t)
    with np.errstate(all="ignore"):
        if op == "maxs":  # maxs.md: max(-0, +0) = +0; NaN gives NaN
            r = np.where(np.isnan(x) | np.isnan(y), np.nan, np.where(x > y, x, y))
            both0 = (x == 0) & (y == 0)
            r = np.where(both0, np.where(np.signbit(x) & np.signbit(y), -0.0, 0.0), r)
        elif op == "mins":  # mins.md: min(-0, +0) = -0
            r = np.where(np.isnan(x) | np.isnan(y), np.nan, np.where(x < y, x, y))
            both0 = (x == 0) & (y == 0)
            r = np.where(both0, np.where(np.signbit(x) | np.signbit(y), -0.0, 0.0), r)
        elif op == "leaky_relu":  # leaky_relu.md: src where src >= 0, else src * scalar
            r = np.where(x >= 0, x, x * y)
        else:
            r = {"adds": x + y, "subs": x - y, "muls": x * y}[op]
    return round_to(r, dt)


CASES = [(op, dt, pattern, mode) for op in sorted(TYPES) for dt in TYPES[op]
         for pattern, mode in (("M3", "default"), ("ALL", "default"), ("M3", "ZEROING"))
         if mode != "ZEROING" or dt is TYPES[op][-1]]


@pytest.mark.parametrize("op,dt,pattern,mode", CASES, ids=lambda v: getattr(v, "name", v))
def test_scalar_op_against_numpy(op, dt, pattern, mode):
    """M3: the ordinary scalar; all lanes: each scalar (specials too), over lanes with specials."""
    a, old = rand(dt, 21), rand(dt, 22)
    for s in scalars(op, dt)[:1] if pattern == "M3" else scalars(op, dt):
        got = launch(scalar_kernel(op, dt, s, pattern, mode), dt, a, None, old)
        check(got, reference(op, dt, a, s), old, pattern, mode)


def test_subs_is_adds_of_the_negated_scalar():
    """The real backend emits vf.subs as vadds(src, -scalar): on INT8 subs(x, -128) is x + 128, wrapped."""
    dt, n = pl.DT_INT8, 256
    a = np.arange(-128, 128, dtype=np.int16).astype(np.int8)
    got = launch(scalar_kernel("subs", dt, -128, "ALL", "default"), dt, a, None, a)
    np.testing.assert_array_equal(got, (a.astype(np.int16) + 128).astype(np.int8))
    got = launch(scalar_kernel("adds", dt, -128, "ALL", "default"), dt, a, None, a)
    np.testing.assert_array_equal(got, (a.astype(np.int16) - 128).astype(np.int8))
    assert n == lanes(dt)


REFUSED = [(op, dt) for op in sorted(TYPES) for dt in ALL_TYPES if dt not in TYPES[op]]


def _body(op, dt, mode=None):
    fn = getattr(vf, op)

    @pl.vector_function
    def body(ta, to):
        m = vf.create_mask(pattern=ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        x = fn(x, 2, m, mode=mode)  # <- here
        vf.store_align(to, x, m)
    return body


@pytest.mark.parametrize("op,dt", REFUSED, ids=lambda v: getattr(v, "name", v))
def test_dtype_the_page_does_not_list_is_a_located_error(op, dt):
    body = _body(op, dt)
    with pytest.raises(CompileError, match=f"'src' is a register of {dt.name}") as info:
        vf_kernel(body, [(dt, [1, lanes(dt)])], (dt, [1, lanes(dt)])).compile()
    check_location(info.value, *marked_line(body), "x, 2")


@pytest.mark.parametrize("op", sorted(TYPES))
def test_merging_is_a_located_error(op):
    body = _body(op, pl.DT_FP32, pl.MergeMode.MERGING)
    with pytest.raises(CompileError, match="MERGING is not supported here") as info:
        vf_kernel(body, [(pl.DT_FP32, [1, 64])], (pl.DT_FP32, [1, 64])).compile()
    check_location(info.value, *marked_line(body), "mode)")


def _runtime_scalar_kernel(op: str, dt):
    """``vf.<op>(x, k, m)`` with ``k`` an FP32 launch argument (converted to the lane type at run time)."""
    fn, n = getattr(vf, op), lanes(dt)
    tt = pl.TileType(shape=[1, n], dtype=dt, target_memory=pl.MemorySpace.Vec)
    T = pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], dt]

    @pl.vector_function
    def body(ta, to, k: pl.DT_FP32):
        m = vf.create_mask(pattern=pl.MaskPattern.M3, dtype=dt)
        full = vf.create_mask(pattern=ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        y = fn(x, k, m)
        vf.store_align(to, y, full)

    @pl.jit()
    def kernel(a: T, out: T, k: pl.DT_FP32):
        ta = pl.make_tile(tt, addr=0)
        to = pl.make_tile(tt, addr=256)
        with pl.section_vector():
            pl.load(ta, a, [0, 0])
            to_v()
            body(ta, to, k)
            to_mte3()
            pl.store(out, to, [0, 0])
    return kernel


@pytest.mark.parametrize("op", ["adds", "subs", "maxs", "mins"])
@pytest.mark.parametrize("dt", [pl.DT_FP16, pl.DT_BF16, pl.DT_FP32], ids=lambda v: v.name)
def test_runtime_scalar_is_rounded_to_the_lane_type(op, dt):
    """The scalar a launch argument (FP32), not a constant: the same results, the scalar taken in the
    lane type (0.1 in BF16 is 0.10009765625)."""
    k = _runtime_scalar_kernel(op, dt)
    a = rand(dt, 23)
    for s in (0.1, -0.0, 3.0e-3):
        out = to_torch(np.zeros((1, lanes(dt)), NP[dt]))
        k[None, 1](to_torch(a[None]), out, float(np.float32(s)))
        check(from_torch(out, dt)[0], reference(op, dt, a, float(np.float32(s))), np.zeros_like(a), "M3", "default")
