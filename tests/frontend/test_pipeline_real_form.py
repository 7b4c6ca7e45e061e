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


# ---- pl.pipeline.transform_pipeline: the transform with the real signature (AST in, AST out) ---------


def _kernel_ast(fn):
    from pypto_pro.frontend.source import parse_function
    return parse_function(fn)[0]


@pytest.mark.parametrize("config", [pl.pipeline.PipelineConfig(preload=2), pl.pipeline.PipelineConfig(sync_only=True)])
def test_transform_pipeline_is_what_the_jit_compiles(config):
    import ast

    from pypto_pro.arch import get_arch
    from pypto_pro.frontend.parser import parse_kernel
    node = _kernel_ast(rk.two_way)
    before = ast.dump(node, include_attributes=True)
    out = pl.pipeline.transform_pipeline(node, dict(rk.two_way.__globals__), config)
    assert ast.dump(node, include_attributes=True) == before  # func_def is not mutated
    assert isinstance(out, ast.FunctionDef) and out.name == "two_way"
    compiled = parse_kernel(rk.two_way, get_arch("a5"), pipeline=config).generated.kernel_text
    assert ast.unparse(out) == ast.unparse(ast.parse(compiled).body[0])
    assert "pl.pipeline.wait_ready(s" in ast.unparse(out)
    stage_call = next(n for n in ast.walk(out) if isinstance(n, ast.Call) and ast.unparse(n.func) == "qk")
    user_call = next(n for n in ast.walk(node) if isinstance(n, ast.Call) and ast.unparse(n.func) == "qk")
    assert stage_call.lineno == user_call.lineno  # generated nodes carry the user's line


def test_transform_pipeline_folds_the_launch_constants_and_known_ifs():
    import ast
    node = _kernel_ast(rk.two_way)
    loop = next(n for n in node.body if isinstance(n, ast.For))
    # wrap the Vector stage in `if USE_VEC: ... else: pass`, known constant-true through if_const_map
    loop.body[1] = ast.If(test=ast.Name("USE_VEC", ast.Load()), body=[loop.body[1]], orelse=[ast.Pass()])
    ast.fix_missing_locations(node)
    closure = dict(rk.two_way.__globals__)
    plain = ast.unparse(pl.pipeline.transform_pipeline(_kernel_ast(rk.two_way), closure,
                                                       pl.pipeline.PipelineConfig()))
    folded = pl.pipeline.transform_pipeline(node, closure, pl.pipeline.PipelineConfig(),
                                            if_const_map={"USE_VEC": (True, True)}, tilingkey_consts={"USE_VEC": 1})
    assert ast.unparse(folded) == plain


def test_transform_pipeline_checks_its_arguments():
    with pytest.raises(TypeError, match="ast.FunctionDef"):
        pl.pipeline.transform_pipeline("def f(): pass", {}, pl.pipeline.PipelineConfig())
    with pytest.raises(TypeError, match="PipelineConfig"):
        pl.pipeline.transform_pipeline(_kernel_ast(rk.two_way), {}, {"preload": 2})
