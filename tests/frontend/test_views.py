"""pl.Ptr parameters, pl.make_ptr / pl.addptr / pl.make_tensor views with strides, and pl.setval."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import CompileError, SimulationError
from pypto_pro.errors_sim import OutOfBoundsError

TT = pl.TileType(shape=[32, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)


@pl.jit
def pitched_workspace(a: pl.Tensor[[64, 128], pl.DT_FP16], workspace: pl.Ptr[pl.DT_UINT8],
                      out: pl.Tensor[[64, 128], pl.DT_FP16]):
    fp16 = pl.make_ptr(workspace, dtype=pl.DT_FP16)
    half = pl.addptr(fp16, 64 * 128)
    ws = pl.make_tensor(half, [64, 128], [256, 1])  # rows 256 elements apart
    g = pl.make_tile_group(type=TT, addrs=0, mutex_ids=[0])
    with pl.section_vector():
        t = g.current()
        for r in pl.range(0, 2):
            pl.load(t, a, [r * 32, 0])
            pl.add(t, t, t)
            pl.store(ws, t, [r * 32, 0])
            pl.load(t, ws, [r * 32, 0])
            pl.store(out, t, [r * 32, 0])


def test_strided_view_of_a_byte_workspace():
    a = np.random.default_rng(0).random((64, 128)).astype(np.float16)
    ws = np.zeros(2 * (64 * 128 + 64 * 256), np.uint8)  # bytes; the view starts 64*128 fp16 in
    out = np.zeros_like(a)
    pitched_workspace(a, ws, out)
    assert np.array_equal(out, a + a)
    elems = ws.view(np.float16)[64 * 128:]
    rows = elems[:64 * 256].reshape(64, 256)
    assert np.array_equal(rows[:, :128], a + a) and not rows[:, 128:].any()  # the gaps are untouched
    assert not elems[64 * 256:].any() and not ws.view(np.float16)[:64 * 128].any()


@dataclass
class Shape:
    m: int
    n: int


@pl.jit
def flat_to_2d(x: pl.Ptr[pl.DT_FP16], z: pl.Ptr[pl.DT_FP16], tiling: Shape):
    xt = pl.make_tensor(x, [tiling.m, tiling.n])  # run-time shape, contiguous strides
    zt = pl.make_tensor(z, [tiling.m, tiling.n])
    g = pl.make_tile_group(type=TT, addrs=0, mutex_ids=[0, 1])
    with pl.section_vector():
        for i in pl.range(0, xt.shape[0] // 32):
            t = g.next()
            pl.load(t, xt, [i * 32, 0])
            pl.muls(t, t, 3.0)
            pl.store(zt, t, [i * 32, 0])


def test_ptr_arguments_of_any_shape_viewed_with_run_time_shapes():
    x = np.random.default_rng(1).random((2, 2, 16, 128)).astype(np.float16)  # any shape: the bytes count
    z = np.zeros_like(x)
    flat_to_2d(x, z, Shape(64, 128))
    assert np.array_equal(z, (x * np.float16(3)).astype(np.float16))


@pl.jit
def view_too_big(x: pl.Ptr[pl.DT_FP16], z: pl.Tensor[[32, 128], pl.DT_FP16]):
    xt = pl.make_tensor(x, [64, 128])
    g = pl.make_tile_group(type=TT, addrs=0, mutex_ids=[0])
    with pl.section_vector():
        t = g.current()
        pl.load(t, xt, [32, 0])  # <- here
        pl.store(z, t, [0, 0])


def test_view_outside_the_buffer_is_a_located_fault():
    with pytest.raises(OutOfBoundsError, match=r"reaches bytes 0\.\.16384 of 'x', which has 8192 bytes"):
        view_too_big(np.zeros(32 * 128, np.float16), np.zeros((32, 128), np.float16))


def test_cpp_backend_emits_view_windows(tmp_path):
    """A view's load / store is a GlobalTensor over its strides from its byte offset (run on PTO-ISA's
    CPU model in tests/backends/pto/test_views_cpu_model.py)."""
    from pypto_pro.runtime.build_cache import BuildCache
    text = (pitched_workspace.emit(cache=BuildCache(tmp_path)) / "kernel.cpp").read_text()
    assert "reinterpret_cast<__gm__ half*>(reinterpret_cast<__gm__ uint8_t*>(workspace) + (" in text


@pl.jit
def scalars_to_gm(out: pl.Tensor[[2, 4], pl.DT_FP16], ints: pl.Tensor[[4], pl.DT_INT8], v: float):
    with pl.section_vector():
        pl.setval(out, 5, v)        # linear offset: row 1, column 1
        pl.setval(ints, 0, 300)     # wraps to the element width
        pl.setval(ints, 3, -1)


def test_setval_converts_as_the_scalar_unit_stores():
    out = np.zeros((2, 4), np.float16)
    ints = np.zeros(4, np.int8)
    scalars_to_gm(out, ints, 0.1)
    assert out[1, 1] == np.float16(np.float32(0.1)) and out.sum() == out[1, 1]
    assert ints.tolist() == [44, 0, 0, -1]


@pl.jit
def setval_out_of_range(out: pl.Tensor[[pl.DYNAMIC], pl.DT_INT32], k: int):
    with pl.section_vector():
        pl.setval(out, k, 1)  # <- here


def test_setval_run_time_offset_checked():
    with pytest.raises(SimulationError, match="offset 8 is outside its 8 elements"):
        setval_out_of_range(np.zeros(8, np.int32), 8)


@pytest.mark.parametrize("body,needle", [
    ("pl.setval(out, 8, 1)", "offset 8 is outside tensor 'out' (8 elements)"),
    ("pl.setval(out, 0, 1.5)", "a float value cannot be written to DT_INT32"),
    ("pl.make_tensor(out, [4, 2], [2])", "stride must list one step per axis (2)"),
    ("pl.make_tensor(out, [0, 2])", "shape[0] = 0 must be positive"),
    ("pl.addptr(out, 4)", "'ptr' must be a pl.Ptr"),
])
def test_view_and_setval_errors(body, needle, tmp_path):
    src = tmp_path / "k.py"
    src.write_text("import pypto_pro.language as pl\n\n"
                   "def kern(out: pl.Tensor[[8], pl.DT_INT32]):\n"
                   "    with pl.section_vector():\n"
                   f"        {body}\n")
    import importlib.util
    spec = importlib.util.spec_from_file_location("k_views", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    with pytest.raises(CompileError) as err:
        pl.jit(mod.kern)(np.zeros(8, np.int32))
    assert needle in str(err.value) and err.value.line == 5
