"""Kernels in the real PyPTO Pro's pipeline form (bare ``@pl.pipeline.stage``, stages called inside
sections, a counter carried across iterations, one-way shared groups), for test_pipeline_real_form.py."""
import pypto_pro.language as pl

TM, N, K = 64, 128, 64


@pl.pipeline.stage
def qk(x, w, i, a_l1, b_l1, a_l0, b_l0, acc_g, s):
    la = a_l1.next()
    lb = b_l1.next()
    pl.load_tile(la, x, [i, 0])
    pl.load_tile(lb, w, [0, 0])
    xa = a_l0.next()
    xb = b_l0.next()
    pl.move(xa, la)
    pl.move(xb, lb)
    acc = acc_g.next()
    pl.matmul(acc, xa, xb)
    t = s.next()
    pl.move(t, acc, acc_to_vec_mode=pl.AccToVecMode.SingleModeVec0)
    pl.move(t, acc, acc_to_vec_mode=pl.AccToVecMode.SingleModeVec1)


@pl.pipeline.stage
def softmax_like(out, row, s, o_g):
    t = s.next()
    o = o_g.next()
    pl.muls(o, t, 2.0)
    if pl.get_subblock_idx() == 0:
        pl.store_tile(out, o, [row, 0])


def _groups():
    a_l1 = pl.make_tile_group(type=pl.TileType([TM, K], pl.DT_FP16, pl.MemorySpace.Mat), addrs=0, mutex_ids=[0, 1])
    b_l1 = pl.make_tile_group(type=pl.TileType([K, N], pl.DT_FP16, pl.MemorySpace.Mat), addrs=0x10000,
                              mutex_ids=[2, 3])
    a_l0 = pl.make_tile_group(type=pl.TileType([TM, K], pl.DT_FP16, pl.MemorySpace.Left), addrs=0, mutex_ids=[4, 5])
    b_l0 = pl.make_tile_group(type=pl.TileType([K, N], pl.DT_FP16, pl.MemorySpace.Right), addrs=0, mutex_ids=[6, 7])
    acc_g = pl.make_tile_group(type=pl.TileType([TM, N], pl.DT_FP32, pl.MemorySpace.Acc), addrs=0, mutex_ids=[8, 9])
    return a_l1, b_l1, a_l0, b_l0, acc_g


def two_way(x: pl.Tensor[[pl.DYNAMIC, K], pl.DT_FP16], w: pl.Tensor[[K, N], pl.DT_FP16],
            out: pl.Tensor[[pl.DYNAMIC, N], pl.DT_FP32]):
    """Stages called inside sections; the output row is a counter carried across iterations."""
    a_l1, b_l1, a_l0, b_l0, acc_g = _groups()
    s = pl.make_tile_group(type=pl.TileType([TM, N], pl.DT_FP32, pl.MemorySpace.Vec), addrs=0,
                           fwd_ids=[0, 1], bwd_ids=[3, 4])
    with pl.section_vector():
        o_g = pl.make_tile_group(type=pl.TileType([TM, N], pl.DT_FP32, pl.MemorySpace.Vec), addrs=0x18000,
                                 mutex_ids=[10, 11])
    tick = 0
    for i in pl.range(0, x.shape[0] // TM):
        with pl.section_cube():
            qk(x, w, i, a_l1, b_l1, a_l0, b_l0, acc_g, s)
        with pl.section_vector():
            softmax_like(out, tick, s, o_g)
        tick = tick + 1


def one_way(x: pl.Tensor[[pl.DYNAMIC, K], pl.DT_FP16], w: pl.Tensor[[K, N], pl.DT_FP16],
            out: pl.Tensor[[pl.DYNAMIC, N], pl.DT_FP32]):
    """A shared group with fwd_ids only: the Cube stage never waits for a free slot."""
    a_l1, b_l1, a_l0, b_l0, acc_g = _groups()
    s = pl.make_tile_group(type=pl.TileType([TM, N], pl.DT_FP32, pl.MemorySpace.Vec), addrs=0,
                           fwd_ids=[0, 1, 2, 5, 6])
    with pl.section_vector():
        o_g = pl.make_tile_group(type=pl.TileType([TM, N], pl.DT_FP32, pl.MemorySpace.Vec), addrs=0x28000,
                                 mutex_ids=[10, 11])
    for i in pl.range(0, x.shape[0] // TM):
        with pl.section_cube():
            qk(x, w, i, a_l1, b_l1, a_l0, b_l0, acc_g, s)
        with pl.section_vector():
            softmax_like(out, i, s, o_g)
