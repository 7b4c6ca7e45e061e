"""Per-lane definedness inside VF bodies (backends/sim/vf/defined.py): a VF call may load padding
(bytes nothing wrote) into its registers; the lanes its masks discard (ZEROING), keep from a defined
destination (MERGING) or leave out of a reduction do not matter, while undefined lanes it stores to UB
make a later pl.store of them an UninitializedReadError at the store's line, naming the VF call."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.errors_sim import UninitializedReadError
from pypto_pro.language import Vf as vf
from vf_kernels import to_mte3, to_v

TT = pl.TileType(shape=[1, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
MERGING = pl.MergeMode.MERGING


def _kernel(body, store_cols: int = 64):
    """16 elements loaded into a 64-wide tile (lanes 16.. are padding), ``body(src, dst)``, then a
    store of ``store_cols`` columns of dst."""
    @pl.jit()
    def k(a: pl.Tensor[[1, 16], pl.DT_FP32], out: pl.Tensor[[1, 64], pl.DT_FP32]):
        ta = pl.make_tile(TT, addr=0, size=256)
        to = pl.make_tile(TT, addr=512, size=256)
        with pl.section_vector():
            pl.set_validshape(ta, [1, 16])
            pl.load(ta, a, [0, 0])
            pl.set_validshape(ta, [1, 64])
            to_v()
            body(ta, to)
            to_mte3()
            pl.set_validshape(to, [1, store_cols])
            pl.store(out, to, [0, 0])  # the store
    return k


def _run(body, store_cols: int = 64):
    a = torch.randn(1, 16, generator=torch.Generator().manual_seed(7))
    out = torch.full((1, 64), 9.0)
    _kernel(body, store_cols)[None, 1](a, out)
    return a.numpy()[0], out.numpy()[0]


@pl.vector_function
def zeroing(src, dst):
    m = vf.update_mask(16, dtype=pl.DT_FP32)
    full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    x = vf.load_align(src, 0)
    x2 = vf.muls(x, 2.0, m)  # lanes 16.. are 0 from here on
    y = vf.exp(x2, m)
    vf.store_align(dst, y, full)


@pl.vector_function
def leaks(src, dst):
    full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    x = vf.load_align(src, 0)
    y = vf.adds(x, 1.0, full)  # every lane: lanes 16.. computed from padding
    vf.store_align(dst, y, full)


@pl.vector_function
def merging_defined(src, dst):
    m = vf.update_mask(16, dtype=pl.DT_FP32)
    full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    x = vf.load_align(src, 0)
    one = vf.full(1.0, full, dtype=pl.DT_FP32)
    y = vf.full(5.0, full, dtype=pl.DT_FP32)
    y = vf.add(x, one, m, mode=MERGING)  # lanes 16.. keep 5.0 (vf.add: adds takes ZEROING only)
    vf.store_align(dst, y, full)


@pl.vector_function
def merging_undefined(src, dst):
    m = vf.update_mask(16, dtype=pl.DT_FP32)
    full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    one = vf.full(1.0, full, dtype=pl.DT_FP32)
    y = vf.load_align(src, 0)
    y = vf.add(y, one, m, mode=MERGING)  # lanes 16.. keep the padding they were loaded with
    vf.store_align(dst, y, full)


@pl.vector_function
def reduce_active(src, dst):
    m = vf.update_mask(16, dtype=pl.DT_FP32)
    full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    x = vf.load_align(src, 0)
    s = vf.reduce_max(x, m)  # over lanes 0..15 only; lane 1 is the index of the max, the other lanes of s are 0
    vf.store_align(dst, s, full)


@pl.vector_function
def reduce_padding(src, dst):
    m = vf.update_mask(17, dtype=pl.DT_FP32)
    full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    x = vf.load_align(src, 0)
    s = vf.reduce_sum(x, m)  # lane 16 is padding: the sum is undefined
    vf.store_align(dst, s, full)


@pl.vector_function
def select_by_padding(src, dst):
    m = vf.update_mask(16, dtype=pl.DT_FP32)
    full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    x = vf.load_align(src, 0)
    big = vf.gt(x, 0.0, full)  # a predicate computed from padding in lanes 16..
    zero = vf.full(0.0, full, dtype=pl.DT_FP32)
    y = vf.select(x, zero, big)
    y = vf.adds(y, 0.0, m)  # ... only lanes 0..15 reach the result
    vf.store_align(dst, y, full)


def test_padding_loaded_but_masked_out_passes():
    a, out = _run(zeroing)
    ref = np.zeros(64, np.float32)
    ref[:16] = np.exp(np.float32(2.0) * a)
    np.testing.assert_allclose(out, ref, rtol=1e-6)


def test_padding_stored_but_left_out_of_the_gm_store_passes():
    a, out = _run(leaks, store_cols=16)
    np.testing.assert_allclose(out[:16], a + 1, rtol=1e-6)
    assert (out[16:] == 9.0).all()


def test_padding_reaching_a_store_is_a_located_error():
    with pytest.raises(UninitializedReadError) as exc:
        _run(leaks)
    text = str(exc.value)
    assert text.startswith("store on ") and "test_vf_definedness.py" in text
    assert "computed from padding" in text and "vf_call" in text
    assert "byte 64" in text  # the first undefined byte: lane 16


def test_merging_keeps_the_old_defined_value():
    a, out = _run(merging_defined)
    np.testing.assert_allclose(out[:16], a + 1, rtol=1e-6)
    assert (out[16:] == 5.0).all()


def test_merging_keeps_undefined_lanes_undefined():
    with pytest.raises(UninitializedReadError, match="byte 64"):
        _run(merging_undefined)


def test_a_reduction_over_active_lanes_only_is_defined():
    a, out = _run(reduce_active)
    assert out[0] == a.max() and out[1:2].view(np.uint32)[0] == a.argmax() and (out[2:] == 0).all()


def test_a_reduction_over_a_padding_lane_is_undefined():
    with pytest.raises(UninitializedReadError, match="byte 0"):
        _run(reduce_padding)


def test_a_predicate_from_padding_matters_only_in_its_lanes():
    a, out = _run(select_by_padding)
    ref = np.zeros(64, np.float32)
    ref[:16] = np.where(a > 0, a, 0)
    np.testing.assert_array_equal(out, ref)


TM = pl.TileType(shape=[1, 256], dtype=pl.DT_UINT8, target_memory=pl.MemorySpace.Vec)


@pl.vector_function
def select_by_loaded_mask(src, flags, dst):
    m = vf.update_mask(16, dtype=pl.DT_FP32)
    full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    sel = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    sel = vf.load_align(flags, 0, dist=pl.LoadDist.DS)  # lane i: byte i's bit 0; bytes 16.. never written
    x = vf.load_align(src, 0)
    zero = vf.full(0.0, full, dtype=pl.DT_FP32)
    y = vf.select(zero, x, sel)
    y = vf.adds(y, 0.0, m)  # only lanes 0..15, whose predicate bits are defined
    vf.store_align(dst, y, full)


def test_a_predicate_loaded_from_a_partly_written_tile_is_defined_bit_by_bit():
    @pl.jit()
    def k(a: pl.Tensor[[1, 16], pl.DT_FP32], f: pl.Tensor[[1, 16], pl.DT_UINT8],
          out: pl.Tensor[[1, 64], pl.DT_FP32]):
        ta = pl.make_tile(TT, addr=0, size=256)
        tf = pl.make_tile(TM, addr=1024, size=256)
        to = pl.make_tile(TT, addr=512, size=256)
        with pl.section_vector():
            pl.set_validshape(ta, [1, 16])
            pl.load(ta, a, [0, 0])
            pl.set_validshape(tf, [1, 16])
            pl.load(tf, f, [0, 0])
            pl.set_validshape(ta, [1, 64])
            pl.set_validshape(tf, [1, 256])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            select_by_loaded_mask(ta, tf, to)
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
            pl.store(out, to, [0, 0])

    a = torch.randn(1, 16, generator=torch.Generator().manual_seed(9))
    f = torch.tensor([[i % 3 == 0 for i in range(16)]], dtype=torch.uint8)
    out = torch.full((1, 64), 9.0)
    k[None, 1](a, f, out)
    ref = np.zeros(64, np.float32)
    ref[:16] = np.where(f.numpy()[0] == 1, 0.0, a.numpy()[0])
    np.testing.assert_array_equal(out.numpy()[0], ref)
