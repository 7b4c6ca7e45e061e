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
