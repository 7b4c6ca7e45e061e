"""vf.and_ / or_ / xor / not_ on float registers: the lanes' bit patterns (the real pages list FP16, BF16
and FP32; the FA kernels OR the even and odd fp16 halves of a cast), zeroed lanes outside the mask."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.language import Vf as vf

from vf_kernels import ALL, run, two_in_kernel

OPS = {"and_": np.bitwise_and, "or_": np.bitwise_or, "xor": np.bitwise_xor}


def _body(op, dt, pattern):
    fn = getattr(vf, op)

    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=pattern, dtype=dt)
        full = vf.create_mask(pattern=ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        y = vf.load_align(tb, 0)
        z = fn(x, y, m)
        vf.store_align(to, z, full)
    return body


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("dt, tdt, udt", [(pl.DT_FP16, torch.float16, np.uint16), (pl.DT_FP32, torch.float32, np.uint32)])
def test_bitwise_of_float_registers(op, dt, tdt, udt):
    n = 256 // np.dtype(udt).itemsize
    a = torch.randn(1, n).to(tdt)
    b = torch.randn(1, n).to(tdt)
    out = run(two_in_kernel(_body(op, dt, pl.MaskPattern.VL16), dt), a, b, tdt, n)
    bits = OPS[op](a.numpy().view(udt), b.numpy().view(udt))
    np.testing.assert_array_equal(out.numpy()[0, :16].view(udt), bits[0, :16])
    assert (out.numpy()[0, 16:].view(udt) == 0).all()  # inactive lanes zeroed


def test_not_of_fp32_register():
    dt = pl.DT_FP32

    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        z = vf.not_(x, m)
        vf.store_align(to, z, m)

    a = torch.randn(1, 64)
    out = run(two_in_kernel(body, dt), a, a, torch.float32, 64)
    np.testing.assert_array_equal(out.numpy().view(np.uint32), ~a.numpy().view(np.uint32))
