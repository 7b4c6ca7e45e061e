"""Launch checks of scalar arguments (the real runtime's _validate_scalar_arg, plus a range check of
ours), defaults of scalar parameters, and values converted to the parameter's dtype."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import LaunchError

I1 = pl.TileType(shape=[1, 8], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec)
F1 = pl.TileType(shape=[1, 8], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
OUT = pl.Tensor[[4, 8], pl.DT_INT32]
FOUT = pl.Tensor[[2, 8], pl.DT_FP32]


def put(g, out, row, value):
    t = g[0]
    pl.expands(t, value)
    pl.store(out, t, [row, 0])


@pl.jit
def typed(out: OUT, fout: FOUT, n: pl.DT_INT32, u: pl.DT_UINT8, flag: pl.DT_BOOL, x: pl.DT_FP32,
          step: pl.DT_INT64 = 3, scale: pl.DT_FP32 = 0.5):
    g = pl.make_tile_group(type=I1, addrs=[0x0], mutex_ids=[0])
    h = pl.make_tile_group(type=F1, addrs=[0x100], mutex_ids=[1])
    with pl.section_vector():
        put(g, out, 0, n + step)
        put(g, out, 1, u)
        put(g, out, 2, flag)
        put(h, fout, 0, x * scale)


def fresh():
    return np.full((4, 8), -1, np.int32), np.full((2, 8), -1.0, np.float32)


def test_typed_scalars_and_defaults():
    out, fout = fresh()
    typed(out, fout, 5, 200, True, 0.1)
    assert out[:3, 0].tolist() == [8, 200, 1]
    assert fout[0, 0] == np.float32(np.float32(0.1) * np.float32(0.5))  # FP32 parameter: rounded at launch
    typed(out, fout, 5, 7, False, 2.0, step=10, scale=2.0)
    assert out[:3, 0].tolist() == [15, 7, 0]
    assert fout[0, 0] == 4.0
    typed(out, fout, n=True, u=1, flag=1 == 1, x=1.0)  # a bool is valid for an integer dtype
    assert out[0, 0] == 4


@pytest.mark.parametrize("args, match", [
    ((1.5, 1, True, 1.0), r"argument 'n' \(DT_INT32\): a float \(1.5\) was passed for a non-float dtype"),
    ((1, 1, True, 1), r"argument 'x' \(DT_FP32\): an int \(1\) was passed for a non-integer dtype; pass 1.0"),
    ((1, 1, 1, 1.0), r"argument 'flag' \(DT_BOOL\): an int \(1\) was passed for a non-integer dtype"),
    ((2**32, 1, True, 1.0), r"argument 'n' \(DT_INT32\): 4294967296 does not fit in 32 bits"),
    ((1, 256, True, 1.0), r"argument 'u' \(DT_UINT8\): 256 does not fit in 8 bits \(range \[0, 255\]"),
    ((1, -129, True, 1.0), r"argument 'u' \(DT_UINT8\): -129 does not fit in 8 bits"),
    ((1, 1, True, "x"), r"argument 'x' \(DT_FP32\) must be a Python scalar"),
    ((1, 1, True, True), r"argument 'x' \(DT_FP32\): a bool was passed for a non-boolean, non-integer dtype"),
])
def test_bad_scalar_arguments_are_launch_errors_before_anything_runs(args, match):
    out, fout = fresh()
    with pytest.raises(LaunchError, match=match):
        typed(out, fout, *args)
    assert np.all(out == -1) and np.all(fout == -1.0)  # outputs untouched


def test_unsigned_bits_for_a_signed_dtype_are_reinterpreted_as_ctypes_packs_them():
    out, fout = fresh()
    typed(out, fout, 3212836864, 255, True, 1.0, step=0)  # fp32 bits of -1.0 as uint32 -> int32
    assert out[0, 0] == 3212836864 - 2**32
    typed(out, fout, 2**31, -1, True, 1.0, step=0)  # and -1 for a uint8 is 255
    assert out[0, 0] == -2**31 and out[1, 0] == 255


def test_missing_scalar_without_default():
    out, fout = fresh()
    with pytest.raises(LaunchError, match="missing a required argument"):
        typed(out, fout, 1, 2, True)
    assert np.all(out == -1)


@pl.jit
def half_param(out: OUT, h: pl.DT_FP16):
    with pl.section_vector():
        pass


def test_fp16_scalar_parameters_cannot_be_passed():
    out, _ = fresh()
    with pytest.raises(LaunchError, match="FP16 / BF16 scalar parameters cannot be passed"):
        half_param(out, 1.0)


@pl.jit
def legacy(fout: FOUT, n: int, f: float):
    h = pl.make_tile_group(type=F1, addrs=[0x0], mutex_ids=[0])
    with pl.section_vector():
        put(h, fout, 0, n * f)


def test_python_int_and_float_annotations_are_ours_int64_and_fp32():
    _, out = fresh()
    legacy(out, 3, 2)  # ours: a `float` parameter takes an int, as Python would
    assert out[0, 0] == 6.0
    with pytest.raises(LaunchError, match=r"argument 'n' \(DT_INT64\): a float"):
        legacy(out, 3.0, 2.0)
