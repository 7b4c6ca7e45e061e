"""The small kernel the NPU-emulation tests launch: z = x + x on 32 x 128 fp16 tiles."""
import pypto_pro.language as pl


@pl.jit
def double(x: pl.Tensor[[pl.DYNAMIC, 128], pl.DT_FP16], z: pl.Tensor[[pl.DYNAMIC, 128], pl.DT_FP16]):
    t = pl.TileType(shape=[32, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    a = pl.make_tile_group(type=t, addrs=0x0000, mutex_ids=[0, 1])
    c = pl.make_tile_group(type=t, addrs=0x4000, mutex_ids=[2, 3])
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), x.shape[0] // 32, pl.get_block_num()):
            ta, tc = a.next(), c.next()
            pl.load_tile(ta, x, [i, 0])
            pl.add(tc, ta, ta)
            pl.store_tile(z, tc, [i, 0])
