"""Pins the language's public surface where a signature audit against the real PyPTO Pro found a
difference: keyword-only system calls, the real defaults, the enums' integers, the real names that
build the real IR (a clear error here), and the class of an enum keyword given a number."""
from __future__ import annotations

import inspect

import pytest

import pypto_pro.language as pl
from pypto_pro import CompileError
from pypto_pro.errors import FinalRejectionError
from pypto_pro.language.ir_only import IROnlyError

T32 = pl.Tensor[[64, 64], pl.DT_FP32]
VEC = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)


@pytest.mark.parametrize("fn,names", [
    (pl.system.sync_src, ["set_pipe", "wait_pipe", "event_id"]),
    (pl.system.sync_dst, ["set_pipe", "wait_pipe", "event_id"]),
    (pl.system.set_cross_core, ["pipe", "event_id", "sync_mode"]),
    (pl.system.wait_cross_core, ["pipe", "event_id", "sync_mode"]),
    (pl.system.mutex_lock, ["pipe", "mutex_id", "mode", "max_mutex_id", "mutex_ids"]),
    (pl.mutex.mutex_unlock, ["pipe", "mutex_id", "mode", "max_mutex_id", "mutex_ids"]),
])
def test_system_calls_take_keywords_only(fn, names):
    params = inspect.signature(fn).parameters
    assert list(params) == names
    assert all(q.kind is q.KEYWORD_ONLY for q in params.values())


def _positional_sync(x: T32):
    with pl.section_vector():
        pl.system.sync_src(pl.PipeType.MTE2, pl.PipeType.V, 0)


def _positional_cross(x: T32):
    with pl.section_cube():
        pl.system.set_cross_core(pl.PipeType.FIX, 0)


@pytest.mark.parametrize("kernel,shown", [(_positional_sync, "pl.system.sync_src"),
                                          (_positional_cross, "pl.system.set_cross_core")])
def test_positional_system_call_is_a_located_error(kernel, shown):
    with pytest.raises(CompileError, match=rf"{shown}\(\) takes keyword arguments only") as info:
        pl.jit(kernel, auto_mutex=False).compile()
    assert "pl.PipeType" in info.value.loc.source_line and info.value.col > 9  # at the first positional


def test_pipeline_config_default_preload_is_the_real_two():
    assert pl.pipeline.PipelineConfig().preload == 2
    assert pl.pipeline.PipelineConfig().sync_only is False


def test_is_pipeline_stage():
    @pl.pipeline.stage
    def marked():
        pass

    def plain():
        pass
    assert pl.pipeline.is_pipeline_stage(marked) and marked.pipeline_stage is True
    assert not pl.pipeline.is_pipeline_stage(plain)
    assert not pl.pipeline.is_pipeline_stage(3)


@pytest.mark.parametrize("enum,members", [
    (pl.MemorySpace, "DDR Vec Mat Left Right Scaling Acc Bias ScaleLeft ScaleRight"),
    (pl.PipeType, "MTE1 MTE2 MTE3 M V S FIX ALL"),
    (pl.TilePad, "null zero max min"),
    (pl.AccToVecMode, "SingleModeVec0 SingleModeVec1 DualModeSplitM DualModeSplitN"),
    (pl.CrossCoreSyncMode, "INTER_BLOCK INTER_SUBBLOCK INTRA_BLOCK UNICAST_BLOCK"),
])
def test_enum_integers_are_the_real_ones(enum, members):
    names = members.split()
    assert [m.name for m in enum] == names
    assert [int(m) for m in enum] == list(range(len(names)))
    assert [m.value for m in enum] == list(range(len(names)))


@pytest.mark.parametrize("name", ["function", "program", "kernel", "parse", "loads", "parse_program",
                                  "loads_program"])
def test_ir_builders_raise_a_clear_error(name):
    fn = getattr(pl, name)
    arg = "def f(): pass" if name.startswith("parse") else "x.py" if name.startswith("loads") else None
    with pytest.raises(IROnlyError, match="builds the real PyPTO Pro IR .* @pl.jit"):
        fn(arg) if arg is not None else fn()
    assert issubclass(IROnlyError, NotImplementedError)


def test_ir_builder_signatures_are_the_real_ones():
    assert str(inspect.signature(pl.function)).startswith("(fn: 'Callable | None' = None, *, type:")
    assert list(inspect.signature(pl.kernel).parameters) == ["func", "meta_data", "name", "func_type",
                                                             "strict_ssa", "auto_mutex", "pipeline"]
    with pytest.raises(IROnlyError):
        pl.KernelDef()
    assert hasattr(pl.parser, "diagnostics")


def test_vf_defaults_are_the_real_ones():
    assert inspect.signature(pl.Vf.get_mask_spr).parameters["width"].default is pl.MaskWidth.B32
    assert inspect.signature(pl.Vf.store).parameters["repeat_stride"].default is None


def _cast_mode_number(x: T32):
    t = pl.make_tile(VEC, addr=0)
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.cast(t, t, mode=1)
        pl.store(x, t, [0, 0])


def _sync_mode_number(x: T32):
    with pl.section_vector():
        pl.system.set_cross_core(pipe=pl.PipeType.V, event_id=1, sync_mode=2)


@pytest.mark.parametrize("kernel,key", [(_cast_mode_number, "mode"), (_sync_mode_number, "sync_mode")])
def test_enum_keyword_given_a_number_is_a_final_rejection(kernel, key):
    with pytest.raises(FinalRejectionError, match=f"'{key}' must be one of"):
        pl.jit(kernel, auto_mutex=False).compile()


# ---- the real parse-time builders (block_ops.py register_table) accept more than the _api.py stubs


def _cast_ops_positional(a: pl.Tensor[[16, 64], pl.DT_FP32], b: pl.Tensor[[16, 64], pl.DT_FP32],
                         out: pl.Tensor[[16, 64], pl.DT_FP16]):
    f32 = pl.TileType(shape=[16, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    f16 = pl.TileType(shape=[16, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    ta = pl.make_tile(f32, addr=0)
    tb = pl.make_tile(f32, addr=4096)
    to = pl.make_tile(f16, addr=8192)
    with pl.section_vector():
        pl.load(ta, a, [0, 0])
        pl.load(tb, b, [0, 0])
        pl.system.bar_all()
        pl.mul_cast(to, ta, tb, pl.DT_FP16, mode=pl.RoundMode.CAST_RINT)  # target_type positionally, as the real builder
        pl.system.bar_all()
        pl.store(out, to, [0, 0])


def test_cast_op_takes_target_type_positionally():
    import torch
    g = torch.Generator().manual_seed(5)
    a, b = torch.randn(16, 64, generator=g), torch.randn(16, 64, generator=g)
    out = torch.zeros(16, 64, dtype=torch.float16)
    pl.jit(_cast_ops_positional)(a, b, out)
    assert torch.equal(out, (a * b).to(torch.float16))


def _transpose_axes(x: pl.Tensor[[16, 16], pl.DT_FP32], y: pl.Tensor[[16, 16], pl.DT_FP32]):
    tt = pl.TileType(shape=[16, 16], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    s = pl.make_tile(tt, addr=0)
    d = pl.make_tile(tt, addr=1024)
    with pl.section_vector():
        pl.load(s, x, [0, 0])
        pl.system.bar_all()
        pl.transpose(d, s, 1, 0)  # the real builder's axis1 / axis2: the 2-D swap either way
        pl.system.bar_all()
        pl.store(y, d, [0, 0])


def _transpose_axis_runtime(x: pl.Tensor[[16, 16], pl.DT_FP32], n: pl.DT_INT32):
    tt = pl.TileType(shape=[16, 16], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    s = pl.make_tile(tt, addr=0)
    d = pl.make_tile(tt, addr=1024)
    with pl.section_vector():
        pl.transpose(d, s, axis1=n)


def test_transpose_takes_the_real_axis_arguments():
    import torch
    x = torch.arange(256, dtype=torch.float32).reshape(16, 16)
    y = torch.zeros_like(x)
    pl.jit(_transpose_axes)(x, y)
    assert torch.equal(y, x.T)
    with pytest.raises(CompileError, match="'axis1' must be a compile-time int"):
        pl.jit(_transpose_axis_runtime).compile()


# ---- @pl.jit on a function that is no kernel (the real _is_tile_kernel)


def test_jit_without_tensor_ptr_or_dtype_annotations_stays_python():
    from pypto_pro.runtime.kernel import JitKernel

    @pl.jit(arch="a5")
    def sketch(x, out):
        return (x, out)

    @pl.jit
    def only_ints(n: int, m: int = 2):
        return n * m
    assert not isinstance(sketch, JitKernel) and sketch(1, 2) == (1, 2)
    assert not isinstance(only_ints, JitKernel) and only_ints(3) == 6


def test_jit_with_a_tensor_and_an_unannotated_parameter_is_a_located_type_error():
    from pypto_pro.errors import ParserTypeError

    @pl.jit
    def k(x: T32, n):
        with pl.section_vector():
            pass
    with pytest.raises(ParserTypeError, match="parameter 'n' needs an annotation"):
        k.compile()


def _range_keyword(x: T32):
    with pl.section_vector():
        for i in pl.range(0, 4, step=2):
            pass


def test_range_takes_positional_arguments_only():
    with pytest.raises(CompileError, match=r"pl.range\(\): 'step' parameter is positional only"):
        pl.jit(_range_keyword).compile()
