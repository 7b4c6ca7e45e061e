"""Small kernels shared by several test files (importable: tests/ is on sys.path via rootdir)."""
import pypto_pro.language as pl

TILE = 128


def add_fn(x: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16],
           y: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16],
           z: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16]):
    tt = pl.TileType(shape=[TILE, TILE], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    a_db = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0, 1])
    b_db = pl.make_tile_group(type=tt, addrs=0x10000, mutex_ids=[2, 3])
    c_db = pl.make_tile_group(type=tt, addrs=0x20000, mutex_ids=[30, 31])
    with pl.section_vector():
        m, n = x.shape[0], x.shape[1]
        m_tiles = (m + TILE - 1) // TILE
        n_tiles = (n + TILE - 1) // TILE
        for i in pl.range(pl.get_block_idx(), m_tiles, pl.get_block_num()):
            for j in pl.range(0, n_tiles, 1):
                a = a_db.next()
                b = b_db.next()
                c = c_db.next()
                shape = [min(TILE, m - i * TILE), min(TILE, n - j * TILE)]  # tail tiles hold less
                pl.set_validshape(a, shape)
                pl.set_validshape(b, shape)
                pl.set_validshape(c, shape)
                pl.load_tile(a, x, [i, j])
                pl.load_tile(b, y, [i, j])
                pl.add(c, a, b)
                pl.store_tile(z, c, [i, j])


def static_add_fn(x: pl.Tensor[[256, 128], pl.DT_FP32],
                  y: pl.Tensor[[256, 128], pl.DT_FP32],
                  z: pl.Tensor[[256, 128], pl.DT_FP32]):
    tt = pl.TileType(shape=[64, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    a = pl.make_tile_group(type=tt, addrs=0, mutex_ids=[0, 1])
    b = pl.make_tile_group(type=tt, addrs=0x10000, mutex_ids=[2, 3])
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), 4, pl.get_block_num()):
            ta = a.next()
            tb = b.next()
            pl.load_tile(ta, x, [i, 0])
            pl.load_tile(tb, y, [i, 0])
            pl.add(ta, ta, tb)
            pl.store_tile(z, ta, [i, 0])


def make_acc_to_vec_split(R: int = 32, K: int = 32, N: int = 32, ready: int = 1, split: bool = True):
    """One [R, K] x [K, N] matmul moved straight from L0C to UB (the direct L0C -> UB path: a5 only).

    ``split``: ``acc_to_vec_mode=DualModeSplitM``, so AIV ``i`` receives rows ``[i * R/2, (i+1) * R/2)``
    and stores them there (``out`` is the whole product). Otherwise no mode is given: the real default
    (SingleModeVec0) writes only AIV0's UB, and each AIV stores its [R, N] tile at ``subblock * R``."""
    Mat, Left, Right, Acc, Vec = (pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right,
                                  pl.MemorySpace.Acc, pl.MemorySpace.Vec)
    H = R // 2 if split else R
    mode = pl.AccToVecMode.DualModeSplitM if split else None

    def acc_to_vec(x: pl.Tensor[[pl.DYNAMIC, K], pl.DT_FP16], w: pl.Tensor[[K, N], pl.DT_FP16],
                   out: pl.Tensor[[pl.DYNAMIC, N], pl.DT_FP32]):
        a1 = pl.make_tile_group(type=pl.TileType([R, K], pl.DT_FP16, Mat), addrs=[0], mutex_ids=[0])[0]
        b1 = pl.make_tile_group(type=pl.TileType([K, N], pl.DT_FP16, Mat), addrs=[0x4000], mutex_ids=[1])[0]
        a0 = pl.make_tile_group(type=pl.TileType([R, K], pl.DT_FP16, Left), addrs=[0], mutex_ids=[2])[0]
        b0 = pl.make_tile_group(type=pl.TileType([K, N], pl.DT_FP16, Right), addrs=[0], mutex_ids=[3])[0]
        acc = pl.make_tile_group(type=pl.TileType([R, N], pl.DT_FP32, Acc), addrs=[0], mutex_ids=[4])[0]
        ub = pl.make_tile_group(type=pl.TileType([H, N], pl.DT_FP32, Vec), addrs=[0], mutex_ids=[5])[0]
        with pl.section_cube():
            pl.load(a1, x, [0, 0])
            pl.load(b1, w, [0, 0])
            pl.move(a0, a1)
            pl.move(b0, b1)
            pl.matmul(acc, a0, b0)
            pl.move(ub, acc, acc_to_vec_mode=mode)
            pl.system.set_cross_core(pipe=pl.PipeType.FIX, event_id=ready)
        with pl.section_vector():
            pl.system.wait_cross_core(pipe=pl.PipeType.MTE3, event_id=ready)
            pl.store(out, ub, [pl.get_subblock_idx() * H, 0])
    return acc_to_vec
