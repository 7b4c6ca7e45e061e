"""The emitted C++ of the data-rearrangement ops built and run on PTO-ISA's CPU model (when
PTO_ISA_ROOT points at a PTO-ISA checkout), bit-compared with the simulator. The compare form of
TGATHER has no CPU-model implementation (a5 only) and is not run here; sort32 uses one index row
per data row (the CPU model ignores a shared index row)."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import pypto_pro.language as pl
from test_emitter import _run_on_pto_cpu, needs_pto

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "ops"))
import test_fillpad_transpose_quant as fq  # noqa: E402
import test_scatter_gather as sg  # noqa: E402
import test_sorting as so  # noqa: E402

RNG = np.random.default_rng(0)


def _cases():
    v = np.sort(RNG.integers(0, 20, 128).astype(np.float32).reshape(4, 32), axis=1)[:, ::-1].reshape(-1)
    offs = np.zeros((4, 8), np.uint32)
    offs[:, :2] = [[224, 0], [32, 64], [96, 128], [160, 192]]
    return {
        "gather": (lambda: sg.gather_f16, {"src": RNG.standard_normal((8, 32)).astype(np.float16),
                                           "idx": RNG.integers(0, 256, (8, 32)).astype(np.int32),
                                           "out": np.zeros((8, 32), np.float16)}),
        "scatter": (lambda: sg.scatter_k, {"src": RNG.standard_normal((4, 16)).astype(np.float32),
                                           "idx": RNG.permutation(64).reshape(4, 16).astype(np.int32),
                                           "out": np.zeros((4, 16), np.float32)}),
        "gatherb": (lambda: sg.gatherb_k, {"src": np.arange(128, dtype=np.float16).reshape(4, 32), "idx": offs,
                                           "out": np.zeros((4, 32), np.float16)}),
        "gathermask": (lambda: sg.make_mask(2, 32), {"src": np.arange(256, dtype=np.int32).reshape(4, 64),
                                                     "out": np.zeros((4, 32), np.int32)}),
        "histogram": (lambda: sg.make_hist(pl.DT_UINT16, False, [32, 1], pl.DN),
                      {"src": RNG.integers(0, 1 << 16, (32, 64)).astype(np.uint16),
                       "idx": np.full((32, 1), 0x12, np.uint8), "out": np.zeros((32, 256), np.uint32)}),
        "sort32": (lambda: so.make_sort32(pl.DT_FP32, 2, 64, 128, 2),
                   {"src": RNG.integers(-4, 4, (2, 64)).astype(np.float32),
                    "idx": np.stack([RNG.permutation(64), RNG.permutation(64)]).astype(np.uint32),
                    "out": np.zeros((2, 128), np.float32)}),
        "mrgsort": (lambda: so.make_mrgsort(64), {"src": so.pack(v, np.arange(128, dtype=np.uint32),
                                                                 np.float32).reshape(1, 256),
                                                  "out": np.zeros((1, 256), np.float32)}),
        "fillpad": (lambda: fq.make_fillpad(pl.FillPadMode.EXPAND, pl.TilePad.max, pl.DT_INT32, 64),
                    {"x": (np.arange(256).reshape(8, 32) % 100).astype(np.int32), "z": np.zeros((8, 64), np.int32)}),
        "transpose": (lambda: fq.transpose_k, {"x": RNG.standard_normal((16, 32)).astype(np.float16),
                                               "y": np.zeros((32, 16), np.float16)}),
        "fill_index": (lambda: fq.make_fill_index(pl.DT_INT32, -5), {"out": np.zeros((1, 32), np.int32)}),
        "quant": (lambda: fq.make_quant(True), {"x": (RNG.standard_normal((8, 64)) * 60).astype(np.float32),
                                                "sc": RNG.uniform(0.5, 3, (8, 1)).astype(np.float32),
                                                "of": RNG.uniform(0, 100, (8, 1)).astype(np.float32),
                                                "q": np.zeros((8, 64), np.int8),
                                                "back": np.zeros((8, 64), np.float32)}),
    }


CASES = _cases()


@needs_pto
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_rearrangement_op_matches_pto_isa_cpu_model(tmp_path, name):
    make, arrays = CASES[name]
    got, sim = _run_on_pto_cpu(tmp_path, make(), {k: v.copy() for k, v in arrays.items()}, block_dim=1)
    for n in arrays:
        assert np.array_equal(got[n].view(np.uint8), sim[n].view(np.uint8)), n
