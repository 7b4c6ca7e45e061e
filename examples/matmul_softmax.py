"""Fused matmul + row softmax: out = softmax(x @ w, axis=1), fp16 in / fp16 out, fp32 in between.

The Cube computes each 128-row tile of x @ w (N <= 128 columns) into L0C; the block's two Vector
cores each take 64 of its rows, run the softmax in fp32 and store fp16. Data goes Cube -> Vector:
  * a2a3: through a global-memory workspace (two slots per block): the Cube stores the
    accumulator, signals "ready"; each Vector core loads its rows and signals "free".
  * a5: directly, L0C -> UB (pl.move Acc -> Vec into each Vector core's UB).
Cross-core flags: ready (Cube -> both Vector cores) and free (each Vector core -> Cube); the Vector
cores pre-signal both slots free and the Cube drains the last two signals, so none is left pending.
"""
import numpy as np

import pypto_pro.language as pl

TM, TK, KSTEP, N = 128, 128, 64, 128
HALF = TM // 2


def make_matmul_softmax(arch: str = "a5"):
    direct = arch == "a5"
    acc_t = pl.TileType([TM, N], pl.DT_FP32, pl.MemorySpace.Acc)
    f32_t = pl.TileType([HALF, N], pl.DT_FP32, pl.MemorySpace.Vec)
    f16_t = pl.TileType([HALF, N], pl.DT_FP16, pl.MemorySpace.Vec)
    col_t = pl.TileType([HALF, 1], pl.DT_FP32, pl.MemorySpace.Vec, layout=pl.DN)  # one value per row
    READY, FREE = 2, 0  # cross-core event ids: READY + slot (Cube -> Vector), FREE + slot (Vector -> Cube)

    @pl.inline
    def cube_matmul(x, w, i, a_l1, b_l1, a_l0, b_l0, acc):
        k = x.shape[1]
        rows = min(TM, x.shape[0] - i * TM)
        pl.set_validshape(acc, [rows, N])
        for kk in pl.range(0, (k + TK - 1) // TK, 1):
            kv = min(TK, k - kk * TK)
            la = a_l1.next()
            lb = b_l1.next()
            pl.set_validshape(la, [rows, kv])
            pl.set_validshape(lb, [kv, N])
            pl.load_tile(la, x, [i, kk])
            pl.load_tile(lb, w, [kk, 0])
            for s in pl.range(0, (kv + KSTEP - 1) // KSTEP, 1):
                ks = min(KSTEP, kv - s * KSTEP)
                xa = a_l0.next()
                xb = b_l0.next()
                pl.set_validshape(xa, [rows, ks])
                pl.set_validshape(xb, [ks, N])
                pl.move(xa, la, offset=[0, s * KSTEP])
                pl.move(xb, lb, offset=[s * KSTEP, 0])
                if s == 0 and kk == 0:           # the first product of the tile starts the sum
                    pl.matmul(acc, xa, xb)
                else:
                    pl.matmul_acc(acc, acc, xa, xb)

    @pl.inline
    def softmax_rows(t, mx, sm, o16):
        pl.maximum(mx, t, t, dim=0)   # per row (tmp: unused by TROWMAX)
        pl.expand_sub(t, t, mx, dim=0)
        pl.exp(t, t)
        pl.sum(sm, t, t, dim=0)
        pl.expand_div(t, t, sm, dim=0)
        pl.cast(o16, t, mode=pl.RoundMode.CAST_RINT)

    def kernel(x: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16],
               w: pl.Tensor[[pl.DYNAMIC, N], pl.DT_FP16],
               ws: pl.Tensor[[pl.DYNAMIC, N], pl.DT_FP32],
               out: pl.Tensor[[pl.DYNAMIC, N], pl.DT_FP16]):
        a_l1 = pl.make_tile_group(type=pl.TileType([TM, TK], pl.DT_FP16, pl.MemorySpace.Mat), addrs=0x00000,
                                  mutex_ids=[0, 1])
        b_l1 = pl.make_tile_group(type=pl.TileType([TK, N], pl.DT_FP16, pl.MemorySpace.Mat), addrs=0x10000,
                                  mutex_ids=[2, 3])
        a_l0 = pl.make_tile_group(type=pl.TileType([TM, KSTEP], pl.DT_FP16, pl.MemorySpace.Left), addrs=0,
                                  mutex_ids=[4, 5])
        b_l0 = pl.make_tile_group(type=pl.TileType([KSTEP, N], pl.DT_FP16, pl.MemorySpace.Right), addrs=0,
                                  mutex_ids=[6, 7])
        acc_g = pl.make_tile_group(type=acc_t, addrs=0, mutex_ids=[8, 9])
        in_g = pl.make_tile_group(type=f32_t, addrs=0x00000, mutex_ids=[10, 11])   # 2 x 32 KiB
        o_g = pl.make_tile_group(type=f16_t, addrs=0x10000, mutex_ids=[12, 13])    # 2 x 16 KiB
        mx = pl.make_tile(col_t, addr=0x18000)
        sm = pl.make_tile(col_t, addr=0x19000)
        m_tiles = (x.shape[0] + TM - 1) // TM
        with pl.section_cube():
            it = 0
            for i in pl.range(pl.get_block_idx(), m_tiles, pl.get_block_num()):
                slot = it % 2
                acc = acc_g.next()
                cube_matmul(x, w, i, a_l1, b_l1, a_l0, b_l0, acc)
                pl.system.wait_cross_core(pipe=pl.PipeType.FIX, event_id=FREE + slot)
                if direct:
                    for sub in range(2):  # each Vector core takes 64 rows of the tile: a TEXTRACT at its row
                        rows = min(HALF, x.shape[0] - i * TM - sub * HALF)  # the last tile may be partial
                        if rows > 0:
                            pl.set_validshape(in_g[slot], [rows, N])
                            mode = pl.AccToVecMode.SingleModeVec0 if sub == 0 else pl.AccToVecMode.SingleModeVec1
                            pl.move(in_g[slot], acc, offset=[sub * HALF, 0], acc_to_vec_mode=mode)
                else:
                    row0 = (pl.get_block_idx() * 2 + slot) * TM
                    pl.store(ws, acc, [row0, 0])  # the acc's valid rows
                pl.system.set_cross_core(pipe=pl.PipeType.FIX, event_id=READY + slot)
                it = it + 1
            for s in range(2):  # the Vector cores' last two "free" signals
                pl.system.wait_cross_core(pipe=pl.PipeType.FIX, event_id=FREE + s)
        with pl.section_vector():
            sub = pl.get_subblock_idx()
            for s in range(2):  # both slots start free
                pl.system.set_cross_core(pipe=pl.PipeType.MTE2, event_id=FREE + s)
            it = 0
            core = pl.get_block_idx() // pl.get_subblock_num()  # a Vector core's index is block * 2 + subblock
            for i in pl.range(core, m_tiles, pl.get_block_num()):
                slot = it % 2
                t = in_g[slot]
                row = i * TM + sub * HALF
                rows = min(HALF, x.shape[0] - row)  # <= 0: this Vector core has no rows of the last tile
                if direct:
                    pl.system.wait_cross_core(pipe=pl.PipeType.V, event_id=READY + slot)
                else:
                    pl.system.wait_cross_core(pipe=pl.PipeType.MTE2, event_id=READY + slot)
                    if rows > 0:
                        pl.set_validshape(t, [rows, N])
                        pl.load(t, ws, [(core * 2 + slot) * TM + sub * HALF, 0])
                    pl.system.set_cross_core(pipe=pl.PipeType.MTE2, event_id=FREE + slot)
                if rows > 0:
                    pl.set_validshape(t, [rows, N])
                    o16 = o_g.next()
                    pl.set_validshape(o16, [rows, N])
                    pl.set_validshape(mx, [rows, 1])
                    pl.set_validshape(sm, [rows, 1])
                    softmax_rows(t, mx, sm, o16)
                    pl.store(out, o16, [row, 0])
                if direct:
                    pl.system.set_cross_core(pipe=pl.PipeType.V, event_id=FREE + slot)
                it = it + 1

    return pl.jit(kernel, arch=arch)


def reference(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    y = x.astype(np.float32) @ w.astype(np.float32)
    y = np.exp(y - y.max(axis=1, keepdims=True))
    return (y / y.sum(axis=1, keepdims=True)).astype(np.float16)


def run(arch: str, m: int, k: int, blocks: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((m, k)) * 0.1).astype(np.float16)
    w = (rng.standard_normal((k, N)) * 0.1).astype(np.float16)
    ws = np.zeros((max(blocks, 1) * 2 * TM, N), np.float32)
    out = np.zeros((m, N), np.float16)
    report = make_matmul_softmax(arch)[None, blocks](x, w, ws, out)
    return out, reference(x, w), report


def main() -> None:
    ok = True
    for arch in ("a2a3", "a5"):
        out, ref, report = run(arch, 300, 200, 3)
        err = float(np.max(np.abs(out.astype(np.float32) - ref.astype(np.float32))))
        ok &= err <= 2e-3
        print(f"{arch}: max error {err:.2e}  {report.summary()}")
    print(f"matmul_softmax matches numpy: {ok}")
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
