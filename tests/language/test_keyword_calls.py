"""Real-looking kernels written with keyword arguments run on the simulator: the API page's names
(``dst_tile=``, ``src_tensor=``) and the real parse-time builders' names (``out=``, ``tensor=``,
``tile=``, ``src=``, ``dst=``/``lhs=``/``rhs=``) bind the same operands; a misspelt or doubled keyword
is a located CompileError."""
from __future__ import annotations

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.errors import CompileError

from located import check_location, marked_line

R, C = 16, 64
F32 = pl.DT_FP32
G = pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], F32]
MS = pl.MemorySpace


def _softmax_rows_keywords(x: G, out: G):
    full = pl.TileType(shape=[R, C], dtype=F32, target_memory=MS.Vec)
    col = pl.TileType(shape=[R, 1], dtype=F32, target_memory=MS.Vec, layout=pl.DN)
    tx = pl.make_tile(full, addr=0x0000, size=R * C * 4)
    tmp = pl.make_tile(full, addr=0x1000, size=R * C * 4)
    ty = pl.make_tile(full, addr=0x2000, size=R * C * 4)
    tr = pl.make_tile(col, addr=0x3000, size=R * 4)
    with pl.section_vector():
        pl.load(out=tx, tensor=x, offsets=[0, 0])                     # the real builder's names
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.maximum(out=tr, lhs=tx, rhs=tmp, dim=0)
        pl.expand_sub(out=ty, src=tx, scalar=tr, dim=0)
        pl.exp(ty, ty)
        pl.sum(out=tr, src=ty, tmp=tmp, dim=0)
        pl.expand_div(out=ty, src=ty, scalar=tr, dim=0)
        pl.mul(out=ty, lhs=ty, rhs=2.0)                               # the scalar right operand by keyword
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.store(out=out, tile=ty, offsets=[0, 0])


def _softmax_rows_page_names(x: G, out: G):
    full = pl.TileType(shape=[R, C], dtype=F32, target_memory=MS.Vec)
    col = pl.TileType(shape=[R, 1], dtype=F32, target_memory=MS.Vec, layout=pl.DN)
    tx = pl.make_tile(full, addr=0x0000, size=R * C * 4)
    tmp = pl.make_tile(full, addr=0x1000, size=R * C * 4)
    ty = pl.make_tile(full, addr=0x2000, size=R * C * 4)
    tr = pl.make_tile(col, addr=0x3000, size=R * 4)
    with pl.section_vector():
        pl.load(dst_tile=tx, src_tensor=x, offsets=[0, 0])            # the API page's names
        pl.system.bar_all()
        pl.maximum(tr, tx, tmp, dim=0)
        pl.expand_sub(ty, tx, tr, dim=0)
        pl.exp(out=ty, src=ty)
        pl.sum(tr, ty, tmp, dim=0)
        pl.expand_div(ty, ty, tr, dim=0)
        pl.mul(ty, ty, 2.0)
        pl.system.bar_all()
        pl.store(dst_tensor=out, src_tile=ty, offsets=[0, 0])


@pytest.mark.parametrize("kernel", [_softmax_rows_keywords, _softmax_rows_page_names])
def test_vector_kernel_with_keywords_matches_numpy(kernel):
    x = np.random.default_rng(3).standard_normal((R, C)).astype(np.float32)
    out = np.zeros((R, C), np.float32)
    report = pl.jit(kernel, auto_mutex=False)(x, out)
    assert report.faults == []
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    np.testing.assert_allclose(out, 2 * e / e.sum(1, keepdims=True), rtol=2e-6, atol=1e-7)


N = 64
H = pl.Tensor[[N, N], pl.DT_FP16]


def _matmul_keywords(a: H, b: H, c: pl.Tensor[[N, N], F32]):
    a1 = pl.make_tile_group(type=pl.TileType([N, N], pl.DT_FP16, MS.Mat), addrs=0, mutex_ids=[0])[0]
    b1 = pl.make_tile_group(type=pl.TileType([N, N], pl.DT_FP16, MS.Mat), addrs=0x8000, mutex_ids=[1])[0]
    xa = pl.make_tile_group(type=pl.TileType([N, N], pl.DT_FP16, MS.Left), addrs=0, mutex_ids=[2])[0]
    xb = pl.make_tile_group(type=pl.TileType([N, N], pl.DT_FP16, MS.Right), addrs=0, mutex_ids=[3])[0]
    acc = pl.make_tile_group(type=pl.TileType([N, N], F32, MS.Acc), addrs=0, mutex_ids=[4])[0]
    with pl.section_cube():
        pl.load_tile(out=a1, tensor=a, tile_offsets=[0, 0])
        pl.load(dst_tile=b1, src_tensor=b, offsets=[0, 0])
        pl.move(out=xa, src=a1)
        pl.move(dst_tile=xb, src_tile=b1)
        pl.matmul(dst=acc, lhs=xa, rhs=xb, phase=pl.AccPhase.Final)
        pl.store_tile(out=c, tile=acc, tile_offsets=[0, 0])


def test_cube_kernel_with_keywords_matches_numpy():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((N, N)).astype(np.float16)
    b = rng.standard_normal((N, N)).astype(np.float16)
    c = np.zeros((N, N), np.float32)
    report = pl.jit(_matmul_keywords, auto_mutex=True, arch="a5")(a, b, c)
    assert report.faults == []
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-4)


# ---- misuse: located errors -----------------------------------------------------------------------


def _misspelt(x: G):
    t = pl.make_tile(pl.TileType(shape=[R, C], dtype=F32, target_memory=MS.Vec), addr=0)
    with pl.section_vector():
        pl.load(t, x, offset=[0, 0])  # <- here


def _doubled(x: G):
    t = pl.make_tile(pl.TileType(shape=[R, C], dtype=F32, target_memory=MS.Vec), addr=0)
    with pl.section_vector():
        pl.load(out=t, offsets=[0, 0], tensor=x, dst_tile=t)  # <- here


def _positional_and_alias(x: G):
    t = pl.make_tile(pl.TileType(shape=[R, C], dtype=F32, target_memory=MS.Vec), addr=0)
    with pl.section_vector():
        pl.load(t, x, [0, 0], out=t)  # <- here


def _bias_keyword(x: H):
    acc = pl.make_tile(pl.TileType([N, N], F32, MS.Acc), addr=0)
    xa = pl.make_tile(pl.TileType([N, N], pl.DT_FP16, MS.Left), addr=0)
    xb = pl.make_tile(pl.TileType([N, N], pl.DT_FP16, MS.Right), addr=0)
    bias = pl.make_tile(pl.TileType([1, N], F32, MS.Bias), addr=0)
    with pl.section_cube():
        pl.matmul(dst=acc, lhs=xa, rhs=xb, bias_tile=bias)  # <- here


@pytest.mark.parametrize("kernel,message,token", [
    (_misspelt, r"pl.load\(\) got an unexpected keyword argument 'offset'.*did you mean 'offsets'", "offset="),
    (_doubled, r"pl.load\(\) got two values for 'dst_tile': out= and dst_tile= name the same parameter", "dst_tile="),
    (_positional_and_alias, r"pl.load\(\): multiple values for argument 'dst_tile'", "pl.load"),
    (_bias_keyword, r"pass the bias positionally", "bias)"),
])
def test_keyword_misuse_is_located(kernel, message, token):
    with pytest.raises(CompileError, match=message) as info:
        pl.jit(kernel, auto_mutex=False, arch="a5").compile()
    path, line, text = marked_line(kernel)
    check_location(info.value, path, line, text, token)
