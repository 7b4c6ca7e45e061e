"""pl.fillpad (every mode and TilePad value), pl.transpose, pl.fill_index, pl.quant / pl.dequant on the
simulator against references written here (PTO-ISA a5 semantics, docs/numerics.md)."""
import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.errors import CompileError

VEC = pl.MemorySpace.Vec


def tt(shape, dtype, **kw):
    return pl.TileType(shape=shape, dtype=dtype, target_memory=VEC, **kw)


def make_fillpad(mode, pad, dtype, dst_cols=32, same=False):
    item = dtype.itemsize

    @pl.jit
    def kernel(x: pl.Tensor[[8, 32], dtype], z: pl.Tensor[[8, dst_cols], dtype]):
        src = pl.make_tile(tt([8, 32], dtype, valid_shape=[-1, -1], pad=pad), addr=0x0000, size=256 * item)
        dst = pl.make_tile(tt([8, dst_cols], dtype, pad=pad), addr=0x0000 if same else 0x0400, size=8 * dst_cols * item)
        with pl.section_vector():
            pl.load(src, x, [0, 0])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.set_validshape(src, [5, 27])
            pl.fillpad(dst, src, mode=mode)
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.store(z, dst, [0, 0])
    return kernel


@pytest.mark.parametrize("mode,cols,same", [(pl.FillPadMode.NORMAL, 32, False), (pl.FillPadMode.EXPAND, 64, False),
                                            (pl.FillPadMode.INPLACE, 32, True)])
@pytest.mark.parametrize("pad,dtype,value", [
    (pl.TilePad.zero, pl.DT_INT32, 0), (pl.TilePad.max, pl.DT_INT32, 2**31 - 1), (pl.TilePad.min, pl.DT_INT32, -2**31),
    (pl.TilePad.min, pl.DT_FP32, -np.inf), (pl.TilePad.max, pl.DT_FP16, np.inf), (pl.TilePad.min, pl.DT_UINT8, 0)])
def test_fillpad_keeps_the_valid_region_and_pads_the_rest(mode, cols, same, pad, dtype, value):
    if same and pad is not pl.TilePad.zero:
        pytest.skip("one in-place case per mode is enough")
    np_dt = {pl.DT_INT32: np.int32, pl.DT_FP32: np.float32, pl.DT_FP16: np.float16, pl.DT_UINT8: np.uint8}[dtype]
    x = (np.arange(256).reshape(8, 32) % 100).astype(np_dt)
    z = torch.from_numpy(np.full((8, cols), 3, np_dt))
    make_fillpad(mode, pad, dtype, cols, same)(torch.from_numpy(x), z)
    want = np.full((8, cols), value, np.float64 if np_dt in (np.float32, np.float16) else np.int64).astype(np_dt)
    want[:5, :27] = x[:5, :27]
    np.testing.assert_array_equal(z.numpy(), want)


def test_fillpad_needs_a_pad_value_and_inplace_the_same_address():
    def no_pad(x: pl.Tensor[[8, 8], pl.DT_INT32]):
        s = pl.make_tile(tt([8, 8], pl.DT_INT32), addr=0x0000, size=256)
        d = pl.make_tile(tt([8, 8], pl.DT_INT32), addr=0x0100, size=256)
        with pl.section_vector():
            pl.fillpad(d, s)
    with pytest.raises(CompileError, match="no pad value"):
        pl.jit(no_pad).compile()

    def inplace_apart(x: pl.Tensor[[8, 8], pl.DT_INT32]):
        s = pl.make_tile(tt([8, 8], pl.DT_INT32), addr=0x0000, size=256)
        d = pl.make_tile(tt([8, 8], pl.DT_INT32, pad=pl.TilePad.zero), addr=0x0100, size=256)
        with pl.section_vector():
            pl.fillpad(d, s, mode=pl.FillPadMode.INPLACE)
    with pytest.raises(CompileError, match="same address"):
        pl.jit(inplace_apart).compile()


@pl.jit
def transpose_k(x: pl.Tensor[[16, 32], pl.DT_FP16], y: pl.Tensor[[32, 16], pl.DT_FP16]):
    s = pl.make_tile(tt([16, 32], pl.DT_FP16, valid_shape=[-1, -1]), addr=0x0000, size=1024)
    d = pl.make_tile(tt([32, 16], pl.DT_FP16), addr=0x0400, size=1024)
    with pl.section_vector():
        pl.load(s, x, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.expands(d, -1.0)
        pl.set_validshape(s, [13, 27])
        pl.transpose(d, s)
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.store(y, d, [0, 0])


def test_transpose_of_a_partial_region():
    x = torch.randn(16, 32).to(torch.float16)
    y = torch.zeros(32, 16, dtype=torch.float16)
    transpose_k(x, y)
    want = np.full((32, 16), -1.0, np.float16)
    want[:27, :13] = x.numpy()[:13, :27].T
    np.testing.assert_array_equal(y.numpy(), want)


def make_fill_index(dtype, start):
    @pl.jit
    def kernel(out: pl.Tensor[[1, 32], dtype]):
        t = pl.make_tile(tt([1, 32], dtype), addr=0x0000, size=32 * dtype.itemsize)
        with pl.section_vector():
            pl.fill_index(t, start)
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.store(out, t, [0, 0])
    return kernel


@pytest.mark.parametrize("dtype,np_dt,start", [(pl.DT_INT32, np.int32, -5), (pl.DT_INT16, np.int16, 32760)])
def test_fill_index_counts_up_and_wraps_at_the_dtype(dtype, np_dt, start):
    out = torch.zeros(1, 32, dtype=getattr(torch, np.dtype(np_dt).name))
    make_fill_index(dtype, start)(out)
    np.testing.assert_array_equal(out.numpy()[0], (start + np.arange(32)).astype(np.int64).astype(np_dt))


def make_quant(sym):
    @pl.jit
    def kernel(x: pl.Tensor[[8, 64], pl.DT_FP32], sc: pl.Tensor[[8, 1], pl.DT_FP32], of: pl.Tensor[[8, 1], pl.DT_FP32],
               q: pl.Tensor[[8, 64], pl.DT_INT8 if sym else pl.DT_UINT8], back: pl.Tensor[[8, 64], pl.DT_FP32]):
        s = pl.make_tile(tt([8, 64], pl.DT_FP32), addr=0x0000, size=2048)
        k = pl.make_tile(tt([8, 1], pl.DT_FP32, layout=pl.DN), addr=0x0800, size=32)
        o = pl.make_tile(tt([8, 1], pl.DT_FP32, layout=pl.DN), addr=0x0900, size=32)
        d = pl.make_tile(tt([8, 64], pl.DT_INT8 if sym else pl.DT_UINT8), addr=0x1000, size=512)
        d16 = pl.make_tile(tt([8, 64], pl.DT_INT16), addr=0x1400, size=1024)
        r = pl.make_tile(tt([8, 64], pl.DT_FP32), addr=0x2000, size=2048)
        with pl.section_vector():
            pl.load(s, x, [0, 0])
            pl.load(k, sc, [0, 0])
            pl.load(o, of, [0, 0])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            if sym:
                pl.quant(d, s, k)
                pl.dequant(r, d, k, o)
            else:
                pl.quant(d, s, k, mode=pl.QuantMode.ASYM, offset=o)
                pl.cast(d16, s, mode=pl.RoundMode.CAST_TRUNC)
                pl.dequant(r, d16, k, o)
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.store(q, d, [0, 0])
            pl.store(back, r, [0, 0])
    return kernel


@pytest.mark.parametrize("sym", [True, False])
def test_quant_rounds_half_to_even_and_saturates_dequant_subtracts_then_scales(sym):
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((8, 64)) * 60).astype(np.float32)
    x[0, :4] = [0.5, 1.5, -2.5, np.nan]
    sc = rng.uniform(0.5, 3.0, (8, 1)).astype(np.float32)
    of = rng.uniform(0, 100, (8, 1)).astype(np.float32)
    q = torch.zeros(8, 64, dtype=torch.int8 if sym else torch.uint8)
    back = torch.zeros(8, 64)
    make_quant(sym)(torch.from_numpy(x), torch.from_numpy(sc), torch.from_numpy(of), q, back)
    prod = (x * sc).astype(np.float32)
    if sym:
        want = np.clip(np.rint(np.nan_to_num(prod.astype(np.float64))), -128, 127).astype(np.int8)
        deq_src = want.astype(np.float32)
    else:
        s = (prod + of).astype(np.float32)
        want = np.clip(np.rint(np.nan_to_num(s.astype(np.float64))), 0, 255).astype(np.uint8)
        deq_src = np.nan_to_num(np.trunc(x.astype(np.float64))).clip(-32768, 32767).astype(np.int16).astype(np.float32)
    np.testing.assert_array_equal(q.numpy(), want)
    np.testing.assert_array_equal(back.numpy(), ((deq_src - of).astype(np.float32) * sc).astype(np.float32))
