"""The pipeline transform: exact results for every preload, the generated file, and its errors."""
import importlib.util
import inspect
import sys
from pathlib import Path

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import CompileError
import pipelined_kernels as pk

sys.path.insert(0, str(Path(__file__).resolve().parent))


def line_of(fn, marker):
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, l in enumerate(lines) if f"# <- {marker}" in l)


def _data(m=pk.TM * 5):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((m, pk.K)).astype(np.float16)
    w = rng.standard_normal((pk.K, pk.N)).astype(np.float16)
    return x, w, 2 * (x.astype(np.float64) @ w.astype(np.float64)).astype(np.float32)


@pytest.mark.parametrize("arch", ["a5"])
@pytest.mark.parametrize("preload,sync_only", [(0, False), (1, False), (2, False), (2, True)])
@pytest.mark.parametrize("blocks", [1, 2])
def test_pipelined_kernel_is_exact(arch, preload, sync_only, blocks):
    x, w, ref = _data()
    out = np.zeros((x.shape[0], pk.N), np.float32)
    k = pl.jit(pk.two_stage, arch=arch, pipeline=pl.pipeline.PipelineConfig(preload=preload, sync_only=sync_only))
    report = k[None, blocks](x, w, out)
    np.testing.assert_array_equal(out, ref)
    assert report.faults == []


def test_generated_file_is_readable_and_compiles_on_its_own(tmp_path):
    k = pl.jit(pk.two_stage, pipeline=pl.pipeline.PipelineConfig(preload=2), build_dir=str(tmp_path))
    k.compile()
    path = tmp_path / "two_stage" / "pipeline_generated.py"
    text = path.read_text()
    assert "prologue" in text and "steady state" in text and "epilogue" in text
    assert "pl.pipeline.wait_free(s" in text and "pl.pipeline.signal_free(s" in text
    assert f"user line {line_of(pk.two_stage, 'loop')}" in text
    spec = importlib.util.spec_from_file_location("pipeline_generated_mod", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # a standalone module: imports, constants, stages, kernel
    x, w, ref = _data()
    out = np.zeros((x.shape[0], pk.N), np.float32)
    mod.two_stage.options(check="raise")[None, 2](x, w, out)
    np.testing.assert_array_equal(out, ref)


def test_ring_too_shallow_for_the_preload():
    """The real delays: the first stage of the other engine runs one iteration behind the stage before it,
    so a Cube -> Vector ring keeps two iterations in flight whatever the preload."""
    k = pl.jit(pk.shallow_ring, pipeline=pl.pipeline.PipelineConfig(preload=3))
    with pytest.raises(CompileError, match="has 1 slots but preload=3 keeps 2 iterations") as err:
        k.compile()
    assert err.value.line == line_of(pk.shallow_ring, "shared")


def test_reader_without_a_writer():
    k = pl.jit(pk.reader_without_writer, pipeline=pl.pipeline.PipelineConfig(preload=1))
    with pytest.raises(CompileError, match="reads shared group 's' but no stage of this loop writes it") as err:
        k.compile()
    assert err.value.line == line_of(pk.reader_without_writer, "orphan reader")


def test_jump_in_a_pipelined_loop_is_a_located_error():
    k = pl.jit(pk.break_in_pipelined_loop, pipeline=pl.pipeline.PipelineConfig(preload=1))
    with pytest.raises(CompileError, match="'break' cannot be used in a pipelined loop") as err:
        k.compile()
    assert err.value.line == line_of(pk.break_in_pipelined_loop, "jump")


def _group_kernel(fwd, bwd, extra_ids=None):
    T = pl.TileType([16, 64], pl.DT_FP32, pl.MemorySpace.Vec)

    def kern(x: pl.Tensor[[16, 64], pl.DT_FP32]):
        g = pl.make_tile_group(type=T, addrs=0, fwd_ids=fwd, bwd_ids=bwd)
        if extra_ids is not None:
            h = pl.make_tile_group(type=T, addrs=0x8000, fwd_ids=extra_ids[0], bwd_ids=extra_ids[1])
        with pl.section_vector():
            pl.load(g[0], x, [0, 0])
    return pl.jit(kern)


@pytest.mark.parametrize("fwd,bwd,extra,needle", [
    ([0, 1, 2], [3, 4], None, "one cross-core event id per slot"),
    ([0, 1], [1, 2], None, "share id"),
    ([0, 16], [3, 4], None, "outside 0-15"),
    ([0, 1], [2, 3], ([1, 5], [6, 7]), "already used by 'g'"),
])
def test_fwd_bwd_id_errors(fwd, bwd, extra, needle):
    with pytest.raises(CompileError, match=needle):
        _group_kernel(fwd, bwd, extra).compile()


@pytest.mark.parametrize("fwd,bwd", [([0, 1], None), (None, [0, 1])])
def test_one_direction_of_ids_is_a_shared_group(fwd, bwd):
    """The real transform accepts fwd_ids or bwd_ids alone (one direction of sync)."""
    _group_kernel(fwd, bwd).compile()


@pytest.mark.parametrize("tiles", [1, 3])
def test_fwd_ids_alone_sync_data_ready_only(tiles):
    """fwd_ids only: the data-ready edge alone. Up to as many trips as slots the result is exact and
    clean; no slot-free wait is emitted."""
    x, w, ref = _data(pk.TM * tiles)
    out = np.zeros((x.shape[0], pk.N), np.float32)
    k = pl.jit(pk.two_stage_fwd_only, pipeline=pl.pipeline.PipelineConfig(preload=0))
    report = k(x, w, out)
    np.testing.assert_array_equal(out, ref)
    assert report.faults == []
    from pypto_pro.ir.printer import kernel_str
    from pypto_pro.language.enums import SectionKind
    programs = k.compile().programs
    cube, vec = (kernel_str(programs[kind]) for kind in (SectionKind.CUBE, SectionKind.VECTOR))
    assert "pipeline signal_ready(s)" in cube and "pipeline wait_free(s)" not in cube
    assert "pipeline wait_ready(s)" in vec and "pipeline signal_free(s)" not in vec


def test_fwd_ids_alone_lets_the_producer_overwrite_a_slot_in_use():
    """More trips than slots with no slot-free edge: the Cube's fourth fill of the 3-slot group is
    unordered with the Vector side's first read of that slot, and the race checker says so."""
    from pypto_pro import RaceError
    x, w, _ = _data(pk.TM * 5)
    k = pl.jit(pk.two_stage_fwd_only, pipeline=pl.pipeline.PipelineConfig(preload=0))
    with pytest.raises(RaceError):
        k(x, w, np.zeros((x.shape[0], pk.N), np.float32))


def test_pipeline_config_validation():
    with pytest.raises(ValueError):
        pl.pipeline.PipelineConfig(preload=-1)
    with pytest.raises(CompileError, match="PipelineConfig"):
        pl.jit(pk.two_stage, pipeline=2)
