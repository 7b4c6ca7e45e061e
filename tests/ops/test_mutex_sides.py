"""Mutex (buffer) ids belong to one AI core: a Cube-side (L1) tile group and a Vector-side (UB) one
may use the same ids, as the real flash-attention kernels do; two groups of one side may not."""
import pytest

import pypto_pro.language as pl
from pypto_pro import CompileError

T16 = pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16]
MAT = pl.TileType(shape=[16, 16], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat, layout=pl.ZN)
VEC = pl.TileType(shape=[16, 16], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)


def test_cube_and_vector_groups_may_share_ids():
    @pl.jit(arch="a5")
    def kernel(x: T16):
        with pl.section_cube():
            q = pl.make_tile_group(type=MAT, addrs=0x0, mutex_ids=[0, 1])  # noqa: F841
        with pl.section_vector():
            v = pl.make_tile_group(type=VEC, addrs=0x0, mutex_ids=[0, 1])  # noqa: F841
    kernel.compile()


def test_two_vector_groups_may_not():
    @pl.jit(arch="a5")
    def kernel(x: T16):
        with pl.section_vector():
            a = pl.make_tile_group(type=VEC, addrs=0x0, mutex_ids=[0, 1])  # noqa: F841
            b = pl.make_tile_group(type=VEC, addrs=0x4000, mutex_ids=[1, 2])  # noqa: F841
    with pytest.raises(CompileError, match="mutex id 1 is already used by 'a'"):
        kernel.compile()
