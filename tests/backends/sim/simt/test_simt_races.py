"""Cross-thread races and out-of-bounds accesses inside a SIMT launch are located faults."""
import inspect

import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.errors_sim import OutOfBoundsError, RaceError

N = 64
ROW = pl.TileType(shape=[1, N], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)


def _line(fn, text: str) -> int:
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, t in enumerate(lines) if text in t)


@pl.simt.function(max_threads=N)
def _write_write(dst: pl.Tile[[1, N], pl.DT_FP32], src: pl.Tile[[1, N], pl.DT_FP32]):
    tid = pl.simt.linear_thread_idx()
    dst[0, tid // 2] = src[0, tid]          # threads 2k and 2k+1 write one element


@pl.simt.function(max_threads=N)
def _read_write(dst: pl.Tile[[1, N], pl.DT_FP32], src: pl.Tile[[1, N], pl.DT_FP32]):
    tid = pl.simt.linear_thread_idx()
    v = dst[0, (tid + 1) % N]               # reads what the next thread writes
    dst[0, tid] = v + src[0, tid]


@pl.simt.function(max_threads=N)
def _own_element(dst: pl.Tile[[1, N], pl.DT_FP32], src: pl.Tile[[1, N], pl.DT_FP32]):
    tid = pl.simt.linear_thread_idx()
    dst[0, tid] = src[0, tid]
    dst[0, tid] = dst[0, tid] * 2.0         # a thread reading back its own write is ordered


@pl.simt.function(max_threads=N)
def _out_of_bounds(dst: pl.Tile[[1, N], pl.DT_FP32], src: pl.Tile[[1, N], pl.DT_FP32]):
    tid = pl.simt.linear_thread_idx()
    dst[0, tid] = src[0, tid + 1]           # thread N-1 reads past the tile


def _kernel(fn):
    @pl.jit(arch="a5")
    def kernel(x: pl.Tensor[[1, N], pl.DT_FP32], out: pl.Tensor[[1, N], pl.DT_FP32]):
        src = pl.make_tile(ROW, addr=0x0000, size=N * 4)
        dst = pl.make_tile(ROW, addr=0x0100, size=N * 4)
        with pl.section_vector():
            pl.load(src, x, [0, 0])
            pl.load(dst, x, [0, 0])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.simt.launch(fn, threads=N, args=(dst, src))
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.store(out, dst, [0, 0])
    return kernel


def _run(fn):
    x = torch.arange(N, dtype=torch.float32).reshape(1, N)
    out = torch.zeros_like(x)
    _kernel(fn)(x, out)
    return x, out


def test_two_threads_writing_one_element_is_a_race_naming_both():
    with pytest.raises(RaceError) as info:
        _run(_write_write)
    text = str(info.value)
    line = _line(_write_write, "tid // 2")
    assert f"test_simt_races.py:{line}" in text and "thread 0 writes" in text and "thread 1 writes" in text
    assert "dst[0, 0]" in text


def test_reading_another_threads_write_is_a_race_naming_both_lines():
    with pytest.raises(RaceError) as info:
        _run(_read_write)
    text = str(info.value)
    read, write = _line(_read_write, "v = dst"), _line(_read_write, "dst[0, tid] = v")
    assert f":{read} " in text and f":{write} " in text
    assert "thread 0 reads" in text and "thread 1 writes" in text


def test_a_thread_rereading_its_own_write_is_no_race():
    x, out = _run(_own_element)
    assert torch.equal(out, x * 2)


def test_an_access_outside_the_tile_is_located():
    with pytest.raises(OutOfBoundsError) as info:
        _run(_out_of_bounds)
    text = str(info.value)
    assert f"test_simt_races.py:{_line(_out_of_bounds, 'tid + 1')}" in text and f"thread {N - 1}" in text


# ---- a launch on the timeline: checked against other pipes and other blocks -------------------------


@pl.simt.function(max_threads=N)
def _fill_row(dst: pl.Tile[[1, N], pl.DT_FP32]):
    dst[0, pl.simt.linear_thread_idx()] = 1.0


@pl.jit(arch="a5")
def unsynchronised_store(out: pl.Tensor[[1, N], pl.DT_FP32]):
    dst = pl.make_tile(ROW, addr=0x0000, size=N * 4)
    with pl.section_vector():
        pl.simt.launch(_fill_row, threads=N, args=(dst,))
        pl.store(out, dst, [0, 0])          # no V -> MTE3 sync: races with the launch's writes


def test_a_launch_races_with_an_unsynchronised_pipe():
    with pytest.raises(RaceError, match="simt_launch"):
        unsynchronised_store(torch.zeros(1, N))


@pl.simt.function(max_threads=N)
def _row_of_block(dst: pl.Tensor[[4, N], pl.DT_FP32], row: pl.DT_INT32):
    tid = pl.simt.linear_thread_idx()
    dst[row, tid] = pl.simt.block_idx().x * 1.0 + tid


@pl.jit(arch="a5")
def rows_kernel(out: pl.Tensor[[4, N], pl.DT_FP32], shared: pl.DT_INT32):
    with pl.section_vector():
        row = pl.get_block_idx() * (1 - shared)
        pl.simt.launch(_row_of_block, threads=N, args=(out, row))


def test_blocks_writing_their_own_gm_rows_do_not_conflict():
    out = torch.zeros(4, N)
    rows_kernel[None, 4](out, 0)
    want = torch.arange(4, dtype=torch.float32)[:, None] + torch.arange(N, dtype=torch.float32)[None, :]
    assert torch.equal(out, want)


def test_blocks_writing_one_gm_row_conflict():
    with pytest.raises(RaceError, match="two blocks write the same bytes"):
        rows_kernel[None, 4](torch.zeros(4, N), 1)
