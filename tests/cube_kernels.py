"""Shared by the Cube tests: inlined kernel helpers for the usual matmul of two [n, n] GM tensors into an
fp32 accumulator, one-slot tile groups with mutex ids (so ``auto_mutex`` orders the pipes)."""
from __future__ import annotations

import pypto_pro.language as pl

MS = pl.MemorySpace


def matmul_tiles(n, dt_a=pl.DT_FP16, dt_b=pl.DT_FP16, ids=(0, 1, 2, 3, 4), tail=False):
    """(inlined, before the sections) the tiles of one [n, n] matmul: Mat a1 at 0 and b1 at 0x8000,
    Left xa, Right xb and fp32 Acc acc at 0, with mutex ids ``ids``; ``tail``: a1 and acc get a run-time
    valid shape (``valid_shape=[-1, -1]``). Returns ``(a1, b1, xa, xb, acc)``."""
    if tail:
        a1 = pl.make_tile_group(type=pl.TileType([n, n], dt_a, MS.Mat, valid_shape=[-1, -1]), addrs=0,
                                mutex_ids=[ids[0]])[0]
    else:
        a1 = pl.make_tile_group(type=pl.TileType([n, n], dt_a, MS.Mat), addrs=0, mutex_ids=[ids[0]])[0]
    b1 = pl.make_tile_group(type=pl.TileType([n, n], dt_b, MS.Mat), addrs=0x8000, mutex_ids=[ids[1]])[0]
    xa = pl.make_tile_group(type=pl.TileType([n, n], dt_a, MS.Left), addrs=0, mutex_ids=[ids[2]])[0]
    xb = pl.make_tile_group(type=pl.TileType([n, n], dt_b, MS.Right), addrs=0, mutex_ids=[ids[3]])[0]
    if tail:
        acc = pl.make_tile_group(type=pl.TileType([n, n], pl.DT_FP32, MS.Acc, valid_shape=[-1, -1]), addrs=0,
                                 mutex_ids=[ids[4]])[0]
    else:
        acc = pl.make_tile_group(type=pl.TileType([n, n], pl.DT_FP32, MS.Acc), addrs=0, mutex_ids=[ids[4]])[0]
    return a1, b1, xa, xb, acc


def load_and_move(tiles, a, b):
    """(inlined, in section_cube) load GM ``a``, ``b`` into the Mat tiles and move them to Left / Right."""
    a1, b1, xa, xb, acc = tiles
    pl.load(a1, a, [0, 0])
    pl.load(b1, b, [0, 0])
    pl.move(xa, a1)
    pl.move(xb, b1)


def matmul_from_gm(tiles, a, b):
    """(inlined, in section_cube) acc = a @ b: ``load_and_move``, then the matmul. Returns acc."""
    a1, b1, xa, xb, acc = tiles
    load_and_move(tiles, a, b)
    pl.matmul(acc, xa, xb)
    return acc


# ---- manual sync (auto_mutex off or no groups): set/wait pairs on event 0 -----------------------------


def pair(src, dst):
    """(inlined) ``sync_src`` + ``sync_dst`` on event 0: ``dst`` goes on once ``src`` reached here."""
    pl.system.sync_src(set_pipe=src, wait_pipe=dst, event_id=0)
    pl.system.sync_dst(set_pipe=src, wait_pipe=dst, event_id=0)


def synced_product(a, b, m, k, n):
    """(inlined, in section_cube) the Cube's [m, n] = a @ b of fp16 GM tensors in an Acc tile, ready for the
    fixpipe: Mat tiles at 0 / 0x8000, Left, Right and Acc at 0, MTE2 -> MTE1 -> M -> FIX pairs. Returns acc."""
    a_mat = pl.make_tile(pl.TileType([m, k], pl.DT_FP16, MS.Mat), addr=0x0)
    b_mat = pl.make_tile(pl.TileType([k, n], pl.DT_FP16, MS.Mat), addr=0x8000)
    xa = pl.make_tile(pl.TileType([m, k], pl.DT_FP16, MS.Left), addr=0x0)
    xb = pl.make_tile(pl.TileType([k, n], pl.DT_FP16, MS.Right), addr=0x0)
    acc = pl.make_tile(pl.TileType([m, n], pl.DT_FP32, MS.Acc), addr=0x0)
    pl.load(a_mat, a, [0, 0])
    pl.load(b_mat, b, [0, 0])
    pair(pl.PipeType.MTE2, pl.PipeType.MTE1)
    pl.move(xa, a_mat)
    pl.move(xb, b_mat)
    pair(pl.PipeType.MTE1, pl.PipeType.M)
    pl.matmul(acc, xa, xb)
    pair(pl.PipeType.M, pl.PipeType.FIX)
    return acc


def multiply_inserted(p_mat, v, out, m, k, n):
    """(inlined, in section_cube) out = p_mat @ v for a [m, k] Mat tile the Vector cores fill with
    pl.insert: v is loaded and moved to Right first, the move of p_mat to Left waits for cross-core
    event 1 (MTE1), then the matmul and the store (manual pairs)."""
    v_mat = pl.make_tile(pl.TileType([k, n], pl.DT_FP16, MS.Mat), addr=0x0)
    p_left = pl.make_tile(pl.TileType([m, k], pl.DT_FP16, MS.Left), addr=0x0)
    v_right = pl.make_tile(pl.TileType([k, n], pl.DT_FP16, MS.Right), addr=0x0)
    acc = pl.make_tile(pl.TileType([m, n], pl.DT_FP32, MS.Acc), addr=0x0)
    pl.load(v_mat, v, [0, 0])
    pair(pl.PipeType.MTE2, pl.PipeType.MTE1)
    pl.move(v_right, v_mat)
    pl.system.wait_cross_core(pipe=pl.PipeType.MTE1, event_id=1)
    pl.move(p_left, p_mat)
    pair(pl.PipeType.MTE1, pl.PipeType.M)
    pl.matmul(acc, p_left, v_right)
    pair(pl.PipeType.M, pl.PipeType.FIX)
    pl.store(out, acc, [0, 0])
