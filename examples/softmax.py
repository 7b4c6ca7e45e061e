"""Row softmax: y[i, :] = softmax(x[i, :]), fp16 in / fp16 out, fp32 compute, on the simulator.

Per row tile (``rows`` x ``cols``, the last one partial when M is not a multiple of ``rows``)::

    load (fp16) -> cast to fp32 -> row max -> x - max -> exp -> row sum -> / sum -> cast to fp16 -> store

Row tiles are dealt to blocks round-robin: ``pl.range(pl.get_block_idx(), n_row_tiles,
pl.get_block_num())``. The fp16 input and output tiles are double-buffered tile groups with
``mutex_ids``, so the framework inserts the MTE2 -> V -> MTE3 synchronisation itself (buffer locks
on a5, event pairs on a2a3) and the load of tile i+1 can overlap the compute of tile i.

Limits: a whole row must fit one tile, so N <= ``cols`` (default 1024 columns). The number of rows
per tile is derived from the arch's unified buffer (UB): the UB holds 2 fp16 input slots, 2 fp16
output slots and one fp32 work tile (12 bytes per element in all) plus two [rows, 8] fp32 row
vectors, so with cols = 1024 a tile has 21 rows on a5 (256 KiB UB) and 15 on a2a3 (192 KiB).
Any M >= 1 works. Columns beyond N in a partial tile are never read: a load marks only its
in-bounds region valid, and every op (reductions included) computes on the valid region.

Run: ``.venv/bin/python examples/softmax.py [a5|a2a3]``.
"""
import sys

import torch

import pypto_pro.language as pl
from pypto_pro.arch import get_arch
from pypto_pro.testing import compare_to_reference

TILE_COLS = 1024
VEC_LANES = 8  # a [rows, 8] fp32 tile: 32-byte rows, the narrowest Vec tile; column 0 holds the row value


def tile_rows_for(arch: str, cols: int = TILE_COLS) -> int:
    """Largest row count whose buffers fit the arch's UB (see the module docstring)."""
    ub = get_arch(arch).memory(pl.MemorySpace.Vec).capacity
    per_row = cols * (2 * 2 + 2 * 2 + 4) + 2 * VEC_LANES * 4
    return ub // per_row


def make_softmax_kernel(arch: str = "a5", cols: int = TILE_COLS, rows: int | None = None):
    """Build the softmax kernel for ``arch`` with [rows, cols] tiles (rows: as many as fit the UB)."""
    ROWS = rows if rows is not None else tile_rows_for(arch, cols)
    COLS = cols
    if ROWS < 1:
        raise ValueError(f"a [*, {cols}] softmax tile does not fit the {arch} UB")
    in_type = pl.TileType(shape=[ROWS, COLS], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    work_type = pl.TileType(shape=[ROWS, COLS], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    vec_type = pl.TileType(shape=[ROWS, VEC_LANES], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    # UB layout, back to back: [x0 x1][y0 y1][work][row max][row sum]
    X_ADDR = 0
    Y_ADDR = X_ADDR + 2 * in_type.nbytes
    WORK_ADDR = Y_ADDR + 2 * in_type.nbytes
    MAX_ADDR = WORK_ADDR + work_type.nbytes
    SUM_ADDR = MAX_ADDR + vec_type.nbytes

    def softmax_kernel(
        x: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16],
        y: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16],
    ):
        x_db = pl.make_tile_group(type=in_type, addrs=X_ADDR, mutex_ids=[0, 1])   # double buffer, auto sync
        y_db = pl.make_tile_group(type=in_type, addrs=Y_ADDR, mutex_ids=[2, 3])
        work = pl.make_tile(type=work_type, addr=WORK_ADDR)                       # V pipe only: no sync needed
        row_max = pl.make_tile(type=vec_type, addr=MAX_ADDR)
        row_sum = pl.make_tile(type=vec_type, addr=SUM_ADDR)

        with pl.section_vector():
            n_row_tiles = (x.shape[0] + ROWS - 1) // ROWS   # the last tile may be partial

            for i in pl.range(pl.get_block_idx(), n_row_tiles, pl.get_block_num()):
                tile_x = x_db.next()
                tile_y = y_db.next()
                pl.load_tile(tile_x, x, [i, 0])                  # valid region: the in-bounds rows x N
                pl.cast(work, tile_x, "rint")                    # fp16 -> fp32 is exact
                pl._tile_max(row_max, work, dim=1)                   # row max -> column 0 (TODO(lead): tile reduction)
                pl.expand_sub(work, work, row_max, dim=1)        # x - max <= 0: exp cannot overflow
                pl.exp(work, work)
                pl.sum(row_sum, work, dim=1)                     # >= 1 (the max element gives exp(0))
                pl.expand_div(work, work, row_sum, dim=1)
                pl.cast(tile_y, work, "rint")                    # one rounding to fp16
                pl.store_tile(y, tile_y, [i, 0])

    softmax_kernel.__name__ = f"softmax_{arch}_{ROWS}x{COLS}"
    kernel = pl.jit(softmax_kernel, arch=arch)
    kernel.tile_shape = (ROWS, COLS)
    return kernel


_KERNELS: dict = {}


def get_softmax_kernel(arch: str = "a5", cols: int = TILE_COLS, rows: int | None = None):
    """The cached kernel for (arch, cols, rows): compiled once per configuration."""
    key = (arch, cols, rows)
    if key not in _KERNELS:
        _KERNELS[key] = make_softmax_kernel(arch, cols, rows)
    return _KERNELS[key]


def softmax(x: torch.Tensor, arch: str = "a5", block_dim: int | None = None, cols: int = TILE_COLS,
            rows: int | None = None) -> torch.Tensor:
    """Row softmax of a 2-D fp16 tensor on the simulator; ``block_dim`` defaults to one block per row tile
    (capped at the arch's vector cores)."""
    if x.dim() != 2 or x.dtype != torch.float16:
        raise ValueError("softmax expects a 2-D fp16 tensor")
    if x.shape[1] > cols:
        raise ValueError(f"softmax: {x.shape[1]} columns exceed the tile width {cols}")
    kernel = get_softmax_kernel(arch, cols, rows)
    n_tiles = -(-x.shape[0] // kernel.tile_shape[0])
    if block_dim is None:
        block_dim = min(n_tiles, get_arch(arch).vector_cores)
    y = torch.empty_like(x)
    kernel[None, block_dim](x.contiguous(), y)
    return y


def reference(x: torch.Tensor) -> torch.Tensor:
    """torch.softmax computed in fp32, rounded once to fp16."""
    return torch.softmax(x.float(), dim=-1).half()


def main(archs: tuple[str, ...] = ("a5", "a2a3")) -> None:
    m_size, n_size = 2000, 1000  # 2000 rows: the last row tile is partial on both archs
    block_dim = None             # one block per vector core (48); each loops over 2-3 row tiles
    torch.manual_seed(0)
    x = (torch.randn([m_size, n_size]) * 4).half()
    ref = reference(x)
    ok_all = True
    for arch in archs:
        y = softmax(x, arch=arch, block_dim=block_dim)
        kernel = get_softmax_kernel(arch)
        print(kernel.last_report.summary())
        ok, how_far = compare_to_reference(y, ref)  # every element within one fp16 ulp
        ok_all &= ok
        print(f"softmax {m_size}x{n_size} fp16 on {arch} (tile {kernel.tile_shape[0]}x{kernel.tile_shape[1]}): "
              f"{how_far}, matches torch: {ok}")
    if not ok_all:
        raise SystemExit(1)


if __name__ == "__main__":
    main(tuple(sys.argv[1:]) or ("a5", "a2a3"))
