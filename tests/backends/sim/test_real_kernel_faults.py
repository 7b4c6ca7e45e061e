"""The faults the simulator reports on real PyPTO Pro system tests, each as a small kernel of ours
(docs/simulator.md, "Real kernels we report as faulty"), with the ordering the real tool chain gives
and the seeded variant it does not.

What the real tool chain orders between pipes: only what the kernel says (``sync_src`` / ``sync_dst``,
cross-core flags) plus, with ``auto_mutex=True`` (``pl.jit``'s default), buffer-id locks around every
access to a tile-group slot that carries ``mutex_ids``. Plain ``pl.make_tile`` tiles get nothing, and
bisheng runs with ``--cce-auto-sync=off``. The flash-attention perf kernels load V into a plain L1 tile
on MTE2 and move it to L0B on MTE1 with no flag between: a race the chip survives by timing.
"""
import re

import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.language import Vf as vf
from pypto_pro.errors_sim import OutOfBoundsError, RaceError

M = 16
Mat, Left, Right, Acc, Vec = (pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right, pl.MemorySpace.Acc,
                              pl.MemorySpace.Vec)
P = pl.PipeType


def _matmul(mode: str):
    """out = a @ b on the Cube core: ``plain`` tiles with every flag but MTE2 -> MTE1 (the real FA
    kernels' V path), ``flags`` with it too, ``group`` tile-group slots and no flags (auto_mutex)."""
    @pl.jit(arch="a5")
    def kernel(a: pl.Tensor[[M, M], pl.DT_FP16], b: pl.Tensor[[M, M], pl.DT_FP16],
               out: pl.Tensor[[M, M], pl.DT_FP32]):
        with pl.section_cube():
            if mode == "group":
                a1 = pl.make_tile_group(type=pl.TileType([M, M], pl.DT_FP16, Mat), addrs=0, mutex_ids=[0]).current()
                b1 = pl.make_tile_group(type=pl.TileType([M, M], pl.DT_FP16, Mat), addrs=0x1000,
                                        mutex_ids=[1]).current()
                a0 = pl.make_tile_group(type=pl.TileType([M, M], pl.DT_FP16, Left), addrs=0, mutex_ids=[2]).current()
                b0 = pl.make_tile_group(type=pl.TileType([M, M], pl.DT_FP16, Right), addrs=0,
                                        mutex_ids=[3]).current()
                c0 = pl.make_tile_group(type=pl.TileType([M, M], pl.DT_FP32, Acc), addrs=0, mutex_ids=[4]).current()
            else:
                a1 = pl.make_tile(pl.TileType([M, M], pl.DT_FP16, Mat), addr=0)
                b1 = pl.make_tile(pl.TileType([M, M], pl.DT_FP16, Mat), addr=0x1000)
                a0 = pl.make_tile(pl.TileType([M, M], pl.DT_FP16, Left), addr=0)
                b0 = pl.make_tile(pl.TileType([M, M], pl.DT_FP16, Right), addr=0)
                c0 = pl.make_tile(pl.TileType([M, M], pl.DT_FP32, Acc), addr=0)
            pl.load(a1, a, [0, 0])
            pl.load(b1, b, [0, 0])
            if mode == "flags":
                pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.MTE1, event_id=0)
                pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.MTE1, event_id=0)
            pl.move(a0, a1)
            pl.move(b0, b1)
            if mode != "group":
                pl.system.sync_src(set_pipe=P.MTE1, wait_pipe=P.M, event_id=0)
                pl.system.sync_dst(set_pipe=P.MTE1, wait_pipe=P.M, event_id=0)
            pl.matmul(c0, a0, b0)
            if mode != "group":
                pl.system.sync_src(set_pipe=P.M, wait_pipe=P.FIX, event_id=0)
                pl.system.sync_dst(set_pipe=P.M, wait_pipe=P.FIX, event_id=0)
            pl.store(out, c0, [0, 0])
    return kernel


def _ab():
    torch.manual_seed(0)
    return torch.randn(M, M).half(), torch.randn(M, M).half()


def test_plain_tiles_get_no_ordering_from_auto_mutex():
    a, b = _ab()
    with pytest.raises(RaceError) as err:
        _matmul("plain")(a, b, torch.zeros(M, M))
    text = str(err.value)
    assert "write / read" in text and "load on MTE2" in text and "on MTE1 (" in text
    assert "may start while the load is still writing these bytes" in text
    assert "sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1" in text


@pytest.mark.parametrize("mode", ["flags", "group"])
def test_the_flag_or_a_tile_group_orders_the_load_before_the_move(mode):
    a, b = _ab()
    out = torch.zeros(M, M)
    _matmul(mode)(a, b, out)
    torch.testing.assert_close(out, a.float() @ b.float(), atol=1e-2, rtol=1e-2)


def test_group_slots_are_locked_around_each_access_in_the_ir():
    """auto_mutex's buffer-id locks are in the IR where the real parser puts them: around the load (MTE2)
    and the move (MTE1) of the same slot, so the move waits for the load's unlock; plain tiles get none."""
    def cube_listing(mode: str) -> str:
        dumps = _matmul(mode).compile().dumps
        return next(text for name, text in dumps.items() if name.startswith("lowered.") and "cube" in name)
    group = cube_listing("group")
    assert re.search(r"\[MTE2\] lock\(buf_id=0\)", group) and re.search(r"\[MTE1\] lock\(buf_id=0\)", group)
    assert "lock(" not in cube_listing("plain")


def _vec_war(flag: bool):
    """A store (MTE3) of ``o`` then a V write of ``o`` (the FA TND kernel's last two output updates)."""
    @pl.jit(arch="a5", auto_mutex=False)
    def kernel(x: pl.Tensor[[M, 64], pl.DT_FP32], z: pl.Tensor[[2 * M, 64], pl.DT_FP32]):
        with pl.section_vector():
            if pl.get_subblock_idx() == 0:
                a = pl.make_tile(pl.TileType([M, 64], pl.DT_FP32, Vec), addr=0)
                o = pl.make_tile(pl.TileType([M, 64], pl.DT_FP32, Vec), addr=0x4000)
                pl.load(a, x, [0, 0])
                pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.V, event_id=0)
                pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.V, event_id=0)
                pl.muls(o, a, 2.0)
                pl.system.sync_src(set_pipe=P.V, wait_pipe=P.MTE3, event_id=0)
                pl.system.sync_dst(set_pipe=P.V, wait_pipe=P.MTE3, event_id=0)
                pl.store(z, o, [0, 0])
                if flag:
                    pl.system.sync_src(set_pipe=P.MTE3, wait_pipe=P.V, event_id=0)
                    pl.system.sync_dst(set_pipe=P.MTE3, wait_pipe=P.V, event_id=0)
                pl.muls(o, a, 3.0)
                pl.system.sync_src(set_pipe=P.V, wait_pipe=P.MTE3, event_id=0)
                pl.system.sync_dst(set_pipe=P.V, wait_pipe=P.MTE3, event_id=0)
                pl.store(z, o, [M, 0])
    return kernel


def test_a_store_then_an_unordered_overwrite_is_a_war_race():
    x = torch.randn(M, 64)
    with pytest.raises(RaceError) as err:
        _vec_war(False)(x, torch.zeros(2 * M, 64))
    text = str(err.value)
    assert "read / write (WAR)" in text and "store on MTE3" in text and "muls on V" in text
    assert "may overwrite these bytes before the store has read them" in text
    assert "sync_src(set_pipe=pl.PipeType.MTE3, wait_pipe=pl.PipeType.V" in text


def test_the_mte3_to_v_flag_orders_the_overwrite():
    x, z = torch.randn(M, 64), torch.zeros(2 * M, 64)
    _vec_war(True)(x, z)
    torch.testing.assert_close(z, torch.cat([2 * x, 3 * x]))


def _load(rows: int):
    """A [rows, 64] window of a [M, 64] tensor at run-time offsets (the parser rejects constant ones)."""
    @pl.jit(arch="a5", auto_mutex=False)
    def kernel(x: pl.Tensor[[M, 64], pl.DT_FP32], z: pl.Tensor[[M, 64], pl.DT_FP32], row: pl.DT_INT64,
               col: pl.DT_INT64):
        with pl.section_vector():
            if pl.get_subblock_idx() == 0:
                a = pl.make_tile(pl.TileType([rows, 64], pl.DT_FP32, Vec), addr=0)
                pl.load(a, x, [row, col])
                pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=0)
                pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=0)
                pl.store(z, a, [0, 0])
    return kernel


def test_a_window_past_the_last_axis_says_how_far_the_chip_reads():
    """The matmul insert test's load: columns past the axis are the next row's, and the last row's run
    past the tensor's end (here 8 fp32 elements: 32 bytes)."""
    with pytest.raises(OutOfBoundsError) as err:
        _load(M)(torch.randn(M, 64), torch.zeros(M, 64), 0, 8)
    text = str(err.value)
    assert "ends at 72 on axis 1, past the tensor's size 64" in text
    assert "reads the elements that follow in memory, up to 32 bytes past the end of 'x'" in text


def test_an_offset_outside_the_tensor_says_where_the_chip_reads():
    with pytest.raises(OutOfBoundsError) as err:
        _load(1)(torch.randn(M, 64), torch.zeros(M, 64), M + 1, 0)
    text = str(err.value)
    assert "offset 17 on axis 0 is outside the tensor's shape [16, 64]" in text
    assert "up to 512 bytes past the end of 'x'" in text


def test_a_window_inside_the_tensor_still_runs():
    x, z = torch.randn(M, 64), torch.zeros(M, 64)
    _load(M)(x, z, 0, 0)
    torch.testing.assert_close(z, x)


def _order_02(rows: int, cols: int):
    """A [rows, cols] window of a [2, 4, 8, 16] tensor with order=[0, 2] (the datacopy order test's
    store): loaded, then stored the same way into a zeroed tensor."""
    @pl.jit(arch="a5", auto_mutex=False)
    def kernel(x: pl.Tensor[[2, 4, 8, 16], pl.DT_FP32], z: pl.Tensor[[2, 4, 8, 16], pl.DT_FP32]):
        with pl.section_vector():
            if pl.get_subblock_idx() == 0:
                a = pl.make_tile(pl.TileType([rows, cols], pl.DT_FP32, Vec), addr=0)
                pl.load(a, x, [0, 0, 0, 0], order=[0, 2])
                pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=0)
                pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=0)
                pl.store(z, a, [0, 0, 0, 0], order=[0, 2])
    return kernel


def test_an_inner_order_axis_that_is_not_the_last_is_walked_contiguously():
    """PTO-ISA's ND copies move each row as one burst: the columns are the tensor's next elements
    (along its last axis), not steps of axis 2; the rows step by axis 0's stride."""
    x = torch.arange(2 * 4 * 8 * 16, dtype=torch.float32).reshape(2, 4, 8, 16)
    z = torch.zeros_like(x)
    _order_02(2, 8)(x, z)
    want = torch.zeros_like(x)
    want[:, 0, 0, :8] = x[:, 0, 0, :8]
    torch.testing.assert_close(z, want)


def test_rows_past_the_outer_axis_leave_the_tensor():
    """The datacopy order test: 64 rows on an axis of 2 step past the tensor's last byte."""
    with pytest.raises(OutOfBoundsError, match="leaves the tensor .the chip's copy walks it with no bound"):
        _order_02(4, 8)(torch.zeros(2, 4, 8, 16), torch.zeros(2, 4, 8, 16))


@pl.vector_function
def _copy_row_vf(src, dst):
    full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    x = vf.load_align(src, 0)
    vf.store_align(dst, x, full)


def _aliased_groups(arch: str, reader: str, fix: str):
    """The lightning indexer's UB reuse: two single-slot tile groups at the same address with different
    ``mutex_ids`` (its ``score_u16_row_group`` over ``kscale_f16_group``). A V read of the first group's
    slot (a VF call, or a plain op), then an MTE2 load into the second: auto_mutex locks each access on
    its own id, so nothing orders the load after the read unless ``fix`` shares the id or adds a flag."""
    @pl.jit(arch=arch)
    def kernel(x: pl.Tensor[[1, 64], pl.DT_FP32], y: pl.Tensor[[1, 64], pl.DT_FP32],
               z: pl.Tensor[[2, 64], pl.DT_FP32]):
        with pl.section_vector():
            if pl.get_subblock_idx() == 0:
                row_group = pl.make_tile_group(type=pl.TileType([1, 64], pl.DT_FP32, Vec), addrs=[0], mutex_ids=[1])
                scale_group = pl.make_tile_group(type=pl.TileType([1, 64], pl.DT_FP32, Vec), addrs=[0],
                                                 mutex_ids=[1 if fix == "shared_id" else 2])
                out_group = pl.make_tile_group(type=pl.TileType([1, 64], pl.DT_FP32, Vec), addrs=[0x1000],
                                               mutex_ids=[3])
                row = row_group.next()
                pl.load(row, x, [0, 0])
                out = out_group.next()
                if reader == "vf":
                    _copy_row_vf(row, out)
                else:
                    pl.muls(out, row, 1.0)
                pl.store(z, out, [0, 0])
                if fix == "flag":
                    pl.system.sync_src(set_pipe=P.V, wait_pipe=P.MTE2, event_id=0)
                    pl.system.sync_dst(set_pipe=P.V, wait_pipe=P.MTE2, event_id=0)
                scale = scale_group.next()
                pl.load(scale, y, [0, 0])
                out2 = out_group.next()
                pl.muls(out2, scale, 2.0)
                pl.store(z, out2, [1, 0])
    return kernel


ALIAS_CASES = [("a5", "vf"), ("a5", "muls"), ("a2a3", "muls")]


@pytest.mark.parametrize("arch,reader", ALIAS_CASES)
def test_tile_groups_sharing_bytes_under_different_mutex_ids_race(arch, reader):
    """The lightning indexer's fault: the ids, not the addresses, order auto_mutex's locks."""
    x, y = torch.randn(1, 64), torch.randn(1, 64)
    with pytest.raises(RaceError) as err:
        _aliased_groups(arch, reader, "none")(x, y, torch.zeros(2, 64))
    text = str(err.value)
    assert "read / write (WAR)" in text and ("(scale_group)" in text or "(row_group)" in text)
    assert ("vf_call on" if reader == "vf" else "muls on") in text and "load on" in text
    assert "sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE2" in text


@pytest.mark.parametrize("fix", ["shared_id", "flag"])
@pytest.mark.parametrize("arch,reader", ALIAS_CASES)
def test_a_shared_mutex_id_or_a_flag_orders_the_reuse(arch, reader, fix):
    if fix == "shared_id" and arch == "a2a3":
        pytest.skip("a2a3 has no shared buffer ids (one id per group); the flag is its fix")
    x, y, z = torch.randn(1, 64), torch.randn(1, 64), torch.zeros(2, 64)
    _aliased_groups(arch, reader, fix)(x, y, z)
    torch.testing.assert_close(z, torch.cat([x, 2 * y]))
