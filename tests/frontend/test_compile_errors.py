"""Every compile error the frontend reports: raised as ``pypto_pro.CompileError``, located at
``path:line:col:`` in the user's file, with the source line quoted and a caret under the right token.

Each kernel marks the line the error must point at with the comment ``# <- here``; the test finds
that line through ``inspect.getsourcelines`` (no hard-coded line numbers) and the expected column
from a token on it.
"""
from __future__ import annotations

import re

import pypto_pro.language as pl
import pytest
from pypto_pro import CompileError

from compile_error_cases import I32, T16, T32, V16, V32, Cases, expect_error

CASES = Cases(globals())
case, line_case = CASES.case, CASES.line_case


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
        import math  # <- here  # noqa: F401


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

# ---- the tests --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kernel, match, token, where", CASES)
def test_compile_error(kernel, match, token, where):
    expect_error(kernel, match, token, where)


def test_every_case_is_a_distinct_kernel():
    names = [c.id for c in CASES]
    assert len(names) == len(set(names)) >= 53


def test_with_does_not_run_its_expression(monkeypatch):
    opened = []
    monkeypatch.setattr("builtins.open", lambda *a, **k: opened.append(a))
    with pytest.raises(CompileError):
        with_not_a_section.compile()
    assert opened == []


def test_compile_error_message_layout():
    """``path:line:col: error: message``, then the quoted line, then the caret line."""
    with pytest.raises(CompileError) as info:
        unknown_pl_op.compile()
    text = str(info.value).split("\n")
    assert len(text) == 3
    assert re.match(r"^.+:\d+:\d+: error: 'pl' has no attribute 'ad'; did you mean 'add'\?$", text[0])
    assert text[2].strip() == "^"
