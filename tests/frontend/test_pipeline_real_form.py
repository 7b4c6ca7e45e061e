"""The real PyPTO Pro pipeline form: bare ``@pl.pipeline.stage`` (roles read from the bodies), stages
called inside sections, a counter carried across the pipelined loop, one-way shared groups."""
import sys
from pathlib import Path

import numpy as np
import pytest

import pypto_pro.language as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))
import real_pipeline_kernels as rk  # noqa: E402


def _data(tiles=4):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((rk.TM * tiles, rk.K)).astype(np.float16)
    w = rng.standard_normal((rk.K, rk.N)).astype(np.float16)
    return x, w, 2 * (x.astype(np.float64) @ w.astype(np.float64)).astype(np.float32)


@pytest.mark.parametrize("preload", [1, 2])
def test_bare_stages_with_a_carried_counter_are_exact(preload, tmp_path):
    x, w, ref = _data()
    out = np.zeros_like(ref)
    k = pl.jit(rk.two_way, arch="a5", pipeline=pl.pipeline.PipelineConfig(preload=preload), build_dir=str(tmp_path))
    report = k(x, w, out)
    np.testing.assert_array_equal(out, ref)
    assert report.faults == []
    text = (tmp_path / "two_way" / "pipeline_generated.py").read_text()
    # roles read from the bodies: qk writes s, softmax_like reads it
    assert "pl.pipeline.signal_ready(s)" in text and "pl.pipeline.wait_ready(s" in text
    assert "pl.pipeline.wait_free(s" in text and "pl.pipeline.signal_free(s)" in text
    assert "_pl_tick_s1 = _pl_tick_s1 + 1" in text  # the Vector stage's own copy of the counter


def test_a_one_way_group_syncs_data_ready_only(tmp_path):
    x, w, ref = _data()
    out = np.zeros_like(ref)
    k = pl.jit(rk.one_way, arch="a5", pipeline=pl.pipeline.PipelineConfig(preload=2), build_dir=str(tmp_path))
    k(x, w, out)
    np.testing.assert_array_equal(out, ref)
    text = (tmp_path / "one_way" / "pipeline_generated.py").read_text()
    assert "signal_ready(s)" in text and "wait_ready(s" in text
    assert "wait_free" not in text and "signal_free" not in text
