"""A small two-stage Cube -> Vector pipeline used by the pipeline tests (importable module)."""
import pypto_pro.language as pl

TM, N, K = 64, 128, 64


def cube_product(x, w, i, a_l1, b_l1, a_l0, b_l0, acc_g, s):
    """x[i] @ w into the next slot of s, on both Vector cores (a plain helper: the stages inline it)."""
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


@pl.pipeline.stage(produces=["s"])
def scores(x, w, i, a_l1, b_l1, a_l0, b_l0, acc_g, s):
    with pl.section_cube():
        cube_product(x, w, i, a_l1, b_l1, a_l0, b_l0, acc_g, s)


@pl.pipeline.stage(consumes=["s"])
def scale(out, i, s, o_g):
    with pl.section_vector():
        t = s.next()
        o = o_g.next()
        pl.muls(o, t, 2.0)
        if pl.get_subblock_idx() == 0:
            pl.store_tile(out, o, [i, 0])


def two_stage(x: pl.Tensor[[pl.DYNAMIC, K], pl.DT_FP16], w: pl.Tensor[[K, N], pl.DT_FP16],
              out: pl.Tensor[[pl.DYNAMIC, N], pl.DT_FP32]):
    a_l1, b_l1, a_l0, b_l0, acc_g = cube_groups()
    s = pl.make_tile_group(type=pl.TileType([TM, N], pl.DT_FP32, pl.MemorySpace.Vec), addrs=0,  # <- shared
                           fwd_ids=[0, 1, 2], bwd_ids=[3, 4, 5])
    o_g = pl.make_tile_group(type=pl.TileType([TM, N], pl.DT_FP32, pl.MemorySpace.Vec), addrs=0x18000,
                             mutex_ids=[10, 11])
    core = pl.get_block_idx() // pl.get_subblock_num()  # the block on both engines
    for i in pl.range(core, x.shape[0] // TM, pl.get_block_num()):  # <- loop
        scores(x, w, i, a_l1, b_l1, a_l0, b_l0, acc_g, s)
        scale(out, i, s, o_g)


def reader_without_writer(x: pl.Tensor[[pl.DYNAMIC, K], pl.DT_FP16], w: pl.Tensor[[K, N], pl.DT_FP16],
                          out: pl.Tensor[[pl.DYNAMIC, N], pl.DT_FP32]):
    s = pl.make_tile_group(type=pl.TileType([TM, N], pl.DT_FP32, pl.MemorySpace.Vec), addrs=0,
                           fwd_ids=[0, 1, 2], bwd_ids=[3, 4, 5])
    o_g = pl.make_tile_group(type=pl.TileType([TM, N], pl.DT_FP32, pl.MemorySpace.Vec), addrs=0x18000,
                             mutex_ids=[10, 11])
    for i in pl.range(0, x.shape[0] // TM, 1):
        scale(out, i, s, o_g)  # <- orphan reader


def break_in_pipelined_loop(x: pl.Tensor[[pl.DYNAMIC, K], pl.DT_FP16], w: pl.Tensor[[K, N], pl.DT_FP16],
                            out: pl.Tensor[[pl.DYNAMIC, N], pl.DT_FP32], stop: pl.DT_INT32):
    a_l1, b_l1, a_l0, b_l0, acc_g = cube_groups()
    s = pl.make_tile_group(type=pl.TileType([TM, N], pl.DT_FP32, pl.MemorySpace.Vec), addrs=0,
                           fwd_ids=[0, 1, 2], bwd_ids=[3, 4, 5])
    o_g = pl.make_tile_group(type=pl.TileType([TM, N], pl.DT_FP32, pl.MemorySpace.Vec), addrs=0x18000,
                             mutex_ids=[10, 11])
    for i in pl.range(0, x.shape[0] // TM, 1):
        scores(x, w, i, a_l1, b_l1, a_l0, b_l0, acc_g, s)
        if i >= stop:
            break  # <- jump
        scale(out, i, s, o_g)


def shallow_ring(x: pl.Tensor[[pl.DYNAMIC, K], pl.DT_FP16], w: pl.Tensor[[K, N], pl.DT_FP16],
                 out: pl.Tensor[[pl.DYNAMIC, N], pl.DT_FP32]):
    """two_stage with a one-slot shared ring: the Vector stage runs one iteration behind the Cube one."""
    a_l1, b_l1, a_l0, b_l0, acc_g = cube_groups()
    s = pl.make_tile_group(type=pl.TileType([TM, N], pl.DT_FP32, pl.MemorySpace.Vec), addrs=0, depth=1,  # <- shared
                           fwd_ids=[0], bwd_ids=[3])
    o_g = pl.make_tile_group(type=pl.TileType([TM, N], pl.DT_FP32, pl.MemorySpace.Vec), addrs=0x18000,
                             mutex_ids=[10, 11])
    for i in pl.range(0, x.shape[0] // TM, 1):
        scores(x, w, i, a_l1, b_l1, a_l0, b_l0, acc_g, s)
        scale(out, i, s, o_g)


def cube_groups():
    """The Cube-side rings of the kernels above (a plain helper: kernels inline it)."""
    a_l1 = pl.make_tile_group(type=pl.TileType([TM, K], pl.DT_FP16, pl.MemorySpace.Mat), addrs=0, mutex_ids=[0, 1])
    b_l1 = pl.make_tile_group(type=pl.TileType([K, N], pl.DT_FP16, pl.MemorySpace.Mat), addrs=0x10000,
                              mutex_ids=[2, 3])
    a_l0 = pl.make_tile_group(type=pl.TileType([TM, K], pl.DT_FP16, pl.MemorySpace.Left), addrs=0, mutex_ids=[4, 5])
    b_l0 = pl.make_tile_group(type=pl.TileType([K, N], pl.DT_FP16, pl.MemorySpace.Right), addrs=0, mutex_ids=[6, 7])
    acc_g = pl.make_tile_group(type=pl.TileType([TM, N], pl.DT_FP32, pl.MemorySpace.Acc), addrs=0, mutex_ids=[8, 9])
    return a_l1, b_l1, a_l0, b_l0, acc_g


def two_stage_fwd_only(x: pl.Tensor[[pl.DYNAMIC, K], pl.DT_FP16], w: pl.Tensor[[K, N], pl.DT_FP16],
                       out: pl.Tensor[[pl.DYNAMIC, N], pl.DT_FP32]):
    """two_stage with a shared group declared with fwd_ids only: no "slot free" back edge, so the
    Cube may refill a slot the Vector side still reads once the loop runs more trips than slots."""
    a_l1, b_l1, a_l0, b_l0, acc_g = cube_groups()
    s = pl.make_tile_group(type=pl.TileType([TM, N], pl.DT_FP32, pl.MemorySpace.Vec), addrs=0, fwd_ids=[0, 1, 2])
    o_g = pl.make_tile_group(type=pl.TileType([TM, N], pl.DT_FP32, pl.MemorySpace.Vec), addrs=0x18000,
                             mutex_ids=[10, 11])
    for i in pl.range(0, x.shape[0] // TM, 1):
        scores(x, w, i, a_l1, b_l1, a_l0, b_l0, acc_g, s)  # <- producer
        scale(out, i, s, o_g)                              # <- consumer
