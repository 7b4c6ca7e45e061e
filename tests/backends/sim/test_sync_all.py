"""pl.system.sync_all: a barrier across every block of the launch."""

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import DeadlockError, RaceError, SyncError

T = pl.TileType([16, 64], pl.DT_FP32, pl.MemorySpace.Vec)


def neighbour_fn(barrier: bool, core_type=pl.SyncCoreType.AIV_ONLY):
    def kernel(x: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32], ws: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32],
               z: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32]):
        g = pl.make_tile_group(type=T, addrs=0, mutex_ids=[0, 1])
        with pl.section_vector():
            b = pl.get_block_idx()
            n = pl.get_block_num()
            t = g.next()
            pl.load_tile(t, x, [b, 0])
            pl.muls(t, t, 2.0)
            pl.store_tile(ws, t, [b, 0])                  # <- phase 1 store
            if barrier:
                pl.system.sync_all(core_type=core_type)  # <- barrier
            u = g.next()
            pl.load_tile(u, ws, [(b + 1) % n, 0])         # <- phase 2 load (the neighbour's tile)
            pl.store_tile(z, u, [b, 0])
    return kernel


def _run(barrier, blocks=4, arch="a5", check="raise"):
    x = np.arange(blocks * 16 * 64, dtype=np.float32).reshape(blocks * 16, 64)
    ws = np.zeros_like(x)
    z = np.zeros_like(x)
    report = pl.jit(neighbour_fn(barrier), arch=arch).options(check=check)[None, blocks](x, ws, z)
    return x, z, report


@pytest.mark.parametrize("arch", ["a5", "a2a3"])
def test_sync_all_orders_blocks(arch):
    x, z, report = _run(True, arch=arch)
    expect = np.roll(2 * x.reshape(4, 16, 64), -1, axis=0).reshape(z.shape)
    np.testing.assert_array_equal(z, expect)
    assert report.faults == [] and report.cycles > 0


def test_mix_sync_all_in_a_vector_only_kernel_is_reported():
    """The real page: a pure Vector kernel must say AIV_ONLY, or the barrier waits for Cube cores
    that do not exist (a device error)."""
    fn = neighbour_fn(True, pl.SyncCoreType.MIX)
    x = np.zeros((4 * 16, 64), np.float32)
    with pytest.raises(SyncError, match=r"sync_all\(core_type=MIX\) at .* in a vector-only kernel"):
        pl.jit(fn).options(check="raise")[None, 4](x, np.zeros_like(x), np.zeros_like(x))


def test_without_sync_all_the_blocks_race():
    with pytest.raises(RaceError, match="one block writes bytes another reads"):
        _run(False)


def test_sync_all_needs_every_block_resident():
    with pytest.raises(DeadlockError, match="do not fit on the 64 cores"):  # a5 (950PR_9589): 32 x 2 AIV
        _run(True, blocks=65)


def test_sync_all_in_a_mixed_kernel():
    """Cube and Vector cores of every block meet at the barrier: the Cube's Acc -> GM results of
    all blocks are visible to every Vector core afterwards."""
    A = pl.TileType([16, 32], pl.DT_FP16, pl.MemorySpace.Mat)
    L = pl.TileType([16, 32], pl.DT_FP16, pl.MemorySpace.Left)
    R = pl.TileType([32, 16], pl.DT_FP16, pl.MemorySpace.Right)
    B = pl.TileType([32, 16], pl.DT_FP16, pl.MemorySpace.Mat)
    C = pl.TileType([16, 16], pl.DT_FP32, pl.MemorySpace.Acc)
    V = pl.TileType([16, 16], pl.DT_FP32, pl.MemorySpace.Vec)

    def kernel(a: pl.Tensor[[pl.DYNAMIC, 32], pl.DT_FP16], b: pl.Tensor[[32, 16], pl.DT_FP16],
               ws: pl.Tensor[[pl.DYNAMIC, 16], pl.DT_FP32], z: pl.Tensor[[pl.DYNAMIC, 16], pl.DT_FP32]):
        am = pl.make_tile_group(type=A, addrs=0, mutex_ids=[0])
        bm = pl.make_tile_group(type=B, addrs=0x4000, mutex_ids=[1])
        al = pl.make_tile_group(type=L, addrs=0, mutex_ids=[2])
        br = pl.make_tile_group(type=R, addrs=0, mutex_ids=[3])
        acc = pl.make_tile_group(type=C, addrs=0, mutex_ids=[4])
        v = pl.make_tile_group(type=V, addrs=0, mutex_ids=[5])
        with pl.section_cube():
            blk = pl.get_block_idx()
            pl.load_tile(am[0], a, [blk, 0])
            pl.load_tile(bm[0], b, [0, 0])
            pl.move(al[0], am[0])
            pl.move(br[0], bm[0])
            pl.matmul(acc[0], al[0], br[0])
            pl.store_tile(ws, acc[0], [blk, 0])
            pl.system.sync_all()
        with pl.section_vector():
            pl.system.sync_all()
            if pl.get_subblock_idx() == 0:
                blk = pl.get_block_idx() // pl.get_subblock_num()  # an AIV's index is block * 2 + subblock
                nb = (blk + 1) % pl.get_block_num()
                pl.load_tile(v[0], ws, [nb, 0])
                pl.store_tile(z, v[0], [blk, 0])

    rng = np.random.default_rng(0)
    a = rng.standard_normal((48, 32)).astype(np.float16)
    b = rng.standard_normal((32, 16)).astype(np.float16)
    ws = np.zeros((48, 16), np.float32)
    z = np.zeros((48, 16), np.float32)
    report = pl.jit(kernel, arch="a5")[None, 3](a, b, ws, z)
    y = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(z, np.roll(y.reshape(3, 16, 16), -1, axis=0).reshape(48, 16), rtol=1e-5, atol=1e-5)
    assert report.faults == []
