"""vf.astype FP8E8M0 -> BF16 (exact powers of two, 0xFF NaN) and INT16 -> INT4 (astype.md table 6: the
low 4 bits, or clamped with saturate=ON), against NumPy; BF16 -> FP8E8M0 (its rounding is not on the
page) is a located CompileError."""
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
    ref = codes.numpy()[0][part::2].view(ml_dtypes.float8_e8m0fnu).astype(np.float64).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(out.numpy()[0], ref.view(np.int16))
    got = out.numpy()[0].view(ml_dtypes.bfloat16)
    assert got[63] == 2.0 ** (126 + part - 127) and bool(np.isnan(got[-1])) == (part == 1)  # code 0xFF: NaN


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


def test_bf16_to_e8m0_is_a_located_error():
    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=pl.DT_BF16)
        x = vf.load_align(ta, 0)
        y = vf.astype(x, m, dtype=pl.DT_FP8E8M0)
        vf.store_align(to, vf.bit_cast(y, dtype=pl.DT_BF16), m)
    with pytest.raises(CompileError, match="DT_FP8E8M0") as e:
        two_in_kernel(body, pl.DT_BF16, pl.DT_BF16).compile()
    assert "test_vf_astype_e8m0_int4.py" in str(e.value)
