"""The simulator's model of the ``pl.system`` calls: bar_* barriers, sync_all core types,
cross-core sync modes (UNICAST_BLOCK, INTER_BLOCK), run-time buffer ids and their candidates,
dcci, and the per-core ids (get_block_idx / get_subblock_num as the real runtime answers them)."""
from __future__ import annotations

import numpy as np
import pytest

import pypto_pro.language as pl
from located import line_of
from pypto_pro import DeadlockError, RaceError, SyncError
from pypto_pro.ir.printer import kernel_str
from pypto_pro.language.enums import SectionKind

P = pl.PipeType
M = pl.CrossCoreSyncMode
VEC = pl.TileType(shape=[16, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
F32 = pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32]



# ---- bar_all / sync_all(AIV_ONLY) as the only synchronisation of a Vector kernel ------------------


def drain_kernel(how: str | None):
    def kernel(a: F32, b: F32, out: F32):
        ta = pl.make_tile(VEC, addr=0x0000, size=4096)
        tb = pl.make_tile(VEC, addr=0x1000, size=4096)
        to = pl.make_tile(VEC, addr=0x2000, size=4096)
        with pl.section_vector():
            pl.load(ta, a, [0, 0])                       # <- load
            pl.load(tb, b, [0, 0])
            if how == "bar_all":
                pl.system.bar_all()
            elif how == "sync_all":
                pl.system.sync_all(core_type=pl.SyncCoreType.AIV_ONLY)
            pl.add(to, ta, tb)                           # <- add
            if how == "bar_all":
                pl.system.bar_all()
            elif how == "sync_all":
                pl.system.sync_all(core_type=pl.SyncCoreType.AIV_ONLY)
            pl.store(out, to, [0, 0])
    return kernel


@pytest.mark.parametrize("how", ["bar_all", "sync_all"])
@pytest.mark.parametrize("arch", ["a5", "a2a3"])
def test_full_drains_order_every_pipe(how, arch):
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((16, 64)).astype(np.float32) for _ in range(2))
    out = np.zeros_like(a)
    report = pl.jit(drain_kernel(how), arch=arch, auto_mutex=False).options(check="raise")(a, b, out)
    np.testing.assert_array_equal(out, a + b)
    assert report.faults == []


def test_without_the_drain_the_load_and_the_add_race():
    a = np.ones((16, 64), np.float32)
    fn = drain_kernel(None)
    with pytest.raises(RaceError) as info:
        pl.jit(fn, auto_mutex=False).options(check="raise")(a, a, np.zeros_like(a))
    text = str(info.value)
    assert line_of(fn, "add") in text and "MTE2" in text


def test_bar_all_is_visible_in_the_dump():
    prog = pl.jit(drain_kernel("bar_all"), auto_mutex=False).compile().programs[SectionKind.VECTOR]
    assert kernel_str(prog).count("barrier(ALL)") == 2


# ---- cross-core modes -------------------------------------------------------------------------------


ACC = pl.TileType([16, 16], pl.DT_FP32, pl.MemorySpace.Acc)
MATA = pl.TileType([16, 16], pl.DT_FP16, pl.MemorySpace.Mat)
LEFT = pl.TileType([16, 16], pl.DT_FP16, pl.MemorySpace.Left)
RIGHT = pl.TileType([16, 16], pl.DT_FP16, pl.MemorySpace.Right)
VEC16 = pl.TileType([16, 16], pl.DT_FP32, pl.MemorySpace.Vec)


def unicast_kernel(cube_mode):
    """AIV0 alone signals the Cube (UNICAST_BLOCK); the Cube's wait in ``cube_mode``."""
    def kernel(a: pl.Tensor[[16, 16], pl.DT_FP16], ws: pl.Tensor[[32, 16], pl.DT_FP32],
               out: pl.Tensor[[16, 16], pl.DT_FP32]):
        am = pl.make_tile(MATA, addr=0, size=512)
        al = pl.make_tile(LEFT, addr=0, size=512)
        br = pl.make_tile(RIGHT, addr=0, size=512)
        acc = pl.make_tile(ACC, addr=0, size=1024)
        v = pl.make_tile(VEC16, addr=0, size=1024)
        with pl.section_vector():
            if pl.get_subblock_idx() == 0:
                pl.load(v, ws, [0, 0])
                pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=0)
                pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=0)
                pl.store(ws, v, [16, 0])
                pl.system.set_cross_core(pipe=P.MTE3, event_id=3, sync_mode=M.UNICAST_BLOCK)
        with pl.section_cube():
            pl.load(am, a, [0, 0])
            pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.MTE1, event_id=0)
            pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.MTE1, event_id=0)
            pl.move(al, am)
            pl.move(br, am)
            pl.system.sync_src(set_pipe=P.MTE1, wait_pipe=P.M, event_id=0)
            pl.system.sync_dst(set_pipe=P.MTE1, wait_pipe=P.M, event_id=0)
            pl.matmul(acc, al, br)
            pl.system.sync_src(set_pipe=P.M, wait_pipe=P.FIX, event_id=0)
            pl.system.sync_dst(set_pipe=P.M, wait_pipe=P.FIX, event_id=0)
            pl.system.wait_cross_core(pipe=P.FIX, event_id=3, sync_mode=cube_mode)  # <- wait
            pl.store(out, acc, [0, 0])
    return kernel


def _unicast_run(mode):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((16, 16)).astype(np.float16)
    ws = np.zeros((32, 16), np.float32)
    ws[:16] = rng.standard_normal((16, 16))
    out = np.zeros((16, 16), np.float32)
    report = pl.jit(unicast_kernel(mode), arch="a5", auto_mutex=False).options(check="raise")(a, ws, out)
    return a, ws, out, report


def test_unicast_block_lets_one_vector_core_release_the_cube():
    a, ws, out, report = _unicast_run(M.UNICAST_BLOCK)
    assert report.faults == []
    np.testing.assert_array_equal(ws[16:], ws[:16])
    ref = a.astype(np.float32) @ a.astype(np.float32)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


def test_intra_block_wait_needs_both_vector_cores():
    fn = unicast_kernel(M.INTRA_BLOCK)
    with pytest.raises(DeadlockError) as info:
        pl.jit(fn, arch="a5", auto_mutex=False).options(check="raise")(
            np.zeros((16, 16), np.float16), np.zeros((32, 16), np.float32), np.zeros((16, 16), np.float32))
    text = str(info.value)
    assert f"{line_of(fn, 'wait')}: 1 of 2 signal(s) arrived" in text  # AIV1 never signals


def inter_block_kernel(barrier: bool):
    def kernel(x: F32, ws: F32, z: F32):
        t = pl.make_tile(VEC, addr=0, size=4096)
        u = pl.make_tile(VEC, addr=0x1000, size=4096)
        with pl.section_vector():
            b = pl.get_block_idx()
            n = pl.get_block_num()
            pl.load(t, x, [b * 16, 0])
            pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=0)
            pl.store(ws, t, [b * 16, 0])                     # <- store
            if barrier:
                pl.system.set_cross_core(pipe=P.MTE3, event_id=5, sync_mode=M.INTER_BLOCK)
                pl.system.wait_cross_core(pipe=P.MTE2, event_id=5, sync_mode=M.INTER_BLOCK)
            pl.load(u, ws, [((b + 1) % n) * 16, 0])          # <- load
            pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=1)
            pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=1)
            pl.store(z, u, [b * 16, 0])
    return kernel


def test_inter_block_flags_meet_every_vector_core_of_the_launch():
    x = np.arange(4 * 16 * 64, dtype=np.float32).reshape(64, 64)
    ws, z = np.zeros_like(x), np.zeros_like(x)
    report = pl.jit(inter_block_kernel(True), auto_mutex=False).options(check="raise")[None, 4](x, ws, z)
    assert report.faults == []
    np.testing.assert_array_equal(z, np.roll(x.reshape(4, 16, 64), -1, axis=0).reshape(64, 64))


def test_without_inter_block_flags_the_blocks_race():
    x = np.ones((64, 64), np.float32)
    with pytest.raises(RaceError, match="one block writes bytes another reads"):
        pl.jit(inter_block_kernel(False), auto_mutex=False).options(check="raise")[None, 4](
            x, np.zeros_like(x), np.zeros_like(x))


# ---- buffer ids ---------------------------------------------------------------------------------------


def dynamic_mutex_kernel(ids):
    def kernel(x: F32, out: F32):
        g = pl.make_tile_group(type=VEC, addrs=[0, 0x1000, 0x2000], mutex_ids=[0, 1, 2])
        with pl.section_vector():
            for i in pl.range(0, 3):
                t = g[i]
                pl.system.mutex_lock(pipe=P.MTE2, mutex_id=i, mutex_ids=ids)  # <- lock
                pl.load(t, x, [i * 16, 0])
                pl.system.mutex_unlock(pipe=P.MTE2, mutex_id=i, mutex_ids=ids)
                pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=0)
                pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=0)
                pl.mutex.mutex_lock(pipe=P.MTE3, mutex_id=i, mutex_ids=ids)
                pl.store(out, t, [i * 16, 0])
                pl.mutex.mutex_unlock(pipe=P.MTE3, mutex_id=i, mutex_ids=ids)
    return kernel


def test_run_time_mutex_ids_among_the_candidates():
    x = np.arange(48 * 64, dtype=np.float32).reshape(48, 64)
    out = np.zeros_like(x)
    report = pl.jit(dynamic_mutex_kernel([0, 1, 2]), auto_mutex=False).options(check="raise")(x, out)
    np.testing.assert_array_equal(out, x)
    assert report.faults == []


def test_run_time_mutex_id_outside_the_candidates_is_reported():
    fn = dynamic_mutex_kernel([0, 1])
    x = np.zeros((48, 64), np.float32)
    with pytest.raises(SyncError) as info:
        pl.jit(fn, auto_mutex=False).options(check="raise")(x, np.zeros_like(x))
    text = str(info.value)
    assert "run-time buffer id 2 is not among the candidates [0, 1]" in text and line_of(fn, "lock") in text


def test_pl_mutex_is_the_system_namespace_pair():
    assert pl.mutex.mutex_lock is pl.system.mutex_lock and pl.mutex.mutex_unlock is pl.system.mutex_unlock


# ---- per-core ids -------------------------------------------------------------------------------------


def test_ids_per_core_of_a_mixed_kernel():
    """Each Vector core writes its get_block_idx / get_subblock_num; the Cube its own."""
    def kernel(a: pl.Tensor[[16, 16], pl.DT_FP16], ids: pl.Tensor[[8, 4], pl.DT_INT32]):
        am = pl.make_tile(MATA, addr=0, size=512)
        with pl.section_cube():
            pl.load(am, a, [0, 0])
            b = pl.get_block_idx()
            pl.setval(ids, b * 4, pl.get_block_idx())
            pl.setval(ids, b * 4 + 1, pl.get_subblock_num())
        with pl.section_vector():
            k = pl.get_block_idx()
            pl.setval(ids, (4 + k // 2) * 4 + 2 + k % 2, k * 10 + pl.get_subblock_num())
    ids = np.full((8, 4), -1, np.int32)
    pl.jit(kernel, arch="a5", auto_mutex=False)[None, 2](np.zeros((16, 16), np.float16), ids)
    assert ids[:2, :2].tolist() == [[0, 1], [1, 1]]            # AIC: the block, one subblock
    assert ids[4:6, 2:].tolist() == [[2, 12], [22, 32]]        # AIV: block * 2 + subblock, two subblocks


def test_ids_per_core_of_a_vector_only_kernel():
    """get_subblock_num.md: an AIV-only kernel has no subblocks (1); each launched block is one AIV,
    get_block_idx runs over [0, get_block_num())."""
    def kernel(ids: pl.Tensor[[8, 4], pl.DT_INT32]):
        with pl.section_vector():
            b = pl.get_block_idx()
            pl.setval(ids, b * 4, b)
            pl.setval(ids, b * 4 + 1, pl.get_subblock_num())
            pl.setval(ids, b * 4 + 2, pl.get_subblock_idx())
            pl.setval(ids, b * 4 + 3, pl.get_block_num())
    ids = np.full((8, 4), -1, np.int32)
    pl.jit(kernel, arch="a5", auto_mutex=False)[None, 3](ids)
    assert ids[:3].tolist() == [[0, 1, 0, 3], [1, 1, 0, 3], [2, 1, 0, 3]]
    assert (ids[3:] == -1).all()


# ---- dcci ---------------------------------------------------------------------------------------------


def test_dcci_is_a_scalar_instruction_in_the_dump_and_changes_no_bytes():
    def kernel(a: F32, out: F32):
        t = pl.make_tile(VEC, addr=0, size=4096)
        with pl.section_vector():
            pl.system.dcci(a, [0, 0], cache_line=pl.CacheLine.SINGLE_CACHE_LINE, dst=pl.DcciDst.CACHELINE_OUT)
            pl.load(t, a, [0, 0])
            pl.system.dcci(t, 0)
            pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.MTE3, event_id=0)
            pl.store(out, t, [0, 0])
    k = pl.jit(kernel, auto_mutex=False)
    text = kernel_str(k.compile().programs[SectionKind.VECTOR])
    assert "[S   ] dcci(a, SINGLE_CACHE_LINE, CACHELINE_OUT)" in text
    assert "[S   ] dcci(t, ENTIRE_DATA_CACHE, CACHELINE_UB)" in text  # AUTO: the UB for a tile
    a = np.arange(16 * 64, dtype=np.float32).reshape(16, 64)
    out = np.zeros_like(a)
    assert k.options(check="raise")(a, out).faults == []
    np.testing.assert_array_equal(out, a)
