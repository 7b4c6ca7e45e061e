"""Every compile error the frontend reports: raised as ``pypto_pro.CompileError``, located at
``path:line:col:`` in the user's file, with the source line quoted and a caret under the right token.

Each kernel marks the line the error must point at with the comment ``# <- here``; the test finds
that line through ``inspect.getsourcelines`` (no hard-coded line numbers) and the expected column
from a token on it.
"""
from __future__ import annotations

import importlib.util
import math
import inspect
import re
import sys
import uuid
import warnings

import pytest
import torch

import pypto_pro
import pypto_pro.language as pl
from pypto_pro import CompileError
from pypto_pro.ir.nodes import TileOp, walk_stmts


T16 = pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16]
T32 = pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32]
S16 = pl.Tensor[[256, 256], pl.DT_FP16]
I32 = pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_INT32]
V16 = pl.TileType(shape=[128, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)  # 32 KiB
V32 = pl.TileType(shape=[128, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)  # 64 KiB


# ---- checking one error -------------------------------------------------------------------------


from located import check_location, marked_line, one_line_kernel  # noqa: E402  (shared with the other error tests)


def expect_error(kernel, match: str, token: str | None = None, where=None, **constexprs) -> CompileError:
    with pytest.raises(CompileError) as info:
        kernel.compile(**constexprs)
    err = info.value
    assert re.search(match, err.bare_message), f"{match!r} not in: {err.bare_message}"
    path, line, text = marked_line(where or kernel.fn)
    check_location(err, path, line, text, token)
    return err


CASES = []


def case(match: str, token: str | None = None, where=None):
    """Register the decorated kernel as a test case: compiling it must fail with ``match`` at the marker."""
    def register(kernel):
        CASES.append(pytest.param(kernel, match, token, where, id=kernel.__name__))
        return kernel
    return register


def line_case(name: str, line: str, match: str, token: str | None = None, *, tensor: str = "T16",
              section: str = "section_vector", tile: str | None = None, **jit_options):
    """Register as case ``name`` the kernel ``def name(x: <tensor>)`` whose first statement is ``line``
    (the marked one), followed by an empty section; with ``tile``, the kernel whose one statement in
    the section is ``line``, on ``a = pl.make_tile(<tile>, addr=0x0)``. Compiling it must fail with
    ``match`` at ``line``."""
    fn = one_line_kernel(name, line, globals(), tensor, section, tile)
    return case(match, token)(pl.jit(**jit_options)(fn))


# ---- unsupported Python ---------------------------------------------------------------------------


@case("try statements are not supported in kernels", "try")
@pl.jit
def try_statement(x: T16):
    with pl.section_vector():
        try:  # <- here
            pass
        except ValueError:
            pass


@case(r"while \.\.\. else is not supported in kernels", "n = 0")
@pl.jit
def while_else(x: T16):
    with pl.section_vector():
        n = x.shape[0]
        while n > 0:
            n = n - 1
        else:
            n = 0  # <- here


@case(r"with is only supported for pl.section_vector\(\) and pl.section_cube\(\)", "open(")
@pl.jit
def with_not_a_section(x: T16):
    with open("/nonexistent/dir/file"):  # <- here  (never opened at compile time)
        pass


@case("a section takes no 'as' target", "s:")
@pl.jit
def section_with_as(x: T16):
    with pl.section_vector() as s:  # <- here
        pass


@case("list comprehensions are not supported in kernels", "[i * 128")
@pl.jit
def list_comprehension(x: T16):
    with pl.section_vector():
        offs = [i * 128 for i in range(2)]  # <- here


@case("dict comprehensions are not supported in kernels", "{i:")
@pl.jit
def dict_comprehension(x: T16):
    with pl.section_vector():
        d = {i: i for i in range(2)}  # <- here


@case("set comprehensions are not supported in kernels", "{i for")
@pl.jit
def set_comprehension(x: T16):
    with pl.section_vector():
        s = {i for i in range(2)}  # <- here


@case("generator expressions are not supported in kernels", "(i for")
@pl.jit
def generator_expression(x: T16):
    with pl.section_vector():
        n = sum(i for i in range(3))  # <- here


@case("'lambda' is not supported in kernels", "lambda")
@pl.jit
def lambda_expression(x: T16):
    with pl.section_vector():
        f = lambda q: q + 1  # <- here


@case("a helper defined inside a kernel takes no decorator other than @pl.inline", "staticmethod")
@pl.jit
def nested_def_with_other_decorator(x: T16):
    @staticmethod  # <- here
    def scale(t):
        pl.muls(t, t, 2.0)

    with pl.section_vector():
        pass


@case("'break' inside a run-time if cannot leave this loop: the loop is unrolled at compile time", "break")
@pl.jit
def break_from_unrolled_loop_under_runtime_if(x: T16):
    with pl.section_vector():
        for k in range(4):
            if x.shape[0] > k:
                break  # <- here


@case("'continue' inside a run-time if cannot leave this loop: the loop is unrolled", "continue")
@pl.jit
def continue_in_unrolled_loop_under_runtime_if(x: T16):
    with pl.section_vector():
        for k in [1, 2]:
            for i in pl.range(0, 4, 1):
                continue  # fine: leaves the run-time loop
            if x.shape[0] > k:
                continue  # <- here


@case("import statements are not supported in kernels", "import")
@pl.jit
def import_statement(x: T16):
    with pl.section_vector():
        import math  # <- here


line_case("import_from_statement", "from math import pi",
          "import statements are not supported in kernels", "from")


line_case("global_statement", "global V16",
          "global statements are not supported in kernels", "global")


@case("'yield' is not supported in kernels", "yield")
@pl.jit
def yield_expression(x: T16):
    with pl.section_vector():
        yield  # <- here


@case("raise statements are not supported in kernels", "raise")
@pl.jit
def raise_statement(x: T16):
    with pl.section_vector():
        raise ValueError("no")  # <- here


@case("for ... else is not supported in kernels", "pass  #")
@pl.jit
def for_else(x: T16):
    with pl.section_vector():
        for i in range(2):
            pass
        else:
            pass  # <- here


# ---- unknown names --------------------------------------------------------------------------------


@case(r"'pl' has no attribute 'ad'; did you mean 'add'\?", "ad(")
@pl.jit
def unknown_pl_op(x: T16, z: T16):
    a = pl.make_tile(V16, addr=0x0)
    with pl.section_vector():
        pl.load(a, x, [0, 0])
        pl.ad(a, a, a)  # <- here


line_case("unknown_pl_load_tiles", "pl.load_tiles(a, x, [0, 0])",
          r"'pl' has no attribute 'load_tiles'; did you mean 'load_tile'\?", "load_tiles", tile="V16")


@case(r"'pl.system' has no attribute 'mutex_lok'; did you mean 'mutex_lock'\?", "mutex_lok")
@pl.jit
def unknown_pl_system_name(x: T16):
    with pl.section_vector():
        pl.system.mutex_lok(pl.PipeType.V, 0)  # <- here


line_case("unknown_memory_space",
          "tt = pl.TileType(shape=[128, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vecc)",
          r"'MemorySpace' has no attribute 'Vecc'; did you mean 'Vec'\?", "Vecc")


@case(r"tile group has no attribute 'nxt'; did you mean 'next'\?", "nxt")
@pl.jit
def unknown_group_method(x: T16):
    g = pl.make_tile_group(type=V16, addrs=0x0, mutex_ids=[0, 1])
    with pl.section_vector():
        t = g.nxt()  # <- here


@case(r"name 'tile_bb' is not defined; did you mean 'tile_b'\?", "tile_bb")
@pl.jit
def undefined_name_with_suggestion(x: T16):
    a = pl.make_tile(V16, addr=0x0)
    with pl.section_vector():
        tile_b = a
        pl.add(a, a, tile_bb)  # <- here


@case("name 'num_blocks' is not defined", "num_blocks")
@pl.jit
def undefined_name(x: T16):
    with pl.section_vector():
        n = num_blocks + 1  # <- here


# ---- argument counts and keywords ------------------------------------------------------------------


line_case("missing_argument", "pl.add(a, a)",
          r"pl.add\(\): missing a required argument: 'rhs'", "pl.add", tile="V16")


line_case("too_many_arguments", "pl.exp(a, a, a)",
          r"pl.exp\(\): too many positional arguments", "pl.exp", tile="V16")


line_case("unknown_keyword", "pl.load(a, x, offset=[0, 0])",
          r"pl.load\(\) got an unexpected keyword argument 'offset'.*did you mean 'offsets'\?", "offset=", tile="V16")


line_case("unknown_keyword_make_tile_group", "g = pl.make_tile_group(type=V16, addrs=0x0, mutex=[0, 1])",
          r"pl.make_tile_group\(\) got an unexpected keyword argument 'mutex'.*did you mean 'mutex_ids'\?",
          "mutex=")


@pl.inline
def add_twice(dst, src):
    pl.add(dst, src, src)


line_case("inline_helper_argument_count", "add_twice(a, a, a)",
          "'add_twice' takes 2 arguments but 3 were given", "add_twice(", tile="V16")


@case(r"\.next\(\) takes no arguments", "g.next")
@pl.jit
def group_method_arguments(x: T16):
    g = pl.make_tile_group(type=V16, addrs=0x0, mutex_ids=[0, 1])
    with pl.section_vector():
        t = g.next(1)  # <- here


# ---- argument types -----------------------------------------------------------------------------------


@case(r"'lhs' is tile group 'a_db', not a tile; take one with a_db.next\(\)", "a_db, b")
@pl.jit
def group_where_tile_expected(x: T16):
    a_db = pl.make_tile_group(type=V16, addrs=0x0, mutex_ids=[0, 1])
    b = pl.make_tile(V16, addr=0x10000)
    c = pl.make_tile(V16, addr=0x18000)
    with pl.section_vector():
        pl.add(c, a_db, b)  # <- here


@case("a float scalar cannot be applied to an DT_INT32 tile", "1.5")
@pl.jit
def float_scalar_to_int_tile(x: I32):
    t = pl.make_tile(pl.TileType(shape=[16, 64], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec), addr=0x0)
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.adds(t, t, 1.5)  # <- here


@case("'lhs' must be a tile, got tensor 'x'", "x, b")
@pl.jit
def tensor_where_tile_expected(x: T16):
    b = pl.make_tile(V16, addr=0x0)
    c = pl.make_tile(V16, addr=0x8000)
    with pl.section_vector():
        pl.add(c, x, b)  # <- here


line_case("tile_where_tensor_expected", "pl.load(a, a, [0, 0])",
          "'src_tensor' must be a tensor, got tile 'a'", "a, [", tile="V16")


line_case("int_where_tiletype_expected", "a = pl.make_tile(128, addr=0x0)",
          "'tile_type' must be a pl.TileType, got int 128", "128")


line_case("float_address", "a = pl.make_tile(V16, addr=0.5)",
          "'addr' must be a compile-time int, got float 0.5", "0.5")


@case("'scalar' must be a scalar, got tile 'b'", "b)")
@pl.jit
def tile_where_scalar_expected(x: T16):
    a = pl.make_tile(V16, addr=0x0)
    b = pl.make_tile(V16, addr=0x8000)
    with pl.section_vector():
        pl.adds(a, a, b)  # <- here


@case(r"operator '\+' is not supported on tile 'a' \(tile arithmetic is written as pl.add", "a + b")
@pl.jit
def python_arithmetic_on_tiles(x: T16):
    a = pl.make_tile(V16, addr=0x0)
    b = pl.make_tile(V16, addr=0x8000)
    with pl.section_vector():
        c = a + b  # <- here


# ---- shapes and dtypes --------------------------------------------------------------------------------


@case(r"pl.add: 'rhs' is DT_FP32 but 'out' is DT_FP16 \(convert with pl.cast first\)", "b32")
@pl.jit
def add_fp16_and_fp32(x: T16):
    a = pl.make_tile(V16, addr=0x0)
    b32 = pl.make_tile(V32, addr=0x8000)
    with pl.section_vector():
        pl.add(a, a, b32)  # <- here


@case(r"pl.add: 'lhs' has shape \[64, 128\] but 'out' has \[128, 128\]", "half")
@pl.jit
def add_shape_mismatch(x: T16):
    a = pl.make_tile(V16, addr=0x0)
    half = pl.make_tile(pl.TileType(shape=[64, 128], dtype=pl.DT_FP16), addr=0x8000)
    with pl.section_vector():
        pl.add(a, half, a)  # <- here


@case("pl.load moves bytes, it does not convert: tile 't32' is DT_FP32, tensor 'x' is DT_FP16", "pl.load")
@pl.jit
def load_fp32_tile_from_fp16_tensor(x: T16):
    t32 = pl.make_tile(V32, addr=0x0)
    with pl.section_vector():
        pl.load(t32, x, [0, 0])  # <- here


@case(r"pl.sum\(dim=0\) writes one value per row: 'out' needs 128 rows \(\[R, 1\], layout=pl.DN\), has 64", "dst,")
@pl.jit
def row_sum_rows_mismatch(x: T32):
    src = pl.make_tile(V32, addr=0x0)
    dst = pl.make_tile(pl.TileType(shape=[64, 8], dtype=pl.DT_FP32), addr=0x10000)
    with pl.section_vector():
        pl.sum(dst, src, src, dim=0)  # <- here


# ---- memory spaces and sections ------------------------------------------------------------------------


@case("pl.add needs 'out' in Vec; 'm' is in Mat", "m, m, m")
@pl.jit
def vector_op_on_mat_tile(x: T16):
    m = pl.make_tile(pl.TileType(shape=[128, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat), addr=0x0)
    with pl.section_vector():
        pl.add(m, m, m)  # <- here


@case(r"pl.add runs on the Vector engine; it cannot be used in section_cube\(\)", "pl.add")
@pl.jit
def vector_op_in_cube_section(x: T16):
    a = pl.make_tile(V16, addr=0x0)
    with pl.section_cube():
        pl.add(a, a, a)  # <- here


@case(r"pl.add must be inside `with pl.section_vector\(\):`", "pl.add")
@pl.jit
def tile_op_outside_sections(x: T16):
    a = pl.make_tile(V16, addr=0x0)
    pl.add(a, a, a)  # <- here
    with pl.section_vector():
        pass


@case(r"pl.load into a Vec tile must be inside `with pl.section_vector\(\):`", "pl.load")
@pl.jit
def load_outside_sections(x: T16):
    a = pl.make_tile(V16, addr=0x0)
    pl.load(a, x, [0, 0])  # <- here
    with pl.section_vector():
        pass


@case(r"sections cannot be nested \(already inside section_vector\(\)\)", "with")
@pl.jit
def nested_sections(x: T16):
    with pl.section_vector():
        with pl.section_cube():  # <- here
            pass


@case(r"pl.make_tile\(\) 'size' must be a positive byte count, got 0", "0)")
@pl.jit
def make_tile_size_zero(x: T16):
    a = pl.make_tile(V16, addr=0x0, size=0)  # <- here
    with pl.section_vector():
        pl.load(a, x, [0, 0])


# ---- mutex ids --------------------------------------------------------------------------------------------


line_case("mutex_id_too_large", "g = pl.make_tile_group(type=V16, addrs=0x0, mutex_ids=[0, 32])",
          "mutex id 32 is outside 0-31", "32]")


line_case("mutex_id_negative", "g = pl.make_tile_group(type=V16, addrs=0x0, mutex_ids=[-1, 0])",
          "mutex id -1 is outside 0-31", "-1")


# a5 slots may share an id (the real make_tile_group.md); a2a3 emulates ids per slot
line_case("mutex_id_repeated", "g = pl.make_tile_group(type=V16, addrs=0x0, mutex_ids=[5, 5])",
          r"mutex_ids \[5, 5\] repeat id 5; on a2a3 each slot needs its own", "5]", arch="a2a3")


@case(r"mutex id 1 is already used by 'a_db' \(line \d+\)", "1, 2]")
@pl.jit(arch="a2a3")  # a5 groups may share buffer ids (hardware locks); a2a3 emulates them per group
def mutex_id_used_by_two_groups(x: T16):
    a_db = pl.make_tile_group(type=V16, addrs=0x0, mutex_ids=[0, 1])
    b_db = pl.make_tile_group(type=V16, addrs=0x10000, mutex_ids=[1, 2])  # <- here
    with pl.section_vector():
        pass


line_case("mutex_ids_repeated_in_one_slot", "g = pl.make_tile_group(type=V16, addrs=0x0, mutex_ids=[[0, 1], [3, 3]])",
          r"the mutex ids of slot 1 repeat an id: \[3, 3\]", "[3, 3]", arch="a5")


line_case("mutex_ids_of_unequal_width", "g = pl.make_tile_group(type=V16, addrs=0x0, mutex_ids=[[0, 1], [2]])",
          "every slot of a tile group needs the same number of mutex ids: slot 0 has 2, slot 1 has 1", "[2]", arch="a5")


line_case("mutex_ids_empty_slot", "g = pl.make_tile_group(type=V16, addrs=0x0, mutex_ids=[[], [1]])",
          "the mutex ids of slot 0 must not be empty", "[]", arch="a5")


line_case("mutex_ids_longer_than_depth", "g = pl.make_tile_group(type=V16, addrs=0x0, depth=2, mutex_ids=[0, 1, 2])",
          "3 mutex_ids for a group of depth 2; give one entry per slot", "[0, 1, 2]")


line_case("mutex_ids_shorter_than_addrs", "g = pl.make_tile_group(type=V16, addrs=[0x0, 0x8000], mutex_ids=[7])",
          "1 mutex_ids for a group of depth 2; give one entry per slot", "[7]")


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


@pytest.mark.parametrize("kernel, match, token, where", CASES)
def test_compile_error(kernel, match, token, where):
    expect_error(kernel, match, token, where)


def test_every_case_is_a_distinct_kernel():
    names = [c.id for c in CASES]
    assert len(names) == len(set(names)) >= 80


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


def test_with_does_not_run_its_expression(monkeypatch):
    opened = []
    monkeypatch.setattr("builtins.open", lambda *a, **k: opened.append(a))
    with pytest.raises(CompileError):
        with_not_a_section.compile()
    assert opened == []


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


@pl.jit
def return_at_end_of_section(x: T32, z: T32):
    g = pl.make_tile_group(type=V32, addrs=0x0, mutex_ids=[0, 1])
    with pl.section_vector():
        t = g.next()
        pl.load(t, x, [0, 0])
        pl.muls(t, t, 3.0)
        pl.store(z, t, [0, 0])
        return


def test_return_inside_section_keeps_the_section():
    ops = [s.op for s in walk_stmts(return_at_end_of_section.compile().kernel.body) if isinstance(s, TileOp)]
    assert ops == ["load", "muls", "store"]
    x = torch.rand(128, 128)
    z = torch.zeros(128, 128)
    return_at_end_of_section(x, z)
    torch.testing.assert_close(z, x * 3.0)


def test_kernel_defined_in_a_function_reports_real_columns():
    """An indented kernel (dedented before parsing) still gets columns of the real file."""
    @pl.jit
    def local_kernel(x: T16):
        a = pl.make_tile(V16, addr=0x0)
        with pl.section_vector():
            pl.muls(a, a, pl.DT_FP16)  # <- here

    expect_error(local_kernel, "'scalar' must be a scalar, got DataType", "pl.DT_FP16")


HELPER_MODULE = '''\
import pypto_pro.language as pl


@pl.inline
def load_scaled(tile, tensor, row, factor):
    pl.load(tile, tensor, [row, 0])
    pl.muls(tile, tile, 1.0 / factor)  # <- zero factor


@pl.inline
def add_into(dst, a, b):
    pl.add(dst, a, b)  # <- mismatch


@pl.inline
def outer(dst, a, b):
    add_into(dst, a, b)
'''


@pytest.fixture
def helper_module(tmp_path):
    path = tmp_path / f"kernel_helpers_{uuid.uuid4().hex}.py"
    path.write_text(HELPER_MODULE)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules[path.stem]


def _module_line(module, marker: str) -> tuple[str, int, str]:
    lines = HELPER_MODULE.splitlines(keepends=True)
    i = next(i for i, text in enumerate(lines) if marker in text)
    return module.__file__, i + 1, lines[i]


def test_error_in_helper_module_points_into_the_module(helper_module):
    helpers = helper_module

    @pl.jit
    def uses_helper(x: T32):
        a = pl.make_tile(V32, addr=0x0)
        with pl.section_vector():
            helpers.load_scaled(a, x, 0, 0)

    with pytest.raises(CompileError) as info:
        uses_helper.compile()
    assert "ZeroDivisionError while evaluating at compile time" in info.value.bare_message
    path, line, text = _module_line(helpers, "# <- zero factor")
    check_location(info.value, path, line, text, "1.0 / factor")


def test_type_error_in_nested_helper_points_into_the_module(helper_module):
    helpers = helper_module

    @pl.jit
    def uses_nested_helper(x: T32):
        a = pl.make_tile(V32, addr=0x0)
        b = pl.make_tile(V16, addr=0x10000)
        with pl.section_vector():
            helpers.outer(a, a, b)

    with pytest.raises(CompileError) as info:
        uses_nested_helper.compile()
    assert "'rhs' is DT_FP16 but 'out' is DT_FP32" in info.value.bare_message
    path, line, text = _module_line(helpers, "# <- mismatch")
    check_location(info.value, path, line, text, "b)")


def test_compile_error_message_layout():
    """``path:line:col: error: message``, then the quoted line, then the caret line."""
    with pytest.raises(CompileError) as info:
        unknown_pl_op.compile()
    text = str(info.value).split("\n")
    assert len(text) == 3
    assert re.match(r"^.+:\d+:\d+: error: 'pl' has no attribute 'ad'; did you mean 'add'\?$", text[0])
    assert text[2].strip() == "^"


def test_constexpr_with_value_compiles():
    constexpr_without_value.compile(rows=256)


@pl.inline
def add_optional(dst, src, bias=None):
    if bias is not None and bias.shape[0] > 0:  # short-circuit: bias.shape is not read when bias is None
        pl.add(dst, src, bias)
    else:
        pl.move(dst, src)


@pl.jit
def rebinding_outside_runtime_blocks(x: T32, z: T32, n: int, f: float):
    g = pl.make_tile_group(type=V32, addrs=0x0, mutex_ids=[0, 1])
    h = pl.make_tile_group(type=V32, addrs=0x20000, mutex_ids=[2])  # one slot: a5's UB is 248 KiB
    with pl.section_vector():
        t = g.next()
        for i in pl.range(0, x.shape[0] // 128, 1):
            t = g.next()
            pl.load(t, x, [i * 128, 0])
            add_optional(t, t)
            pl.store(z, t, [i * 128, 0])
        t = h.next()  # after the loop: a new binding, not a loop-carried one
        k = 1.0 if f > 0 else 0.5  # a float whichever branch is taken
        pl.expands(t, k)
        if n > 0:
            t = g.next()  # inside a run-time if: fine while t is not used after the if
            pl.muls(t, t, 2.0)
            pl.store(z, t, [0, 0])
        pl.store(z, h.current(), [128, 0])


def test_rebinding_outside_runtime_blocks_compiles_and_runs():
    x = torch.rand(256, 128)
    z = torch.zeros(256, 128)
    rebinding_outside_runtime_blocks(x, z, 0, -1.0)
    torch.testing.assert_close(z[:128], x[:128])
    assert torch.all(z[128:] == 0.5)


def test_indented_kernel_with_column_zero_string():
    """A multi-line string whose lines start at column 0 inside an indented kernel still parses."""
    @pl.jit
    def local_kernel(x: T16):
        note = """first line
second line at column 0"""
        a = pl.make_tile(V16, addr=0x0)
        with pl.section_vector():
            pl.muls(a, a, note)  # <- here

    expect_error(local_kernel, "'scalar' must be a scalar, got str", "note)")


lambda_kernel = pl.jit(lambda x: x + 1)


def test_lambda_is_a_plain_function_as_in_the_real_jit():
    # no parameter can be annotated pl.Tensor / pl.Ptr / DT_*: the real _is_tile_kernel leaves it Python
    from pypto_pro.runtime.kernel import JitKernel
    assert not isinstance(lambda_kernel, JitKernel)
    assert lambda_kernel(2) == 3
