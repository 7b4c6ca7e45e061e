"""Fractal storage offsets of each tile layout (PTO-ISA's GetTileElementOffset)."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.arch.layouts import element_offsets
from pypto_pro.backends.sim import fractal

Mat, Vec = pl.MemorySpace.Mat, pl.MemorySpace.Vec


def _tt(shape, dtype=pl.DT_FP16, space=Mat, layout=pl.NZ, **kw):
    return pl.TileType(shape=shape, dtype=dtype, target_memory=space, layout=layout, **kw)


def test_nd_and_dn_are_row_and_column_major():
    nd = element_offsets(_tt([4, 16], space=Vec, layout=pl.ND), pl.ND)
    assert nd[1, 2] == 1 * 16 + 2
    dn = element_offsets(_tt([16, 4], space=Vec, layout=pl.DN), pl.DN)
    assert dn[2, 1] == 1 * 16 + 2


def test_nz_is_column_blocks_of_row_major_boxes():
    # fp16: 16 x 16 boxes; an NZ [32, 32] tile stores block column 0 (rows 0..31) first
    off = element_offsets(_tt([32, 32]), pl.NZ)
    assert off[0, 15] == 15
    assert off[1, 0] == 16             # next row of the same box
    assert off[16, 0] == 256           # the box below, still block column 0
    assert off[0, 16] == 32 * 16       # block column 1 starts after all 32 rows of column 0
    assert sorted(off.ravel().tolist()) == list(range(32 * 32))


@pytest.mark.parametrize("dtype", [pl.DT_FP16, pl.DT_FP32, pl.DT_INT8])
def test_nz_of_a_shape_is_zn_of_its_transpose(dtype):
    """An [N, K] NZ tile and a [K, N] ZN tile are the same bytes (the transposing L1 loads rely on it)."""
    nz = element_offsets(_tt([64, 32], dtype=dtype), pl.NZ)
    zn = element_offsets(_tt([32, 64], dtype=dtype, layout=pl.ZN), pl.ZN)
    np.testing.assert_array_equal(nz, zn.T)


def test_fp32_nz_boxes_are_16_by_8():
    off = element_offsets(_tt([16, 16], dtype=pl.DT_FP32), pl.NZ)
    assert off[0, 7] == 7 and off[1, 0] == 8 and off[0, 8] == 16 * 8


def test_acc_fractal_is_16_by_16_for_fp32():
    off = element_offsets(_tt([16, 32], dtype=pl.DT_FP32, space=pl.MemorySpace.Acc, fractal=1024), pl.NZ)
    assert off[0, 15] == 15 and off[1, 0] == 16 and off[0, 16] == 256


def test_a_boxed_view_reads_and_writes_its_fractal_bytes():
    tt = _tt([32, 32])
    raw = np.zeros(tt.nbytes, np.uint8)
    view = fractal.tile_view(raw, tt, pl.NZ)
    logical = np.arange(32 * 32, dtype=np.float16).reshape(32, 32)
    view[:, :] = logical
    stored = raw.view(np.float16)
    assert stored[32 * 16] == logical[0, 16]          # block column 1 starts after 32 rows of 16
    np.testing.assert_array_equal(np.asarray(view), logical)
    np.testing.assert_array_equal(fractal.flat(view), stored)
    # the same bytes read as a row-major tile are scrambled, as on the chip
    nd = fractal.tile_view(raw, _tt([32, 32], space=Vec, layout=pl.ND), pl.ND)
    assert not np.array_equal(nd, logical)
