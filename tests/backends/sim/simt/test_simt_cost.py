"""A SIMT launch is priced per warp from what its threads execute, with the a5 SIMT numbers."""
import torch

import pypto_pro.language as pl
from pypto_pro.arch import resolve_arch

N = 2048
ROW = pl.TileType(shape=[1, N], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
SIMT = resolve_arch("a5").simt


@pl.simt.function(max_threads=N)
def _fill(dst: pl.Tile[[1, N], pl.DT_FP32]):
    tid = pl.simt.linear_thread_idx()
    dst[0, tid] = 1.0


@pl.simt.function(max_threads=N)
def _divergent(dst: pl.Tile[[1, N], pl.DT_FP32]):
    tid = pl.simt.linear_thread_idx()
    if tid % 2 == 0:            # both sides in every warp
        dst[0, tid] = 1.0 * 3.0 + 2.0
    else:
        dst[0, tid] = 2.0 * 3.0 + 1.0


@pl.simt.function(max_threads=N)
def _uniform(dst: pl.Tile[[1, N], pl.DT_FP32]):
    tid = pl.simt.linear_thread_idx()
    if (tid // 32) % 2 == 0:    # one side per warp: the same work per thread
        dst[0, tid] = 1.0 * 3.0 + 2.0
    else:
        dst[0, tid] = 2.0 * 3.0 + 1.0


@pl.simt.function(max_threads=N)
def _from_gm(dst: pl.Tile[[1, N], pl.DT_FP32], src: pl.Tensor[[1, N], pl.DT_FP32]):
    tid = pl.simt.linear_thread_idx()
    dst[0, tid] = src[0, tid]


@pl.simt.function(max_threads=N)
def _from_ub(dst: pl.Tile[[1, N], pl.DT_FP32], src: pl.Tile[[1, N], pl.DT_FP32]):
    tid = pl.simt.linear_thread_idx()
    dst[0, tid] = src[0, tid]


def _v_cycles(fn, threads: int, with_src: str = "") -> float:
    @pl.jit(arch="a5")
    def kernel(x: pl.Tensor[[1, N], pl.DT_FP32], out: pl.Tensor[[1, N], pl.DT_FP32]):
        dst = pl.make_tile(ROW, addr=0x0000, size=N * 4)
        src = pl.make_tile(ROW, addr=0x2000, size=N * 4)
        with pl.section_vector():
            pl.load(dst, x, [0, 0])  # what threads beyond a launch's own leave (MTE2: no V time)
            pl.load(src, x, [0, 0])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=1)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=1)
            if with_src == "ub":
                pl.simt.launch(fn, threads=threads, args=(dst, src))
            elif with_src == "gm":
                pl.simt.launch(fn, threads=threads, args=(dst, x))
            else:
                pl.simt.launch(fn, threads=threads, args=(dst,))
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.store(out, dst, [0, 0])
    x = torch.ones(1, N)
    return kernel(x, torch.zeros(1, N)).pipe_busy["V"]


def test_a_launch_costs_its_fixed_overhead_plus_work_per_warp():
    w = int(SIMT.warp_size.value)
    one, two = _v_cycles(_fill, w), _v_cycles(_fill, 2 * w)
    assert one > SIMT.launch_cycles.value
    assert _v_cycles(_fill, w + 1) == two           # a partly filled warp issues like a full one
    per_warp = two - one
    assert per_warp > 0
    assert _v_cycles(_fill, 64 * w) - one == 63 * per_warp  # linear in warps, not in threads


def test_a_divergent_branch_issues_both_sides_per_warp():
    assert _v_cycles(_divergent, N) > _v_cycles(_uniform, N)


def test_gm_loads_cost_a_miss_and_bandwidth_ub_loads_do_not():
    gm, ub = _v_cycles(_from_gm, N, "gm"), _v_cycles(_from_ub, N, "ub")
    traffic = N * 4 / SIMT.gm_bytes_per_cycle.value   # 8 KiB over the SIMT GM bus
    assert gm - ub >= SIMT.gm_miss_latency.value - SIMT.ub_latency.value
    assert gm >= SIMT.launch_cycles.value + traffic
