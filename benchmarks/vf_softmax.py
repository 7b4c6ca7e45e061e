"""Row softmax on a5, written twice: with the tile API (one PTO-ISA tile op per step) and as a
``@pl.vector_function`` (register-level VF code, one VF call per row tile). Both use the same
double-buffered fp32 tile groups; the table compares modeled time and checks both against torch.

    python benchmarks/vf_softmax.py [--m 2048 --n 1024 --blocks 32]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import print_table, write_json  # noqa: E402
import pypto_pro.language as pl  # noqa: E402
from pypto_pro.language import Vf as vf  # noqa: E402

ROWS, COLS, LANES = 8, 1024, 64
TT = pl.TileType(shape=[ROWS, COLS], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec, valid_shape=[-1, -1])
VEC = pl.TileType(shape=[ROWS, 1], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec, layout=pl.DN)
SLOT = ROWS * COLS * 4
X0, Y0, WORK, MAX, SUM = 0, 2 * SLOT, 4 * SLOT, 5 * SLOT, 5 * SLOT + ROWS * 4
F32 = pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32]


@pl.vector_function
def softmax_rows(src, dst, n_rows: pl.DT_INT64, n_cols: pl.DT_INT64):
    full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    n_regs = (n_cols + LANES - 1) // LANES
    for r in pl.range(0, n_rows):
        mx = vf.full(-3.0e38, full, dtype=pl.DT_FP32)
        for k in pl.range(0, n_regs):
            m = vf.update_mask(n_cols - k * LANES, dtype=pl.DT_FP32)
            x = vf.load_align(src, [r, k * LANES])
            mx = vf.max(mx, x, m, mode=pl.MergeMode.MERGING)
        top = vf.reduce_max(mx, full)
        top_b = vf.full(top, full)
        acc = vf.full(0.0, full, dtype=pl.DT_FP32)
        for k in pl.range(0, n_regs):
            m = vf.update_mask(n_cols - k * LANES, dtype=pl.DT_FP32)
            x = vf.load_align(src, [r, k * LANES])
            e = vf.exp_sub(x, top_b, m)
            acc = vf.add(acc, e, m, mode=pl.MergeMode.MERGING)
            vf.store_align(dst, e, m, [r, k * LANES])
        total = vf.reduce_sum(acc, full)
        total_b = vf.full(total, full)
        vf.mem_bar(mode=pl.MemBarMode.VST_VLD)
        for k in pl.range(0, n_regs):
            m = vf.update_mask(n_cols - k * LANES, dtype=pl.DT_FP32)
            e = vf.load_align(dst, [r, k * LANES])
            y = vf.div(e, total_b, m)
            vf.store_align(dst, y, m, [r, k * LANES])


def vf_kernel(x: F32, y: F32):
    xs = pl.make_tile_group(type=TT, addrs=[X0, X0 + SLOT], mutex_ids=[0, 1])
    ys = pl.make_tile_group(type=TT, addrs=[Y0, Y0 + SLOT], mutex_ids=[2, 3])
    with pl.section_vector():
        m, n = x.shape[0], x.shape[1]
        for i in pl.range(pl.get_block_idx(), (m + ROWS - 1) // ROWS, pl.get_block_num()):
            rows = pl.min(ROWS, m - i * ROWS)
            tx = xs.next()
            ty = ys.next()
            pl.set_validshape(tx, [rows, n])
            pl.set_validshape(ty, [rows, n])
            pl.load(tx, x, [i * ROWS, 0])
            softmax_rows(tx, ty, rows, n)
            pl.store(y, ty, [i * ROWS, 0])


def tile_kernel(x: F32, y: F32):
    xs = pl.make_tile_group(type=TT, addrs=[X0, X0 + SLOT], mutex_ids=[0, 1])
    ys = pl.make_tile_group(type=TT, addrs=[Y0, Y0 + SLOT], mutex_ids=[2, 3])
    work = pl.make_tile(TT, addr=WORK)
    row_max = pl.make_tile(VEC, addr=MAX)
    row_sum = pl.make_tile(VEC, addr=SUM)
    with pl.section_vector():
        m, n = x.shape[0], x.shape[1]
        for i in pl.range(pl.get_block_idx(), (m + ROWS - 1) // ROWS, pl.get_block_num()):
            rows = pl.min(ROWS, m - i * ROWS)
            tx = xs.next()
            ty = ys.next()
            pl.set_validshape(tx, [rows, n])
            pl.set_validshape(ty, [rows, n])
            pl.set_validshape(row_max, [rows, 1])
            pl.set_validshape(row_sum, [rows, 1])
            pl.load(tx, x, [i * ROWS, 0])
            pl.maximum(row_max, tx, work, dim=0)
            pl.expand_sub(ty, tx, row_max, dim=0)
            pl.exp(ty, ty)
            pl.sum(row_sum, ty, work, dim=0)
            pl.expand_div(ty, ty, row_sum, dim=0)
            pl.store(y, ty, [i * ROWS, 0])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=2048)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--blocks", type=int, default=32)
    args = ap.parse_args()
    torch.manual_seed(0)
    x = torch.randn(args.m, args.n) * 3
    ref = torch.softmax(x, dim=-1)
    rows, results, ok = [], [], True
    for name, fn in (("tile API", tile_kernel), ("VF", vf_kernel)):
        y = torch.zeros_like(x)
        report = pl.jit(fn, arch="a5", auto_mutex=True)[None, args.blocks](x, y)
        err = (y - ref).abs().max().item()
        ok &= err < 1e-5
        rows.append([name, f"{report.us:.1f}", f"{err:.1e}"])
        results.append({"kernel": name, "us": report.us, "max_abs_err": err})
    rows.append(["VF / tile", f"{results[1]['us'] / results[0]['us']:.2f}x", ""])
    print(f"\nrow softmax {args.m}x{args.n} fp32, a5, {args.blocks} blocks (modeled)")
    print_table(["kernel", "modeled us", "max |err|"], rows)
    print(f"wrote {write_json('vf_softmax', {'shape': [args.m, args.n], 'runs': results})}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
