"""Tile subviews ``tile[r0:r1, c0:c1]``: the window's bytes with the tile's row stride, its valid shape
clamped to the tile's, and the misuses the real parser rejects."""
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.errors import CompileError
from pypto_pro.language import Vf as vf

V = pl.MemorySpace.Vec


@pl.jit(auto_mutex=True)
def window(a: pl.Tensor[[8, 64], pl.DT_FP16], out: pl.Tensor[[4, 34], pl.DT_FP16]):
    g = pl.make_tile_group(type=pl.TileType(shape=[8, 64], dtype=pl.DT_FP16, target_memory=V), addrs=0x0,
                           mutex_ids=[0])
    with pl.section_vector():
        t = g.next()
        pl.load(t, a, [0, 0])
        pl.store(out, t[2:6, 16:50], [0, 0])


def test_a_window_stores_its_elements():
    a = torch.rand(8, 64).half()
    out = torch.zeros(4, 34).half()
    window(a, out)
    assert torch.equal(out, a[2:6, 16:50])


@pl.jit(auto_mutex=True)
def clamped(a: pl.Tensor[[8, 64], pl.DT_FP16], out: pl.Tensor[[8, 64], pl.DT_FP16], rows: pl.DT_INT32):
    g = pl.make_tile_group(type=pl.TileType(shape=[8, 64], dtype=pl.DT_FP16, target_memory=V, valid_shape=[-1, -1]),
                           addrs=0x0, mutex_ids=[0])
    with pl.section_vector():
        t = g.next()
        pl.set_validshape(t, [rows, 40])
        pl.load(t, a, [0, 0])
        pl.store(out, t[2:8, 16:], [0, 0])  # a stop past the shape is clamped to it


@pytest.mark.parametrize("rows", [6, 8])
def test_the_window_is_clamped_to_the_valid_shape_at_run_time(rows):
    a = torch.rand(8, 64).half()
    out = torch.zeros(8, 64).half()
    clamped(a, out, rows)
    want = torch.zeros(8, 64).half()
    want[:rows - 2, :24] = a[2:rows, 16:40]
    assert torch.equal(out, want)


def test_a_static_valid_shape_clamps_at_compile_time():
    @pl.jit(auto_mutex=True)
    def kernel(a: pl.Tensor[[8, 64], pl.DT_FP16], out: pl.Tensor[[8, 64], pl.DT_FP16]):
        t = pl.make_tile(pl.TileType(shape=[8, 64], dtype=pl.DT_FP16, target_memory=V, valid_shape=[6, 48]), addr=0)
        with pl.section_vector():
            pl.load(t, a, [0, 0])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.store(out, t[1:8, 32:64], [0, 0])
    line = next(ln for ln in kernel.compile().dumps["00_parse.ir"].splitlines() if "view_of=" in ln)
    assert "view_of=t" in line and "@ [0x000c0]" in line  # (1 * 64 + 32) * 2 bytes in
    a = torch.rand(8, 64).half()
    out = torch.zeros(8, 64).half()
    kernel(a, out)
    want = torch.zeros(8, 64).half()
    want[:5, :16] = a[1:6, 32:48]
    assert torch.equal(out, want)


@pl.vector_function
def _copy_rows(dst, src, n_rows, n_cols, stride):
    preg = vf.update_mask(n_cols, dtype=pl.DT_FP16)
    for r in pl.range(n_rows):
        reg = vf.load_align(src, r * stride)
        vf.store_align(dst + r * n_cols, reg, preg)


def test_a_subview_passed_to_a_vector_function_is_its_start_address():
    @pl.jit(auto_mutex=True)
    def kernel(a: pl.Tensor[[4, 64], pl.DT_FP16], out: pl.Tensor[[3, 32], pl.DT_FP16]):
        gs = pl.make_tile_group(type=pl.TileType(shape=[4, 64], dtype=pl.DT_FP16, target_memory=V), addrs=0x4000,
                                mutex_ids=[1])
        gd = pl.make_tile_group(type=pl.TileType(shape=[3, 32], dtype=pl.DT_FP16, target_memory=V), addrs=0x5000,
                                mutex_ids=[2])
        with pl.section_vector():
            s = gs.next()
            d = gd.next()
            pl.load(s, a, [0, 0])
            _copy_rows(d, s[1:4, 16:48], 3, 32, 64)
            pl.store(out, d, [0, 0])
    a = torch.rand(4, 64).half()
    out = torch.zeros(3, 32).half()
    kernel(a, out)
    assert torch.equal(out, a[1:4, 16:48])


def _compile_error(body, match):
    with pytest.raises(CompileError, match=match):
        body.compile()


def test_slicing_misuses_are_located_errors():
    T = pl.TileType(shape=[8, 64], dtype=pl.DT_FP16, target_memory=V)

    @pl.jit
    def tensor_slice(a: pl.Tensor[[8, 64], pl.DT_FP16]):
        t = pl.make_tile(T, addr=0)
        with pl.section_vector():
            pl.load(t, a[0:4, 0:8], [0, 0])
    _compile_error(tensor_slice, "a tensor cannot be sliced")

    @pl.jit
    def float_bound(a: pl.Tensor[[8, 64], pl.DT_FP16], x: pl.DT_FP32):
        t = pl.make_tile(T, addr=0)
        with pl.section_vector():
            pl.store(a, t[0:x, 0:16], [0, 0])
    _compile_error(float_bound, "the slice stop must be an integer")

    @pl.jit
    def one_dim(a: pl.Tensor[[8, 64], pl.DT_FP16]):
        t = pl.make_tile(T, addr=0)
        with pl.section_vector():
            pl.store(a, t[0:4], [0, 0])
    _compile_error(one_dim, "1-D tile slice is not supported")

    @pl.jit
    def past_shape(a: pl.Tensor[[8, 64], pl.DT_FP16]):
        t = pl.make_tile(T, addr=0)
        with pl.section_vector():
            pl.store(a, t[8:9, 0:16], [0, 0])
    _compile_error(past_shape, "slice start 8 is outside dimension 0")

    @pl.jit
    def cube_tile(a: pl.Tensor[[16, 16], pl.DT_FP16]):
        t = pl.make_tile(pl.TileType(shape=[16, 16], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat), addr=0)
        with pl.section_cube():
            pl.load(t[0:8, 0:16], a, [0, 0])
    _compile_error(cube_tile, "only UB \\(Vec\\) tiles in ND or DN layout can be sliced")
