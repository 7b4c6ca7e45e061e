"""Kernels in the real PyPTO Pro's pipeline form (bare ``@pl.pipeline.stage``, stages called inside
sections, a counter carried across iterations, one-way shared groups), for test_pipeline_real_form.py."""
import pypto_pro.language as pl
from pipelined_kernels import K, N, TM, cube_groups, cube_product  # noqa: F401


@pl.pipeline.stage
def qk(x, w, i, a_l1, b_l1, a_l0, b_l0, acc_g, s):
    """Writes s through a plain helper: the roles are read through the call."""
    cube_product(x, w, i, a_l1, b_l1, a_l0, b_l0, acc_g, s)


@pl.pipeline.stage
def softmax_like(out, row, s, o_g):
    t = s.next()
    o = o_g.next()
    pl.muls(o, t, 2.0)
    if pl.get_subblock_idx() == 0:
        pl.store_tile(out, o, [row, 0])


def two_way(x: pl.Tensor[[pl.DYNAMIC, K], pl.DT_FP16], w: pl.Tensor[[K, N], pl.DT_FP16],
            out: pl.Tensor[[pl.DYNAMIC, N], pl.DT_FP32]):
    """Stages called inside sections; the output row is a counter carried across iterations."""
    a_l1, b_l1, a_l0, b_l0, acc_g = cube_groups()
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
    a_l1, b_l1, a_l0, b_l0, acc_g = cube_groups()
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
