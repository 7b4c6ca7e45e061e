"""vf.astype into the 8- and 4-bit floats (FP32 -> FP8E4M3FN / FP8E5M2 / HF8, FP16 -> HF8, BF16 -> FP4E2M1 /
FP4E1M2) and FP4 -> BF16: the bytes of the result register against a NumPy reference (ml_dtypes for FP8,
the HF8 / FP4 code tables), with every layout, masked lanes, saturation and the located errors."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.backends.sim import hf8, mx
from pypto_pro.errors import CompileError
from pypto_pro.language import Vf as vf

from vf_kernels import ALL, two_in_kernel

LAYOUTS = [pl.CastLayout.ZERO, pl.CastLayout.ONE, pl.CastLayout.TWO, pl.CastLayout.THREE]
VL16 = pl.MaskPattern.VL16


def _narrow_body(src_dt, dst_dt, pattern, layout=None, round_mode=None, saturate=None):
    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=pattern, dtype=src_dt)
        full = vf.create_mask(pattern=ALL, dtype=pl.DT_UINT8)
        x = vf.load_align(ta, 0, dtype=src_dt)
        y = vf.astype(x, m, dtype=dst_dt, layout=layout, round_mode=round_mode, saturate=saturate)
        yb = vf.bit_cast(y, dtype=pl.DT_UINT8)
        vf.store_align(to, yb, full)
    return body


def _bytes_of(body, src_dt, a):
    out = torch.full((1, 256), 7, dtype=torch.uint8)
    two_in_kernel(body, src_dt, pl.DT_UINT8)[None, 1](a, a, out)
    return out.numpy()[0]


def _expect(codes, part, ratio, active):
    exp = np.zeros(256, np.uint8)
    exp[part::ratio] = np.where(active, codes, 0)
    return exp


def _fp32_data(seed):
    x = torch.randn((1, 64), generator=torch.Generator().manual_seed(seed)) * 40
    x[0, :6] = torch.tensor([float("nan"), float("inf"), -float("inf"), 1e9, -1e9, 0.0])
    return x


@pytest.mark.parametrize("dst,np_t", [(pl.DT_FP8E4M3FN, ml_dtypes.float8_e4m3fn),
                                      (pl.DT_FP8E5M2, ml_dtypes.float8_e5m2)])
@pytest.mark.parametrize("part", [0, 3])
@pytest.mark.parametrize("pattern", [ALL, VL16])
def test_fp32_to_fp8_saturates_and_places_every_fourth_byte(dst, np_t, part, pattern):
    a = _fp32_data(part)
    got = _bytes_of(_narrow_body(pl.DT_FP32, dst, pattern, layout=LAYOUTS[part]), pl.DT_FP32, a)
    x = a.numpy()[0].astype(np.float64)
    fin = np.finfo(np_t)
    ref = np.clip(np.nan_to_num(x, nan=0.0, posinf=float(fin.max), neginf=float(fin.min)), fin.min, fin.max)
    codes = ref.astype(np.float32).astype(np_t).view(np.uint8)  # ml_dtypes rounds to nearest even
    active = np.arange(64) < (16 if pattern is VL16 else 64)
    np.testing.assert_array_equal(got, _expect(codes, part, 4, active))
    assert got[part] == 0  # NaN -> 0 (saturated mode)


@pytest.mark.parametrize("part", [0, 2])
def test_fp32_to_hf8_rounds_ties_away_and_saturates(part):
    a = _fp32_data(11)
    a[0, 6:10] = torch.tensor([1.0 + 2.0 ** -4, -(1.0 + 2.0 ** -4), 40000.0, 3.0])  # ties between HF8 values
    got = _bytes_of(_narrow_body(pl.DT_FP32, pl.DT_HF8, ALL, layout=LAYOUTS[part],
                                 round_mode=pl.VFRoundMode.CAST_ROUND, saturate=pl.SaturateMode.ON), pl.DT_FP32, a)
    x = a.numpy()[0].astype(np.float64)
    vals = hf8.decode(got[part::4])
    assert vals[0] == 0 and vals[1] == 32768 and vals[2] == -32768 and vals[3] == 32768
    assert vals[6] == 1.125 and vals[7] == -1.125 and vals[8] == 32768 and vals[9] == 3.0
    # every other value: the nearest HF8 value (ties away from zero)
    finite = hf8.VALUES[np.isfinite(hf8.VALUES)]
    for v, r in zip(x[10:], vals[10:]):
        best = np.abs(finite - v).min()
        assert abs(r - v) == best
    assert (np.delete(got, np.arange(part, 256, 4)) == 0).all()


def test_fp16_to_hf8_unsaturated_keeps_nan_and_inf():
    a = torch.zeros((1, 128), dtype=torch.float16)
    a[0, :6] = torch.tensor([float("nan"), float("inf"), -float("inf"), 60000.0, 33000.0, 0.75])
    body = _narrow_body(pl.DT_FP16, pl.DT_HF8, ALL, layout=pl.CastLayout.ONE)
    got = _bytes_of(body, pl.DT_FP16, a)
    vals = hf8.decode(got[1::2])
    assert np.isnan(vals[0]) and vals[1] == np.inf and vals[2] == -np.inf and vals[3] == np.inf
    assert vals[4] == 32768 and vals[5] == 0.75 and (got[0::2] == 0).all()
    sat = _bytes_of(_narrow_body(pl.DT_FP16, pl.DT_HF8, ALL, saturate=pl.SaturateMode.ON), pl.DT_FP16, a)
    sv = hf8.decode(sat[0::2])
    assert sv[0] == 0 and sv[1] == 32768 and sv[2] == -32768 and sv[3] == 32768


@pytest.mark.parametrize("dst", [pl.DT_FP4E2M1, pl.DT_FP4E1M2])
@pytest.mark.parametrize("part", [0, 1, 3])
@pytest.mark.parametrize("mode", ["CAST_RINT", "CAST_TRUNC"])
def test_bf16_to_fp4_packs_pairs_into_byte_4j_plus_part(dst, part, mode):
    a = (torch.randn((1, 128), generator=torch.Generator().manual_seed(part)) * 3).to(torch.bfloat16)
    a[0, :4] = torch.tensor([float("nan"), float("inf"), -100.0, 0.25])
    body = _narrow_body(pl.DT_BF16, dst, VL16, layout=LAYOUTS[part], round_mode=getattr(pl.VFRoundMode, mode))
    got = _bytes_of(body, pl.DT_BF16, a)
    x = a.float().numpy()[0].astype(np.float64)
    table = mx.FP4_VALUES[dst.name]
    mag = np.minimum(np.nan_to_num(np.abs(x), nan=0.0), table[-1])
    if mode == "CAST_TRUNC":
        idx = np.searchsorted(table, mag, side="right") - 1
    else:  # nearest, ties to the even code
        d = np.abs(mag[:, None] - table[None, :])
        best = d.min(axis=1, keepdims=True)
        cand = (d == best) & (np.arange(8) % 2 == 0)
        idx = np.where(cand.any(axis=1), cand.argmax(axis=1), d.argmin(axis=1))
    codes = (idx | np.where(np.signbit(x) & ~np.isnan(x), 8, 0)).astype(np.uint8)
    packed = codes[0::2] | (codes[1::2] << 4)
    active = np.arange(64) < 8  # VL16 of bf16 lanes: pairs 0..7 (the even lane decides)
    np.testing.assert_array_equal(got, _expect(packed, part, 4, active))


@pytest.mark.parametrize("src", [pl.DT_FP4E2M1, pl.DT_FP4E1M2])
@pytest.mark.parametrize("part", [0, 2])
def test_fp4_to_bf16_unpacks_byte_4j_plus_part(src, part):
    raw = torch.from_numpy(np.random.default_rng(part).integers(0, 256, (1, 256), dtype=np.uint8))

    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=VL16, dtype=pl.DT_BF16)
        full = vf.create_mask(pattern=ALL, dtype=pl.DT_BF16)
        x = vf.load_align(ta, 0, dtype=src)
        y = vf.astype(x, m, dtype=pl.DT_BF16, layout=LAYOUTS[part])
        vf.store_align(to, y, full)
    out = torch.full((1, 128), 7.0, dtype=torch.bfloat16)
    two_in_kernel(body, pl.DT_UINT8, pl.DT_BF16)[None, 1](raw, raw, out)
    sel = raw.numpy()[0][part::4]
    vals = np.stack([mx.decode_fp4(sel & 0xF, src.name), mx.decode_fp4(sel >> 4, src.name)], 1).reshape(-1)
    # the mask selects source bytes (b8): VL16 of a b16 mask sets bits 0..31, i.e. bytes 4j + part, j < 8
    act = np.repeat((np.arange(64) * 4 + part) < 32, 2)
    np.testing.assert_array_equal(out.float().numpy()[0], np.where(act, vals, 0.0))


@pytest.mark.parametrize("src,dst,kw,msg", [
    (pl.DT_FP32, pl.DT_FP8E4M3FN, dict(round_mode=pl.VFRoundMode.CAST_ROUND), "takes round_mode CAST_RINT"),
    (pl.DT_FP32, pl.DT_FP8E5M2, dict(saturate=pl.SaturateMode.OFF), "takes saturate=ON only"),
    (pl.DT_FP32, pl.DT_HF8, dict(round_mode=pl.VFRoundMode.CAST_HYBRID), "CAST_HYBRID is the chip.s stochastic rounding"),
    (pl.DT_FP16, pl.DT_HF8, dict(layout=pl.CastLayout.TWO), "takes layout ZERO or ONE, not TWO"),
    (pl.DT_BF16, pl.DT_FP4E2M1, dict(saturate=pl.SaturateMode.ON), "saturate does not apply"),
    (pl.DT_FP16, pl.DT_FP8E4M3FN, {}, "DT_FP16 -> DT_FP8E4M3FN is not a conversion"),
])
def test_bad_low_precision_paths_are_located_errors(src, dst, kw, msg):
    k = two_in_kernel(_narrow_body(src, dst, ALL, **kw), src, pl.DT_UINT8)
    with pytest.raises(CompileError, match=msg) as e:
        k.compile()
    assert "test_vf_astype_lowp.py" in str(e.value)


@pytest.mark.parametrize("sat", [pl.SaturateMode.OFF, pl.SaturateMode.ON])
@pytest.mark.parametrize("part", [0, 3])
def test_fp16_to_int4_and_back(sat, part):
    a = (torch.randn((1, 128), generator=torch.Generator().manual_seed(9)) * 6).to(torch.float16)
    a[0, :6] = torch.tensor([float("nan"), float("inf"), -float("inf"), 9.0, -9.5, 2.5])

    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=pl.DT_FP16)
        x = vf.load_align(ta, 0)
        q = vf.astype(x, m, dtype=pl.DT_INT4, layout=LAYOUTS[part], round_mode=pl.VFRoundMode.CAST_RINT,
                      saturate=sat)
        y = vf.astype(q, m, dtype=pl.DT_INT16, layout=LAYOUTS[part])
        vf.store_align(to, y, m)
    out = torch.zeros((1, 128), dtype=torch.int16)
    two_in_kernel(body, pl.DT_FP16, pl.DT_INT16)[None, 1](a, a, out)
    x = a.numpy()[0].astype(np.float64)
    r = np.rint(np.nan_to_num(x, nan=0.0, posinf=7, neginf=-8))
    if sat is pl.SaturateMode.ON:
        ref = np.clip(r, -8, 7)
    else:  # the low 4 bits, sign-extended
        lo = r.astype(np.int64) & 0xF
        ref = np.where(lo >= 8, lo - 16, lo)
    np.testing.assert_array_equal(out.numpy()[0], ref.astype(np.int16))
    assert out[0, 3] == (7 if sat is pl.SaturateMode.ON else -7) and out[0, 5] == 2
