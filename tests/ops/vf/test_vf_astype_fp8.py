"""vf.astype widens the 8-bit floats exactly: FP8E4M3FN / FP8E5M2 -> FP32 (every 4th lane, picked by
layout ZERO..THREE) and HF8 -> FP16 (every 2nd, ZERO / ONE) or FP32; other destinations are located
errors."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.backends.sim import hf8
from pypto_pro.errors import CompileError
from pypto_pro.language import Vf as vf

from vf_kernels import ALL, two_in_kernel


def _body(src_dt, dst_dt, layout):
    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=dst_dt)
        x = vf.load_align(ta, 0, dtype=src_dt)
        y = vf.astype(x, m, dtype=dst_dt, layout=layout)
        vf.store_align(to, y, m)
    return body


def _bytes(seed):
    return torch.from_numpy(np.random.default_rng(seed).integers(0, 256, (1, 256), dtype=np.uint8))


@pytest.mark.parametrize("src,np_t", [(pl.DT_FP8E4M3FN, ml_dtypes.float8_e4m3fn),
                                      (pl.DT_FP8E5M2, ml_dtypes.float8_e5m2)])
@pytest.mark.parametrize("part", [0, 2])
def test_fp8_to_fp32_takes_every_fourth_lane(src, np_t, part):
    layout = [pl.CastLayout.ZERO, pl.CastLayout.ONE, pl.CastLayout.TWO, pl.CastLayout.THREE][part]
    raw = _bytes(7 + part)
    out = torch.full((1, 64), 7.0)
    two_in_kernel(_body(src, pl.DT_FP32, layout), src, pl.DT_FP32)[None, 1](raw, raw, out)
    ref = raw.numpy()[0].view(np_t).astype(np.float32)[part::4]
    np.testing.assert_array_equal(out.numpy()[0], ref)  # NaN patterns compare equal as NaN


def test_hf8_to_fp16_odd_lanes():
    raw = _bytes(3)
    out = torch.full((1, 128), 7.0, dtype=torch.float16)
    two_in_kernel(_body(pl.DT_HF8, pl.DT_FP16, pl.CastLayout.ONE), pl.DT_HF8, pl.DT_FP16)[None, 1](raw, raw, out)
    ref = hf8.decode(raw.numpy()[0])[1::2].astype(np.float16)
    np.testing.assert_array_equal(out.numpy()[0], ref)


def test_fp8_to_fp16_is_a_located_error():
    k = two_in_kernel(_body(pl.DT_FP8E4M3FN, pl.DT_FP16, pl.CastLayout.ZERO), pl.DT_FP8E4M3FN, pl.DT_FP16)
    with pytest.raises(CompileError, match="DT_FP8E4M3FN converts to DT_FP32, not DT_FP16"):
        k.compile()
