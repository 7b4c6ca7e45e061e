"""vf.eq & co. on two registers: one bit width compares as a's dtype, ``cmp_dtype=`` reinterprets both
(the real backend's ``(RegTensor<T>&)`` casts); other widths without it, or a 4-bit cmp_dtype, are
located errors."""
from __future__ import annotations

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.errors import CompileError
from pypto_pro.language import Vf as vf

from vf_kernels import to_mte3, to_v

ALL = pl.MaskPattern.ALL
N = 128


def _kernel(cmp_dtype):
    th = pl.TileType(shape=[1, N], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    tu = pl.TileType(shape=[1, N], dtype=pl.DT_UINT16, target_memory=pl.MemorySpace.Vec)

    @pl.vector_function
    def body(a, b, c, dst):
        m = vf.create_mask(pattern=ALL, dtype=pl.DT_FP16)
        ra = vf.load_align(a, 0, dtype=pl.DT_FP16)
        rb = vf.load_align(b, 0, dtype=pl.DT_UINT16)
        rc = vf.load_align(c, 0, dtype=pl.DT_FP16)
        if cmp_dtype is None:
            eq = vf.eq(ra, rb, m)
        else:
            eq = vf.eq(ra, rb, m, cmp_dtype=cmp_dtype)
        r = vf.select(ra, rc, eq)
        vf.store_align(dst, r, m)

    @pl.jit()
    def kernel(a: pl.Tensor[[1, N], pl.DT_FP16], b: pl.Tensor[[1, N], pl.DT_UINT16],
               c: pl.Tensor[[1, N], pl.DT_FP16], out: pl.Tensor[[1, N], pl.DT_FP16]):
        sa = pl.make_tile(th, addr=0)
        sb = pl.make_tile(tu, addr=0x400)
        sc = pl.make_tile(th, addr=0x800)
        so = pl.make_tile(th, addr=0xC00)
        with pl.section_vector():
            pl.load(sa, a, [0, 0])
            pl.load(sb, b, [0, 0])
            pl.load(sc, c, [0, 0])
            to_v()
            body(sa, sb, sc, so)
            to_mte3()
            pl.store(out, so, [0, 0])
    return kernel


def _inputs():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((1, N)).astype(np.float16)
    a[0, :8] = np.float16("nan")
    a[0, 8:12] = np.float16(0.0)
    b = a.view(np.uint16).copy()
    b[0, 64:] ^= 1  # the second half differs in the lowest bit
    b[0, 8:12] = np.float16(-0.0).view(np.uint16)  # -0.0 bits against +0.0
    c = np.full((1, N), 7, np.float16)
    return a, b, c


@pytest.mark.parametrize("cmp_dtype", [None, pl.DT_UINT16])
def test_equal_width_registers_compare_as_the_chosen_dtype(cmp_dtype):
    a, b, c = _inputs()
    out = np.zeros_like(a)
    _kernel(cmp_dtype)[None, 1](a, b, c, out)
    if cmp_dtype is None:  # b's bits read as FP16: NaN != NaN, -0.0 == +0.0
        same = a == b.view(np.float16)
    else:                  # both read as UINT16: the NaN bits equal, -0.0 and +0.0 differ
        same = a.view(np.uint16) == b
    np.testing.assert_array_equal(out.view(np.uint16), np.where(same, a, c).view(np.uint16))
    assert same[0, :8].all() == (cmp_dtype is not None) and same[0, 8:12].all() == (cmp_dtype is None)


def test_a_four_bit_cmp_dtype_is_a_located_error():
    with pytest.raises(CompileError, match="cmp_dtype must be an 8/16/32/64-bit type"):
        a, b, c = _inputs()
        _kernel(pl.DT_FP4E2M1)[None, 1](a, b, c, np.zeros_like(a))


def test_registers_of_other_widths_need_cmp_dtype():
    tf = pl.TileType(shape=[1, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    th = pl.TileType(shape=[1, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)

    @pl.vector_function
    def body(a, b):
        m = vf.create_mask(pattern=ALL, dtype=pl.DT_FP32)
        ra = vf.load_align(a, 0, dtype=pl.DT_FP32)
        rb = vf.load_align(b, 0, dtype=pl.DT_FP16)
        bad = vf.eq(ra, rb, m)  # noqa: F841

    @pl.jit()
    def kernel(x: pl.Tensor[[1, 64], pl.DT_FP32]):
        sa = pl.make_tile(tf, addr=0)
        sb = pl.make_tile(th, addr=0x400)
        with pl.section_vector():
            body(sa, sb)
    with pytest.raises(CompileError, match="different bit widths compare only with cmp_dtype"):
        kernel.compile()
