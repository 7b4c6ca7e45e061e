"""Compile errors of placement, alignment, capacity, offsets and valid shapes (registry:
``compile_error_cases.py``), and the overlap warnings of live tiles."""
from __future__ import annotations

import math
import warnings

import pytest
import torch
from compile_error_cases import S16, T16, T32, V16, V32, Cases, expect_error
from located import check_location, marked_line

import pypto_pro
import pypto_pro.language as pl
from pypto_pro import CompileError

CASES = Cases(globals())
case, line_case = CASES.case, CASES.line_case


# ---- placement: alignment, capacity, row size ---------------------------------------------------------------


line_case("vec_address_unaligned", "a = pl.make_tile(V16, addr=0x10)",
          "address 0x10 is not aligned to 32 bytes, as Vec requires on a5", "0x10")


line_case("left_address_unaligned",
          "a = pl.make_tile(pl.TileType(shape=[16, 16], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Left), addr=0x100)",
          "address 0x100 is not aligned to 512 bytes, as Left requires on a5", "0x100", section="section_cube")


line_case("group_slot_unaligned", "g = pl.make_tile_group(type=V16, addrs=[0x0, 0x8010], mutex_ids=[0, 1])",
          r"address 0x8010 \(slot 1\) is not aligned to 32 bytes", "[0x0")


line_case("group_does_not_fit_ub_a5", "g = pl.make_tile_group(type=V32, addrs=0x20000, mutex_ids=[0, 1, 2])",
          r"tile of 65536 bytes at 0x30000 \(slot 1\) does not fit Vec \(253952 bytes on a5\): it ends at 0x40000",
          "0x20000", tensor="T32")


def _fp32_tile_at_160k(x: T32, z: T32):
    a = pl.make_tile(V32, addr=0x28000)  # <- here  (ends at 224 KiB: fits a5's 248 KiB UB, not a2a3's 192 KiB)
    with pl.section_vector():
        pl.load(a, x, [0, 0])
        pl.store(z, a, [0, 0])


tile_does_not_fit_ub_a2a3 = case(r"tile of 65536 bytes at 0x28000 does not fit Vec \(196608 bytes on a2a3\)",
                                 "0x28000")(pl.jit(arch="a2a3")(_fp32_tile_at_160k))
same_tile_fits_ub_a5 = pl.jit(arch="a5")(_fp32_tile_at_160k)


@case(r"a row-major \(ND\) Vec tile must fill 32-byte blocks along its columns: 8 x DT_FP16 is 16 bytes", "pl.make_tile")
@pl.jit
def vec_row_not_32_bytes(x: T16):
    a = pl.make_tile(pl.TileType(shape=[16, 8], dtype=pl.DT_FP16), addr=0x0)  # <- here
    with pl.section_vector():
        pass


# ---- overlapping tiles ---------------------------------------------------------------------------------------


@pl.jit
def tiles_overlap_while_live(x: T16, z: T16):
    a = pl.make_tile(V16, addr=0x0)
    b = pl.make_tile(V16, addr=0x4000)  # <- here
    with pl.section_vector():
        pl.load(a, x, [0, 0])
        pl.load(b, x, [0, 0])
        pl.add(a, a, b)
        pl.store(z, a, [0, 0])


@pl.jit
def group_slot_overlaps_tile(x: T16, z: T16):
    a = pl.make_tile(V16, addr=0x10000)
    c_db = pl.make_tile_group(type=V16, addrs=[0x0, 0x10000], mutex_ids=[0, 1])  # <- here
    with pl.section_vector():
        pl.load(a, x, [0, 0])
        for i in pl.range(0, 4, 1):
            c = c_db.next()
            pl.add(c, a, a)
            pl.store(z, c, [0, 0])


@pl.jit
def group_slots_overlap_each_other(x: T16, z: T16):
    g = pl.make_tile_group(type=V16, addrs=[0x0, 0x4000], mutex_ids=[0, 1])  # <- here
    with pl.section_vector():
        t = g.next()
        pl.load(t, x, [0, 0])
        pl.store(z, t, [0, 0])


@pl.jit
def accumulator_clobbered_between_iterations(x: T32, z: T32):
    """``acc`` carries a value from one iteration to the next; ``scratch`` reuses its bytes after acc's
    last use in the body, which would overwrite the running sum before the next iteration reads it."""
    tt = pl.TileType(shape=[32, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    inp = pl.make_tile_group(type=tt, addrs=0x0, mutex_ids=[0, 1])
    acc = pl.make_tile_group(type=tt, addrs=[0x8000], mutex_ids=[2])
    out = pl.make_tile_group(type=tt, addrs=0x10000, mutex_ids=[4, 5])
    scratch = pl.make_tile_group(type=tt, addrs=[0xA000], mutex_ids=[3])  # <- here: half of acc's bytes
    with pl.section_vector():
        for i in pl.range(0, x.shape[0] // 32, 1):
            t = inp.next()
            pl.load(t, x, [i * 32, 0])
            c = acc[0]
            if i == 0:
                pl.move(c, t)
            else:
                pl.add(c, c, t)
            o = out.next()
            pl.move(o, c)
            pl.store(z, o, [i * 32, 0])
            s = scratch[0]
            pl.expands(s, 100.0)


# ---- loops and helpers ------------------------------------------------------------------------------------


@case("pl.range step must not be zero", "0):")
@pl.jit
def range_zero_step(x: T16):
    with pl.section_vector():
        for i in pl.range(0, x.shape[0], 0):  # <- here
            pass


@case("pl.range step must be positive", "pl.range")
@pl.jit
def range_negative_step(x: T16):
    with pl.section_vector():
        for i in pl.range(4, 0, -1):  # <- here
            pass


@case(r"range\(\) with run-time bounds: use pl.range\(start, stop, step\)", "range(0")
@pl.jit
def runtime_bounds_in_python_range(x: T16):
    with pl.section_vector():
        n = x.shape[0] // 128
        for i in range(0, n):  # <- here
            pass


@case("a compile-time loop over 1000000000000000000000000000000 items is unrolled; at most 4096", "range(")
@pl.jit
def huge_compile_time_loop(x: T16):
    with pl.section_vector():
        for i in range(10 ** 30):  # <- here
            pass


@case("compile-time loops unroll more than 16384 iterations in all", "range(4096)")
@pl.jit
def nested_compile_time_loops_over_budget(x: T16):
    with pl.section_vector():
        for i in range(8):
            for j in range(4096):  # <- here
                pass


@case(r"tile of 32768 bytes at 0x38000 \(slot 7\) does not fit Vec", "0")
@pl.jit
def tile_group_depth_beyond_memory(x: T16):
    tt = pl.TileType(shape=[128, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    g = pl.make_tile_group(type=tt, addrs=0, depth=1 << 32)  # <- here
    with pl.section_vector():
        pl.load(g.next(), x, [0, 0])


@case(r"'v' is the integer -9223372036854775809 \(beyond any 64-bit scalar\) on one side of the run-time if", "v +")
@pl.jit
def if_join_of_an_integer_beyond_64_bits(x: T16, mode: int):
    with pl.section_vector():
        if mode > 0:
            v = -9223372036854775809
        else:
            v = 1
        w = v + 1  # <- here


def tiles_of(n):
    return n // 128


@case("'ceil' runs at compile time \\(only a plain function called by its bare name is inlined", "math.ceil(")
@pl.jit
def module_function_with_runtime_value(x: T16):
    with pl.section_vector():
        n = math.ceil(x.shape[0] / 128)  # <- here


def split_evenly(total, parts):
    return total // parts  # <- here


@case("ZeroDivisionError while evaluating at compile time: integer division or modulo by zero", "total // parts",
      where=split_evenly)
@pl.jit
def exception_in_compile_time_helper(x: T16):
    cores = 0
    with pl.section_vector():
        per_core = split_evenly(1024, cores)


def tile_or_count(t, n):
    if n > 0:
        pl.adds(t, t, 1.0)
        return t
    return 0


@case(r"helper 'tile_or_count' returns tile 'a' on one path and int 0 on another", "tile_or_count(")
@pl.jit
def helper_returns_disagree(x: T32, z: T32, n: int):
    a = pl.make_tile(V32, addr=0x0)
    with pl.section_vector():
        pl.load(a, x, [0, 0])
        r = tile_or_count(a, n)  # <- here
        pl.store(z, a, [0, 0])


@case(r"a kernel cannot return a value \(only a bare 'return' or 'return None'\)", "return")
@pl.jit
def kernel_returns_value_inside_runtime_loop(x: T32, z: T32):
    a = pl.make_tile(V32, addr=0x0)
    with pl.section_vector():
        for i in pl.range(0, 4, 1):
            pl.load(a, x, [0, 0])
            return i  # <- here


@pl.inline
def scale_by(t, k):
    pl.muls(t, t, 1.0 / k)  # <- here


@case("ZeroDivisionError while evaluating at compile time: float division by zero", "1.0 / k", where=scale_by)
@pl.jit
def error_inside_inline_helper(x: T32, z: T32):
    a = pl.make_tile(V32, addr=0x0)
    with pl.section_vector():
        pl.load(a, x, [0, 0])
        scale_by(a, 0)
        pl.store(z, a, [0, 0])


@pl.jit
def no_section(x: T16):  # a kernel of scalar code only (shared by both engines)
    n = x.shape[0] // 128
    for i in pl.range(0, n, 1):
        pass


@case("a @pl.jit kernel cannot be called from another kernel; call a plain helper function", "no_section(")
@pl.jit
def kernel_calls_kernel(x: T16):
    with pl.section_vector():
        no_section(x)  # <- here


@case(r"'n' holds an integer \(int64\) at run time; cannot assign a float \(fp32\) to it", "n = 1.5")
@pl.jit
def float_into_int_variable(x: T16):
    with pl.section_vector():
        n = x.shape[0] // 128
        for i in pl.range(0, 4, 1):
            n = 1.5  # <- here


@case("operator '<<' needs integer operands, got a float", "f << 2")
@pl.jit
def shift_of_float(x: T32, f: float):
    a = pl.make_tile(V32, addr=0x0)
    with pl.section_vector():
        pl.expands(a, f << 2)  # <- here


line_case("failed_compile_time_assert", 'assert 1000 % 128 == 0, "tiles must divide 1000"',
          "assertion failed: tiles must divide 1000", "assert")


@case(r"'w' is assigned on only one side of the run-time if at line \d+, so it cannot be used after it", "w)")
@pl.jit
def name_bound_on_one_side_of_runtime_if(x: T32, n: int):
    a = pl.make_tile(V32, addr=0x0)
    with pl.section_vector():
        if n > 0:
            w = 2.0
        pl.muls(a, a, w)  # <- here


@case(r"'t' is rebound to a tile of another buffer inside a pl.range loop; use a separate name", "t = h")
@pl.jit
def group_tile_rebound_to_other_group_in_loop(x: T32):
    g = pl.make_tile_group(type=V32, addrs=0x0, mutex_ids=[0, 1])
    h = pl.make_tile_group(type=V32, addrs=0x20000, mutex_ids=[2])  # one slot: a5's UB is 248 KiB
    with pl.section_vector():
        t = g.next()
        for i in pl.range(0, 4, 1):
            pl.expands(t, 1.0)
            t = h.next()  # <- here


@case(r"'last' is assigned inside the pl.range loop at line \d+, which may run zero times, so it cannot be used "
      "after the loop", "last)")
@pl.jit
def loop_local_used_after_loop(x: T32, z: T32, n: int):
    g = pl.make_tile_group(type=V32, addrs=0x0, mutex_ids=[0, 1])
    with pl.section_vector():
        for i in pl.range(0, n, 1):
            last = i * 2.0
        t = g.next()
        pl.expands(t, last)  # <- here


@case(r"'i' is the variable of the pl.range loop at line \d+; it has no value after the loop", "i)")
@pl.jit
def loop_variable_used_after_loop(x: T32, n: int):
    a = pl.make_tile(V32, addr=0x0)
    with pl.section_vector():
        for i in pl.range(0, n, 1):
            pl.expands(a, 1.0)
        pl.adds(a, a, i)  # <- here


@case(r"pl.Constexpr parameter 'rows' has no value: pass it at launch or as kernel.compile\(rows=...\)", "rows //")
@pl.jit
def constexpr_without_value(x: T16, rows: pl.Constexpr):
    with pl.section_vector():
        n = rows // 128  # <- here


# ---- synchronisation --------------------------------------------------------------------------------------


@case("a2a3 has no hardware buffer mutex; use pl.system.sync_src/sync_dst", "pl.system.mutex_lock")
@pl.jit(arch="a2a3", auto_mutex=False)
def mutex_lock_on_a2a3(x: T16):
    with pl.section_vector():
        pl.system.mutex_lock(pipe=pl.PipeType.V, mutex_id=0)  # <- here


@case("event id 16 is outside 0-15 on a5", "16)")
@pl.jit(auto_mutex=False)
def event_id_too_large(x: T16):
    with pl.section_vector():
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=16)  # <- here


@case("event id -1 is outside 0-7 on a2a3", "-1)")
@pl.jit(arch="a2a3", auto_mutex=False)
def event_id_negative(x: T16):
    with pl.section_vector():
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=-1)  # <- here


@case("mutex id 32 is outside 0-31 on a5", "32)")
@pl.jit(auto_mutex=False)
def mutex_lock_id_too_large(x: T16):
    with pl.section_vector():
        pl.system.mutex_lock(pipe=pl.PipeType.V, mutex_id=32)  # <- here


# ---- kernel signature -------------------------------------------------------------------------------------


@case("a kernel cannot return a value .*; write results to an output tensor", "return")
@pl.jit
def kernel_returns_value(x: T16):
    with pl.section_vector():
        n = x.shape[0]
    return n  # <- here


@case("parameter 'n' needs an annotation: pl.Tensor", "n)")
@pl.jit
def missing_parameter_annotation(x: T16, n):  # <- here
    with pl.section_vector():
        pass


@case("parameter 'x': only scalar parameters \\(pl.DT_\\*, int, float\\) can have a default value", "None")
@pl.jit
def tensor_parameter_default_value(x: T16 = None, n: int = 4):  # <- here
    with pl.section_vector():
        pass


# ---- static offsets and valid shapes ----------------------------------------------------------------------


@case(r"offset 256 on axis 1 is outside tensor 'x' \(size 256\)", "256]")
@pl.jit
def static_offset_outside_tensor(x: S16):
    a = pl.make_tile(V16, addr=0x0)
    with pl.section_vector():
        pl.load(a, x, [0, 256])  # <- here


@case(r"offset 256 on axis 0 is outside tensor 'z' \(size 256\)", "2, 0]")
@pl.jit
def tile_coords_outside_tensor(x: S16, z: S16):
    a = pl.make_tile(V16, addr=0x0)
    with pl.section_vector():
        pl.load_tile(a, x, [1, 1])
        pl.store_tile(z, a, [2, 0])  # <- here


@case(r"offsets\[0\] = -128 is negative", "-128")
@pl.jit
def negative_static_offset(x: S16):
    a = pl.make_tile(V16, addr=0x0)
    with pl.section_vector():
        pl.load(a, x, [-128, 0])  # <- here


@case("tensor 'x' has rank 2; 1 offsets given", "[0]")
@pl.jit
def offsets_of_wrong_rank(x: S16):
    a = pl.make_tile(V16, addr=0x0)
    with pl.section_vector():
        pl.load(a, x, [0])  # <- here


line_case("validshape_rows_outside_tile", "pl.set_validshape(a, [129, 64])",
          r"valid rows 129 is outside 1..128 for 'a'", "129", tile="V16")


@case(r"valid cols -1 is outside 1..128 for 'g'", "-1")
@pl.jit
def validshape_cols_outside_group(x: T16):
    g = pl.make_tile_group(type=V16, addrs=0x0, mutex_ids=[0, 1])
    with pl.section_vector():
        pl.set_validshape(g, [16, -1])  # <- here


# ---- the tests --------------------------------------------------------------------------------------------

# ---- the tests --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kernel, match, token, where", CASES)
def test_compile_error(kernel, match, token, where):
    expect_error(kernel, match, token, where)


def test_every_case_is_a_distinct_kernel():
    names = [c.id for c in CASES]
    assert len(names) == len(set(names)) >= 35


def test_launch_reports_the_same_error():
    """A launch compiles first: the located CompileError comes out of the launch too."""
    x = torch.zeros(128, 128, dtype=torch.float16)
    z = torch.zeros(128, 128, dtype=torch.float16)
    with pytest.raises(CompileError) as info:
        vec_row_not_32_bytes[None, 1](x)
    path, line, text = marked_line(vec_row_not_32_bytes.fn)
    check_location(info.value, path, line, text, "pl.make_tile")
    assert isinstance(info.value, pypto_pro.PyptoError)


OVERLAPS = [
    (tiles_overlap_while_live, r"Vec bytes 0x4000-0x8000 of 'b' overlap 'a' \(declared at line \d+\) while both are live"),
    (group_slot_overlaps_tile, r"Vec bytes 0x10000-0x18000 of 'c_db' overlap 'a'"),
    (group_slots_overlap_each_other, r"slots 0 and 1 of tile group 'g' overlap \(0x0-0x8000 and 0x4000-0xc000\)"),
    (accumulator_clobbered_between_iterations, r"Vec bytes 0xa000-0xc000 of 'scratch' overlap 'acc'"),
]


@pytest.mark.parametrize("kernel,match", OVERLAPS, ids=lambda v: getattr(v, "__name__", ""))
def test_overlapping_live_tiles_warn_at_the_later_tile(kernel, match):
    """The chip (and the real PyPTO Pro) let tiles share bytes, so an overlap of live tiles is a located
    MemoryOverlapWarning, not an error; the race checker reports an order that really conflicts."""
    with pytest.warns(pypto_pro.MemoryOverlapWarning, match=match) as rec:
        kernel.compile()
    path, line, _ = marked_line(kernel.fn)
    assert f"{path}:{line}:" in str(rec[0].message)
    assert (rec[0].filename, rec[0].lineno) == (path, line)  # Python shows the user's line, not ours


def test_tiles_over_the_same_bytes_are_aliases():
    """Two tiles at the same addresses with the same size (a [1, N] and an [N, 1] DN view, as real kernels
    declare them) are aliases: no warning."""
    @pl.jit
    def aliases(x: T32, z: T32):
        row = pl.make_tile(pl.TileType([1, 64], pl.DT_FP32), addr=0x0)
        col = pl.make_tile(pl.TileType([64, 1], pl.DT_FP32, layout=pl.DN), addr=0x0)
        with pl.section_vector():
            pl.load(row, x, [0, 0])
            pl.exp(row, row)
            pl.store(z, row, [0, 0])
            pl.store(z, col, [0, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", pypto_pro.MemoryOverlapWarning)
        aliases.compile()


def test_same_body_fits_a5():
    """The tile that overflows a2a3's 192 KiB UB fits a5's 256 KiB one."""
    same_tile_fits_ub_a5.compile()


@pl.jit
def disjoint_live_ranges(x: T16, z: T16):
    a = pl.make_tile(V16, addr=0x0)
    b = pl.make_tile(V16, addr=0x4000)  # overlaps a, but a is dead before b is first used
    with pl.section_vector():
        pl.load(a, x, [0, 0])
        pl.store(z, a, [0, 0])
        pl.load(b, x, [0, 0])
        pl.store(z, b, [0, 0])


@pl.jit
def declared_view(x: T16, z: T16):
    a = pl.make_tile(V16, addr=0x0)
    lower = pl.make_view(a, pl.TileType(shape=[64, 128], dtype=pl.DT_FP16), 0x4000)  # a's lower half
    with pl.section_vector():
        pl.load(a, x, [0, 0])
        pl.adds(lower, lower, 1.0)
        pl.store(z, a, [0, 0])


@pl.jit
def loop_temporaries_share_bytes(x: T32, z: T32):
    tt = pl.TileType(shape=[32, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    inp = pl.make_tile_group(type=tt, addrs=0x0, mutex_ids=[0, 1])
    out = pl.make_tile_group(type=tt, addrs=0x8000, mutex_ids=[2, 3])
    t1 = pl.make_tile(tt, addr=0x10000)
    t2 = pl.make_tile(tt, addr=0x10000)  # same bytes as t1: each is written before it is read, in every iteration
    with pl.section_vector():
        for i in pl.range(0, x.shape[0] // 32, 1):
            s = inp.next()
            o = out.next()
            pl.load(s, x, [i * 32, 0])
            pl.muls(t1, s, 2.0)
            pl.adds(o, t1, 1.0)
            pl.exp(t2, s)
            pl.add(o, o, t2)
            pl.store(z, o, [i * 32, 0])


@pytest.mark.parametrize("kernel", [disjoint_live_ranges, declared_view, loop_temporaries_share_bytes],
                         ids=lambda k: k.__name__)
def test_no_overlap_error(kernel):
    kernel.compile()


def test_loop_temporaries_sharing_bytes_compute_correctly():
    x = torch.rand(64, 128)
    z = torch.zeros(64, 128)
    loop_temporaries_share_bytes(x, z)
    torch.testing.assert_close(z, x * 2.0 + 1.0 + torch.exp(x))


def test_constexpr_with_value_compiles():
    constexpr_without_value.compile(rows=256)
