"""Tile sources of an elementwise op whose valid shape differs from the destination's (PTO-ISA asserts they
are equal in debug builds only): a larger one is read over the destination's region; where a smaller one
has no valid data the destination is left unwritten (on the chip it gets values of bytes past the valid data)."""
import pytest
import torch

import pypto_pro.language as pl

TT = pl.TileType(shape=[16, 16], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec, valid_shape=[-1, -1])


def _sync(src, dst):
    pl.system.sync_src(set_pipe=src, wait_pipe=dst, event_id=0)
    pl.system.sync_dst(set_pipe=src, wait_pipe=dst, event_id=0)


@pl.jit()
def add_kernel(x: pl.Tensor[[16, 16], pl.DT_FP32], out: pl.Tensor[[16, 16], pl.DT_FP32],
               dr: pl.DT_INT64, sr: pl.DT_INT64):
    with pl.section_vector():
        a = pl.make_tile(TT, addr=0x0, size=1024)
        b = pl.make_tile(TT, addr=0x1000, size=1024)
        pl.load(a, x, [0, 0])
        pl.load(b, x, [0, 0])
        _sync(pl.PipeType.MTE2, pl.PipeType.V)
        pl.set_validshape(b, [sr, 16])
        pl.set_validshape(a, [dr, 16])
        pl.add(a, a, b)
        pl.set_validshape(a, [16, 16])
        _sync(pl.PipeType.V, pl.PipeType.MTE3)
        pl.store(out, a, [0, 0])


def test_a_larger_source_is_read_over_the_destination_region():
    x = torch.randn(16, 16)
    out = torch.zeros(16, 16)
    add_kernel(x, out, 8, 16)
    want = x.clone()
    want[:8] *= 2
    torch.testing.assert_close(out, want)


def test_a_smaller_source_leaves_the_rest_of_the_destination():
    x = torch.randn(16, 16)
    out = torch.zeros(16, 16)
    add_kernel(x, out, 8, 4)
    want = x.clone()
    want[:4] *= 2  # rows 4..7 of a keep what was loaded: b has no valid data there
    torch.testing.assert_close(out, want)


def _half_written(compute_again: bool):
    """a's valid shape is 8 rows, but only rows 0..3 are computed (b has 4 valid rows); then a is
    either computed on again (a read of rows 4..7) or stored as it is."""
    @pl.jit()
    def k(x: pl.Tensor[[16, 16], pl.DT_FP32], out: pl.Tensor[[16, 16], pl.DT_FP32]):
        with pl.section_vector():
            a = pl.make_tile(TT, addr=0x0, size=1024)
            b = pl.make_tile(TT, addr=0x1000, size=1024)
            pl.set_validshape(b, [4, 16])
            pl.load(b, x, [0, 0])
            _sync(pl.PipeType.MTE2, pl.PipeType.V)
            pl.set_validshape(a, [8, 16])
            pl.mul(a, b, 2.0)  # writes rows 0..3 of a only
            if compute_again:
                pl.mul(a, a, 2.0)  # a compute reading rows 4..7: never written
            _sync(pl.PipeType.V, pl.PipeType.MTE3)
            pl.store(out, a, [0, 0])
    return k


def test_rows_nothing_wrote_are_still_reported_when_read():
    with pytest.raises(Exception, match=r"reads Vec bytes of a that nothing in this block wrote \(first at row 4"):
        _half_written(True)(torch.randn(16, 16), torch.zeros(16, 16))


def test_storing_rows_nothing_wrote_is_a_note():
    """A store of never-written rows puts the simulator's poison in GM (a note, not a fault: on the chip
    those bytes are whatever the buffer held; the kernel's own result rows are unaffected)."""
    x, out = torch.randn(16, 16), torch.zeros(16, 16)
    report = _half_written(False)(x, out)
    assert any("nothing in this block wrote" in n for n in report.notes), report.notes
    torch.testing.assert_close(out[:4], 2 * x[:4])
    assert torch.isnan(out[4:8]).all()
