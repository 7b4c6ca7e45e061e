"""vf.astype FP8E8M0 <-> BF16 (AscendC dav_3510 Reg::Cast: code = the BF16 exponent field; 2**(code-127)
back, code 0 -> +0.0, 0xFF NaN; the page's +-inf -> 0xFE) and INT16 -> INT4 (astype.md table 6: the low 4
bits, or clamped with saturate=ON), against references built from the bits."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.errors import CompileError
from pypto_pro.language import Vf as vf

from vf_kernels import ALL, two_in_kernel

LAYOUTS = [pl.CastLayout.ZERO, pl.CastLayout.ONE, pl.CastLayout.TWO, pl.CastLayout.THREE]


@pytest.mark.parametrize("part", [0, 1])
def test_e8m0_to_bf16_is_exact(part):
    codes = torch.arange(256, dtype=torch.uint8).reshape(1, 256)

    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=pl.DT_UINT8)
        mb = vf.create_mask(pattern=ALL, dtype=pl.DT_BF16)
        x = vf.load_align(ta, 0)
        e = vf.bit_cast(x, dtype=pl.DT_FP8E8M0)
        y = vf.astype(e, m, dtype=pl.DT_BF16, layout=LAYOUTS[part])
        yb = vf.bit_cast(y, dtype=pl.DT_INT16)
        vf.store_align(to, yb, mb)
    out = torch.zeros((1, 128), dtype=torch.int16)
    two_in_kernel(body, pl.DT_UINT8, pl.DT_INT16)[None, 1](codes, codes, out)
    c = codes.numpy()[0][part::2].astype(np.uint16)
    ref = np.where(c == 0xFF, 0x7FC0, c << 7).astype(np.uint16)  # bf16 with exponent field = code
    np.testing.assert_array_equal(out.numpy()[0].view(np.uint16), ref)
    got = out.numpy()[0].view(ml_dtypes.bfloat16)
    assert got[63] == 2.0 ** (126 + part - 127) and bool(np.isnan(got[-1])) == (part == 1)  # code 0xFF: NaN
    assert got[0].view(np.uint16) == (0 if part == 0 else 1 << 7)  # code 0 is +0.0, not OCP's 2**-127


@pytest.mark.parametrize("sat", [pl.SaturateMode.OFF, pl.SaturateMode.ON])
@pytest.mark.parametrize("part", [0, 2])
def test_int16_to_int4_truncates_or_saturates(sat, part):
    a = torch.randint(-300, 300, (1, 128), generator=torch.Generator().manual_seed(3), dtype=torch.int16)
    a[0, :4] = torch.tensor([7, -8, 9, -9], dtype=torch.int16)

    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=pl.DT_INT16)
        x = vf.load_align(ta, 0)
        q = vf.astype(x, m, dtype=pl.DT_INT4, layout=LAYOUTS[part], saturate=sat)
        y = vf.astype(q, m, dtype=pl.DT_INT16, layout=LAYOUTS[part])
        vf.store_align(to, y, m)
    out = torch.zeros((1, 128), dtype=torch.int16)
    two_in_kernel(body, pl.DT_INT16, pl.DT_INT16)[None, 1](a, a, out)
    x = a.numpy()[0].astype(np.int64)
    if sat is pl.SaturateMode.ON:
        ref = np.clip(x, -8, 7)
    else:
        lo = x & 0xF
        ref = np.where(lo >= 8, lo - 16, lo)
    np.testing.assert_array_equal(out.numpy()[0], ref.astype(np.int16))
    assert out[0, 2] == (7 if sat is pl.SaturateMode.ON else -7)


def _e8m0_ref(x: np.ndarray) -> np.ndarray:
    bits = x.view(np.uint16)
    exp = (bits >> 7) & 0xFF
    mant = bits & 0x7F
    return np.where(exp != 0xFF, exp, np.where(mant != 0, 0xFF, 0xFE)).astype(np.uint8)


@pytest.mark.parametrize("part, rm, sat", [(0, None, None), (1, None, None),
                                           (0, pl.VFRoundMode.CAST_FLOOR, pl.SaturateMode.ON),
                                           (1, pl.VFRoundMode.CAST_CEIL, pl.SaturateMode.OFF)])
def test_bf16_to_e8m0_is_the_exponent_field(part, rm, sat):
    g = np.random.default_rng(7)
    x = (g.standard_normal(128) * np.exp2(g.integers(-140, 128, 128))).astype(ml_dtypes.bfloat16)
    x[:10] = np.array([1.0, 1.99, -3.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 2.0 ** -130, 3.3e38], np.float32)
    a = torch.from_numpy(x.view(np.int16).reshape(1, 128).copy())

    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=pl.DT_BF16)
        x = vf.load_align(ta, 0)
        xb = vf.bit_cast(x, dtype=pl.DT_BF16)
        e = vf.astype(xb, m, dtype=pl.DT_FP8E8M0, layout=LAYOUTS[part], round_mode=rm, saturate=sat)
        y = vf.bit_cast(e, dtype=pl.DT_INT16)
        vf.store_align(to, y, m)
    out = torch.full((1, 128), 7, dtype=torch.int16)
    two_in_kernel(body, pl.DT_INT16, pl.DT_INT16)[None, 1](a, a, out)
    got = out.numpy()[0].view(np.uint8)
    ref = np.zeros(256, np.uint8)
    ref[part::2] = _e8m0_ref(x)
    np.testing.assert_array_equal(got, ref)
    assert list(got[part:20:2]) == [127, 127, 128, 0, 0, 0xFE, 0xFE, 0xFF, 0, 254]


def test_bf16_to_e8m0_odd_rounding_is_a_located_error():
    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=pl.DT_BF16)
        x = vf.load_align(ta, 0)
        y = vf.astype(x, m, dtype=pl.DT_FP8E8M0, round_mode=pl.VFRoundMode.CAST_ODD)
        z = vf.bit_cast(y, dtype=pl.DT_BF16)
        vf.store_align(to, z, m)
    with pytest.raises(CompileError, match="CAST_ODD") as e:
        two_in_kernel(body, pl.DT_BF16, pl.DT_BF16).compile()
    assert "test_vf_astype_e8m0_int4.py" in str(e.value)
