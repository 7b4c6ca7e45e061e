"""vf.select on two registers of one bit width and different dtypes: the result has src_true's dtype
and src_false's bits are reinterpreted as it (the real backend's vsel cast); other widths are a
located error."""
from __future__ import annotations

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.errors import CompileError
from pypto_pro.language import Vf as vf

from vf_kernels import vf_kernel

N = 128


def _kernel(false_dtype):
    @pl.vector_function
    def body(a, b, dst):
        m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_UINT16)
        ra = vf.load_align(a, 0)
        rb = vf.load_align(b, 0)
        odd = vf.gt(ra, 100, m)
        r = vf.select(ra, rb, odd)
        vf.store_align(dst, r, m)

    u16 = (pl.DT_UINT16, [1, N])
    return vf_kernel(body, [u16, (false_dtype, [1, N * 2 // false_dtype.bits * 8])], u16,
                     addrs=(0, 0x400, 0x800))


def test_select_takes_src_true_dtype_and_reinterprets_src_false():
    import torch
    rng = np.random.default_rng(4)
    a = rng.integers(0, 200, (1, N)).astype(np.int16)
    b = torch.randn(1, N).to(torch.bfloat16)
    out = torch.zeros(1, N, dtype=torch.int16)
    _kernel(pl.DT_BF16)[None, 1](torch.from_numpy(a).view(torch.uint16) if hasattr(torch, "uint16") else
                                 torch.from_numpy(a), b, out)
    bits = b.view(torch.int16).numpy()
    np.testing.assert_array_equal(out.numpy(), np.where(a > 100, a, bits))


def test_select_of_other_bit_widths_is_a_located_error():
    with pytest.raises(CompileError, match="'src_false' is a register of DT_FP32 but 'src_true' is DT_UINT16"):
        _kernel(pl.DT_FP32).compile()
