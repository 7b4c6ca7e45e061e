"""The seed's Add, host code and all, exactly as written for an NPU (the design note's first example):
``torch.npu.set_device``, tensors created with ``device="npu:0"``, ``torch.npu.synchronize()``.

Run it on the simulator, unchanged:

    pypto-pro run examples/npu_add.py

(``pypto-pro run`` emulates the NPU: the tensors live in host memory and the kernel runs on the
simulator; see docs/npu_scripts.md). Everything above the closing check is the seed's code, verbatim.
"""
import pypto_pro.language as pl
import torch


@pl.jit
def add_kernel(
    x: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16],
    y: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16],
    z: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16],
):
    tile_type = pl.TileType(shape=[128, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)

    a_db = pl.make_tile_group(type=tile_type, addrs=0x0000, mutex_ids=[0, 1]) # 地址手动指定， 使能double buffer
    b_db = pl.make_tile_group(type=tile_type, addrs=0x10000, mutex_ids=[2, 3])
    c_db = pl.make_tile_group(type=tile_type, addrs=0x20000, mutex_ids=[30, 31])

    with pl.section_vector():
        num_cores = pl.get_block_num()
        core_id = pl.get_block_idx()
        m_tile_num = x.shape[0] // 128
        n_tile_num = x.shape[1] // 128

        for i in pl.range(core_id, m_tile_num, num_cores):
            for j in pl.range(0, n_tile_num, 1):
                tile_a = a_db.next() # 自动选择下一块buffer，并插入对应的同步
                tile_b = b_db.next()
                tile_c = c_db.next()
                pl.load_tile(tile_a, x, [i, j]) # 根据坐标自动计算offset
                pl.load_tile(tile_b, y, [i, j])
                pl.add(tile_c, tile_a, tile_b)
                pl.store_tile(z, tile_c, [i, j])


device = "npu:0"
torch.npu.set_device(device)
m_size = 8192
n_size = 4096
num_cores = m_size // 128
torch.manual_seed(0)
dtype = torch.float16
# Host 侧就是普通 PyTorch
x = torch.rand([m_size, n_size], device=device, dtype=dtype)
y = torch.rand([m_size, n_size], device=device, dtype=dtype)
z = torch.empty([m_size, n_size], device=device, dtype=dtype)

add_kernel[None, num_cores](x, y, z) # 首次调用触发 JIT
torch.npu.synchronize()

# ---- not in the seed: check the result against torch ----------------------------------------------
z_ref = x + y
torch.testing.assert_close(z, z_ref, rtol=0, atol=0)
print(f"add_kernel {m_size}x{n_size} fp16 on {torch.npu.get_device_name()} (emulated): matches torch")
