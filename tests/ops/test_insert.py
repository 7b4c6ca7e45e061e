"""pl.insert (Vec -> Mat, the UB -> L1 DMA in storage order) and pl.move Acc -> Vec with an offset."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.arch.layouts import element_offsets
from pypto_pro.errors import CompileError

from cube_kernels import multiply_inserted, pair, synced_product

M, K, N = 32, 64, 32
SUB = K // 2
Mat, Vec, Left, Right, Acc = (pl.MemorySpace.Mat, pl.MemorySpace.Vec, pl.MemorySpace.Left, pl.MemorySpace.Right,
                              pl.MemorySpace.Acc)
MTE1, MTE2, MTE3, M_PIPE, FIX, V = (pl.PipeType.MTE1, pl.PipeType.MTE2, pl.PipeType.MTE3, pl.PipeType.M,
                                     pl.PipeType.FIX, pl.PipeType.V)


def _insert_kernel(nz_source: bool, offset=None):
    """Each Vector core inserts its [M, SUB] column half of d into one [M, K] NZ Mat; the Cube multiplies."""
    def kernel(d: pl.Tensor[[M, K], pl.DT_FP16], v: pl.Tensor[[K, N], pl.DT_FP16],
               out: pl.Tensor[[M, N], pl.DT_FP32]):
        p_mat = pl.make_tile(pl.TileType([M, K], pl.DT_FP16, Mat), addr=0x10000)
        with pl.section_vector():
            off = pl.get_subblock_idx() * SUB
            t_nd = pl.make_tile(pl.TileType([M, SUB], pl.DT_FP16, Vec), addr=0x0)
            t_nz = pl.make_tile(pl.TileType([M, SUB], pl.DT_FP16, Vec, layout=pl.NZ), addr=0x4000)
            pl.load(t_nd, d, [0, off])
            pair(MTE2, V)
            pl.move(t_nz, t_nd)
            pair(V, MTE3)
            if nz_source:
                pl.insert(p_mat, t_nz, offset if offset is not None else [0, off])
            else:
                pl.insert(p_mat, t_nd, [0, off])
            pl.system.set_cross_core(pipe=MTE3, event_id=1)
        with pl.section_cube():
            multiply_inserted(p_mat, v, out, M, K, N)
    return kernel


def _data(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((M, K)).astype(np.float16), rng.standard_normal((K, N)).astype(np.float16))


def test_nz_insert_places_each_half():
    d, v = _data()
    out = np.zeros((M, N), np.float32)
    report = pl.jit(_insert_kernel(True), arch="a5")(d, v, out)
    assert report.faults == []
    np.testing.assert_allclose(out, d.astype(np.float64) @ v.astype(np.float64), rtol=1e-5, atol=1e-4)


def test_nd_insert_into_nz_mat_is_scrambled_as_on_the_chip():
    """The DMA writes an ND source's rows as if L1 were row-major: the NZ Mat then holds d's bytes in
    row-major order, which the Cube reads through the NZ fractal offsets."""
    d, v = _data(1)
    out = np.zeros((M, N), np.float32)
    pl.jit(_insert_kernel(False), arch="a5")(d, v, out)
    nz = element_offsets(pl.TileType([M, K], pl.DT_FP16, Mat), pl.NZ)
    seen = d.ravel()[nz]          # what the Left tile gets
    np.testing.assert_allclose(out, seen.astype(np.float64) @ v.astype(np.float64), rtol=1e-5, atol=1e-4)
    assert not np.allclose(out, d.astype(np.float32) @ v.astype(np.float32), atol=1e-2)


def test_insert_needs_the_direct_path():
    with pytest.raises(CompileError, match="no Vec -> Mat path"):
        pl.jit(_insert_kernel(True), arch="a2a3").compile()


def test_insert_offset_past_the_destination_is_located():
    """The source's valid shape is set at run time (-1): the copy past the destination is found when it runs;
    an offset past the destination is a compile error."""
    d, v = _data()
    with pytest.raises(Exception, match=r"pl.insert: the 32 x 32 copy at \[0, 40\] reaches past"):
        pl.jit(_insert_kernel(True, offset=[0, 40]), arch="a5")(d, v, np.zeros((M, N), np.float32))
    with pytest.raises(CompileError, match=r"offset\[1\] = 64 is past the destination's 64"):
        pl.jit(_insert_kernel(True, offset=[0, 64]), arch="a5").compile()


def _acc_rows_kernel(row0: int):
    """The Cube computes a [M, N] product; Vector core 1 gets rows row0.. of it by a TEXTRACT."""
    def kernel(a: pl.Tensor[[M, K], pl.DT_FP16], b: pl.Tensor[[K, N], pl.DT_FP16],
               out: pl.Tensor[[M // 2, N], pl.DT_FP32]):
        ub = pl.make_tile(pl.TileType([M // 2, N], pl.DT_FP32, Vec), addr=0x0)
        with pl.section_cube():
            acc = synced_product(a, b, M, K, N)
            pl.move(ub, acc, offset=[row0, 0], acc_to_vec_mode=pl.AccToVecMode.SingleModeVec1)
            pl.system.set_cross_core(pipe=FIX, event_id=1)
        with pl.section_vector():
            pl.system.wait_cross_core(pipe=MTE3, event_id=1)  # the Cube signals both Vector cores
            if pl.get_subblock_idx() == 1:
                pl.store(out, ub, [0, 0])
    return kernel


def test_acc_to_vec_move_with_offset_extracts_rows():
    a, b = _data(2)
    b = b[:, :N]
    out = np.zeros((M // 2, N), np.float32)
    report = pl.jit(_acc_rows_kernel(M // 2), arch="a5")(a, b, out)
    assert report.faults == []
    ref = (a.astype(np.float64) @ b.astype(np.float64))[M // 2:]
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-4)


def test_acc_to_vec_offset_past_the_acc_is_a_fault():
    a, b = _data(2)
    out = np.zeros((M // 2, N), np.float32)
    with pytest.raises(Exception, match=r"extracts 16 x 32 at \[24, 0\]"):
        pl.jit(_acc_rows_kernel(24), arch="a5")(a, b[:, :N], out)


def test_insert_of_a_padded_source_checks_its_valid_shape():
    """A source padded past its valid shape ([M, SUB + 16], valid [M, SUB]) inserts its valid columns: at
    offset SUB it fits the [M, K] destination; at SUB + 16 its valid SUB columns do not."""
    def kernel(d: pl.Tensor[[M, K], pl.DT_FP16], col0: pl.Constexpr):
        p_mat = pl.make_tile(pl.TileType([M, K], pl.DT_FP16, Mat), addr=0x10000)
        with pl.section_vector():
            t = pl.make_tile(pl.TileType([M, SUB + 16], pl.DT_FP16, Vec, valid_shape=[M, SUB]), addr=0x0)
            pl.load(t, d, [0, 0])
            pair(MTE2, MTE3)
            pl.insert(p_mat, t, [0, col0])
    pl.jit(kernel, arch="a5").compile(col0=SUB)
    with pytest.raises(CompileError, match=r"offset\[1\] = 48 \+ the source's valid 32 exceeds the destination's 64"):
        pl.jit(kernel, arch="a5").compile(col0=SUB + 16)
