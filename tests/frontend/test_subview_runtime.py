"""Tile subviews at run-time bounds (``tile[r:, :]``, ``tile[r0:r1, c0:c1]`` with scalars): the bytes at
the run-time start, the valid shape clamped when the view is taken, the start fixed when it is taken,
the checkers seeing the actual addresses, and located faults for a start outside the tile."""
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.errors import CompileError, SimulationError

V = pl.MemorySpace.Vec
MTE2, MTE3, VP = pl.PipeType.MTE2, pl.PipeType.MTE3, pl.PipeType.V


@pl.jit(auto_mutex=True)
def corner(a: pl.Tensor[[8, 64], pl.DT_FP16], out: pl.Tensor[[8, 64], pl.DT_FP16], r: pl.DT_INT32,
           c: pl.DT_INT32):
    g = pl.make_tile_group(type=pl.TileType(shape=[8, 64], dtype=pl.DT_FP16, target_memory=V), addrs=0x0,
                           mutex_ids=[0])
    with pl.section_vector():
        t = g.next()
        pl.load(t, a, [0, 0])
        pl.store(out, t[r:, c:], [0, 0])


@pytest.mark.parametrize("r, c", [(0, 0), (3, 5), (7, 63)])
def test_a_run_time_start_stores_the_elements_from_there(r, c):
    a = torch.rand(8, 64).half()
    out = torch.zeros(8, 64).half()
    corner(a, out, r, c)
    want = torch.zeros(8, 64).half()
    want[:8 - r, :64 - c] = a[r:, c:]
    assert torch.equal(out, want)


def test_a_start_outside_the_tile_is_a_located_fault():
    out = torch.zeros(8, 64).half()
    with pytest.raises(SimulationError, match=r"test_subview_runtime.py:\d+.*starts at row 8, outside the tile's 0..7"):
        corner(torch.rand(8, 64).half(), out, 8, 0)
    assert not out.any()


@pl.jit(auto_mutex=True)
def rows_into(a: pl.Tensor[[16, 32], pl.DT_FP32], out: pl.Tensor[[16, 32], pl.DT_FP32], n: pl.DT_INT32):
    """Loads row blocks of 4 into a tile at a run-time row each, through a view whose start variable
    moves on after it is taken (the view keeps the address it was taken at)."""
    buf = pl.make_tile(pl.TileType(shape=[16, 32], dtype=pl.DT_FP32, target_memory=V), addr=0x0)
    with pl.section_vector():
        lo = 0
        for i in pl.range(n):
            view = buf[lo:lo + 4, :]
            lo = lo + 4  # later code moves the start variable: the view stays where it was taken
            pl.load(view, a, [i * 4, 0])
        pl.system.sync_src(set_pipe=MTE2, wait_pipe=MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=MTE2, wait_pipe=MTE3, event_id=0)
        pl.store(out, buf, [0, 0])


def test_loads_through_views_at_run_time_rows_fill_the_tile():
    a = torch.rand(16, 32)
    out = torch.zeros(16, 32)
    rows_into(a, out, 4)
    assert torch.equal(out, a)


@pl.jit
def clamped(a: pl.Tensor[[8, 64], pl.DT_FP16], out: pl.Tensor[[8, 64], pl.DT_FP16], rows: pl.DT_INT32,
            r: pl.DT_INT32, stop: pl.DT_INT32):
    t = pl.make_tile(pl.TileType(shape=[8, 64], dtype=pl.DT_FP16, target_memory=V, valid_shape=[-1, -1]), addr=0)
    with pl.section_vector():
        pl.set_validshape(t, [rows, 40])
        pl.load(t, a, [0, 0])
        pl.system.sync_src(set_pipe=MTE2, wait_pipe=MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=MTE2, wait_pipe=MTE3, event_id=0)
        pl.store(out, t[r:, 16:stop], [0, 0])


@pytest.mark.parametrize("rows, r, stop", [(8, 2, 64), (6, 1, 30), (6, 5, 50)])
def test_the_window_is_clamped_to_the_valid_shape_at_run_time(rows, r, stop):
    a = torch.rand(8, 64).half()
    out = torch.zeros(8, 64).half()
    clamped(a, out, rows, r, stop)
    want = torch.zeros(8, 64).half()
    cols = min(stop, 40) - 16
    want[:rows - r, :cols] = a[r:rows, 16:16 + cols]
    assert torch.equal(out, want)


def test_a_start_past_the_valid_shape_is_a_located_fault():
    with pytest.raises(SimulationError, match=r"starts at \[6, 16\], past the valid shape \[6, 40\]"):
        clamped(torch.rand(8, 64).half(), torch.zeros(8, 64).half(), 6, 6, 64)


@pl.jit
def unordered(a: pl.Tensor[[8, 64], pl.DT_FP32], out: pl.Tensor[[8, 64], pl.DT_FP32], r: pl.DT_INT32):
    """A load into rows [r, 8) of a tile, then an add reading rows [0, 4) with no sync between them."""
    t = pl.make_tile(pl.TileType(shape=[8, 64], dtype=pl.DT_FP32, target_memory=V), addr=0)
    u = pl.make_tile(pl.TileType(shape=[8, 64], dtype=pl.DT_FP32, target_memory=V, valid_shape=[4, 64]), addr=0x1000)
    with pl.section_vector():
        pl.load(t, a, [0, 0])
        pl.system.sync_src(set_pipe=MTE2, wait_pipe=VP, event_id=0)
        pl.system.sync_dst(set_pipe=MTE2, wait_pipe=VP, event_id=0)
        pl.load(t[r:, :], a, [0, 0])
        pl.add(u, t[0:4, :], t[0:4, :])
        pl.system.sync_src(set_pipe=VP, wait_pipe=MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=VP, wait_pipe=MTE3, event_id=0)
        pl.store(out, u, [0, 0])


def test_the_race_checker_sees_the_run_time_address():
    a = torch.rand(8, 64)
    out = torch.zeros(8, 64)
    unordered(a, out, 4)  # rows 4.. and rows 0..3: no shared bytes, no race
    assert torch.equal(out[:4], a[:4] * 2)
    with pytest.raises(SimulationError, match=r"race.*t@\[2, 0\]"):
        unordered(a, torch.zeros(8, 64), 2)  # rows 2.. overlap rows 0..3


def test_misuses_of_run_time_bounds_are_located_errors():
    T = pl.TileType(shape=[8, 64], dtype=pl.DT_FP16, target_memory=V)

    @pl.jit
    def float_start(a: pl.Tensor[[8, 64], pl.DT_FP16], x: pl.DT_FP32):
        t = pl.make_tile(T, addr=0)
        with pl.section_vector():
            pl.store(a, t[x:, :], [0, 0])
    with pytest.raises(CompileError, match="the slice start must be an integer"):
        float_start.compile()

    @pl.jit
    def nested(a: pl.Tensor[[8, 64], pl.DT_FP16], r: pl.DT_INT32):
        t = pl.make_tile(T, addr=0)
        with pl.section_vector():
            v = t[r:, :]
            pl.store(a, v[r:, :], [0, 0])
    with pytest.raises(CompileError, match="itself a subview at a run-time start"):
        nested.compile()


def test_the_cpp_backend_readdresses_the_view_where_it_is_taken():
    """As the real backend emits block.subview: one descriptor TASSIGNed at the tile's address plus the
    start's byte offset, then its window clamped to the tile's valid shape."""
    cpp = (corner.emit() / "kernel.cpp").read_text()
    lines = cpp.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.strip().startswith("TASSIGN(g_sub,"))
    assert "((g_start * 64) + g_start_1) * 2" in lines[at]  # ND: (r * cols + c) * sizeof(half)
    assert lines[at + 1].strip().startswith("g_sub.SetValidShape(pp_min(")
    assert "TSTORE(gm, g_sub);" in cpp  # the op uses the one descriptor, no slot table
    ir = corner.compile().dumps["00_parse.ir"]
    assert "@[g_start, g_start_1]" in ir


@pl.jit
def run_time_stop(a: pl.Tensor[[8, 64], pl.DT_FP16], out: pl.Tensor[[8, 64], pl.DT_FP16], n: pl.DT_INT32):
    t = pl.make_tile(pl.TileType(shape=[8, 64], dtype=pl.DT_FP16, target_memory=V), addr=0)
    with pl.section_vector():
        pl.load(t, a, [0, 0])
        pl.system.sync_src(set_pipe=MTE2, wait_pipe=MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=MTE2, wait_pipe=MTE3, event_id=0)
        pl.store(out, t[1:n, :], [0, 0])


def test_a_run_time_stop_is_a_run_time_valid_shape_in_the_simulator_and_in_cpp():
    a = torch.rand(8, 64).half()
    out = torch.zeros(8, 64).half()
    run_time_stop(a, out, 5)
    want = torch.zeros(8, 64).half()
    want[:4] = a[1:5]
    assert torch.equal(out, want)
    cpp = (run_time_stop.emit() / "kernel.cpp").read_text()
    line = next(ln for ln in cpp.splitlines() if "t_sub.SetValidShape(pp_min(" in ln)
    assert "t.GetValidRow()) - 1, static_cast<int64_t>((static_cast<int64_t>(n) - 1))" in line


@pl.jit
def unordered_per_block(a: pl.Tensor[[8, 64], pl.DT_FP32], out: pl.Tensor[[8, 64], pl.DT_FP32], step: pl.DT_INT32):
    """``unordered`` with the start ``4 - step * block``: the blocks address other rows."""
    t = pl.make_tile(pl.TileType(shape=[8, 64], dtype=pl.DT_FP32, target_memory=V), addr=0)
    u = pl.make_tile(pl.TileType(shape=[8, 64], dtype=pl.DT_FP32, target_memory=V, valid_shape=[4, 64]), addr=0x1000)
    with pl.section_vector():
        r = 4 - step * pl.get_block_idx()
        pl.load(t, a, [0, 0])
        pl.system.sync_src(set_pipe=MTE2, wait_pipe=VP, event_id=0)
        pl.system.sync_dst(set_pipe=MTE2, wait_pipe=VP, event_id=0)
        pl.load(t[r:, :], a, [0, 0])
        pl.add(u, t[0:4, :], t[0:4, :])
        pl.system.sync_src(set_pipe=VP, wait_pipe=MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=VP, wait_pipe=MTE3, event_id=0)
        if pl.get_block_idx() == 0:
            pl.store(out, u, [0, 0])


def test_a_block_at_another_start_is_scheduled_and_checked_on_its_own():
    """The view's slot is its start: blocks at other starts have other schedule signatures, so the
    block whose rows overlap is checked (not replayed from block 0, which has no race)."""
    a = torch.rand(8, 64)
    unordered_per_block[None, 4](a, torch.zeros(8, 64), 0)  # every block at row 4: no race
    with pytest.raises(SimulationError, match="race"):
        unordered_per_block[None, 4](a, torch.zeros(8, 64), 1)  # block 2 starts at row 2
