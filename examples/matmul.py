"""Tiled matmul on the Cube: C[M, N] = A[M, K] @ B[K, N], fp16 inputs, fp32 accumulation, fp32 or
fp16 output; M, N, K need not be multiples of the tiles.

Per block: output tiles of 128 x 128 (L0C, double buffered); K in chunks of 256 loaded into L1
(double buffered), each split into four 64-deep steps moved into L0A / L0B (double buffered) and
accumulated with matmul_acc. The framework inserts every flag. Edges are handled by valid shapes,
as the real PyPTO Pro matmul kernels do: each tile's ``pl.set_validshape`` says how many rows, columns
and K it really holds, and the K loop runs only over the steps that exist.
"""

import numpy as np

import pypto_pro.language as pl

TM, TN, TK, KSTEP = 128, 128, 256, 64


def make_matmul(arch: str = "a5", out_dtype=pl.DT_FP32):
    def matmul_kernel(a: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16],
                      b: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16],
                      c: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], out_dtype]):
        a_l1 = pl.make_tile_group(type=pl.TileType([TM, TK], pl.DT_FP16, pl.MemorySpace.Mat), addrs=0x00000,
                                  mutex_ids=[0, 1])
        b_l1 = pl.make_tile_group(type=pl.TileType([TK, TN], pl.DT_FP16, pl.MemorySpace.Mat), addrs=0x20000,
                                  mutex_ids=[2, 3])
        a_l0 = pl.make_tile_group(type=pl.TileType([TM, KSTEP], pl.DT_FP16, pl.MemorySpace.Left), addrs=0,
                                  mutex_ids=[4, 5])
        b_l0 = pl.make_tile_group(type=pl.TileType([KSTEP, TN], pl.DT_FP16, pl.MemorySpace.Right), addrs=0,
                                  mutex_ids=[6, 7])
        acc_g = pl.make_tile_group(type=pl.TileType([TM, TN], pl.DT_FP32, pl.MemorySpace.Acc), addrs=0,
                                   mutex_ids=[8, 9])
        with pl.section_cube():
            m, k, n = a.shape[0], a.shape[1], b.shape[1]
            m_tiles = (m + TM - 1) // TM
            n_tiles = (n + TN - 1) // TN
            k_chunks = (k + TK - 1) // TK
            for t in pl.range(pl.get_block_idx(), m_tiles * n_tiles, pl.get_block_num()):
                i = t // n_tiles
                j = t % n_tiles
                rows = min(TM, m - i * TM)                  # this output tile's real rows and columns
                cols = min(TN, n - j * TN)
                acc = acc_g.next()
                pl.set_validshape(acc, [rows, cols])
                for kk in pl.range(0, k_chunks, 1):
                    kv = min(TK, k - kk * TK)                # K this chunk really holds
                    la = a_l1.next()
                    lb = b_l1.next()
                    pl.set_validshape(la, [rows, kv])
                    pl.set_validshape(lb, [kv, cols])
                    pl.load_tile(la, a, [i, kk])
                    pl.load_tile(lb, b, [kk, j])
                    for s in pl.range(0, (kv + KSTEP - 1) // KSTEP, 1):
                        ks = min(KSTEP, kv - s * KSTEP)
                        xa = a_l0.next()
                        xb = b_l0.next()
                        pl.set_validshape(xa, [rows, ks])
                        pl.set_validshape(xb, [ks, cols])
                        pl.move(xa, la, offset=[0, s * KSTEP])
                        pl.move(xb, lb, offset=[s * KSTEP, 0])
                        if kk == 0 and s == 0:               # the first product of the tile starts the sum
                            pl.matmul(acc, xa, xb)
                        else:
                            pl.matmul_acc(acc, acc, xa, xb)
                pl.store_tile(c, acc, [i, j])               # fixpipe converts fp32 -> out dtype

    return pl.jit(matmul_kernel, arch=arch)


def main() -> None:
    rng = np.random.default_rng(0)
    m, k, n = 300, 520, 200
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    ok = True
    for arch in ("a2a3", "a5"):
        for out in (pl.DT_FP32, pl.DT_FP16):
            c = np.zeros((m, n), out.np_dtype)
            report = make_matmul(arch, out)[None, 4](a, b, c)
            ref = a.astype(np.float32) @ b.astype(np.float32)
            err = float(np.max(np.abs(c.astype(np.float32) - ref)))
            tol = 1e-3 if out is pl.DT_FP32 else 0.06
            ok &= err <= tol
            print(f"{arch} fp16 -> {out.name}: max error {err:.2e}  {report.summary()}")
    print(f"matmul matches numpy: {ok}")
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
