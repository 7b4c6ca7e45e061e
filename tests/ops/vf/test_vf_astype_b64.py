"""vf.astype's 64-bit paths (astype.md tables 2, 4, 5): INT32 -> INT64, FP32 -> INT64 (every round mode;
saturate OFF / ON: always clamps), INT64 -> INT32 (low bits / clamped), INT64 -> FP32 (every round mode),
each layout ZERO / ONE, against references written from the definitions in plain Python."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.errors import CompileError
from pypto_pro.language import Vf as vf

from vf_kernels import ALL, two_in_kernel

LAYOUTS = [pl.CastLayout.ZERO, pl.CastLayout.ONE]
ROUNDS = ["CAST_RINT", "CAST_ROUND", "CAST_FLOOR", "CAST_CEIL", "CAST_TRUNC"]


def _int(v: float, mode: str) -> int:
    if mode == "CAST_RINT":
        return round(v)  # Python rounds half to even
    if mode == "CAST_FLOOR":
        return math.floor(v)
    if mode == "CAST_CEIL":
        return math.ceil(v)
    if mode == "CAST_TRUNC":
        return math.trunc(v)
    return int(math.copysign(math.floor(abs(v) + 0.5), v))  # exact for float32 inputs in float64


def _f32(v: int, mode: str) -> np.float32:
    r = np.float32(v)  # numpy int64 -> float32: one round to nearest even
    cands = [np.nextafter(r, np.float32(-np.inf)), r, np.nextafter(r, np.float32(np.inf))]
    le = [c for c in cands if float(c) <= v]  # float vs int: an exact comparison
    ge = [c for c in cands if float(c) >= v]
    lo, hi = max(le), min(ge)
    if mode == "CAST_RINT":
        return r
    if mode == "CAST_FLOOR" or (mode == "CAST_TRUNC" and v >= 0):
        return lo
    if mode == "CAST_CEIL" or mode == "CAST_TRUNC":
        return hi
    dl, dh = v - int(lo), int(hi) - v
    return hi if dh < dl or (dh == dl and v > 0) else lo


def _run(src_dt, in_np, dst_dt, out_np_dt, layout, round_mode=None, sat=None):
    raw = {4: pl.DT_INT32, 8: pl.DT_INT32}
    n_out = 256 // np.dtype(out_np_dt).itemsize

    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=src_dt)
        mo = vf.create_mask(pattern=ALL, dtype=pl.DT_INT32)
        x = vf.load_align(ta, 0)
        e = vf.bit_cast(x, dtype=src_dt)
        y = vf.astype(e, m, dtype=dst_dt, layout=layout, round_mode=round_mode, saturate=sat)
        z = vf.bit_cast(y, dtype=pl.DT_INT32)
        vf.store_align(to, z, mo)
    a = torch.from_numpy(np.ascontiguousarray(in_np).view(np.int32).reshape(1, 64).copy())
    out = torch.full((1, 64), 7, dtype=torch.int32)
    two_in_kernel(body, raw[in_np.dtype.itemsize], pl.DT_INT32)[None, 1](a, a, out)
    return out.numpy()[0].view(out_np_dt)[:n_out]


def _f32_inputs():
    x = np.random.default_rng(5).standard_normal(64).astype(np.float32) * np.float32(1e3)
    x[:12] = [2.5, -2.5, 3.5, -0.5, np.nan, np.inf, -np.inf, 3e19, -3e19, 9.3e18, -9.223372e18, 1.5]
    return x


CASES = [(0, rm, None) for rm in ROUNDS] + [(1, "CAST_RINT", None)]


@pytest.mark.parametrize("part, rm, sat", CASES + [(1, "CAST_FLOOR", pl.SaturateMode.OFF),
                                                   (0, "CAST_CEIL", pl.SaturateMode.ON)])
def test_fp32_to_int64_rounds_and_clamps(part, rm, sat):
    x = _f32_inputs()
    got = _run(pl.DT_FP32, x, pl.DT_INT64, np.int64, LAYOUTS[part], getattr(pl.VFRoundMode, rm), sat)
    ref = []
    for v in x[part::2].astype(np.float64).tolist():
        if math.isnan(v):
            ref.append(0)
        elif math.isinf(v):
            ref.append((1 << 63) - 1 if v > 0 else -(1 << 63))
        else:
            ref.append(min(max(_int(v, rm), -(1 << 63)), (1 << 63) - 1))
    np.testing.assert_array_equal(got, np.array(ref, np.int64))


@pytest.mark.parametrize("part", [0, 1])
def test_int32_to_int64_sign_extends(part):
    x = np.random.default_rng(1).integers(-2 ** 31, 2 ** 31, 64).astype(np.int32)
    got = _run(pl.DT_INT32, x, pl.DT_INT64, np.int64, LAYOUTS[part])
    np.testing.assert_array_equal(got, x[part::2].astype(np.int64))


def _i64_inputs():
    x = np.random.default_rng(2).integers(-2 ** 62, 2 ** 62, 32).astype(np.int64)
    x[:8] = [2 ** 63 - 1, -2 ** 63, 2 ** 31, -(2 ** 31) - 1, 300, -5, (1 << 24) + 1, -((1 << 40) + (1 << 16))]
    return x


@pytest.mark.parametrize("part, sat", [(0, pl.SaturateMode.OFF), (1, pl.SaturateMode.ON), (1, None)])
def test_int64_to_int32_low_bits_or_clamped(part, sat):
    x = _i64_inputs()
    got = _run(pl.DT_INT64, x, pl.DT_INT32, np.int32, LAYOUTS[part], sat=sat)
    res = np.clip(x, -2 ** 31, 2 ** 31 - 1) if sat is pl.SaturateMode.ON else x.astype(np.int32)
    ref = np.zeros(64, np.int32)
    ref[part::2] = res
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("part, rm, _", CASES)
def test_int64_to_fp32_rounds_once(part, rm, _):
    x = _i64_inputs()
    x[8:12] = [(1 << 24) + 3, -((1 << 25) + 2), (1 << 40) + (1 << 15), 7]  # ties at 2**24 and 2**40 scales
    got = _run(pl.DT_INT64, x, pl.DT_FP32, np.float32, LAYOUTS[part], getattr(pl.VFRoundMode, rm))
    ref = np.zeros(64, np.float32)
    ref[part::2] = [_f32(v, rm) for v in x.tolist()]
    np.testing.assert_array_equal(got.view(np.int32), ref.view(np.int32))


def test_int64_paths_off_the_page_are_located_errors():
    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=pl.DT_INT16)
        x = vf.load_align(ta, 0)
        y = vf.astype(x, m, dtype=pl.DT_INT64)
        z = vf.bit_cast(y, dtype=pl.DT_INT16)
        vf.store_align(to, z, m)
    with pytest.raises(CompileError, match="DT_INT16 -> DT_INT64") as e:
        two_in_kernel(body, pl.DT_INT16, pl.DT_INT16).compile()
    assert "test_vf_astype_b64.py" in str(e.value)
