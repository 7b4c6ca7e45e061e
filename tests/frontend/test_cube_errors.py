"""Compile errors of the Cube engine and of cross-core sync: raised as ``pypto_pro.CompileError`` by
``kernel.compile()`` (``pl.jit(fn, arch=...)``), located at ``path:line:col:`` in this file, with
the source line quoted and a caret under the right token.

Each kernel marks the line the error must point at with the comment ``# <- here``; the expected
line comes from ``inspect.getsourcelines`` (no hard-coded numbers), the expected column from a
token on that line (the first non-blank character when none is given: the whole call).
"""
from __future__ import annotations

import re

import pytest

import pypto_pro.language as pl
from pypto_pro import CompileError

DYN = pl.DYNAMIC
Mat, Left, Right, Acc, Vec, Bias = (pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right,
                                    pl.MemorySpace.Acc, pl.MemorySpace.Vec, pl.MemorySpace.Bias)
T16 = pl.Tensor[[DYN, DYN], pl.DT_FP16]
T32 = pl.Tensor[[DYN, DYN], pl.DT_FP32]
I8T = pl.Tensor[[DYN, DYN], pl.DT_INT8]

MAT16 = pl.TileType([64, 64], pl.DT_FP16, Mat)
LEFT16 = pl.TileType([64, 64], pl.DT_FP16, Left)
RIGHT16 = pl.TileType([64, 64], pl.DT_FP16, Right)
ACC32 = pl.TileType([64, 64], pl.DT_FP32, Acc)
VEC32 = pl.TileType([64, 64], pl.DT_FP32, Vec)
VEC16 = pl.TileType([64, 64], pl.DT_FP16, Vec)


from located import check_location, marked_line, one_line_kernel  # noqa: E402  (shared with the other error tests)


CASES = []


def case(match: str, token: str | None = None, archs=("a5", "a2a3")):
    """Register a kernel function: compiling it on each of ``archs`` fails with ``match`` at its marker."""
    def register(fn):
        for arch in archs:
            CASES.append(pytest.param(fn, arch, match, token, id=f"{fn.__name__}-{arch}"))
        return fn
    return register


def line_case(name: str, line: str, match: str, token: str | None = None, tensor: str = "T16", archs=("a5", "a2a3")):
    """Register as case ``name`` the kernel ``def name(x: <tensor>)`` whose one statement is ``line``."""
    return case(match, token, archs)(one_line_kernel(name, line, globals(), tensor, section=None))


def move_case(name: str, section: str, src, dst, match: str, token: str | None = None, archs=("a5", "a2a3")):
    """Register ``pl.move(d, s)`` from a ``src`` tile to a ``dst`` tile in section_``section``() as case ``name``."""
    if section == "cube":
        def kernel(x: T16):
            s = pl.make_tile(src, addr=0)
            d = pl.make_tile(dst, addr=0)
            with pl.section_cube():
                pl.move(d, s)  # <- here
    else:
        def kernel(x: T16):
            s = pl.make_tile(src, addr=0)
            d = pl.make_tile(dst, addr=0)
            with pl.section_vector():
                pl.move(d, s)  # <- here
    kernel.__name__ = kernel.__qualname__ = name
    return case(match, token, archs)(kernel)


@pytest.mark.parametrize("fn,arch,match,token", CASES)
def test_cube_compile_error(fn, arch, match, token):
    kernel = pl.jit(fn, arch=arch)
    with pytest.raises(CompileError) as info:
        kernel.compile()
    err = info.value
    assert re.search(match, err.bare_message), f"{match!r} not in: {err.bare_message}"
    check_location(err, *marked_line(fn), token)


# ---- a2a3 has no direct Cube <-> Vector paths -------------------------------------------------------

GM_HINT = (r"exchange data through global memory on a2a3: pl.store the tile to a GM workspace in "
           r"section_cube\(\), pl.system.set_cross_core / wait_cross_core, then pl.load it in section_vector\(\)")


@case(r"a2a3 has no Acc -> Vec path\. Cube and Vector " + GM_HINT + r" \(the direct Acc->Vec path exists on a5\)",
      archs=("a2a3",))
def move_acc_to_vec_a2a3(x: T32):
    acc = pl.make_tile(ACC32, addr=0)
    ub = pl.make_tile(VEC32, addr=0)
    with pl.section_cube():
        pl.move(ub, acc)  # <- here


move_case("move_vec_to_mat_a2a3", "vector", VEC16, MAT16,
          r"a2a3 has no Vec -> Mat path\. Cube and Vector " + GM_HINT + r" \(the direct Vec->Mat path exists on a5\)",
          archs=("a2a3",))


# ---- fractal layouts ------------------------------------------------------------------------------


line_case("left_rows_not_fractal", "t = pl.make_tile(pl.TileType([100, 64], pl.DT_FP16, Left), addr=0)",
          r"a (NZ|ZZ) Left tile is stored in 16 x 16 boxes for DT_FP16: rows must be a multiple of 16, got 100",
          "pl.make_tile(")
line_case("right_cols_not_fractal", "t = pl.make_tile(pl.TileType([64, 100], pl.DT_FP16, Right), addr=0)",
          r"a ZN Right tile is stored in 16 x 16 boxes for DT_FP16: cols must be a multiple of 16, got 100",
          "pl.make_tile(")
line_case("acc_cols_not_fractal",
          "g = pl.make_tile_group(type=pl.TileType([128, 120], pl.DT_FP32, Acc), addrs=0, mutex_ids=[0, 1])",
          r"a NZ Acc tile is stored in 16 x 16 boxes for DT_FP32: cols must be a multiple of 16, got 120",
          "pl.make_tile_group(", tensor="T32")
line_case("mat_int8_cols_not_fractal", "t = pl.make_tile(pl.TileType([64, 48], pl.DT_INT8, Mat), addr=0)",  # 48 B a row
          r"a NZ Mat tile is stored in 16 x 32 boxes for DT_INT8: cols must be a multiple of 32, got 48",
          "pl.make_tile(")
line_case("right_fp32_k_not_fractal", "t = pl.make_tile(pl.TileType([20, 64], pl.DT_FP32, Right), addr=0)",  # 80-byte K
          r"a ZN Right tile is stored in 8 x 16 boxes for DT_FP32: rows must be a multiple of 8, got 20",
          "pl.make_tile(")
line_case("bias_two_rows", "t = pl.make_tile(pl.TileType([2, 64], pl.DT_FP32, Bias), addr=0)",
          r"a Bias tile holds one row: shape \[1, N\]", "pl.make_tile(")


# ---- pl.matmul / pl.matmul_acc -----------------------------------------------------------------------


def matmul_case(name: str, match: str, token: str | None = None, lhs=LEFT16, rhs=RIGHT16, dst=ACC32, rhs_addr=0,
                section: str = "cube"):
    """Register ``pl.matmul(acc, a, b)`` on tiles of these types, in section_``section``(), as case ``name``."""
    if section == "cube":
        def kernel(x: T16):
            a = pl.make_tile(lhs, addr=0)
            b = pl.make_tile(rhs, addr=rhs_addr)
            acc = pl.make_tile(dst, addr=0)
            with pl.section_cube():
                pl.matmul(acc, a, b)  # <- here
    else:
        def kernel(x: T16):
            a = pl.make_tile(lhs, addr=0)
            b = pl.make_tile(rhs, addr=rhs_addr)
            acc = pl.make_tile(dst, addr=0)
            with pl.section_vector():
                pl.matmul(acc, a, b)  # <- here
    kernel.__name__ = kernel.__qualname__ = name
    return case(match, token)(kernel)


matmul_case("matmul_lhs_in_mat", r"'lhs_tile' must be a Left tile, 'a' is in Mat", "a,", lhs=MAT16)
matmul_case("matmul_rhs_in_left", r"'rhs_tile' must be a Right tile, 'b' is in Left", "b)", rhs=LEFT16, rhs_addr=0x2000)
matmul_case("matmul_dst_in_vec", r"'dst_tile' must be a Acc tile, 'acc' is in Vec", "acc,", dst=VEC32)
matmul_case("matmul_k_mismatch", r"pl.matmul: lhs is \[64, 64\] and rhs is \[32, 64\]: K differs", "b)",
            rhs=pl.TileType([32, 64], pl.DT_FP16, Right))
matmul_case("matmul_dst_shape", r"pl.matmul: dst must be \[64, 64\], is \[64, 128\]", "acc,",
            dst=pl.TileType([64, 128], pl.DT_FP32, Acc))
matmul_case("matmul_fp16_x_int8", r"the Cube multiplies DT_FP16 x DT_FP16, DT_BF16 x DT_BF16, DT_INT8 x DT_INT8, "
            r"DT_FP32 x DT_FP32, DT_HF8 x DT_HF8, .*; not DT_FP16 x DT_INT8",
            rhs=pl.TileType([64, 64], pl.DT_INT8, Right))
matmul_case("matmul_fp16_accumulator", r"DT_FP16 x DT_FP16 accumulates in DT_FP32; 'dst_tile' is DT_FP16", "acc,",
            dst=pl.TileType([64, 64], pl.DT_FP16, Acc))


@case(r"pl.matmul_acc: lhs is \[64, 64\] and rhs is \[128, 64\]: K differs", "b)")
def matmul_acc_k_mismatch(x: T16):
    a = pl.make_tile(LEFT16, addr=0)
    b = pl.make_tile(pl.TileType([128, 64], pl.DT_FP16, Right), addr=0)
    acc = pl.make_tile(ACC32, addr=0)
    with pl.section_cube():
        pl.matmul_acc(acc, acc, a, b)  # <- here


matmul_case("matmul_int8_into_fp32", r"DT_INT8 x DT_INT8 accumulates in DT_INT32; 'dst_tile' is DT_FP32", "acc,",
            lhs=pl.TileType([64, 64], pl.DT_INT8, Left), rhs=pl.TileType([64, 64], pl.DT_INT8, Right))


@case(r"pl.matmul_acc: 'acc_tile' must have dst's shape and dtype", "acc2")
def matmul_acc_other_shape(x: T16):
    a = pl.make_tile(LEFT16, addr=0)
    b = pl.make_tile(RIGHT16, addr=0)
    acc = pl.make_tile(ACC32, addr=0)
    acc2 = pl.make_tile(pl.TileType([64, 128], pl.DT_FP32, Acc), addr=0x8000)
    with pl.section_cube():
        pl.matmul_acc(acc, acc2, a, b)  # <- here


@case(r"pl.matmul: bias must be \[1, 64\] DT_FP32", "bt)")
def matmul_bias_wrong_width(x: T16):
    a = pl.make_tile(LEFT16, addr=0)
    b = pl.make_tile(RIGHT16, addr=0)
    acc = pl.make_tile(ACC32, addr=0)
    bt = pl.make_tile(pl.TileType([1, 32], pl.DT_FP32, Bias), addr=0)
    with pl.section_cube():
        pl.matmul(acc, a, b, bt)  # <- here


matmul_case("matmul_in_vector_section", r"pl.matmul runs on the Cube engine; it cannot be used in section_vector\(\)",
            "pl.matmul", section="vector")


@case(r"pl.matmul_acc must be inside `with pl.section_cube\(\):`", "pl.matmul_acc")
def matmul_acc_outside_sections(x: T16):
    a = pl.make_tile(LEFT16, addr=0)
    b = pl.make_tile(RIGHT16, addr=0)
    acc = pl.make_tile(ACC32, addr=0)
    pl.matmul_acc(acc, acc, a, b)  # <- here
    with pl.section_cube():
        pass


# ---- pl.move -------------------------------------------------------------------------------------------


@case(r"pl.move takes a 64 x 64 window at \[0, 32\] from 'l1' of shape \[64, 64\]: it does not fit")
def move_window_past_cols(x: T16):
    l1 = pl.make_tile(MAT16, addr=0)
    a = pl.make_tile(LEFT16, addr=0)
    with pl.section_cube():
        pl.move(a, l1, offset=[0, 32])  # <- here


@case(r"pl.move takes a 32 x 64 window \(transposed\) at \[48, 0\] from 'l1' of shape \[64, 64\]: it does not fit")
def move_transposed_window_past_rows(x: T16):
    l1 = pl.make_tile(MAT16, addr=0)
    b = pl.make_tile(pl.TileType([64, 32], pl.DT_FP16, Right), addr=0)  # transposed: a [32, 64] window of l1
    with pl.section_cube():
        pl.move(b, l1, offset=[48, 0], transpose=True)  # <- here


@case(r"offset\[0\] = -16 is negative", "-16")
def move_negative_offset(x: T16):
    l1 = pl.make_tile(pl.TileType([128, 64], pl.DT_FP16, Mat), addr=0)
    a = pl.make_tile(LEFT16, addr=0)
    with pl.section_cube():
        pl.move(a, l1, offset=[-16, 0])  # <- here


@case(r"offset\[1\] must be an integer scalar, got float 0.5", "0.5")
def move_float_offset(x: T16):
    l1 = pl.make_tile(pl.TileType([64, 128], pl.DT_FP16, Mat), addr=0)
    a = pl.make_tile(LEFT16, addr=0)
    with pl.section_cube():
        pl.move(a, l1, offset=[0, 0.5])  # <- here


move_case("move_vec_to_left", "cube", VEC16, LEFT16,
          r"pl.move has no Vec -> Left path in this release \(supported: Vec->Vec, Mat->Left, Mat->Right, Acc->Vec, "
          r"Vec->Mat, Mat->Bias, Mat->Scaling, Mat->ScaleLeft, Mat->ScaleRight\)")


move_case("move_left_to_right", "cube", LEFT16, RIGHT16, r"pl.move has no Left -> Right path")


move_case("move_mat_to_left_changes_dtype", "cube", MAT16, pl.TileType([64, 64], pl.DT_FP32, Left),
          r"pl.move Mat -> Left keeps the dtype: 'src_tile' is DT_FP16, 'dst_tile' is DT_FP32", "d,")


move_case("move_int32_acc_to_fp16_vec", "cube", pl.TileType([64, 64], pl.DT_INT32, Acc), VEC16,
          r"the fixpipe converts DT_INT32 to DT_INT32, not DT_FP16", "d,", archs=("a5",))


@case(r"pl.move has no Acc -> Mat path in this release")
def move_acc_with_transpose(x: T16):
    acc = pl.make_tile(ACC32, addr=0)
    l1 = pl.make_tile(pl.TileType([64, 64], pl.DT_FP32, Mat), addr=0)
    with pl.section_cube():
        pl.move(l1, acc, transpose=True)  # <- here


@case(r"pl.move\(acc_to_vec_mode=...\) applies to Acc -> Vec moves only", "pl.AccToVecMode.SingleModeVec1")
def move_mode_on_mat_to_left(x: T16):
    l1 = pl.make_tile(MAT16, addr=0)
    a = pl.make_tile(LEFT16, addr=0)
    with pl.section_cube():
        pl.move(a, l1, acc_to_vec_mode=pl.AccToVecMode.SingleModeVec1)  # <- here


@case(r"'AccToVecMode' has no attribute 'SingleModeVec2'", "SingleModeVec2", archs=("a5",))
def move_acc_to_vec_subblock_2(x: T16):
    acc = pl.make_tile(ACC32, addr=0)
    ub = pl.make_tile(VEC32, addr=0)
    with pl.section_cube():
        pl.move(ub, acc, acc_to_vec_mode=pl.AccToVecMode.SingleModeVec2)  # <- here


move_case("move_vec_to_mat_in_cube_section", "cube", VEC16, MAT16,
          r"pl.move Vec -> Mat runs on the Vector engine; it cannot be used in section_cube\(\)", archs=("a5",))


move_case("move_extract_in_vector_section", "vector", MAT16, LEFT16,
          r"pl.move Mat -> Left runs on the Cube engine; it cannot be used in section_vector\(\)")


move_case("move_acc_to_vec_in_vector_section", "vector", ACC32, VEC32,
          r"pl.move Acc -> Vec runs on the Cube engine; it cannot be used in section_vector\(\)", archs=("a5",))


@case(r"pl.move Vec -> Vec cannot transpose; use pl.transpose", "True")
def move_vec_to_vec_transposed(x: T16):
    ub = pl.make_tile(VEC16, addr=0)
    ub2 = pl.make_tile(VEC16, addr=0x8000)
    with pl.section_vector():
        pl.move(ub2, ub, transpose=True)  # <- here


# ---- stores of accumulators ------------------------------------------------------------------------------


@case(r"the fixpipe converts DT_INT32 accumulators to DT_INT32, not DT_FP16")
def store_int32_acc_to_fp16(x: T16):
    acc = pl.make_tile(pl.TileType([64, 64], pl.DT_INT32, Acc), addr=0)
    with pl.section_cube():
        pl.store(x, acc, [0, 0])  # <- here


@case(r"the fixpipe converts DT_FP32 accumulators to DT_FP32, DT_FP16, DT_BF16, DT_HF8, not DT_INT8")
def store_fp32_acc_to_int8(x: I8T):
    acc = pl.make_tile(ACC32, addr=0)
    with pl.section_cube():
        pl.store_tile(x, acc, [0, 0])  # <- here


@case(r"pl.load loads into Vec \(UB\) or Mat \(L1\) tiles only; 'acc' is in Acc", "acc")
def load_into_acc(x: T32):
    acc = pl.make_tile(ACC32, addr=0)
    with pl.section_cube():
        pl.load(acc, x, [0, 0])  # <- here


@case(r"pl.store stores from Vec \(UB\) or Acc \(L0C\) tiles only; 'a' is in Left", "a,")
def store_from_left(x: T16):
    a = pl.make_tile(LEFT16, addr=0)
    with pl.section_cube():
        pl.store(x, a, [0, 0])  # <- here


# ---- cross-core sync ---------------------------------------------------------------------------------------


@case(r"cross-core event id 16 is outside 0-15 on (a5|a2a3)", "16")
def cross_core_event_16(x: T16):
    with pl.section_cube():
        pl.system.set_cross_core(pipe=pl.PipeType.FIX, event_id=16)  # <- here


@case(r"cross-core event id 31 is outside 0-15", "31")
def wait_cross_core_event_31(x: T16):
    with pl.section_vector():
        pl.system.wait_cross_core(pipe=pl.PipeType.V, event_id=31)  # <- here


@case(r"pl.system.set_cross_core must be inside `with pl.section_vector\(\):` or `with pl.section_cube\(\):`")
def set_cross_core_outside_section(x: T16):
    pl.system.set_cross_core(pipe=pl.PipeType.FIX, event_id=0)  # <- here
    with pl.section_cube():
        pass


@case(r"pl.system.wait_cross_core must be inside `with pl.section_vector\(\):` or `with pl.section_cube\(\):`")
def wait_cross_core_outside_section(x: T16):
    with pl.section_vector():
        pass
    pl.system.wait_cross_core(pipe=pl.PipeType.V, event_id=0)  # <- here


@case(r"'pipe' must be a pl.PipeType, got", "3,")
def cross_core_pipe_not_a_pipe(x: T16):
    with pl.section_cube():
        pl.system.set_cross_core(pipe=3, event_id=0)  # <- here


@case(r"pl.system.sync_all must be inside `with pl.section_vector\(\):` or `with pl.section_cube\(\):`")
def sync_all_outside_section(x: T16):
    pl.system.sync_all()  # <- here
    with pl.section_vector():
        pass


# ---- the same code on the other arch / in the right place compiles --------------------------------------


def acc_to_vec_move(x: T32):
    acc = pl.make_tile(ACC32, addr=0)
    ub = pl.make_tile(VEC32, addr=0)
    with pl.section_cube():
        pl.move(ub, acc, acc_to_vec_mode=pl.AccToVecMode.SingleModeVec0)
    with pl.section_vector():
        pl.store(x, ub, [0, 0])


def vec_to_mat_move(x: T16):
    ub = pl.make_tile(VEC16, addr=0)
    l1 = pl.make_tile(MAT16, addr=0)
    with pl.section_vector():
        pl.move(l1, ub)


def cross_core_event_15(x: T16):
    with pl.section_cube():
        pl.system.set_cross_core(pipe=pl.PipeType.FIX, event_id=15)
    with pl.section_vector():
        pl.system.wait_cross_core(pipe=pl.PipeType.V, event_id=15)


@pytest.mark.parametrize("fn", [acc_to_vec_move, vec_to_mat_move, cross_core_event_15])
def test_direct_paths_and_event_15_compile_on_a5(fn):
    assert pl.jit(fn, arch="a5").compile() is not None


def test_cross_core_event_15_compiles_on_a2a3():
    assert pl.jit(cross_core_event_15, arch="a2a3").compile() is not None


def test_every_case_has_a_distinct_kernel():
    fns = {id(p.values[0]): p.values[0] for p in CASES}
    assert len({f.__name__ for f in fns.values()}) == len(fns)


# ---- finding --------------------------------------------------------------------------------------------


def acc_to_vec_without_vector_section(x: T32):
    acc = pl.make_tile(ACC32, addr=0)
    ub = pl.make_tile(VEC32, addr=0)
    with pl.section_cube():
        pl.move(ub, acc, acc_to_vec_mode=pl.AccToVecMode.SingleModeVec0)  # <- here


def test_acc_to_vec_move_without_vector_section():
    try:
        pl.jit(acc_to_vec_without_vector_section, arch="a5").compile()
    except CompileError as err:
        check_location(err, *marked_line(acc_to_vec_without_vector_section), None)
