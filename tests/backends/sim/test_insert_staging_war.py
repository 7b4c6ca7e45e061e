"""The second fault of the real FA ``tkv_preload`` kernels (docs/conformance_faults.md): the Vector
stages P in an NZ Vec tile, ``pl.insert``s it into L1 on MTE3, and the next task's V ``move`` writes
the staging tile again. Without an ``MTE3 -> V`` flag nothing orders that write after the insert's read;
a cross-core ``set_cross_core`` on MTE3 orders only the Cube's side."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.errors_sim import RaceError

from cube_kernels import multiply_inserted, pair

M, K, N = 32, 64, 32
SUB = K // 2
Mat, Vec = pl.MemorySpace.Mat, pl.MemorySpace.Vec
MTE2, MTE3, V = pl.PipeType.MTE2, pl.PipeType.MTE3, pl.PipeType.V


def _restage(flag: bool):
    """Each Vector core inserts its column half of d, then restages the staging tile with other bytes."""
    def kernel(d: pl.Tensor[[M, K], pl.DT_FP16], v: pl.Tensor[[K, N], pl.DT_FP16],
               out: pl.Tensor[[M, N], pl.DT_FP32]):
        p_mat = pl.make_tile(pl.TileType([M, K], pl.DT_FP16, Mat), addr=0x10000)
        with pl.section_vector():
            off = pl.get_subblock_idx() * SUB
            t_nd = pl.make_tile(pl.TileType([M, SUB], pl.DT_FP16, Vec), addr=0x0)
            t_next = pl.make_tile(pl.TileType([M, SUB], pl.DT_FP16, Vec), addr=0x8000)
            t_nz = pl.make_tile(pl.TileType([M, SUB], pl.DT_FP16, Vec, layout=pl.NZ), addr=0x4000)
            pl.load(t_nd, d, [0, off])
            pl.load(t_next, d, [0, SUB - off])
            pair(MTE2, V)
            pl.move(t_nz, t_nd)
            pair(V, MTE3)
            pl.insert(p_mat, t_nz, [0, off])
            pl.system.set_cross_core(pipe=MTE3, event_id=1)
            if flag:
                pair(MTE3, V)
            pl.move(t_nz, t_next)      # the next task's staging
        with pl.section_cube():
            multiply_inserted(p_mat, v, out, M, K, N)
    return kernel


def _data():
    rng = np.random.default_rng(3)
    return (rng.standard_normal((M, K)).astype(np.float16), rng.standard_normal((K, N)).astype(np.float16),
            np.zeros((M, N), np.float32))


def test_restaging_after_an_insert_without_a_flag_is_a_war_race():
    d, v, out = _data()
    with pytest.raises(RaceError) as err:
        pl.jit(_restage(False), arch="a5")(d, v, out)
    text = str(err.value)
    assert "read / write (WAR)" in text and "(t_nz)" in text
    assert "insert on AIV0.MTE3 (" in text and "copy on AIV0.V (" in text
    assert "sync_src(set_pipe=pl.PipeType.MTE3, wait_pipe=pl.PipeType.V" in text


def test_the_mte3_to_v_flag_orders_the_restaging():
    d, v, out = _data()
    report = pl.jit(_restage(True), arch="a5")(d, v, out)
    assert report.faults == []
    np.testing.assert_allclose(out, d.astype(np.float64) @ v.astype(np.float64), rtol=1e-5, atol=1e-4)
