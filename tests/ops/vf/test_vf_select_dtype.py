"""vf.select on two registers of one bit width and different dtypes: the result has src_true's dtype
and src_false's bits are reinterpreted as it (the real backend's vsel cast); other widths are a
located error."""
from __future__ import annotations

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.errors import CompileError
from pypto_pro.language import Vf as vf

N = 128


def _kernel(false_dtype):
    tu = pl.TileType(shape=[1, N], dtype=pl.DT_UINT16, target_memory=pl.MemorySpace.Vec)
    tf = pl.TileType(shape=[1, N * 2 // false_dtype.bits * 8], dtype=false_dtype, target_memory=pl.MemorySpace.Vec)

    @pl.vector_function
    def body(a, b, dst):
        m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_UINT16)
        ra = vf.load_align(a, 0)
        rb = vf.load_align(b, 0)
        odd = vf.gt(ra, 100, m)
        r = vf.select(ra, rb, odd)
        vf.store_align(dst, r, m)

    @pl.jit()
    def kernel(a: pl.Tensor[[1, N], pl.DT_UINT16], b: pl.Tensor[[1, tf.shape[1]], false_dtype],
               out: pl.Tensor[[1, N], pl.DT_UINT16]):
        sa = pl.make_tile(tu, addr=0)
        sb = pl.make_tile(tf, addr=0x400)
        so = pl.make_tile(tu, addr=0x800)
        with pl.section_vector():
            pl.load(sa, a, [0, 0])
            pl.load(sb, b, [0, 0])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            body(sa, sb, so)
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
            pl.store(out, so, [0, 0])
    return kernel


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
