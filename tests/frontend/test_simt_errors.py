"""Misuse of ``pl.simt`` is a located CompileError (file:line:col, source line, caret)."""
import pytest

import pypto_pro.language as pl
from pypto_pro import CompileError

from located import check_location, marked_line

N = 64
ROW = pl.TileType(shape=[1, N], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
T = pl.Tensor[[1, N], pl.DT_FP32]


@pl.simt.function(max_threads=N)
def _ok(dst: pl.Tile[[1, N], pl.DT_FP32]):
    dst[0, pl.simt.linear_thread_idx()] = 1.0


@pl.simt.function
def _callee(v: pl.DT_FP32) -> pl.DT_FP32:
    return v * 2.0


@pl.simt.function(max_threads=N)
def _uses_tile_op(dst: pl.Tile[[1, N], pl.DT_FP32]):
    pl.muls(dst, dst, 2.0)  # <- here


def too_many_threads(out: T):
    dst = pl.make_tile(ROW, addr=0, size=N * 4)
    with pl.section_vector():
        pl.simt.launch(_ok, threads=(64, 64), args=(dst,))  # <- here


def over_max_threads(out: T):
    dst = pl.make_tile(ROW, addr=0, size=N * 4)
    with pl.section_vector():
        pl.simt.launch(_ok, threads=(N, 2), args=(dst,))  # <- here


def thread_idx_in_kernel(out: T):
    with pl.section_vector():
        t = pl.simt.thread_idx()  # <- here


def launch_outside_vector_section(out: T):
    dst = pl.make_tile(ROW, addr=0, size=N * 4)
    pl.simt.launch(_ok, threads=N, args=(dst,))  # <- here


def tile_op_in_simt(out: T):
    dst = pl.make_tile(ROW, addr=0, size=N * 4)
    with pl.section_vector():
        pl.simt.launch(_uses_tile_op, threads=N, args=(dst,))


def callee_from_kernel(out: T):
    with pl.section_vector():
        v = _callee(1.0)  # <- here


def launching_a_callee(out: T):
    with pl.section_vector():
        pl.simt.launch(_callee, threads=N, args=(1.0,))  # <- here


def args_not_a_tuple(out: T):
    dst = pl.make_tile(ROW, addr=0, size=N * 4)
    with pl.section_vector():
        pl.simt.launch(_ok, threads=N, args=dst)  # <- here


@pl.simt.function
def _recurse(v: pl.DT_INT32) -> pl.DT_INT32:
    return _recurse(v - 1)  # <- here


@pl.simt.function(max_threads=N)
def _calls_recursive(dst: pl.Tile[[1, N], pl.DT_INT32]):
    dst[0, pl.simt.linear_thread_idx()] = _recurse(3)


@pl.simt.function(max_threads=N)
def _returns_value(dst: pl.Tile[[1, N], pl.DT_FP32]):
    return 1.0  # <- here


def recursive_callee(out: T):
    dst = pl.make_tile(pl.TileType(shape=[1, N], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec), addr=0,
                       size=N * 4)
    with pl.section_vector():
        pl.simt.launch(_calls_recursive, threads=N, args=(dst,))


def launchable_returns_a_value(out: T):
    dst = pl.make_tile(ROW, addr=0, size=N * 4)
    with pl.section_vector():
        pl.simt.launch(_returns_value, threads=N, args=(dst,))


def wrong_argument_type(out: T):
    dst = pl.make_tile(pl.TileType(shape=[1, N], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec), addr=0,
                       size=N * 4)
    with pl.section_vector():
        pl.simt.launch(_ok, threads=N, args=(dst,))  # <- here


@pl.simt.function(max_threads=N)
def _gm(dst: pl.Tensor[[1, N], pl.DT_FP32]):
    dst[0, pl.simt.linear_thread_idx()] = 1.0


def dynamic_tensor(out: pl.Tensor[[pl.DYNAMIC, N], pl.DT_FP32]):
    with pl.section_vector():
        pl.simt.launch(_gm, threads=N, args=(out,))  # <- here


def mat_tile(out: T):
    mat = pl.make_tile(pl.TileType(shape=[16, 16], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Mat), addr=0,
                       size=16 * 16 * 4)
    with pl.section_vector():
        pl.simt.launch(_ok, threads=N, args=(mat,))  # <- here


CASES = [
    (dynamic_tensor, "must have a static shape", "out,", dynamic_tensor),
    (mat_tile, "must be a Vec-memory Tile", "mat,", mat_tile),
    (recursive_callee, "Recursive helper @pl.simt.function call involving '_recurse'", "_recurse(v - 1)", _recurse),
    (launchable_returns_a_value, "only supports bare return or return None", "return 1.0", _returns_value),
    (wrong_argument_type, "SIMT parameter 'dst' annotated as", "dst,", wrong_argument_type),
    (too_many_threads, "must not exceed 2048, got 4096", "(64, 64)", too_many_threads),
    (over_max_threads, "exceed the callee's max_threads 64", "(N, 2)", over_max_threads),
    (thread_idx_in_kernel, "can only be used inside a SIMT function", "pl.simt.thread_idx", thread_idx_in_kernel),
    (launch_outside_vector_section, "section_vector", "pl.simt.launch", launch_outside_vector_section),
    (tile_op_in_simt, "Operation 'muls' \\(pl.muls\\) is not supported inside a SIMT function", "pl.muls", _uses_tile_op),
    (callee_from_kernel, "must be invoked through pl.simt.launch", "_callee", callee_from_kernel),
    (launching_a_callee, "is not a launchable @pl.simt.function", "_callee", launching_a_callee),
    (args_not_a_tuple, "args must be a tuple", "dst)", args_not_a_tuple),
]


@pytest.mark.parametrize("fn, match, token, marked", CASES, ids=[c[0].__name__ for c in CASES])
def test_simt_misuse_is_located(fn, match, token, marked):
    with pytest.raises(CompileError, match=match) as info:
        pl.jit(arch="a5")(fn).compile()
    path, line, text = marked_line(marked)
    check_location(info.value, path, line, text, token)


def test_simt_needs_the_a5_simt_engine():
    with pytest.raises(CompileError, match="SIMT engine"):
        pl.jit(arch="a2a3")(over_max_threads).compile()


def ok_kernel(out: T):
    dst = pl.make_tile(ROW, addr=0, size=N * 4)
    with pl.section_vector():
        pl.simt.launch(_ok, threads=N, args=(dst,))  # <- here
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.store(out, dst, [0, 0])


def test_the_cpp_backend_refuses_simt_at_the_launch():
    kernel = pl.jit(arch="a5")(ok_kernel)
    kernel.compile()  # the simulator takes it
    with pytest.raises(CompileError, match="cannot be emitted as PTO-ISA C\\+\\+") as info:
        kernel.emit()
    path, line, text = marked_line(ok_kernel)
    check_location(info.value, path, line, text, "pl.simt.launch")


def test_a_tile_op_in_simt_code_is_the_real_unsupported_feature_class():
    from pypto_pro.errors import UnsupportedFeatureError
    with pytest.raises(UnsupportedFeatureError):
        pl.jit(arch="a5")(tile_op_in_simt).compile()
