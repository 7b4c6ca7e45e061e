"""``pl.move(..., transpose=True)`` (Mat -> Right, ours) in the emitted C++: the NZ source re-declared as
the ZN tile of its transpose at the same L1 address, then TEXTRACT at the swapped offset. The
matmul_bt example (B stored [N, K]) built and run on PTO-ISA's CPU model (when PTO_ISA_ROOT is set)
and compared with the simulator; edge tiles in M, N and K."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import pypto_pro.language as pl
from test_emitter import _emit, _run_on_pto_cpu, needs_pto

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import test_cube_examples as ce  # noqa: E402


def test_transposed_move_is_an_extract_from_the_zn_alias():
    src = _emit(pl.jit(ce.matmul_bt, arch="a5"))[2]["kernel.cpp"]
    assert "using tr_t = Tile<TileType::Mat, half, 64, 64, BLayout::RowMajor, DYNAMIC, DYNAMIC, SLayout::ColMajor, " \
           "512>;" in src
    assert "TASSIGN(tr, 0x04000); tr.SetValidShape(b_l1[0].GetValidCol(), b_l1[0].GetValidRow());" in src
    assert "TEXTRACT(b_l0[b_l0_slot], tr, (s * 32), 0);" in src


@needs_pto
@pytest.mark.parametrize("arch", ["a2a3", "a5"])
def test_transposed_move_matmul_matches_the_simulator(tmp_path, arch):
    rng = np.random.default_rng(2)
    m, n, k = 50, 70, 90
    a = rng.standard_normal((m, k)).astype(np.float16)
    bt = rng.standard_normal((n, k)).astype(np.float16)
    got, sim = _run_on_pto_cpu(tmp_path, pl.jit(ce.matmul_bt, arch=arch),
                               {"a": a, "bt": bt, "c": np.zeros((m, n), np.float32)}, block_dim=2)
    ref = a.astype(np.float32) @ bt.astype(np.float32).T
    assert np.abs(sim["c"] - ref).max() < 1e-2
    assert np.abs(got["c"] - sim["c"]).max() <= 1e-3
