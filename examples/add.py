"""The seed Add kernel: z = x + y on 128 x 128 fp16 tiles, double buffered, on the simulator."""
import pypto_pro.language as pl
import torch


@pl.jit
def add_kernel(
    x: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16],
    y: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16],
    z: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16],
):
    tile_type = pl.TileType(shape=[128, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)

    a_db = pl.make_tile_group(type=tile_type, addrs=0x0000, mutex_ids=[0, 1])  # manual address, double buffer
    b_db = pl.make_tile_group(type=tile_type, addrs=0x10000, mutex_ids=[2, 3])
    c_db = pl.make_tile_group(type=tile_type, addrs=0x20000, mutex_ids=[30, 31])

    with pl.section_vector():
        num_cores = pl.get_block_num()
        core_id = pl.get_block_idx()
        m_tile_num = x.shape[0] // 128
        n_tile_num = x.shape[1] // 128

        for i in pl.range(core_id, m_tile_num, num_cores):
            for j in pl.range(0, n_tile_num, 1):
                tile_a = a_db.next()   # next buffer in the ring, plus the sync it needs
                tile_b = b_db.next()
                tile_c = c_db.next()
                pl.load_tile(tile_a, x, [i, j])   # offset computed from tile coordinates
                pl.load_tile(tile_b, y, [i, j])
                pl.add(tile_c, tile_a, tile_b)
                pl.store_tile(z, tile_c, [i, j])


def main() -> None:
    m_size, n_size = 8192, 4096
    torch.manual_seed(0)
    x = torch.rand([m_size, n_size], dtype=torch.float16)
    y = torch.rand([m_size, n_size], dtype=torch.float16)
    z = torch.empty([m_size, n_size], dtype=torch.float16)
    report = add_kernel[None, m_size // 128](x, y, z)   # first call compiles (JIT); z == x + y
    print(report.summary())
    ok = torch.equal(z, x + y)
    print(f"add_kernel {m_size}x{n_size} fp16 matches torch: {ok}")
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
