"""pl.make_tensor views made by one engine's program of a mixed kernel (the other makes none): their GM
accesses are priced and checked with the launch's memory ids (an internal IndexError before)."""
import numpy as np

import pypto_pro.language as pl

Mat, Vec = pl.MemorySpace.Mat, pl.MemorySpace.Vec


@pl.jit(arch="a5")
def views_in_vector(a: pl.Tensor[[16, 16], pl.DT_FP16], x: pl.Ptr[pl.DT_UINT8],
                    out: pl.Tensor[[16, 16], pl.DT_FP32]):
    with pl.section_cube():
        m = pl.make_tile(pl.TileType([16, 16], pl.DT_FP16, Mat), addr=0x0)
        pl.load(m, a, [0, 0])
    with pl.section_vector():
        xv = pl.make_tensor(x, [16, 16], dtype=pl.DT_FP32)
        t = pl.make_tile(pl.TileType([16, 16], pl.DT_FP32, Vec), addr=0x0)
        pl.load(t, xv, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
        if pl.get_subblock_idx() == 0:
            pl.store(out, t, [0, 0])


def test_a_view_of_the_vector_program_only():
    x = np.random.default_rng(0).standard_normal((16, 16)).astype(np.float32)
    out = np.zeros((16, 16), np.float32)
    views_in_vector(np.zeros((16, 16), np.float16), x.view(np.uint8), out)
    np.testing.assert_array_equal(out, x)
