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


def _positional_and_keyword(x: G):
    t = pl.make_tile(pl.TileType(shape=[R, C], dtype=F32, target_memory=MS.Vec), addr=0)
    with pl.section_vector():
        pl.add(t, t, t, lhs=t)  # <- here


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
    (_positional_and_alias, r"pl.load\(\) got two values for 'dst_tile': the positional argument 1 and out=", "out=t"),
    (_positional_and_keyword, r"pl.add\(\) got two values for 'lhs': the positional argument 2 and lhs=", "lhs="),
    (_bias_keyword, r"pass the bias positionally", "bias)"),
])
def test_keyword_misuse_is_located(kernel, message, token):
    with pytest.raises(CompileError, match=message) as info:
        pl.jit(kernel, auto_mutex=False, arch="a5").compile()
    path, line, text = marked_line(kernel)
    check_location(info.value, path, line, text, token)


# ---- every fp32 elementwise op of the real API: the keyword form computes what the positional form does


def _tile_ops() -> list[tuple[str, list[str]]]:
    """(op, its first parameters) for the real ops whose tile operands are ``out`` + one or two fp32
    sources of one shape, read from the real signatures (``real_signatures.PAGE``)."""
    from real_signatures import PAGE
    unary = [n for n, s in PAGE.items() if s == "out, src" and n not in ("transpose",)]
    binary = [n for n, s in PAGE.items() if len(s.split(", ")) == 3 and "*" not in s and "=" not in s
              and s.startswith("out, ") and n not in ("and_", "shl", "shr", "eq", "ne", "lt", "le", "gt", "ge",
                                                        "scatter", "gatherb", "dequant", "axpy", "quant")]
    binary += ["maximum", "minimum"]
    return [(n, PAGE[n].split(", ")[:2]) for n in unary] + [(n, PAGE[n].split(", ")[:3]) for n in binary]


def _op_kernel(op: str, names: list[str], keywords: bool):
    from located import snippet_function
    operands = ["to", "ta", "tb"][:len(names)]
    args = ", ".join(f"{n}={v}" for n, v in zip(names, operands)) if keywords else ", ".join(operands)
    source = (f"def k_{op}(a: G, b: G, out: G):\n"
              f"    full = pl.TileType(shape=[{R}, {C}], dtype=F32, target_memory=MS.Vec)\n"
              f"    ta = pl.make_tile(full, addr=0x0000)\n"
              f"    tb = pl.make_tile(full, addr=0x1000)\n"
              f"    to = pl.make_tile(full, addr=0x2000)\n"
              f"    with pl.section_vector():\n"
              f"        pl.load(out=ta, tensor=a, offsets=[0, 0])\n"
              f"        pl.load(tb, b, [0, 0])\n"
              f"        pl.load(to, out, [0, 0])\n"
              f"        pl.system.bar_all()\n"
              f"        pl.{op}({args})\n"
              f"        pl.system.bar_all()\n"
              f"        pl.store(dst_tensor=out, src_tile=to, offsets=[0, 0])\n")
    return pl.jit(snippet_function(f"k_{op}", source, {"pl": pl, "G": G, "F32": F32, "MS": MS}), auto_mutex=False)


def test_the_op_list_is_read_from_the_real_signatures():
    ops = dict(_tile_ops())
    assert {"exp", "neg", "relu", "add", "div", "add_relu", "partmax", "fused_mul_add_relu", "maximum"} <= set(ops)
    assert ops["partadd"] == ["out", "src0", "src1"] and ops["fused_mul_add_relu"] == ["out", "a", "b"]


@pytest.mark.parametrize("op,names", _tile_ops(), ids=[n for n, _ in _tile_ops()])
def test_keyword_form_computes_the_positional_form(op, names):
    rng = np.random.default_rng(7)
    a = (np.abs(rng.standard_normal((R, C))) + 0.5).astype(np.float32)
    b = (np.abs(rng.standard_normal((R, C))) + 0.5).astype(np.float32)
    init = rng.standard_normal((R, C)).astype(np.float32)
    results = []
    for keywords in (False, True):
        out = init.copy()
        _op_kernel(op, names, keywords)(a, b, out)
        results.append(out)
    assert not np.array_equal(results[0], init)  # the op ran
    np.testing.assert_array_equal(results[1], results[0])
