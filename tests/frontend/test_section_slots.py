"""A name bound to a tile-group slot in one section and rebound inside a run-time loop of the other section
(the real FA kernels' shared ``cur_p = p_mat_db.next()``): the loop starts without the other engine's slot."""
import pytest

import pypto_pro.language as pl
from pypto_pro.errors import CompileError

MAT = pl.TileType(shape=[16, 16], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat)
VEC = pl.TileType(shape=[16, 16], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)


def _kernel(read_first: bool):
    def kernel(x: pl.Tensor[[64, 16], pl.DT_FP16], n: pl.DT_INT64):
        p_db = pl.make_tile_group(type=MAT, addrs=0x0, mutex_ids=[0, 1])
        with pl.section_cube():
            cur = p_db.next()
            if n > 1:
                cur = p_db.next()  # a run-time slot, merged after the if: the Cube's register
            pl.system.wait_cross_core(pipe=pl.PipeType.MTE1, event_id=0)
        with pl.section_vector():
            t = pl.make_tile(VEC, addr=0x0, size=512)
            for i in pl.range(0, n):
                if read_first:
                    pl.insert(cur, t, [0, 0])  # the Cube's slot, not this engine's
                cur = p_db.next()
                pl.load(t, x, [i * 16, 0])
                pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
                pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
                pl.insert(cur, t, [0, 0])
            pl.system.set_cross_core(pipe=pl.PipeType.MTE3, event_id=0)
    return kernel


def test_a_loop_rebinding_the_other_engines_slot_compiles():
    pl.jit(_kernel(False), arch="a5").compile()


def test_reading_the_other_engines_slot_in_the_loop_is_located():
    with pytest.raises(CompileError, match="name 'cur' is not defined") as e:
        pl.jit(_kernel(True), arch="a5").compile()
    assert "test_section_slots.py" in str(e.value)
