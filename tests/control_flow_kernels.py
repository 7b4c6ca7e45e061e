"""Kernels with while / break / continue / return over tile groups, shared by the frontend and
auto-sync tests (importable: tests/ is on sys.path via rootdir)."""
import pypto_pro.language as pl

TM = 32
V32 = pl.TileType(shape=[TM, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
T32 = pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32]


def nested_while_add(x: T32, y: T32, z: T32):
    a = pl.make_tile_group(type=V32, addrs=0x0000, mutex_ids=[0, 1])
    b = pl.make_tile_group(type=V32, addrs=0x4000, mutex_ids=[2, 3])
    c = pl.make_tile_group(type=V32, addrs=0x8000, mutex_ids=[4, 5])
    with pl.section_vector():
        i: pl.DT_INT64 = 0
        while i < x.shape[0] // TM:
            j: pl.DT_INT64 = 0
            while j < x.shape[1] // 64:
                ta, tb, tc = a.next(), b.next(), c.next()
                pl.load_tile(ta, x, [i, j])
                pl.load_tile(tb, y, [i, j])
                pl.add(tc, ta, tb)
                pl.store_tile(z, tc, [i, j])
                j = j + 1
            i = i + 1


def break_continue(x: T32, z: T32, stop: pl.DT_INT32, skip: pl.DT_INT32):
    g = pl.make_tile_group(type=V32, addrs=0x0000, mutex_ids=[0, 1])
    with pl.section_vector():
        for i in pl.range(0, x.shape[0] // TM, 1):
            if i == skip:
                continue
            t = g.next()
            pl.load_tile(t, x, [i, 0])
            if i >= stop:          # mid-generation: the group falls back to ownership transfer on a2a3
                pl.muls(t, t, -1.0)
                pl.store_tile(z, t, [i, 0])
                break
            pl.muls(t, t, 2.0)
            pl.store_tile(z, t, [i, 0])


def early_return(x: T32, z: T32, limit: pl.DT_INT64):
    g = pl.make_tile_group(type=V32, addrs=0x0000, mutex_ids=[0, 1])
    h = pl.make_tile_group(type=V32, addrs=0x4000, mutex_ids=[2, 3])
    with pl.section_vector():
        for i in pl.range(0, x.shape[0] // TM, 1):
            for j in pl.range(0, x.shape[1] // 64, 1):
                if i * 2 + j >= limit:
                    return
                t, u = g.next(), h.next()
                pl.load_tile(t, x, [i, j])
                pl.adds(u, t, 1.0)
                pl.store_tile(z, u, [i, j])
        t = g.next()  # after the loops: only when no return was taken
        pl.load_tile(t, x, [0, 0])
        pl.muls(t, t, 0.0)
        pl.store_tile(z, t, [0, 0])
