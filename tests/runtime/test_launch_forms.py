"""Every real launch form and pl.jit keyword, the datatype= mechanism, STATIC / ... re-specialisation,
parameter defaults, and the kernel object's real attributes."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import CompileError, LaunchError
from pypto_pro.runtime.tilingkey import TilingKeyField

TILE = 64


def copy_fn(x: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32], z: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32]):
    g = pl.make_tile_group(type=pl.TileType([16, 64], pl.DT_FP32, pl.MemorySpace.Vec), addrs=0, mutex_ids=[0, 1])
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), x.shape[0] // 16, pl.get_block_num()):
            t = g.next()
            pl.load_tile(t, x, [i, 0])
            pl.store_tile(z, t, [i, 0])


def _data(rows=64):
    x = np.random.default_rng(rows).random((rows, 64)).astype(np.float32)
    return x, np.zeros_like(x)


@pytest.mark.parametrize("form", ["call", "block_dim", "stream_block_dim"])
def test_plain_forms(form):
    k = pl.jit(copy_fn)
    x, z = _data()
    if form == "call":
        k(x, z)
    elif form == "block_dim":
        report = k[3](x, z)
        assert report.block_num == 3
    else:
        k[None, 2](x, z)
    assert np.array_equal(x, z)


class Key:
    SCALE = TilingKeyField(bits=1, values=[1, 2])


def scaled(x: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32], z: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32]):
    g = pl.make_tile_group(type=pl.TileType([16, 64], pl.DT_FP32, pl.MemorySpace.Vec), addrs=0, mutex_ids=[0, 1])
    with pl.section_vector():
        for i in pl.range(0, x.shape[0] // 16):
            t = g.next()
            pl.load_tile(t, x, [i, 0])
            pl.muls(t, t, SCALE * 1.0)  # noqa: F821
            pl.store_tile(z, t, [i, 0])


@pl.inline
def _copy_views(x, z, n, dtype, doubled):
    xt = pl.make_tensor(x, [n, 64], dtype=dtype)
    zt = pl.make_tensor(z, [n, 64], dtype=dtype)
    g = pl.make_tile_group(type=pl.TileType([16, 64], dtype, pl.MemorySpace.Vec), addrs=0, mutex_ids=[0, 1])
    with pl.section_vector():
        for i in pl.range(0, n // 16):
            t = g.next()
            pl.load_tile(t, xt, [i, 0])
            if doubled:
                pl.muls(t, t, 2.0)
            pl.store_tile(zt, t, [i, 0])


def typed_copy(x: pl.Ptr[pl.DT_UINT8], z: pl.Ptr[pl.DT_UINT8], n: int):
    _copy_views(x, z, n, dt, SCALE == 2)  # noqa: F821  (dt: the datatype= variable; SCALE: the key)


def _dt_only(x: pl.Ptr[pl.DT_UINT8], z: pl.Ptr[pl.DT_UINT8], n: int):
    _copy_views(x, z, n, dt, False)  # noqa: F821


def test_tilingkey_form_and_datatype_forms():
    k = pl.jit(scaled, tiling_key=Key)
    x, z = _data()
    k[None, 1, {"SCALE": 2}](x, z)
    assert np.array_equal(z, 2 * x)

    both = pl.jit(typed_copy, tiling_key=Key, datatype={"x": "dt", "z": "dt"})
    assert both.datatype_schema == {"x": "dt", "z": "dt"} and both.tilingkey_schema.field_names() == ["SCALE"]
    for np_dtype, dt in ((np.float32, pl.DT_FP32), (np.float16, pl.DT_FP16)):
        xs = np.random.default_rng(1).random((32, 64)).astype(np_dtype)
        zs = np.zeros_like(xs)
        both[None, 1, {"SCALE": 2}, {"x": dt, "z": dt}](xs, zs, 32)
        assert np.array_equal(zs, xs * 2)
    assert len(both._compiled_by_signature) == 2  # one variant per dtype

    only_dt = pl.jit(_dt_only, datatype={"x": "dt"})
    xs = np.ones((16, 64), np.float16)
    zs = np.zeros_like(xs)
    only_dt[None, 1, {"x": pl.DT_FP16}](xs, zs, 16)  # a third item is the datatype dict
    assert np.array_equal(zs, xs)


@pytest.mark.parametrize("datatype,needle", [
    ({}, "datatype must be a non-empty dict"),
    ({"x": "not an identifier"}, "must be a valid Python identifier"),
    ({"w": "T"}, r"datatype params \['w'\] do not match kernel function"),
    ({"x": "n"}, r"datatype variable names conflict with kernel params: \['n'\]"),
    ({"x": "SCALE"}, r"conflict with tiling_key fields: \['SCALE'\]"),
])
def test_datatype_schema_errors_at_decoration(datatype, needle):
    with pytest.raises(ValueError, match=needle) as err:
        pl.jit(_dt_only, datatype=datatype, tiling_key=Key)
    assert isinstance(err.value, CompileError)


@pytest.mark.parametrize("given,needle,builtin", [
    ({"z": pl.DT_FP16}, r"datatype keys \['z'\] do not match schema params \['x'\]", ValueError),
    ({"x": "fp16"}, "datatype\\['x'\\] must be a pypto_pro.DataType, got str", TypeError),
    ([pl.DT_FP16], "requires a dtype dict", ValueError),
])
def test_datatype_launch_errors(given, needle, builtin):
    k = pl.jit(_dt_only, datatype={"x": "dt"})
    xs = np.ones((16, 64), np.float16)
    with pytest.raises(LaunchError, match=needle) as err:
        k[None, 1, given](xs, np.zeros_like(xs), 16)
    assert isinstance(err.value, builtin)


def test_datatype_variables_must_agree():
    k = pl.jit(_dt_only, datatype={"x": "dt", "z": "dt"})
    xs = np.ones((16, 64), np.float16)
    with pytest.raises(ValueError, match="mapped to variable 'dt' disagree"):
        k[None, 1, {"x": pl.DT_FP16, "z": pl.DT_FP32}](xs, np.zeros_like(xs), 16)


def test_specialised_kernels_refuse_plain_forms():
    k = pl.jit(_dt_only, datatype={"x": "dt"})
    xs = np.ones((16, 64), np.float16)
    with pytest.raises(ValueError, match=r"Expected kernel\[stream, block_dim, datatype\]"):
        k[None, 1](xs, xs, 16)
    with pytest.raises(ValueError, match="cannot be called directly"):
        k(xs, xs, 16)


def static_copy(x: pl.Tensor[[pl.DYNAMIC, pl.STATIC], pl.DT_FP32], z: pl.Tensor[[pl.DYNAMIC, pl.STATIC], pl.DT_FP32]):
    cols = x.shape[1]  # a compile-time int in each variant
    g = pl.make_tile_group(type=pl.TileType([16, cols], pl.DT_FP32, pl.MemorySpace.Vec), addrs=0, mutex_ids=[0, 1])
    with pl.section_vector():
        for i in pl.range(0, x.shape[0] // 16):
            t = g.next()
            pl.load_tile(t, x, [i, 0])
            pl.store_tile(z, t, [i, 0])


def test_static_dims_compile_once_per_value_dynamic_never():
    k = pl.jit(static_copy)
    for rows, cols in ((32, 64), (64, 64), (32, 128), (48, 128)):
        x = np.random.default_rng(rows).random((rows, cols)).astype(np.float32)
        z = np.zeros_like(x)
        k[None, 1](x, z)
        assert np.array_equal(x, z)
    assert len(k._compiled_by_signature) == 2  # cols 64 and 128; rows are DYNAMIC
    k._compiled_by_signature.clear()
    k._kernel_def_by_static_signature.clear()
    k.compile(static_shapes={"x": [16, 64], "z": [16, 64]})
    assert len(k._compiled_by_signature) == 1


def tail_copy(x: pl.Tensor[[pl.DYNAMIC, ...], pl.DT_FP32], z: pl.Tensor[[pl.DYNAMIC, ...], pl.DT_FP32]):
    g = pl.make_tile_group(type=pl.TileType([16, x.shape[2]], pl.DT_FP32, pl.MemorySpace.Vec), addrs=0,
                           mutex_ids=[0, 1])
    with pl.section_vector():
        for b in pl.range(0, x.shape[0]):
            for i in pl.range(0, x.shape[1] // 16):
                t = g.next()
                pl.load_tile(t, x, [b, i, 0])
                pl.store_tile(z, t, [b, i, 0])


def test_ellipsis_tail_is_static_and_sets_the_rank():
    k = pl.jit(tail_copy)
    x = np.random.default_rng(0).random((2, 32, 64)).astype(np.float32)
    z = np.zeros_like(x)
    k[None, 1](x, z)
    assert np.array_equal(x, z)
    with pytest.raises(LaunchError, match="rank mismatch: expected at least 1"):
        k[None, 1](np.zeros((), np.float32), z)


def with_default(x: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32], z: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32],
                 scale: float = 3.0):
    g = pl.make_tile_group(type=pl.TileType([16, 64], pl.DT_FP32, pl.MemorySpace.Vec), addrs=0, mutex_ids=[0, 1])
    with pl.section_vector():
        for i in pl.range(0, x.shape[0] // 16):
            t = g.next()
            pl.load_tile(t, x, [i, 0])
            pl.muls(t, t, scale)
            pl.store_tile(z, t, [i, 0])


def test_parameter_defaults_apply_at_launch():
    k = pl.jit(with_default)
    x, z = _data(16)
    k(x, z)
    assert np.array_equal(z, x * 3)
    k(x, z, scale=0.5)
    assert np.array_equal(z, x * 0.5)


def test_jit_keywords():
    k = pl.jit(copy_fn, name="my_copy", compile_timeout=30, auto_mutex=True)
    assert k.name == "my_copy" and k.compile_timeout == 30
    x, z = _data(16)
    k(x, z)
    assert "my_copy" in (k.emit() / "kernel.cpp").read_text()
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        pl.jit(copy_fn, bogus=1)
    with pytest.raises(ValueError, match="compile_timeout"):
        pl.jit(copy_fn, compile_timeout=-1)
    decorator = pl.jit()  # pl.jit() then applied, as @pl.jit()
    assert decorator(copy_fn).name == "copy_fn"


def test_tensor_aliases_by_assignment():
    def alias_fn(x: pl.Tensor[[16, 64], pl.DT_FP32], y: pl.Tensor[[16, 64], pl.DT_FP32],
                 z: pl.Tensor[[16, 64], pl.DT_FP32]):
        g = pl.make_tile_group(type=pl.TileType([16, 64], pl.DT_FP32, pl.MemorySpace.Vec), addrs=0, mutex_ids=[0])
        first = x
        chained = first
        x = y  # rebinding the parameter does not move the aliases  # noqa: F841
        with pl.section_vector():
            t = g.current()
            pl.load(t, chained, [0, 0])
            pl.store(z, t, [0, 0])

    x = np.full((16, 64), 1.0, np.float32)
    y = np.full((16, 64), 2.0, np.float32)
    z = np.zeros_like(x)
    pl.jit(alias_fn)(x, y, z)
    assert (z == 1.0).all()


def _copy_in_helper(x, z, n):
    """Names the launch's datatype= variable and TilingKey field itself (the real parser passes them to
    every function it compiles for the kernel, not only the kernel body)."""
    _copy_views(x, z, n, dt, SCALE == 2)  # noqa: F821


def helper_names(x: pl.Ptr[pl.DT_UINT8], z: pl.Ptr[pl.DT_UINT8], n: int):
    _copy_in_helper(x, z, n)


def test_helpers_see_the_datatype_and_key_names():
    k = pl.jit(helper_names, tiling_key=Key, datatype={"x": "dt", "z": "dt"})
    xs = np.random.default_rng(2).random((32, 64)).astype(np.float16)
    zs = np.zeros_like(xs)
    k[None, 1, {"SCALE": 2}, {"x": pl.DT_FP16, "z": pl.DT_FP16}](xs, zs, 32)
    assert np.array_equal(zs, xs * 2)
    zs[:] = 0
    k[None, 1, {"SCALE": 1}, {"x": pl.DT_FP16, "z": pl.DT_FP16}](xs, zs, 32)
    assert np.array_equal(zs, xs)
