"""Flash attention forward (BNSD, fp16 Q/K/V/O, fp32 online softmax), causal or not, pipelined
across the Cube and Vector engines with ``pl.pipeline``.

Per work item (batch, head, 64-row query tile) the loop over 64-key tiles has four stages:
  qk      (Cube)   S_j = Q K_j^T                                  -> shared ring ``s_g``
  softmax (Vector) m, l, P_j = exp(S_j * scale - m), alpha_j        -> shared ring ``p_g`` (+ alpha ring)
  pv      (Cube)   O_j = P_j V_j                                  -> shared ring ``o_g``
  update  (Vector) O = O * alpha_j + O_j
Each Vector core handles 32 of the 64 query rows. Data crosses engines through global-memory
workspaces on a2a3 and directly (L0C -> UB, UB -> L1) on a5. With the real transform's delays
(qk 0, softmax 1, pv p, update p + 1 for preload p) the Cube computes QK one tile ahead of the
softmax and PV p tiles behind its QK, so both engines stay busy.
"""
import math

import numpy as np

import pypto_pro.language as pl

TQ, TK = 64, 64          # query rows per work item, keys per step
HALF = TQ // 2            # query rows per Vector core
RING = 2                  # slots per shared ring (>= preload + 1)


def make_flash_attention(arch: str = "a5", head_dim: int = 128, causal: bool = False, preload: int = 1,
                         check: str = "raise"):
    D = head_dim
    direct = arch == "a5"
    ring = max(RING, preload + 1)
    alpha_depth = 2 * preload + 1  # softmax(j) -> update(j) spans two engine hops
    scale = 1.0 / math.sqrt(D)
    MAT, LEFT, RIGHT, ACC, VEC = (pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right,
                                  pl.MemorySpace.Acc, pl.MemorySpace.Vec)
    f16, f32 = pl.DT_FP16, pl.DT_FP32
    # cross-core ids: one counting id per direction and ring (16 exist; 3 rings x 2 x depth would not fit)
    s_fwd, s_bwd, p_fwd, p_bwd, o_fwd, o_bwd = ([i] for i in range(6))
    mid: dict[str, list[int]] = {}                  # buffer (mutex) ids, 0-31, handed out in order
    for name, n in (("q_l1", 1), ("k_l1", 2), ("v_l1", 2), ("p_l1", 2), ("q_l0", 1), ("p_l0", 2), ("kt_l0", 2),
                    ("v_l0", 2), ("sacc", 2), ("oacc", 2), ("s", ring), ("p", ring), ("o", ring), ("out16", 1),
                    ("p16", 2), ("p16nz", 1)):
        start = sum(len(v) for v in mid.values())
        mid[name] = list(range(start, start + n))

    @pl.pipeline.stage(produces=["s_g"])
    def qk(k, b, h, j, q0, q_l0, k_l1, kt_l0, sacc_g, s_g, ws_s, wbase, q_rows, kv_valid):
        with pl.section_cube():
            kl = k_l1.next()
            pl.set_validshape(kl, [kv_valid, D])
            pl.load_tile(kl, k, [b, h, j, 0])
            kt = kt_l0.next()
            pl.set_validshape(kt, [D, kv_valid])
            pl.move(kt, kl, transpose=True)               # K_j^T: [D, TK]
            sacc = sacc_g.next()
            pl.set_validshape(sacc, [q_rows, kv_valid])
            pl.matmul(sacc, q0, kt)
            s_g.next()
            if direct:
                for sub in range(2):                      # each Vector core's 32 rows: a TEXTRACT at its row
                    r = min(HALF, q_rows - sub * HALF)
                    if r > 0:
                        mode = pl.AccToVecMode.SingleModeVec0 if sub == 0 else pl.AccToVecMode.SingleModeVec1
                        pl.set_validshape(s_g.current(), [r, kv_valid])
                        pl.move(s_g.current(), sacc, offset=[sub * HALF, 0], acc_to_vec_mode=mode)
            else:
                pl.store(ws_s, sacc, [wbase + s_g.pos * TQ, 0])

    @pl.pipeline.stage(produces=["p_g"], consumes=["s_g"])
    def softmax(j, qi, s_g, p_g, ws_s, ws_p, wbase, stats, alpha_g, alpha_r, p16_g, p16nz, mask, rows, kv_valid):
        with pl.section_vector():
            sub = pl.get_subblock_idx()
            st = s_g.next()
            p_g.next()
            if rows > 0:                                   # this core's rows of a partial last query tile
                pl.set_validshape(st, [rows, kv_valid])
                if not direct:
                    pl.load(st, ws_s, [wbase + s_g.pos * TQ + sub * HALF, 0])
                pl.mul(st, st, scale)
                if causal:
                    if j == qi:
                        pl.set_validshape(mask, [rows, kv_valid])
                        pl.add(st, st, mask)               # -inf above the diagonal
                # per-row statistics: [HALF, 1] DN tiles for the reductions and broadcasts, and [1, HALF] row-major
                # tiles over the same bytes (the ``_r`` names) for the elementwise math, which PTO-ISA runs on
                # row-major tiles only
                m, m_r, l_r, rmax, rmax_r, rsum_r, rsum = stats
                pl.maximum(rmax, st, st, dim=0)            # row max (tmp: unused by TROWMAX)
                pl.maximum(rmax_r, rmax_r, m_r)            # m_new = max(m, rowmax(S))
                a_r = alpha_r[j % alpha_depth]
                pl.sub(a_r, rmax_r, m_r)
                pl.mul(a_r, a_r, -1.0)
                pl.exp(a_r, a_r)                           # alpha = exp(m - m_new)
                pl.move(m_r, rmax_r)
                pl.expand_sub(st, st, m, dim=0)
                pl.exp(st, st)                             # P = exp(S - m_new)
                pl.sum(rsum, st, st, dim=0)
                pl.mul(l_r, a_r, l_r)
                pl.add(l_r, l_r, rsum_r)                   # l = l * alpha + rowsum(P)
                p16 = p16_g.next()
                pl.set_validshape(p16, [rows, kv_valid])
                pl.cast(p16, st, mode=pl.RoundMode.CAST_RINT)
                if direct:  # the UB -> L1 DMA copies storage order: P goes NZ in UB, then into its rows of L1
                    pl.set_validshape(p16nz, [rows, kv_valid])
                    pl.move(p16nz, p16)
                    pl.insert(p_g.current(), p16nz, [sub * HALF, 0])
                else:
                    pl.store(ws_p, p16, [wbase + p_g.pos * TQ + sub * HALF, 0])

    @pl.pipeline.stage(produces=["o_g"], consumes=["p_g"])
    def pv(v, b, h, j, p_g, ws_p, wbase, p_l1, p_l0, v_l1, v_l0, oacc_g, o_g, ws_o, q_rows, kv_valid):
        with pl.section_cube():
            vl = v_l1.next()
            pl.set_validshape(vl, [kv_valid, D])
            pl.load_tile(vl, v, [b, h, j, 0])
            p_g.next()
            pl0 = p_l0.next()
            pl.set_validshape(pl0, [q_rows, kv_valid])
            if direct:
                pl.set_validshape(p_g.current(), [q_rows, kv_valid])
                pl.move(pl0, p_g.current())
            else:
                pl1 = p_l1.next()
                pl.set_validshape(pl1, [q_rows, kv_valid])
                pl.load(pl1, ws_p, [wbase + p_g.pos * TQ, 0])
                pl.move(pl0, pl1)
            vt = v_l0.next()
            pl.set_validshape(vt, [kv_valid, D])
            pl.move(vt, vl)
            oacc = oacc_g.next()
            pl.set_validshape(oacc, [q_rows, D])
            pl.matmul(oacc, pl0, vt)
            o_g.next()
            if direct:
                for sub in range(2):
                    r = min(HALF, q_rows - sub * HALF)
                    if r > 0:
                        mode = pl.AccToVecMode.SingleModeVec0 if sub == 0 else pl.AccToVecMode.SingleModeVec1
                        pl.set_validshape(o_g.current(), [r, D])
                        pl.move(o_g.current(), oacc, offset=[sub * HALF, 0], acc_to_vec_mode=mode)
            else:
                pl.store(ws_o, oacc, [wbase + o_g.pos * TQ, 0])

    @pl.pipeline.stage(consumes=["o_g"])
    def update(j, o_g, ws_o, wbase, acc, alpha_g, rows):
        with pl.section_vector():
            sub = pl.get_subblock_idx()
            ot = o_g.next()
            if rows > 0:
                pl.set_validshape(ot, [rows, D])
                if not direct:
                    pl.load(ot, ws_o, [wbase + o_g.pos * TQ + sub * HALF, 0])
                pl.expand_mul(acc, acc, alpha_g[j % alpha_depth], dim=0)
                pl.add(acc, acc, ot)

    def flash_attention(q: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC, pl.DYNAMIC, D], pl.DT_FP16],
                        k: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC, pl.DYNAMIC, D], pl.DT_FP16],
                        v: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC, pl.DYNAMIC, D], pl.DT_FP16],
                        o: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC, pl.DYNAMIC, D], pl.DT_FP16],
                        mask: pl.Tensor[[TQ, TK], pl.DT_FP32],
                        ws_s: pl.Tensor[[pl.DYNAMIC, TK], pl.DT_FP32],
                        ws_p: pl.Tensor[[pl.DYNAMIC, TK], pl.DT_FP16],
                        ws_o: pl.Tensor[[pl.DYNAMIC, D], pl.DT_FP32]):
        # ---- Cube buffers (L1 / L0A / L0B / L0C)
        q_l1 = pl.make_tile_group(type=pl.TileType([TQ, D], f16, MAT), addrs=0x00000, mutex_ids=mid["q_l1"])
        k_l1 = pl.make_tile_group(type=pl.TileType([TK, D], f16, MAT), addrs=0x08000, mutex_ids=mid["k_l1"])
        v_l1 = pl.make_tile_group(type=pl.TileType([TK, D], f16, MAT), addrs=0x18000, mutex_ids=mid["v_l1"])
        p_l1 = pl.make_tile_group(type=pl.TileType([TQ, TK], f16, MAT), addrs=0x28000, mutex_ids=mid["p_l1"])
        q_l0 = pl.make_tile_group(type=pl.TileType([TQ, D], f16, LEFT), addrs=0x0000, mutex_ids=mid["q_l0"])
        p_l0 = pl.make_tile_group(type=pl.TileType([TQ, TK], f16, LEFT), addrs=0x4000, mutex_ids=mid["p_l0"])
        kt_l0 = pl.make_tile_group(type=pl.TileType([D, TK], f16, RIGHT), addrs=0x0000, mutex_ids=mid["kt_l0"])
        v_l0 = pl.make_tile_group(type=pl.TileType([TK, D], f16, RIGHT), addrs=0x8000, mutex_ids=mid["v_l0"])
        sacc_g = pl.make_tile_group(type=pl.TileType([TQ, TK], f32, ACC), addrs=0x0000, mutex_ids=mid["sacc"])
        oacc_g = pl.make_tile_group(type=pl.TileType([TQ, D], f32, ACC), addrs=0x8000, mutex_ids=mid["oacc"])
        # ---- shared rings: S (Cube -> Vector), P (Vector -> Cube), O_j (Cube -> Vector)
        s_g = pl.make_tile_group(type=pl.TileType([HALF, TK], f32, VEC), addrs=0x00000, depth=ring,
                                 mutex_ids=mid["s"], fwd_ids=s_fwd, bwd_ids=s_bwd)
        p_g = pl.make_tile_group(type=pl.TileType([TQ, TK], f16, MAT), addrs=0x30000, depth=ring,
                                 mutex_ids=mid["p"], fwd_ids=p_fwd, bwd_ids=p_bwd)
        o_g = pl.make_tile_group(type=pl.TileType([HALF, D], f32, VEC), addrs=0x08000, depth=ring,
                                 mutex_ids=mid["o"], fwd_ids=o_fwd, bwd_ids=o_bwd)
        # ---- Vector buffers (UB of each Vector core)
        acc = pl.make_tile(pl.TileType([HALF, D], f32, VEC), addr=0x18000)
        out16 = pl.make_tile_group(type=pl.TileType([HALF, D], f16, VEC), addrs=0x20000, mutex_ids=mid["out16"])
        p16_g = pl.make_tile_group(type=pl.TileType([HALF, TK], f16, VEC), addrs=0x24000, mutex_ids=mid["p16"])
        mask_t = [pl.make_tile(pl.TileType([HALF, TK], f32, VEC), addr=0x26000)]  # loaded once, synced by hand
        # P in L1's layout, for the UB -> L1 DMA (a5), which copies storage order
        p16nz = pl.make_tile_group(type=pl.TileType([HALF, TK], f16, VEC, layout=pl.NZ), addrs=0x2A000,
                                   mutex_ids=mid["p16nz"])[0]
        col_t = pl.TileType([HALF, 1], f32, VEC, layout=pl.DN)   # one value per query row
        row_t = pl.TileType([1, HALF], f32, VEC)                 # the same values, row-major
        m, m_r = pl.make_tile(col_t, addr=0x28000), pl.make_tile(row_t, addr=0x28000)
        l, l_r = pl.make_tile(col_t, addr=0x28400), pl.make_tile(row_t, addr=0x28400)
        rmax, rmax_r = pl.make_tile(col_t, addr=0x28800), pl.make_tile(row_t, addr=0x28800)
        rsum, rsum_r = pl.make_tile(col_t, addr=0x28C00), pl.make_tile(row_t, addr=0x28C00)
        alpha_g = pl.make_tile_group(type=col_t, addrs=0x29000, depth=alpha_depth)
        alpha_r = pl.make_tile_group(type=row_t, addrs=0x29000, depth=alpha_depth)
        stats = (m, m_r, l_r, rmax, rmax_r, rsum_r, rsum)

        heads = q.shape[1]
        s_q = q.shape[2]
        s_kv = k.shape[2]
        q_tiles = (s_q + TQ - 1) // TQ
        kv_tiles = (s_kv + TK - 1) // TK
        core = pl.get_block_idx() // pl.get_subblock_num()  # the block (an AIV's index is block * 2 + subblock)
        wbase = core * ring * TQ                        # this block's rows of each workspace
        with pl.section_vector():
            pl.load(mask_t[0], mask, [pl.get_subblock_idx() * HALF, 0])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        for item in pl.range(core, q.shape[0] * heads * q_tiles, pl.get_block_num()):
            b = item // (heads * q_tiles)
            h = (item // q_tiles) % heads
            qi = item % q_tiles
            q_rows = min(TQ, s_q - qi * TQ)
            rows = min(HALF, q_rows - pl.get_subblock_idx() * HALF)
            n_kv = min(kv_tiles, qi + 1) if causal else kv_tiles
            with pl.section_cube():
                pl.set_validshape(q_l1[0], [q_rows, D])
                pl.load_tile(q_l1[0], q, [b, h, qi, 0])
                pl.set_validshape(q_l0[0], [q_rows, D])
                pl.move(q_l0[0], q_l1[0])
            with pl.section_vector():
                if rows > 0:                          # this core's query rows of the item
                    pl.set_validshape(m, [rows, 1])
                    pl.set_validshape(m_r, [1, rows])
                    pl.set_validshape(l, [rows, 1])
                    pl.set_validshape(l_r, [1, rows])
                    pl.set_validshape(rmax, [rows, 1])
                    pl.set_validshape(rmax_r, [1, rows])
                    pl.set_validshape(rsum, [rows, 1])
                    pl.set_validshape(rsum_r, [1, rows])
                    pl.set_validshape(alpha_g, [rows, 1])
                    pl.set_validshape(alpha_r, [1, rows])
                    pl.set_validshape(acc, [rows, D])
                    pl.expands(m, -1e30)
                    pl.expands(l, 0.0)
                    pl.expands(acc, 0.0)
            for j in pl.range(0, n_kv, 1):
                kv_valid = min(TK, s_kv - j * TK)
                qk(k, b, h, j, q_l0[0], q_l0, k_l1, kt_l0, sacc_g, s_g, ws_s, wbase, q_rows, kv_valid)
                softmax(j, qi, s_g, p_g, ws_s, ws_p, wbase, stats, alpha_g, alpha_r, p16_g, p16nz, mask_t[0], rows,
                        kv_valid)
                pv(v, b, h, j, p_g, ws_p, wbase, p_l1, p_l0, v_l1, v_l0, oacc_g, o_g, ws_o, q_rows, kv_valid)
                update(j, o_g, ws_o, wbase, acc, alpha_g, rows)
            with pl.section_vector():
                if rows > 0:
                    pl.expand_div(acc, acc, l, dim=0)
                    pl.set_validshape(out16[0], [rows, D])
                    pl.cast(out16[0], acc, mode=pl.RoundMode.CAST_RINT)
                    pl.store(o, out16[0], [b, h, qi * TQ + pl.get_subblock_idx() * HALF, 0])

    return pl.jit(flash_attention, arch=arch, pipeline=pl.pipeline.PipelineConfig(preload=preload), check=check)


def causal_mask() -> np.ndarray:
    """0 on and below the diagonal of a TQ x TK tile, -inf above (for the diagonal key tile)."""
    return np.where(np.arange(TK)[None, :] > np.arange(TQ)[:, None], -np.inf, 0.0).astype(np.float32)


def workspaces(blocks: int, head_dim: int, preload: int = 1):
    ring = max(RING, preload + 1)
    rows = blocks * ring * TQ
    return (np.zeros((rows, TK), np.float32), np.zeros((rows, TK), np.float16),
            np.zeros((rows, head_dim), np.float32))


def run(q, k, v, arch="a5", causal=False, preload=1, blocks=4):
    o = np.zeros_like(q)
    kern = make_flash_attention(arch, q.shape[-1], causal, preload)
    report = kern[None, blocks](q, k, v, o, causal_mask(), *workspaces(blocks, q.shape[-1], preload))
    return o, report


def reference(q, k, v, causal=False) -> np.ndarray:
    import torch
    out = torch.nn.functional.scaled_dot_product_attention(
        torch.from_numpy(q.astype(np.float32)), torch.from_numpy(k.astype(np.float32)),
        torch.from_numpy(v.astype(np.float32)), is_causal=causal)
    return out.numpy().astype(np.float16)


def main() -> None:
    rng = np.random.default_rng(0)
    ok = True
    for arch in ("a2a3", "a5"):
        for causal in (False, True):
            q = rng.standard_normal((1, 2, 200, 128)).astype(np.float16)
            k = rng.standard_normal((1, 2, 200, 128)).astype(np.float16)
            v = rng.standard_normal((1, 2, 200, 128)).astype(np.float16)
            o, report = run(q, k, v, arch, causal, preload=2)
            err = float(np.max(np.abs(o.astype(np.float32) - reference(q, k, v, causal).astype(np.float32))))
            ok &= err < 1e-2
            print(f"{arch} causal={causal}: max error {err:.2e}  {report.summary()}")
    print(f"flash_attention matches torch: {ok}")
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
