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
    with pytest.raises(UninitializedReadError, match=r"computed from padding.*"
                                                      r"entered where extract on MTE1 .* reads Mat bytes of a1"):
        _kernel("all")(a, b, out, 20)


def test_k_padding_reaches_every_element():
    a, b, out = _data(M)
    with pytest.raises(UninitializedReadError, match="computed from padding"):
        _kernel("live", k_pad=True)(a, b, out, M)


def _reloaded(store_rows: str):
    """Two rounds over one L1 tile: all M rows loaded, then only ``m``; the second move reads the
    first round's rows past ``m`` (stale: another tile's data) with the full-M valid shape."""
    @pl.jit()
    def kernel(a: pl.Tensor[[2 * M, K], pl.DT_FP16], b: pl.Tensor[[K, N], pl.DT_FP16],
               out: pl.Tensor[[2 * M, N], pl.DT_FP32], m: pl.DT_INT64):
        with pl.section_cube():
            a1 = pl.make_tile(pl.TileType([M, K], pl.DT_FP16, Mat, valid_shape=V), addr=0, size=M * K * 2)
            b1 = pl.make_tile(pl.TileType([K, N], pl.DT_FP16, Mat), addr=0x4000, size=K * N * 2)
            a0 = pl.make_tile(pl.TileType([M, K], pl.DT_FP16, Left, layout=pl.NZ), addr=0, size=M * K * 2)
            b0 = pl.make_tile(pl.TileType([K, N], pl.DT_FP16, Right), addr=0, size=K * N * 2)
            c0 = pl.make_tile(pl.TileType([M, N], pl.DT_FP32, Acc, fractal=1024, valid_shape=V), addr=0,
                              size=M * N * 4)
            pl.load(b1, b, [0, 0])
            for i in pl.range(0, 2):
                rows = M if i == 0 else m
                pl.set_validshape(a1, [rows, K])
                pl.load(a1, a, [i * M, 0])
                pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
                pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
                pl.set_validshape(a1, [M, K])
                pl.move(a0, a1)
                pl.move(b0, b1)
                pl.system.sync_src(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
                pl.system.sync_dst(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
                pl.set_validshape(c0, [M, N])
                pl.matmul(c0, a0, b0)
                pl.system.sync_src(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
                pl.system.sync_dst(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
                if store_rows == "live":
                    pl.set_validshape(c0, [rows, N])
                pl.store(out, c0, [i * M, 0])
                pl.system.bar_all()
    return kernel


def test_stale_rows_left_out_of_the_store_are_a_note():
    torch.manual_seed(1)
    a, b, out = torch.randn(2 * M, K).half(), torch.randn(K, N).half(), torch.zeros(2 * M, N)
    k = _reloaded("live")
    k(a, b, out, 20)
    want = a.float() @ b.float()
    torch.testing.assert_close(out[:M + 20], want[:M + 20], atol=1e-2, rtol=1e-2)
    assert (out[M + 20:] == 0).all()
    assert any("did not write: they still hold an earlier load's data" in n for n in k.last_report.notes), \
        k.last_report.notes


def test_storing_the_rows_derived_from_stale_bytes_is_a_fault():
    torch.manual_seed(1)
    with pytest.raises(UninitializedReadError, match=r"computed from padding.*entered "
                                                      r"where extract on MTE1 .* still hold an earlier load's data"):
        _reloaded("all")(torch.randn(2 * M, K).half(), torch.randn(K, N).half(), torch.zeros(2 * M, N), 20)
