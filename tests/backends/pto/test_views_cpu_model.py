"""pl.make_tensor views in the emitted C++: a load / store of a view is a GlobalTensor over the view's
strides (elements of its dtype) from its byte offset into the base pointer. Built and run on
PTO-ISA's CPU model (when PTO_ISA_ROOT is set) and compared with the simulator: a pitched fp16 view
of a byte workspace (pl.make_ptr / pl.addptr), and an E8M0 scale tensor [M, G/2, 2] viewed as
[M, G] and copied through UB (the shape of the real MX scale ST kernel), and element reads / writes
(``v[i, j]``, ``pl.setval``) of strided views."""
from __future__ import annotations

import os
import sys

import ml_dtypes
import numpy as np

import pypto_pro.language as pl
from test_emitter import _run_on_pto_cpu, needs_pto

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "frontend"))
import test_views as tv  # noqa: E402


def _scale_copy(scale: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC, 2], pl.DT_FP8E8M0],
                out: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC, 2], pl.DT_FP8E8M0]):
    rows = scale.shape[0]
    cols = scale.shape[1] * 2
    src = pl.make_tensor(scale, [rows, cols], [cols, 1])
    dst = pl.make_tensor(out, [rows, cols], [cols, 1])
    g = pl.make_tile_group(type=pl.TileType(shape=[16, 32], dtype=pl.DT_FP8E8M0, target_memory=pl.MemorySpace.Vec,
                                            layout=pl.ND, valid_shape=[-1, -1]), addrs=0x0, mutex_ids=[0])
    with pl.section_vector():
        t = g.current()
        for r in pl.range(0, rows, 16):
            pl.set_validshape(t, [pl.min(16, rows - r), cols])
            pl.load(t, src, [r, 0])
            pl.store(dst, t, [r, 0])


@needs_pto
def test_pitched_view_of_a_byte_workspace_matches_the_simulator(tmp_path):
    a = np.random.default_rng(0).random((64, 128)).astype(np.float16)
    arrays = {"a": a, "workspace": np.zeros(2 * (64 * 128 + 64 * 256), np.uint8), "out": np.zeros_like(a)}
    got, sim = _run_on_pto_cpu(tmp_path, tv.pitched_workspace, arrays, block_dim=1)
    assert np.array_equal(sim["out"], a + a)
    for n in arrays:
        assert np.array_equal(got[n].view(np.uint8), sim[n].view(np.uint8)), n


@needs_pto
def test_e8m0_scale_view_copy_matches_the_simulator(tmp_path):
    rng = np.random.default_rng(4)
    scale = rng.integers(100, 140, (40, 6, 2)).astype(np.uint8).view(ml_dtypes.float8_e8m0fnu)
    arrays = {"scale": scale, "out": np.zeros_like(scale)}
    got, sim = _run_on_pto_cpu(tmp_path, pl.jit(_scale_copy, auto_mutex=True, arch="a5"), arrays, block_dim=1)
    assert np.array_equal(sim["out"].view(np.uint8), scale.view(np.uint8))
    assert np.array_equal(got["out"].view(np.uint8), sim["out"].view(np.uint8))


def _elements(x: pl.Tensor[[16, 64], pl.DT_FP32], out: pl.Tensor[[4, 8], pl.DT_FP32]):
    v = pl.make_tensor(x, [8, 16], [128, 2])  # every other row and column
    o = pl.make_tensor(out, [8, 4], [1, 8])             # out seen column-major
    with pl.section_vector():
        for i in pl.range(0, 8):
            pl.setval(o, i * 4 + i % 4, v[i, 3] + v[7 - i, 15])


@needs_pto
def test_element_reads_and_writes_of_views_match_the_simulator(tmp_path):
    x = np.arange(16 * 64, dtype=np.float32).reshape(16, 64)
    arrays = {"x": x, "out": np.zeros((4, 8), np.float32)}
    got, sim = _run_on_pto_cpu(tmp_path, pl.jit(_elements, arch="a5"), arrays, block_dim=1)
    assert np.count_nonzero(sim["out"]) == 8
    assert np.array_equal(got["out"], sim["out"])
