"""Never-written padding through the Cube (sim/undefined.py): a wide L1 tile loaded with M tail
rows only, its valid shape widened to the full M for the L1 -> L0 copy and the matmul (as real
ASW matmul kernels do). The chip multiplies whatever L1 holds; only the padding rows of the
product are garbage, and a store clipped to the live rows leaves them out: a note, and the right
result. Storing or computing with the rows derived from the padding is still an
UninitializedReadError naming the copy where the never-written bytes entered, and so is a K
padding (it reaches every element of the product)."""
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro import UninitializedReadError

M, K, N = 32, 32, 32
Mat, Left, Right, Acc = pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right, pl.MemorySpace.Acc
V = [-1, -1]


def _kernel(store_rows: str, k_pad: bool = False):
    @pl.jit()
    def kernel(a: pl.Tensor[[pl.DYNAMIC, K], pl.DT_FP16], b: pl.Tensor[[K, N], pl.DT_FP16],
               out: pl.Tensor[[M, N], pl.DT_FP32], m: pl.DT_INT64):
        with pl.section_cube():
            a1 = pl.make_tile(pl.TileType([M, K], pl.DT_FP16, Mat, valid_shape=V), addr=0, size=M * K * 2)
            b1 = pl.make_tile(pl.TileType([K, N], pl.DT_FP16, Mat, valid_shape=V), addr=0x4000, size=K * N * 2)
            a0 = pl.make_tile(pl.TileType([M, K], pl.DT_FP16, Left, layout=pl.NZ, valid_shape=V), addr=0,
                              size=M * K * 2)
            b0 = pl.make_tile(pl.TileType([K, N], pl.DT_FP16, Right, valid_shape=V), addr=0, size=K * N * 2)
            c0 = pl.make_tile(pl.TileType([M, N], pl.DT_FP32, Acc, fractal=1024, valid_shape=V), addr=0,
                              size=M * N * 4)
            if k_pad:
                pl.set_validshape(a1, [m, K // 2])  # half of K loaded, all of K multiplied
            else:
                pl.set_validshape(a1, [m, K])
            pl.load(a1, a, [0, 0])
            pl.load(b1, b, [0, 0])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
            pl.set_validshape(a1, [M, K])  # the full tile: padding rows included
            pl.move(a0, a1)
            pl.move(b0, b1)
            pl.system.sync_src(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
            pl.matmul(c0, a0, b0)
            pl.system.sync_src(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
            if store_rows == "live":
                pl.set_validshape(c0, [m, N])
            pl.store(out, c0, [0, 0])
    return kernel


def _data(m: int):
    torch.manual_seed(0)
    return torch.randn(m, K).half(), torch.randn(K, N).half(), torch.zeros(M, N)


def test_padding_rows_left_out_of_the_store_are_a_note():
    a, b, out = _data(20)
    k = _kernel("live")
    k(a, b, out, 20)
    torch.testing.assert_close(out[:20], a.float() @ b.float(), atol=1e-2, rtol=1e-2)
    assert (out[20:] == 0).all()
    notes = k.last_report.notes
    assert len(notes) == 1 and "extract on MTE1" in notes[0] and "padding the kernel discards" in notes[0], notes


def test_storing_the_rows_derived_from_padding_is_a_fault():
    a, b, out = _data(20)
    with pytest.raises(UninitializedReadError, match=r"computed from bytes nothing in this block wrote.*"
                                                      r"entered where extract on MTE1 .* reads Mat bytes of a1"):
        _kernel("all")(a, b, out, 20)


def test_k_padding_reaches_every_element():
    a, b, out = _data(M)
    with pytest.raises(UninitializedReadError, match="computed from bytes nothing in this block wrote"):
        _kernel("live", k_pad=True)(a, b, out, M)
