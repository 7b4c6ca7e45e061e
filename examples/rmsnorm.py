"""RMSNorm: y = x / sqrt(mean(x^2, -1) + eps) * gamma, fp16 in / fp16 out, fp32 compute, on the simulator.

Per block, once: gamma (a [N] or [1, N] fp16 tensor) is loaded and cast to an fp32 [1, cols] row.
Per row tile (``rows`` x ``cols``, the last one partial when M is not a multiple of ``rows``)::

    load (fp16) -> cast to fp32 -> x*x -> row sum -> / N -> + eps -> sqrt
                -> cast x to fp32 again -> / rms (per row) -> * gamma (per column) -> cast to fp16 -> store

The fp32 copy of x is rebuilt from the fp16 input tile after the sum of squares (a cheap, exact
cast) so that one fp32 work tile suffices. Row tiles are dealt to blocks round-robin with
``pl.range(pl.get_block_idx(), n_row_tiles, pl.get_block_num())``; the fp16 input and output
tiles are double-buffered tile groups with ``mutex_ids`` (synchronisation inserted automatically).

Limits: a whole row must fit one tile, so N <= ``cols`` (default 1024 columns). Rows per tile
come from the arch's UB: 2 fp16 input slots + 2 fp16 output slots + one fp32 work tile (12 bytes
per element) plus one [rows, 1] fp32 row vector (``layout=pl.DN``, so rows is a multiple of 8), after the
gamma rows (fp16 + fp32, 6 bytes per column): with cols = 1024, 16 rows on a5 (256 KiB UB) and 8 on
a2a3 (192 KiB). Any M >= 1 works: each row tile sets its tiles' valid shape (``pl.set_validshape``).

``eps`` is a run-time ``float`` kernel parameter; N is read from ``x.shape[1]`` at run time.

Run: ``.venv/bin/python examples/rmsnorm.py [a5|a2a3]``.
"""
import sys

import torch

import pypto_pro.language as pl
from pypto_pro.arch import get_arch
from pypto_pro.testing import compare_to_reference

TILE_COLS = 1024
ROW_ALIGN = 8  # a [rows, 1] fp32 DN tile is one column: rows * 4 bytes must fill 32-byte blocks
EPS = 1e-6


def tile_rows_for(arch: str, cols: int = TILE_COLS) -> int:
    """Largest row count whose buffers fit the arch's UB (see the module docstring)."""
    ub = get_arch(arch).memory(pl.MemorySpace.Vec).capacity
    gamma_bytes = cols * (2 + 4)
    per_row = cols * (2 * 2 + 2 * 2 + 4) + 4
    return (ub - gamma_bytes) // per_row // ROW_ALIGN * ROW_ALIGN


def make_rmsnorm_kernel(arch: str = "a5", cols: int = TILE_COLS, rows: int | None = None, gamma_rank: int = 1):
    """Build the RMSNorm kernel for ``arch`` with [rows, cols] tiles; gamma is a rank-1 [N] or a
    rank-2 [1, N] tensor (``gamma_rank``)."""
    ROWS = rows if rows is not None else tile_rows_for(arch, cols)
    COLS = cols
    if ROWS < 1:
        raise ValueError(f"a [*, {cols}] RMSNorm tile does not fit the {arch} UB")
    if gamma_rank not in (1, 2):
        raise ValueError("gamma_rank must be 1 ([N]) or 2 ([1, N])")
    GAMMA_ORIGIN = [0] * gamma_rank
    gamma_t = (pl.Tensor[[pl.DYNAMIC], pl.DT_FP16] if gamma_rank == 1
               else pl.Tensor[[1, pl.DYNAMIC], pl.DT_FP16])
    in_type = pl.TileType(shape=[ROWS, COLS], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    work_type = pl.TileType(shape=[ROWS, COLS], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    vec_type = pl.TileType(shape=[ROWS, 1], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec, layout=pl.DN)
    vec_row_type = pl.TileType(shape=[1, ROWS], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)  # same bytes
    g16_type = pl.TileType(shape=[1, COLS], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    g32_type = pl.TileType(shape=[1, COLS], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    # UB layout, back to back: [gamma fp16][gamma fp32][x0 x1][y0 y1][work][row rms]
    G16_ADDR = 0
    G32_ADDR = G16_ADDR + g16_type.nbytes
    X_ADDR = G32_ADDR + g32_type.nbytes
    Y_ADDR = X_ADDR + 2 * in_type.nbytes
    WORK_ADDR = Y_ADDR + 2 * in_type.nbytes
    RMS_ADDR = WORK_ADDR + work_type.nbytes

    def rmsnorm_kernel(
        x: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16],
        gamma: gamma_t,
        y: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16],
        eps: float,
    ):
        # gamma16 is written by MTE2 and read by V: a one-slot group with a mutex id gets the sync for free
        gamma16_buf = pl.make_tile_group(type=g16_type, addrs=[G16_ADDR], mutex_ids=[4])
        gamma32 = pl.make_tile(g32_type, addr=G32_ADDR)                           # V pipe only
        x_db = pl.make_tile_group(type=in_type, addrs=X_ADDR, mutex_ids=[0, 1])   # double buffer, auto sync
        y_db = pl.make_tile_group(type=in_type, addrs=Y_ADDR, mutex_ids=[2, 3])
        work = pl.make_tile(work_type, addr=WORK_ADDR)                            # V pipe only
        rms = pl.make_tile(vec_type, addr=RMS_ADDR)                               # per-row values, [R, 1] DN
        rms_row = pl.make_tile(vec_row_type, addr=RMS_ADDR)                       # the same bytes as [1, R] ND

        with pl.section_vector():
            m, n_cols = x.shape[0], x.shape[1]
            n_row_tiles = (m + ROWS - 1) // ROWS   # the last tile may be partial
            rint = pl.RoundMode.CAST_RINT

            gamma16 = gamma16_buf[0]
            pl.set_validshape(gamma16, [1, n_cols])
            pl.set_validshape(gamma32, [1, n_cols])
            pl.load(gamma16, gamma, GAMMA_ORIGIN)           # once per block: [1, N]
            pl.cast(gamma32, gamma16, mode=rint)            # exact

            for i in pl.range(pl.get_block_idx(), n_row_tiles, pl.get_block_num()):
                tile_x = x_db.next()
                tile_y = y_db.next()
                rows = min(ROWS, m - i * ROWS)               # this row tile's real rows
                pl.set_validshape(tile_x, [rows, n_cols])
                pl.set_validshape(tile_y, [rows, n_cols])
                pl.set_validshape(work, [rows, n_cols])
                pl.set_validshape(rms, [rows, 1])
                pl.set_validshape(rms_row, [1, rows])
                pl.load_tile(tile_x, x, [i, 0])
                pl.cast(work, tile_x, mode=rint)
                pl.mul(work, work, work)                     # x^2
                pl.sum(rms, work, work, dim=0)               # sum of squares per row (tmp: unused by TROWSUM)
                pl.div(rms_row, rms_row, n_cols)             # mean (N converted to fp32, exact for N < 2^24);
                pl.add(rms_row, rms_row, eps)                # elementwise ops take row-major tiles: the
                pl.sqrt(rms_row, rms_row)                    # [1, R] view of the same values
                pl.cast(work, tile_x, mode=rint)             # x again, in fp32
                pl.expand_div(work, work, rms, dim=0)        # x / rms, per row
                pl.expand_mul(work, work, gamma32, dim=1)    # * gamma, per column
                pl.cast(tile_y, work, mode=rint)             # one rounding to fp16 (as torch)
                pl.store_tile(y, tile_y, [i, 0])

    rmsnorm_kernel.__name__ = f"rmsnorm_{arch}_{ROWS}x{COLS}_g{gamma_rank}"
    kernel = pl.jit(rmsnorm_kernel, arch=arch)
    kernel.tile_shape = (ROWS, COLS)
    return kernel


_KERNELS: dict = {}


def get_rmsnorm_kernel(arch: str = "a5", cols: int = TILE_COLS, rows: int | None = None, gamma_rank: int = 1):
    """The cached kernel for (arch, cols, rows, gamma_rank): compiled once per configuration."""
    key = (arch, cols, rows, gamma_rank)
    if key not in _KERNELS:
        _KERNELS[key] = make_rmsnorm_kernel(arch, cols, rows, gamma_rank)
    return _KERNELS[key]


def rmsnorm(x: torch.Tensor, gamma: torch.Tensor, eps: float = EPS, arch: str = "a5", block_dim: int | None = None,
            cols: int = TILE_COLS, rows: int | None = None) -> torch.Tensor:
    """RMSNorm of a 2-D fp16 tensor over its last axis on the simulator; gamma is [N] or [1, N] fp16.
    ``block_dim`` defaults to one block per row tile (capped at the arch's vector cores)."""
    if x.dim() != 2 or x.dtype != torch.float16 or gamma.dtype != torch.float16:
        raise ValueError("rmsnorm expects a 2-D fp16 x and an fp16 gamma")
    n = x.shape[1]
    if tuple(gamma.shape) not in ((n,), (1, n)):
        raise ValueError(f"gamma must be [{n}] or [1, {n}], got {list(gamma.shape)}")
    if n > cols:
        raise ValueError(f"rmsnorm: {n} columns exceed the tile width {cols}")
    kernel = get_rmsnorm_kernel(arch, cols, rows, gamma.dim())
    n_tiles = -(-x.shape[0] // kernel.tile_shape[0])
    if block_dim is None:
        block_dim = min(n_tiles, get_arch(arch).vector_cores)
    y = torch.empty_like(x)
    kernel[None, block_dim](x.contiguous(), gamma.contiguous(), y, float(eps))
    return y


def reference(x: torch.Tensor, gamma: torch.Tensor, eps: float = EPS) -> torch.Tensor:
    """The same formula in fp32 with torch, rounded once to fp16."""
    x32 = x.float()
    rms = torch.sqrt(x32.pow(2).mean(dim=-1, keepdim=True) + eps)
    return (x32 / rms * gamma.float().reshape(1, -1)).half()


def main(archs: tuple[str, ...] = ("a5", "a2a3")) -> None:
    m_size, n_size = 2000, 1000  # 2000 rows: the last row tile is partial on both archs
    block_dim = None             # one block per vector core (48); each loops over 2-3 row tiles
    torch.manual_seed(0)
    x = (torch.randn([m_size, n_size]) * 2).half()
    gamma = (torch.rand([n_size]) + 0.5).half()
    ref = reference(x, gamma)
    ok_all = True
    for arch in archs:
        y = rmsnorm(x, gamma, arch=arch, block_dim=block_dim)
        kernel = get_rmsnorm_kernel(arch)
        print(kernel.last_report.summary())
        ok, how_far = compare_to_reference(y, ref)  # every element within one fp16 ulp
        ok_all &= ok
        print(f"rmsnorm {m_size}x{n_size} fp16 on {arch} (tile {kernel.tile_shape[0]}x{kernel.tile_shape[1]}): "
              f"{how_far}, matches torch: {ok}")
    if not ok_all:
        raise SystemExit(1)


if __name__ == "__main__":
    main(tuple(sys.argv[1:]) or ("a5", "a2a3"))
