"""pl.struct / pl.struct_array / pl.make_tuple: fields read and written in kernel code with numerics
checked, run-time indices, references, the C++ structs, and located errors for misuse."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import CompileError, SimulationError
from pypto_pro.language.parser.diagnostics import ParserSyntaxError
from located import check_location, marked_line


def run(kernel, n=8, dtype=np.int32, *extra):
    out = np.zeros(n, dtype)
    kernel(out, *extra)
    return out.tolist()


def expect_error(kernel, match, token=None, n=8):
    with pytest.raises(CompileError, match=match) as info:
        kernel(np.zeros(n, np.int32))
    path, line, text = marked_line(kernel.fn)
    check_location(info.value, path, line, text, token)
    return info.value


# ---- numerics --------------------------------------------------------------------------------------


@pl.jit
def fields_loops_branches(out: pl.Tensor[[8], pl.DT_INT32]):
    acc = pl.struct("Acc", total=0, odd=0, hist=[0, 0, 0, 0])
    alias = acc  # an alias: writes through it are writes to acc
    with pl.section_vector():
        for i in pl.range(0, 10):
            acc.total = acc.total + i
            if i % 2 == 1:
                alias.odd += i
            alias.hist[i % 4] = alias.hist[i % 4] + 1
        pl.setval(out, 0, acc.total)
        pl.setval(out, 1, acc.odd)
        for j in pl.range(0, 4):
            pl.setval(out, 2 + j, acc.hist[j])


def test_fields_in_loops_branches_and_aliases():
    assert run(fields_loops_branches) == [45, 25, 3, 3, 2, 2, 0, 0]


@pl.inline
def bump(entry, offset):
    entry.val = entry.val + offset
    entry.count = entry.count + 1


@pl.jit
def pass_by_reference(out: pl.Tensor[[8], pl.DT_INT32]):
    data = pl.struct("PassFn", val=1, count=0)
    with pl.section_vector():
        for i in pl.range(0, 5):
            if i < 2:
                bump(data, i * 10)
            else:
                bump(data, data.val)
        pl.setval(out, 0, data.val)
        pl.setval(out, 1, data.count)


def test_helpers_get_structs_by_reference():
    # 1, 1, 11, 22, 44, 88
    assert run(pass_by_reference)[:2] == [88, 5]


@pl.jit
def struct_array_refs(out: pl.Tensor[[8], pl.DT_INT32], k: int):
    ring = pl.struct_array(4, "Slot", snap=0, w=[0, 0])
    with pl.section_vector():
        idx = 0
        for i in pl.range(0, 7):
            slot = ring[idx % 4]  # a reference to the slot the index names now
            idx = idx + 1
            slot.snap = i
            slot.w[i % 2] = slot.w[i % 2] + i
        for j in pl.range(0, 4):
            pl.setval(out, j, ring[j].snap)
        pl.setval(out, 4, ring[k].w[0] + ring[k].w[1])
        pl.setval(out, 5, ring[0].w[0])


def test_struct_array_run_time_indices_and_references():
    # slots get i = 4, 5, 6, 3; slot 1 gets w[1] += 1, w[1] += 5; slot 0 gets w[0] += 0, w[0] += 4
    assert run(struct_array_refs, 8, np.int32, 1)[:6] == [4, 5, 6, 3, 6, 4]


@pl.jit
def whole_array_and_dtypes(out: pl.Tensor[[8], pl.DT_FP32]):
    s = pl.struct("Mixed", farr=[0.0, 0.0, 0.0], flags=[True, False], n=3)
    with pl.section_vector():
        s.farr = [1.5, 0.1, s.n]  # ints widen to the float field
        s.flags[1] = True
        s.flags[0] = s.n > 5
        total = 0.0
        for i in pl.range(0, 3):
            total = total + s.farr[i]
        pl.setval(out, 0, total)
        pl.setval(out, 1, s.farr[1])
        for i in pl.range(0, 2):
            if s.flags[i]:
                pl.setval(out, 2 + i, 1.0)


def test_whole_array_assignment_float_rounding_and_bools():
    out = run(whole_array_and_dtypes, 8, np.float32)
    assert out[1] == float(np.float32(0.1))  # float fields hold fp32 values, as the C struct does
    assert out[0] == pytest.approx(1.5 + float(np.float32(0.1)) + 3)
    assert out[2:4] == [0.0, 1.0]


@pl.jit
def struct_made_in_loop(out: pl.Tensor[[8], pl.DT_INT32]):
    with pl.section_vector():
        total = 0
        for i in pl.range(0, 4):
            s = pl.struct("LoopS", v=100)  # re-initialised every iteration
            s.v = s.v + i
            total = total + s.v
        pl.setval(out, 0, total)


def test_struct_created_in_a_loop_starts_fresh_each_time():
    assert run(struct_made_in_loop)[0] == 406


@pl.jit
def tuples(out: pl.Tensor[[8], pl.DT_INT32], fives: pl.Tensor[[64], pl.DT_INT32]):
    g = pl.make_tile_group(type=pl.TileType([1, 64], pl.DT_INT32, pl.MemorySpace.Vec), addrs=0, mutex_ids=[0, 1])
    acc = pl.struct("T", cur=0)
    slots = pl.struct_array(2, "S", v=0)
    inner = pl.make_tuple(x=10, y=20)
    outer = pl.make_tuple(a=inner, ring=g, s=slots[1])
    with pl.section_vector():
        acc.cur = 7
        t = pl.make_tuple(x=acc.cur, y=acc.cur * 10)  # values taken now
        acc.cur = 100
        slots[1].v = 3  # the tuple holds a reference to the slot
        pl.setval(out, 0, t.x + t.y)
        pl.setval(out, 1, outer.a.x * 2 + outer.a.y + outer.s.v)
        tile = outer.ring.next()  # tile groups go through tuples too
        pl.expands(tile, 5)
        pl.store(fives, tile, [0])


def test_make_tuple_holds_values_and_references():
    out, fives = np.zeros(8, np.int32), np.zeros(64, np.int32)
    tuples(out, fives)
    assert out[:2].tolist() == [77, 43] and (fives == 5).all()


@pl.jit
def run_time_out_of_range(out: pl.Tensor[[8], pl.DT_INT32], k: int):
    arr = pl.struct_array(3, "T", v=0)
    with pl.section_vector():
        pl.setval(out, 0, arr[k].v)  # <- here


def test_run_time_index_out_of_range_is_a_located_fault():
    with pytest.raises(SimulationError, match=r"struct_array 't'\[5\]: index 5 is out of range for 3 slots") as err:
        run_time_out_of_range(np.zeros(8, np.int32), 5)
    path, line, _ = marked_line(run_time_out_of_range.fn)
    assert f"{path}:{line}:" in str(err.value)


@pl.jit
def read_in_other_program(out: pl.Tensor[[8], pl.DT_INT32], x: pl.Tensor[[16, 16], pl.DT_FP16]):
    with pl.section_vector():
        s = pl.struct("Only", v=4)
        pl.setval(out, 0, s.v)
    with pl.section_cube():
        pl.setval(out, 1, s.v)


def test_struct_made_in_one_section_is_unset_in_the_other():
    with pytest.raises(SimulationError, match="read before this program set it"):
        read_in_other_program(np.zeros(8, np.int32), np.zeros((16, 16), np.float16))


# ---- C++ -------------------------------------------------------------------------------------------


def test_cpp_struct_definitions_and_field_access():
    cpp = (pass_by_reference.emit() / "kernel.cpp").read_text()
    assert "struct PassFn {\n    int32_t val;\n    int32_t count;\n};" in cpp
    assert "PassFn passfn;" in cpp and "passfn.val = (passfn.val + " in cpp
    cpp = (struct_array_refs.emit() / "kernel.cpp").read_text()
    assert "Slot slot[4];" in cpp and "int32_t w[2];" in cpp and ".w[" in cpp


# ---- located errors --------------------------------------------------------------------------------


@pl.jit
def unknown_field(out: pl.Tensor[[8], pl.DT_INT32]):
    s = pl.struct("U", total=0)
    with pl.section_vector():
        pl.setval(out, 0, s.totl)  # <- here


@pl.jit
def float_into_int_field(out: pl.Tensor[[8], pl.DT_INT32]):
    s = pl.struct("F", n=0)
    with pl.section_vector():
        s.n = 1.5  # <- here


@pl.jit
def constant_index_out_of_range(out: pl.Tensor[[8], pl.DT_INT32]):
    arr = pl.struct_array(3, "T", v=0)
    with pl.section_vector():
        arr[5].v = 100  # <- here


@pl.jit
def element_out_of_range(out: pl.Tensor[[8], pl.DT_INT32]):
    s = pl.struct("E", arr=[0, 0, 0, 0])
    with pl.section_vector():
        s.arr[4] = 1  # <- here


@pl.jit
def negative_index(out: pl.Tensor[[8], pl.DT_INT32]):
    arr = pl.struct_array(3, "T", v=0)
    with pl.section_vector():
        pl.setval(out, 0, arr[-1].v)  # <- here


@pl.jit
def name_not_literal(out: pl.Tensor[[8], pl.DT_INT32]):
    name = "Dyn"
    s = pl.struct(name, v=0)  # <- here
    with pl.section_vector():
        pl.setval(out, 0, s.v)


@pl.jit
def unnamed(out: pl.Tensor[[8], pl.DT_INT32]):
    s = pl.struct(v=0)  # <- here
    with pl.section_vector():
        pl.setval(out, 0, s.v)


@pl.jit
def redefined_type(out: pl.Tensor[[8], pl.DT_INT32]):
    a = pl.struct("Same", v=0)
    b = pl.struct("Same", v=0, w=1)  # <- here
    with pl.section_vector():
        pl.setval(out, 0, a.v + b.v)


@pl.jit
def append_to_array(out: pl.Tensor[[8], pl.DT_INT32]):
    arr = pl.struct_array(3, "T", v=0)
    with pl.section_vector():
        arr.append(pl.struct("T", v=1))  # <- here


@pl.jit
def iterate_array(out: pl.Tensor[[8], pl.DT_INT32]):
    arr = pl.struct_array(3, "T", v=0)
    with pl.section_vector():
        for slot in arr:  # <- here
            pl.setval(out, 0, slot.v)


@pl.jit
def tuple_is_immutable(out: pl.Tensor[[8], pl.DT_INT32]):
    t = pl.make_tuple(x=1)
    with pl.section_vector():
        t.x = 2  # <- here


@pl.jit
def tuple_positional(out: pl.Tensor[[8], pl.DT_INT32]):
    t = pl.make_tuple(1, 2)  # <- here
    with pl.section_vector():
        pl.setval(out, 0, t)


@pl.jit
def struct_of_a_tile(out: pl.Tensor[[8], pl.DT_INT32]):
    tile = pl.make_tile(pl.TileType([1, 64], pl.DT_INT32, pl.MemorySpace.Vec), addr=0)
    s = pl.struct("Bad", t=tile)  # <- here
    with pl.section_vector():
        pl.setval(out, 0, 0)


ERRORS = [
    (unknown_field, r"struct 'U' has no field 'totl'; did you mean 'total'\?", "totl"),
    (float_into_int_field, "holds int values; cannot store a float", None),
    (constant_index_out_of_range, "GetItemExpr index 5 out of bounds for tuple with 3 elements", None),
    (element_out_of_range, "GetItemExpr index 4 out of bounds for tuple with 4 elements", None),
    (negative_index, "negative index -1 is not supported", "arr[-1]"),
    (name_not_literal, "the struct type name must be a string literal", "name, v"),
    (unnamed, "needs its C struct type name first", "pl.struct"),
    (redefined_type, "struct type 'Same' is already defined with fields v: int", "pl.struct"),
    (append_to_array, r"has no attribute 'append' \(struct arrays have a fixed size\)", "append"),
    (iterate_array, "cannot iterate over struct_array 'T' of 3", "arr:"),
    (tuple_is_immutable, "the fields of make_tuple.x. are fixed when it is made", None),
    (tuple_positional, "does not accept positional arguments", "pl.make_tuple"),
    (struct_of_a_tile, "field 't' must be a scalar or a list of scalars", "tile)"),
]


@pytest.mark.parametrize("kernel,match,token", ERRORS, ids=[e[0].fn.__name__ for e in ERRORS])
def test_located_errors(kernel, match, token):
    err = expect_error(kernel, match, token)
    assert isinstance(err, ParserSyntaxError)  # the class the real parser raises for these
