"""The AR stream of vf.store_unalign: after vf.squeeze(STORE_REG) a strideless store writes that
squeeze's bytes after the bytes AR already counts (AR accumulates from vf.clear_spr), so a loop of
squeeze + store_unalign packs every kept element back to back (the real vstur POST_UPDATE, as the
quantised lightning indexer's top-k collects its indices); pl.get_spr reads the total."""
from __future__ import annotations

import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.language import Vf as vf

from vf_kernels import to_mte3, to_v

N = 192  # three registers of FP32
TT = pl.TileType(shape=[1, N], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)


def _kernel(post_update: bool):
    @pl.vector_function
    def stream(src, dst):
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
        minus = vf.full(-1.0, full, dtype=pl.DT_FP32)
        for i in pl.range(0, 3):
            vf.store_align(dst + i * 64, minus, full)
        vf.mem_bar()
        vf.clear_spr()
        ureg = vf.unalign_reg_for_store()
        for i in pl.range(0, 3):
            x = vf.load_align(src, i * 64)
            pos = vf.gt(x, 0.0, full)
            packed = vf.squeeze(x, pos, gather_mode=pl.SqueezeMode.STORE_REG)
            vf.store_unalign(dst, packed, ureg, post_update=post_update)
        vf.store_unalign_post(dst, ureg)

    @pl.jit()
    def kernel(a: pl.Tensor[[1, N], pl.DT_FP32], out: pl.Tensor[[1, N], pl.DT_FP32],
               ar: pl.Tensor[[1, 1], pl.DT_INT64]):
        ta = pl.make_tile(TT, addr=0)
        to = pl.make_tile(TT, addr=1024)
        with pl.section_vector():
            pl.load(ta, a, [0, 0])
            to_v()
            stream(ta, to)
            to_mte3()
            pl.store(out, to, [0, 0])
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.S, event_id=2)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.S, event_id=2)
            pl.setval(ar, 0, pl.get_spr())
    return kernel


@pytest.mark.parametrize("post_update", [True, False])  # the real backend emits one vstur for both
def test_squeezes_stream_back_to_back_and_ar_counts_them_all(post_update):
    a = torch.randn(1, N, generator=torch.Generator().manual_seed(5))
    out = torch.zeros(1, N)
    ar = torch.full((1, 1), -1, dtype=torch.int64)
    _kernel(post_update)[None, 1](a, out, ar)
    kept = a[0][a[0] > 0]
    assert ar[0, 0].item() == 4 * kept.numel()
    assert torch.equal(out[0, :kept.numel()], kept)
    assert (out[0, kept.numel():] == -1).all()
