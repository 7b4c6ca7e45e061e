"""Located compile errors of ``pl.system`` calls (flags, barriers, buffer ids, cross-core sync,
sync_all, dcci): each kernel marks the line the error must point at with ``# <- here``; the column
comes from a token on that line."""
from __future__ import annotations

import re

import pytest

import pypto_pro.language as pl
from pypto_pro import CompileError
from located import check_location, marked_line

T32 = pl.Tensor[[64, 64], pl.DT_FP32]
VEC = pl.TileType(shape=[64, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
MAT = pl.TileType(shape=[64, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat)
P = pl.PipeType

CASES = []


def case(match: str, token: str | None = None, archs=("a5",), also: type | None = None):
    """Compiling the kernel on each of ``archs`` fails with ``match`` at its marker (and the error is
    also an instance of ``also``, the class the real PyPTO Pro raises)."""
    def register(fn):
        for arch in archs:
            CASES.append(pytest.param(fn, arch, match, token, also, id=f"{fn.__name__}-{arch}"))
        return fn
    return register


@pytest.mark.parametrize("fn,arch,match,token,also", CASES)
def test_system_compile_error(fn, arch, match, token, also):
    with pytest.raises(CompileError) as info:
        pl.jit(fn, arch=arch, auto_mutex=False).compile()
    err = info.value
    assert re.search(match, err.bare_message), f"{match!r} not in: {err.bare_message}"
    if also is not None:
        assert isinstance(err, also)
    check_location(err, *marked_line(fn), token)


# ---- pipes must belong to the section's engine ----------------------------------------------------


@case(r"pl.PipeType.FIX is not a pipe of the Vector engine \(section_vector\); its pipes are MTE2, MTE3, S, V",
      "pl.PipeType.FIX", archs=("a5", "a2a3"))
def fix_wait_in_vector_section(x: T32):
    with pl.section_vector():
        pl.system.sync_dst(set_pipe=P.V, wait_pipe=pl.PipeType.FIX, event_id=0)  # <- here


@case(r"pl.PipeType.V is not a pipe of the Cube engine", "pl.PipeType.V")
def vector_pipe_in_cube_section(x: T32):
    with pl.section_cube():
        pl.system.set_cross_core(pipe=pl.PipeType.V, event_id=0)  # <- here


@case(r"pl.system.bar_m\(\) drains PIPE_M, which the Vector engine .* does not have \(bar_m / bar_mte1 / bar_fix "
      r"are Cube-section calls\)", archs=("a5", "a2a3"))
def bar_m_in_vector_section(x: T32):
    with pl.section_vector():
        pl.system.bar_m()  # <- here


@case(r"the scalar pipe is in order by itself; pipe_barrier\(PIPE_S\) is a hardware error")
def barrier_on_scalar_pipe(x: T32):
    with pl.section_vector():
        pl.system.barrier(pl.PipeType.S)  # <- here


@case(r"set_pipe and wait_pipe are both V; order instructions of one pipe with pl.system.barrier")
def flag_within_one_pipe(x: T32):
    with pl.section_vector():
        pl.system.sync_src(set_pipe=P.V, wait_pipe=P.V, event_id=0)  # <- here


@case(r"pl.system.bar_mte2\(\) must be inside `with pl.section_vector\(\):`")
def pipe_bar_outside_section(x: T32):
    pl.system.bar_mte2()  # <- here (bar_all is taken anywhere, as real sort kernels call it before a section)


@case(r"'pipe' must be a pl.PipeType, got", "3)")
def barrier_of_an_int(x: T32):
    with pl.section_vector():
        pl.system.barrier(3)  # <- here


# ---- cross-core flags -------------------------------------------------------------------------------


@case(r"cross-core event id 16 is outside 0-15", "16)", also=ValueError)
def cross_core_id_too_large(x: T32):
    with pl.section_vector():
        pl.system.set_cross_core(pipe=P.MTE3, event_id=16)  # <- here


@case(r"UNICAST_BLOCK is an a5 mode .* use INTRA_BLOCK", "pl.CrossCoreSyncMode", archs=("a2a3",))
def unicast_on_a2a3(x: T32):
    with pl.section_vector():
        pl.system.set_cross_core(pipe=P.MTE3, event_id=1, sync_mode=pl.CrossCoreSyncMode.UNICAST_BLOCK)  # <- here


@case(r"INTER_SUBBLOCK pairs the two Vector cores of a block; call it in section_vector\(\)", "pl.CrossCoreSyncMode")
def inter_subblock_in_cube(x: T32):
    with pl.section_cube():
        pl.system.wait_cross_core(pipe=P.FIX, event_id=1, sync_mode=pl.CrossCoreSyncMode.INTER_SUBBLOCK)  # <- here


# ---- sync_all -------------------------------------------------------------------------------------


@case(r"Hard mode sync_all does not accept workspace arguments", "[x]", also=ValueError)
def hard_sync_all_with_workspace(x: T32):
    with pl.section_vector():
        pl.system.sync_all([x], core_type=pl.SyncCoreType.AIV_ONLY)  # <- here


@case(r"Soft mode sync_all requires workspaces list", "None", also=ValueError)
def soft_sync_all_without_workspace(x: T32):
    with pl.section_vector():
        pl.system.sync_all(None, core_type=pl.SyncCoreType.AIV_ONLY, mode=pl.SyncAllMode.SOFT)  # <- here


@case(r"soft AIV_ONLY: a Mat tile \(l1_workspace\) is not allowed", "[x, ub, l1]")
def soft_aiv_only_with_l1(x: T32):
    ub = pl.make_tile(VEC, addr=0, size=16384)
    l1 = pl.make_tile(MAT, addr=0, size=8192)
    with pl.section_vector():
        pl.system.sync_all([x, ub, l1], core_type=pl.SyncCoreType.AIV_ONLY, mode=pl.SyncAllMode.SOFT)  # <- here


@case(r"soft MIX: workspaces must contain a Mat tile \(l1_workspace\)", "[x, ub]")
def soft_mix_without_l1(x: T32):
    ub = pl.make_tile(VEC, addr=0, size=16384)
    with pl.section_vector():
        pl.system.sync_all([x, ub], mode=pl.SyncAllMode.SOFT)  # <- here


@case(r"duplicate ub in workspaces", "ub2")
def soft_duplicate_ub(x: T32):
    ub = pl.make_tile(VEC, addr=0, size=16384)
    ub2 = pl.make_tile(VEC, addr=0x4000, size=16384)
    with pl.section_vector():
        pl.system.sync_all([x, ub, ub2], core_type=pl.SyncCoreType.AIV_ONLY, mode=pl.SyncAllMode.SOFT)  # <- here


# ---- buffer ids -----------------------------------------------------------------------------------


@case(r"mutex id 32 must be an int in 0-31", "32]")
def mutex_candidate_out_of_range(x: T32):
    with pl.section_vector():
        for i in pl.range(0, 2):
            pl.system.mutex_lock(pipe=P.MTE2, mutex_id=i, mutex_ids=[0, 32])  # <- here
            pl.system.mutex_unlock(pipe=P.MTE2, mutex_id=i, mutex_ids=[0, 32])


@case(r"max_mutex_id must be an int in 1-32, got", "33")
def max_mutex_id_too_large(x: T32):
    with pl.section_vector():
        for i in pl.range(0, 2):
            pl.system.mutex_lock(pipe=P.MTE2, mutex_id=i, max_mutex_id=33)  # <- here


@case(r"mode must be a non-negative int", "-1")
def mutex_negative_mode(x: T32):
    with pl.section_vector():
        pl.system.mutex_lock(pipe=P.MTE2, mutex_id=0, mode=-1)  # <- here


# ---- dcci -----------------------------------------------------------------------------------------


@case(r"pl.system.dcci takes a GM tensor or a Vec tile, not a Mat tile", "l1")
def dcci_of_a_mat_tile(x: T32):
    l1 = pl.make_tile(MAT, addr=0, size=8192)
    with pl.section_cube():
        pl.system.dcci(l1)  # <- here


@case(r"a tile target takes one element offset \(an int\), not a list", "[0, 0]")
def dcci_tile_with_axis_offsets(x: T32):
    ub = pl.make_tile(VEC, addr=0, size=16384)
    with pl.section_vector():
        pl.system.dcci(ub, [0, 0])  # <- here


@case(r"'x' has rank 2; give one offset per axis, got 1", "[0]")
def dcci_tensor_offsets_rank(x: T32):
    with pl.section_vector():
        pl.system.dcci(x, [0])  # <- here
