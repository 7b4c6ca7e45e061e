"""pl.add / sub / mul / maximum / minimum on every integer dtype the a5 instructions take (8- to
64-bit; mul from 16 bits), tile and scalar right operands, with C++ wrap-around; an unsupported
dtype is a located CompileError."""
from __future__ import annotations

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.errors import CompileError


R, C = 4, 64
OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum, "minimum": np.minimum}
DTS = {"DT_INT8": np.int8, "DT_UINT8": np.uint8, "DT_UINT16": np.uint16, "DT_UINT32": np.uint32,
       "DT_INT64": np.int64, "DT_UINT64": np.uint64}


def _kernel(op: str, dt, scalar):
    fn = getattr(pl, op)
    tt = pl.TileType(shape=[R, C], dtype=dt, target_memory=pl.MemorySpace.Vec)

    @pl.jit()
    def kernel(a: pl.Tensor[[R, C], dt], b: pl.Tensor[[R, C], dt], out: pl.Tensor[[R, C], dt]):
        ta = pl.make_tile(tt, addr=0x0)
        tb = pl.make_tile(tt, addr=0x4000)
        to = pl.make_tile(tt, addr=0x8000)
        with pl.section_vector():
            pl.load(ta, a, [0, 0])
            pl.load(tb, b, [0, 0])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            if scalar is None:
                fn(to, ta, tb)
            else:
                fn(to, ta, scalar)
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
            pl.store(out, to, [0, 0])
    return kernel


def _data(t, seed):
    info = np.iinfo(t)
    g = np.random.default_rng(seed)
    x = g.integers(int(info.min), int(info.max), size=(R, C), dtype=t, endpoint=True)
    x[0, :4] = [info.max, info.min, info.max, 0]  # overflow corners
    return x


CASES = [(op, name) for op in OPS for name in DTS if not (op == "mul" and np.dtype(DTS[name]).itemsize == 1)]


@pytest.mark.parametrize("op,name", CASES)
def test_tile_operand_wraps_like_cpp(op, name):
    t = DTS[name]
    a, b = _data(t, 1), _data(t, 2)
    out = np.zeros((R, C), t)
    _kernel(op, getattr(pl, name), None)[None, 1](a, b, out)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out, OPS[op](a, b))


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("name", ["DT_UINT16", "DT_INT64"])
def test_scalar_operand(op, name):
    t = DTS[name]
    a = _data(t, 3)
    out = np.zeros((R, C), t)
    _kernel(op, getattr(pl, name), 3)[None, 1](a, a, out)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out, OPS[op](a, t(3)))


@pytest.mark.parametrize("name", ["DT_INT8", "DT_UINT8"])
def test_mul_of_8_bit_ints_is_a_located_error(name):
    k = _kernel("mul", getattr(pl, name), None)
    with pytest.raises(CompileError, match=rf"pl.mul does not support {name}"):
        k.compile()


def test_a2a3_keeps_its_narrower_table():
    tt = pl.TileType(shape=[R, C], dtype=pl.DT_INT64, target_memory=pl.MemorySpace.Vec)

    @pl.jit(arch="a2a3")
    def kernel(a: pl.Tensor[[R, C], pl.DT_INT64], out: pl.Tensor[[R, C], pl.DT_INT64]):
        ta = pl.make_tile(tt, addr=0x0)
        with pl.section_vector():
            pl.load(ta, a, [0, 0])
            pl.add(ta, ta, ta)
            pl.store(out, ta, [0, 0])

    with pytest.raises(CompileError, match=r"pl.add does not support DT_INT64"):
        kernel.compile()
