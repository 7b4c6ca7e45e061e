"""pl.getval / pl.setval (t[i, j] / t[i, j] = v) on Vec tiles, and pl.getval of a GM tensor the kernel
writes: S-pipe instructions that the scalar program waits for (backends/sim/live.py). A read sees what
the schedule wrote when S reaches it; a missing sync between the producing pipe and S is a race named
with both lines; data-dependent control flow runs per block (no schedule replay)."""
import warnings

import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.backends.pto import emit_kernel
from pypto_pro.errors import CompileError
from pypto_pro.errors_sim import OutOfBoundsError, RaceError

P = pl.PipeType
VEC = pl.MemorySpace.Vec
T = pl.TileType(shape=[16, 64], dtype=pl.DT_FP16, target_memory=VEC)


def _line(fn, text: str) -> int:
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, ln in enumerate(lines) if text in ln)


@pl.jit(auto_mutex=True)
def copy_first(a: pl.Tensor[[16, 64], pl.DT_FP16]):
    g = pl.make_tile_group(type=T, addrs=0x0, mutex_ids=[0])
    with pl.section_vector():
        t = g.current()
        pl.load(t, a, [0, 0])
        pl.exp(t, t)          # V writes the slot; auto_mutex orders it before the S read
        v = t[0, 0]
        t[0, 1] = v
        t[3, 5] = pl.getval(t, 63) * 2.0
        pl.store(a, t, [0, 0])


def _golden(a):
    e = torch.exp(a.float()).half()
    e[0, 1] = e[0, 0]
    e[3, 5] = (e[0, 63].float() * 2).half()
    return e


def test_getval_sees_the_vector_result_and_setval_reaches_the_store():
    a = torch.rand(16, 64, dtype=torch.float16) * 2 - 1
    want = _golden(a)
    copy_first(a)
    assert torch.equal(a, want)


def test_functional_mode_agrees():
    a = torch.rand(16, 64, dtype=torch.float16) * 2 - 1
    b = a.clone()
    copy_first(a)
    copy_first.options(timing=False)(b)
    assert torch.equal(a, b)


@pl.jit(auto_mutex=True)
def count_positive(a: pl.Tensor[[4, 64], pl.DT_FP16], out: pl.Tensor[[4], pl.DT_INT64]):
    g = pl.make_tile_group(type=pl.TileType(shape=[1, 64], dtype=pl.DT_FP16, target_memory=VEC), addrs=0x0,
                           mutex_ids=[0])
    with pl.section_vector():
        b = pl.get_block_idx()
        t = g.current()
        pl.load(t, a, [b, 0])
        i: pl.DT_INT64 = 0
        while t[0, i] > 0:    # control flow that depends on the tile's data, per block
            i = i + 1
            if i >= 64:
                break
        out[b] = i


@pytest.mark.parametrize("timing", [True, False])
def test_data_dependent_loops_differ_per_block(timing):
    a = -torch.ones(4, 64, dtype=torch.float16)
    for r, n in enumerate((3, 0, 64, 7)):
        a[r, :n] = 1.0
    out = torch.zeros(4, dtype=torch.int64)
    k = count_positive.options(timing=timing)
    k[None, 4](a, out)
    assert out.tolist() == [3, 0, 64, 7]
    if timing:  # every block scheduled from its own data: none replays another's schedule
        assert k.last_report.blocks_scheduled == 4


def read_after_load(with_sync: bool):
    def k(a: pl.Tensor[[16, 64], pl.DT_FP16], out: pl.Tensor[[1], pl.DT_FP16]):
        t = pl.make_tile(T, addr=0, size=2048)
        with pl.section_vector():
            pl.load(t, a, [0, 0])
            if with_sync:
                pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.S, event_id=0)
                pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.S, event_id=0)
            v = t[2, 3]  # the read
            out[0] = v
    return k


def test_explicit_mte2_to_s_sync_orders_the_read():
    a = torch.rand(16, 64, dtype=torch.float16)
    out = torch.zeros(1, dtype=torch.float16)
    pl.jit(read_after_load(True))(a, out)
    assert out[0] == a[2, 3]


def test_a_missing_mte2_to_s_sync_is_a_race_with_both_lines():
    fn = read_after_load(False)
    with pytest.raises(RaceError) as e:
        pl.jit(fn)(torch.rand(16, 64, dtype=torch.float16), torch.zeros(1, dtype=torch.float16))
    msg = str(e.value)
    assert f":{_line(fn, 'pl.load(t, a')}" in msg and f":{_line(fn, 'the read')}" in msg
    assert "getval on S" in msg and "element 131" in msg


def test_a_missing_s_to_mte3_sync_after_setval_is_a_race():
    def k(a: pl.Tensor[[16, 64], pl.DT_FP16]):
        t = pl.make_tile(T, addr=0, size=2048)
        with pl.section_vector():
            pl.expands(t, 1.0)
            pl.system.sync_src(set_pipe=P.V, wait_pipe=P.S, event_id=0)
            pl.system.sync_dst(set_pipe=P.V, wait_pipe=P.S, event_id=0)
            pl.system.sync_src(set_pipe=P.V, wait_pipe=P.MTE3, event_id=1)
            pl.system.sync_dst(set_pipe=P.V, wait_pipe=P.MTE3, event_id=1)
            t[0, 0] = 5.0
            pl.store(a, t, [0, 0])  # needs S -> MTE3 as well
    with pytest.raises(RaceError, match="setval on S"):
        pl.jit(k)(torch.zeros(16, 64, dtype=torch.float16))


def test_getval_offset_outside_the_tile_is_a_located_fault():
    def k(a: pl.Tensor[[16, 64], pl.DT_FP16], n: pl.DT_INT32):
        t = pl.make_tile(T, addr=0, size=2048)
        with pl.section_vector():
            pl.load(t, a, [0, 0])
            pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.S, event_id=0)
            pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.S, event_id=0)
            v = pl.getval(t, n)
    with pytest.raises(OutOfBoundsError, match="outside tile t"):
        pl.jit(k)(torch.zeros(16, 64, dtype=torch.float16), 1024)


@pytest.mark.parametrize("body,match", [
    ("v = pl.getval(m, 0)", "needs a Vec tile"),
    ("v = pl.getval(t, 1024)", "offset 1024 is outside tile 't'"),
    ("t[0, 0] = 1.5", "float value cannot be written"),
])
def test_misuse_is_a_located_compile_error(body, match, tmp_path):
    src = f'''
import pypto_pro.language as pl
def k(a: pl.Tensor[[16, 64], pl.DT_INT32]):
    t = pl.make_tile(pl.TileType(shape=[16, 64], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec), addr=0, size=4096)
    m = pl.make_tile(pl.TileType(shape=[16, 16], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat), addr=0, size=512)
    with pl.section_vector():
        {body}
'''
    path = tmp_path / "k.py"
    path.write_text(src)
    ns: dict = {}
    exec(compile(src, str(path), "exec"), ns)  # noqa: S102 - the test's own kernel source
    with pytest.raises(CompileError, match=match) as e:
        pl.jit(ns["k"]).compile()
    assert e.value.line == 7


def test_tile_getval_outside_a_vector_section_is_a_compile_error():
    def k(a: pl.Tensor[[16, 64], pl.DT_FP16]):
        t = pl.make_tile(T, addr=0, size=2048)
        v = t[0, 0]
        with pl.section_vector():
            pass
    with pytest.raises(CompileError, match=r"inside `with pl.section_vector\(\):`"):
        pl.jit(k).compile()


# ---- GM tensors the kernel writes ---------------------------------------------------------------


def store_then_read(with_sync: bool):
    def k(x: pl.Tensor[[1, 64], pl.DT_FP32], out: pl.Tensor[[1], pl.DT_FP32]):
        t = pl.make_tile(pl.TileType(shape=[1, 64], dtype=pl.DT_FP32, target_memory=VEC), addr=0, size=256)
        with pl.section_vector():
            pl.expands(t, 3.0)
            pl.system.sync_src(set_pipe=P.V, wait_pipe=P.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=P.V, wait_pipe=P.MTE3, event_id=0)
            pl.store(x, t, [0, 0])
            if with_sync:
                pl.system.sync_src(set_pipe=P.MTE3, wait_pipe=P.S, event_id=0)
                pl.system.sync_dst(set_pipe=P.MTE3, wait_pipe=P.S, event_id=0)
            out[0] = x[0, 5] + 1.0  # the read
    return k


def test_getval_of_a_stored_tensor_after_mte3_to_s_sees_the_store():
    out = torch.zeros(1)
    pl.jit(store_then_read(True))(torch.zeros(1, 64), out)
    assert out.item() == 4.0


def test_getval_of_a_stored_tensor_without_the_sync_is_a_race():
    fn = store_then_read(False)
    with pytest.raises(RaceError) as e:
        pl.jit(fn)(torch.zeros(1, 64), torch.zeros(1))
    assert f":{_line(fn, 'the read')}" in str(e.value) and f":{_line(fn, 'pl.store(x')}" in str(e.value)


def test_read_then_write_of_one_tensor_needs_no_sync():
    def k(x: pl.Tensor[[1, 64], pl.DT_FP32]):
        t = pl.make_tile(pl.TileType(shape=[1, 64], dtype=pl.DT_FP32, target_memory=VEC), addr=0, size=256)
        with pl.section_vector():
            v = x[0, 0]  # the scalar unit waits for it before it dispatches anything later
            pl.expands(t, v)
            pl.system.sync_src(set_pipe=P.V, wait_pipe=P.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=P.V, wait_pipe=P.MTE3, event_id=0)
            pl.store(x, t, [0, 0])
    x = torch.zeros(1, 64)
    x[0, 0] = 5.0
    pl.jit(k)(x)
    assert torch.equal(x, torch.full((1, 64), 5.0))


@pl.jit
def no_sections(s: pl.Tensor[[2], pl.DT_FP32]):
    v = s[0]
    s[1] = v


@pl.jit
def view_copy(p: pl.Ptr[pl.DT_FP32]):
    t = pl.make_tensor(p, [2])
    v = t[0]
    t[1] = v


@pytest.mark.parametrize("kernel", [no_sections, view_copy])
def test_scalar_copy_without_sections_and_through_a_view(kernel):
    d = torch.tensor([2.5, 0.0])
    kernel(d)
    assert d.tolist() == [2.5, 2.5]


def test_cpp_spells_get_value_and_set_value():
    src = emit_kernel(copy_first.compile().programs, copy_first.name, copy_first.arch)["kernel.cpp"]
    assert ".GetValue(0);" in src and ".SetValue(1, static_cast<half>(" in src


def test_no_warning_for_a_correct_kernel():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        copy_first.options(check="warn")(torch.rand(16, 64, dtype=torch.float16))


def handoff(writer: int):
    """Vector core ``writer`` sets an element and stores the tile; the other waits (INTER_SUBBLOCK),
    loads it and reads the element: its read waits for another core's instructions."""
    def k(buf: pl.Tensor[[8, 8], pl.DT_INT32], out: pl.Tensor[[1], pl.DT_INT32]):
        t = pl.make_tile(pl.TileType(shape=[8, 8], dtype=pl.DT_INT32, target_memory=VEC), addr=0, size=256)
        with pl.section_cube():
            pass
        with pl.section_vector():
            sub = pl.get_subblock_idx()
            if sub == writer:
                pl.expands(t, 0)
                pl.system.sync_src(set_pipe=P.V, wait_pipe=P.S, event_id=1)
                pl.system.sync_dst(set_pipe=P.V, wait_pipe=P.S, event_id=1)
                for _ in pl.range(0, 50):
                    t[0, 0] = 41
                t[0, 0] = 5654
                pl.system.sync_src(set_pipe=P.S, wait_pipe=P.MTE3, event_id=2)
                pl.system.sync_dst(set_pipe=P.S, wait_pipe=P.MTE3, event_id=2)
                pl.store(buf, t, [0, 0])
            pl.system.set_cross_core(pipe=P.MTE3, event_id=0, sync_mode=pl.CrossCoreSyncMode.INTER_SUBBLOCK)
            pl.system.wait_cross_core(pipe=P.MTE2, event_id=0, sync_mode=pl.CrossCoreSyncMode.INTER_SUBBLOCK)
            if sub != writer:
                pl.load(t, buf, [0, 0])
                pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.S, event_id=5)
                pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.S, event_id=5)
                out[0] = t[0, 0]
    return k


@pytest.mark.parametrize("writer,timing", [(0, True), (1, True), (1, False)])
def test_a_read_may_wait_for_the_other_vector_core(writer, timing):
    buf = torch.full((8, 8), 2341, dtype=torch.int32)
    out = torch.full((1,), 2, dtype=torch.int32)
    pl.jit(handoff(writer), timing=timing)(buf, out)
    assert out.item() == 5654 and buf[0, 0] == 5654


def test_tile_element_access_is_an_a5_operation():
    def k(a: pl.Tensor[[16, 64], pl.DT_FP16]):
        t = pl.make_tile(T, addr=0, size=2048)
        with pl.section_vector():
            t[0, 0] = 1.0
    with pytest.raises(CompileError, match="Ascend 950"):
        pl.jit(k, arch="a2a3").compile()
