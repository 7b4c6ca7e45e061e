"""pl.getval / t[i, j] on fractal (NZ) Vec tiles: the offset counts storage elements, as the real
``GetValue(offset)`` (``*(ptr + offset)``) and the real subscript rule ``i * cols + j`` do, so on an
NZ tile it lands in the fractal boxes, not on the logical (i, j)."""
import torch

import pypto_pro.language as pl
from pypto_pro.arch.layouts import element_offsets

P = pl.PipeType
VEC = pl.MemorySpace.Vec
ND_T = pl.TileType(shape=[16, 32], dtype=pl.DT_FP16, target_memory=VEC)
NZ_T = pl.TileType(shape=[16, 32], dtype=pl.DT_FP16, target_memory=VEC, layout=pl.NZ)


def _sync(src, dst):
    pl.system.sync_src(set_pipe=src, wait_pipe=dst, event_id=0)
    pl.system.sync_dst(set_pipe=src, wait_pipe=dst, event_id=0)


@pl.jit(auto_mutex=False)
def read_nz(a: pl.Tensor[[16, 32], pl.DT_FP16], o: pl.Tensor[[4], pl.DT_FP16]):
    t_nd = pl.make_tile(ND_T, addr=0x0)
    t_nz = pl.make_tile(NZ_T, addr=0x4000)
    with pl.section_vector():
        pl.load(t_nd, a, [0, 0])
        _sync(P.MTE2, P.V)
        pl.move(t_nz, t_nd)
        _sync(P.V, P.S)
        o[0] = t_nz[0, 20]
        o[1] = pl.getval(t_nz, 37)
        t_nz[1, 3] = 7.0          # storage element 35
        o[2] = pl.getval(t_nz, 35)
        o[3] = t_nd[0, 20]


def _logical(storage: int) -> tuple[int, int]:
    off = element_offsets(NZ_T, pl.NZ)
    r, c = (off == storage).nonzero()
    return int(r[0]), int(c[0])


def test_getval_on_an_nz_tile_reads_the_storage_offset():
    a = torch.arange(512, dtype=torch.float16).reshape(16, 32)
    o = torch.zeros(4, dtype=torch.float16)
    read_nz(a, o)
    assert _logical(20) == (1, 4) and _logical(37) == (2, 5)  # fp16 NZ: 16 x 16 boxes, column of boxes first
    assert o.tolist() == [a[1, 4].item(), a[2, 5].item(), 7.0, a[0, 20].item()]
