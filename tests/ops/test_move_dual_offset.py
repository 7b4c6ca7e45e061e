"""pl.move Acc -> Vec with an offset in a dual mode (TEXTRACT with a split destination): the Acc's valid
shape, read from the offset, split between the two Vector cores as the dual TMOV splits it."""
import numpy as np
import pytest

import pypto_pro.language as pl

from cube_kernels import synced_product

M, K, N = 32, 64, 32
Mat, Vec, Left, Right, Acc = (pl.MemorySpace.Mat, pl.MemorySpace.Vec, pl.MemorySpace.Left, pl.MemorySpace.Right,
                              pl.MemorySpace.Acc)
MTE1, MTE2, MTE3, M_PIPE, FIX = (pl.PipeType.MTE1, pl.PipeType.MTE2, pl.PipeType.MTE3, pl.PipeType.M,
                                 pl.PipeType.FIX)


SPLIT_M = pl.AccToVecMode.DualModeSplitM


def _shapes(mode):
    """(Acc valid shape, each core's tile shape, output shape): SplitM takes N/2 columns, SplitN M/2 rows."""
    return ((M, N // 2), (M // 2, N // 2), (M, N // 2)) if mode is SPLIT_M else \
        ((M // 2, N), (M // 2, N // 2), (M // 2, N))


def _kernel(mode, offset):
    """The window of a [M, N] product at ``offset`` (of the Acc's narrowed valid shape) to the Vector cores."""
    valid, (rows, cols), oshape = _shapes(mode)

    def kernel(a: pl.Tensor[[M, K], pl.DT_FP16], b: pl.Tensor[[K, N], pl.DT_FP16],
               out: pl.Tensor[oshape, pl.DT_FP32]):
        ub = pl.make_tile(pl.TileType([rows, cols], pl.DT_FP32, Vec), addr=0x0)
        with pl.section_cube():
            acc = synced_product(a, b, M, K, N)
            pl.set_validshape(acc, valid)
            pl.move(ub, acc, offset, acc_to_vec_mode=mode)
            pl.system.set_cross_core(pipe=FIX, event_id=1)
        with pl.section_vector():
            pl.system.wait_cross_core(pipe=MTE3, event_id=1)
            sub = pl.get_subblock_idx()
            if mode is SPLIT_M:
                pl.store(out, ub, [sub * rows, 0])
            else:
                pl.store(out, ub, [0, sub * cols])
    return kernel


def _data():
    rng = np.random.default_rng(3)
    return (rng.standard_normal((M, K)).astype(np.float16), rng.standard_normal((K, N)).astype(np.float16))


@pytest.mark.parametrize("mode", [SPLIT_M, pl.AccToVecMode.DualModeSplitN])
def test_dual_mode_extract_splits_the_window(mode):
    a, b = _data()
    out = np.zeros(_shapes(mode)[2], np.float32)
    offset = [0, N // 2] if mode is SPLIT_M else [M // 2, 0]
    report = pl.jit(_kernel(mode, offset), arch="a5")(a, b, out)
    assert report.faults == []
    full = a.astype(np.float64) @ b.astype(np.float64)
    ref = full[:, N // 2:] if mode is SPLIT_M else full[M // 2:]
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-4)


def test_dual_mode_extract_past_the_acc_is_a_fault():
    a, b = _data()
    out = np.zeros((M, N // 2), np.float32)
    with pytest.raises(Exception, match=r"extracts 32 x 16 .* at \[0, 24\]: outside"):
        pl.jit(_kernel(SPLIT_M, [0, 24]), arch="a5")(a, b, out)


def _single_kernel(x_rows: int):
    """A [M, N] product moved with an explicit single mode into a Vec tile of another shape: the real
    pl.move checks no shapes once a mode is given; the Acc's valid shape must fit the tile's shape."""
    def kernel(a: pl.Tensor[[M, K], pl.DT_FP16], b: pl.Tensor[[K, N], pl.DT_FP16],
               out: pl.Tensor[[M, N], pl.DT_FP32]):
        ub = pl.make_tile(pl.TileType([2 * M, N], pl.DT_FP32, Vec, valid_shape=[-1, -1]), addr=0x0)
        with pl.section_cube():
            acc = synced_product(a, b, M, K, N)
            pl.set_validshape(ub, [x_rows, N])
            pl.move(ub, acc, acc_to_vec_mode=pl.AccToVecMode.SingleModeVec0)
            pl.system.set_cross_core(pipe=FIX, event_id=1)
        with pl.section_vector():
            pl.system.wait_cross_core(pipe=MTE3, event_id=1)
            if pl.get_subblock_idx() == 0:
                pl.set_validshape(ub, [M, N])
                pl.store(out, ub, [0, 0])
    return kernel


def test_single_mode_move_into_a_larger_tile():
    a, b = _data()
    out = np.zeros((M, N), np.float32)
    pl.jit(_single_kernel(M), arch="a5")(a, b, out)
    np.testing.assert_allclose(out, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-4)


def test_single_mode_move_writes_the_accs_valid_shape_past_the_tiles():
    """PTO-ISA's TMOV Acc -> Vec moves the Acc's valid m x n (TMovCcToUb): the destination's valid
    shape (16 rows here) is not consulted, only its physical shape must hold the rows."""
    a, b = _data()
    out = np.zeros((M, N), np.float32)
    pl.jit(_single_kernel(M // 2), arch="a5")(a, b, out)
    np.testing.assert_allclose(out, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-4)


def test_a_ub_tile_only_the_cube_names_takes_the_accs_whole_m():
    """The quantised lightning indexer's form: the fixpipe's UB destination is declared in the Cube
    section only (the Vector cores read the bytes through their own tile at the same address), and its
    valid shape is set to the Acc's whole M before the split (a descriptor: the move's extent is the
    Acc's valid shape, PTO-ISA TMOV a5)."""
    def kernel(a: pl.Tensor[[M, K], pl.DT_FP16], b: pl.Tensor[[K, N], pl.DT_FP16],
               out: pl.Tensor[[M, N], pl.DT_FP32], m: pl.DT_INT32):
        with pl.section_cube():
            acc = synced_product(a, b, M, K, N)
            dst = pl.make_tile(pl.TileType([M // 2, N], pl.DT_FP32, Vec), addr=0x0)
            pl.set_validshape(dst, [m, N])  # a run-time M (a constant past the shape is a compile-time error)
            pl.move(dst, acc, acc_to_vec_mode=SPLIT_M)
            pl.system.set_cross_core(pipe=FIX, event_id=1)
        with pl.section_vector():
            ub = pl.make_tile(pl.TileType([M // 2, N], pl.DT_FP32, Vec), addr=0x0)
            pl.system.wait_cross_core(pipe=MTE3, event_id=1)
            pl.store(out, ub, [pl.get_subblock_idx() * (M // 2), 0])

    a, b = _data()
    out = np.zeros((M, N), np.float32)
    report = pl.jit(kernel, arch="a5")(a, b, out, M)
    assert report.faults == []
    np.testing.assert_allclose(out, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-4)
