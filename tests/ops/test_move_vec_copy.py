"""pl.move Vec -> Vec (TMOV): copies the rows and columns both valid shapes cover (the smaller per axis),
as PTO-ISA's TMovToVec; the rest of the destination keeps what it held."""
import torch

import pypto_pro.language as pl

TT = pl.TileType(shape=[16, 16], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec, valid_shape=[-1, -1])
MTE2, V, MTE3 = pl.PipeType.MTE2, pl.PipeType.V, pl.PipeType.MTE3


def _sync(src, dst, ev):
    pl.system.sync_src(set_pipe=src, wait_pipe=dst, event_id=ev)
    pl.system.sync_dst(set_pipe=src, wait_pipe=dst, event_id=ev)


@pl.jit()
def copy_kernel(x: pl.Tensor[[16, 16], pl.DT_FP32], out: pl.Tensor[[16, 16], pl.DT_FP32],
                dr: pl.DT_INT64, dc: pl.DT_INT64, sr: pl.DT_INT64, sc: pl.DT_INT64):
    with pl.section_vector():
        src = pl.make_tile(TT, addr=0x0, size=1024)
        dst = pl.make_tile(TT, addr=0x1000, size=1024)
        pl.load(dst, x, [0, 0])  # full 16 x 16 of x
        pl.load(src, x, [0, 0])
        _sync(MTE2, V, 0)
        pl.mul(src, src, 2.0)
        pl.set_validshape(src, [sr, sc])
        pl.set_validshape(dst, [dr, dc])
        pl.move(dst, src)
        pl.set_validshape(dst, [16, 16])
        _sync(V, MTE3, 0)
        pl.store(out, dst, [0, 0])


def test_copy_takes_the_smaller_valid_shape_per_axis():
    x = torch.randn(16, 16)
    out = torch.zeros(16, 16)
    copy_kernel(x, out, 12, 4, 8, 16)  # copies 8 x 4
    want = x.clone()
    want[:8, :4] = x[:8, :4] * 2
    torch.testing.assert_close(out, want)
