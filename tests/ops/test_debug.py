"""pl.printf / pl.pto_assert / pl.dump_data / pl.trap (pypto_pro/ops/debug.py, debug_dump.py): the text
each core prints, its order and head, what a failing assert does (prints, does not stop), the
workspace an Acc dump writes, and a located CompileError for every misuse."""
import linecache

import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.errors import CompileError


def _log(kernel) -> str:
    return kernel.last_report.device_log


def test_printf_formats_as_c_and_names_the_core(capsys):
    @pl.jit()
    def k(out: pl.Tensor[[1], pl.DT_INT32], flag: pl.DT_BOOL, v8: pl.DT_INT8, v64: pl.DT_INT64,
          f: pl.DT_FP32, u32: pl.DT_UINT32, u64: pl.DT_UINT64):
        with pl.section_vector():
            pl.printf("flag=%d i8=%i i64=%d\n", flag, v8, v64)
            pl.printf("value=%+08.3f\n", f)
            pl.printf("addr=%#08x zero=%#x u64=%5u hex=%#010x\n", u32, pl.const(0, pl.DT_UINT32), u64, u64)
            pl.printf("no newline")
            out[0] = 1

    out = torch.zeros(1, dtype=torch.int32)
    k(out, True, -42, -1234567890, 3.14, 0x1234, 2**40 + 5)
    assert out.tolist() == [1]
    text = _log(k)
    assert text == ("DumpHead: AIV-0, CoreType=AIV, block dim=1\n"
                    "flag=1 i8=-42 i64=-1234567890\n"
                    "value=+003.140\n"
                    # UINT64 prints in pieces without width/flags, as the real lowering does
                    "addr=0x001234 zero=0 u64=1099511627781 hex=0x10000000005\n"
                    "no newline\n")
    assert capsys.readouterr().out == text  # shown when the launch ends


def test_printf_order_per_core_in_a_loop_and_blocks_apart():
    @pl.jit()
    def k(out: pl.Tensor[[4], pl.DT_INT32]):
        with pl.section_vector():
            b = pl.get_block_idx()
            for i in pl.range(0, 3):
                pl.printf("b%d i=%d\n", b, i, loc=True)
            pl.setval(out, b, b)

    out = torch.zeros(4, dtype=torch.int32)
    k[None, 2](out)
    lines = _log(k).splitlines()
    here = f"[test_debug.py:{k.fn.__code__.co_firstlineno + 5}]"
    assert lines[0] == "DumpHead: AIV-0, CoreType=AIV, block dim=2"
    assert lines[1:4] == [f"{here} b0 i={i}" for i in range(3)]
    assert lines[4] == "DumpHead: AIV-1, CoreType=AIV, block dim=2"
    assert lines[5:] == [f"{here} b1 i={i}" for i in range(3)]


def test_failed_assert_prints_and_continues():
    @pl.jit()
    def k(out: pl.Tensor[[1], pl.DT_INT32], flag: pl.DT_BOOL, v: pl.DT_INT32):
        with pl.section_vector():
            pl.pto_assert(flag)
            pl.pto_assert(v < 100, "v=%d out of range\n", v, loc=True)
            pl.pto_assert(flag, "text only")
            out[0] = v

    out = torch.zeros(1, dtype=torch.int32)
    k(out, True, 5)
    assert _log(k) == "" and k.last_report.assert_failures == []
    k(out, False, 123)
    assert out.tolist() == [123]  # the chip does not stop at a failed assert
    line = k.fn.__code__.co_firstlineno + 4
    assert _log(k) == ("DumpHead: AIV-0, CoreType=AIV, block dim=1\n"
                       "Assertion failed: flag\n"
                       f"[test_debug.py:{line}] Assertion failed: v < 100\nv=123 out of range\n"
                       # the real lowering prints a message only when it has arguments
                       "Assertion failed: flag\n")
    fails = k.last_report.assert_failures
    assert len(fails) == 3 and f"test_debug.py:{line}: pl.pto_assert failed on AIV-0" in fails[1]


def test_trap_stops_the_core_there():
    @pl.jit()
    def k(out: pl.Tensor[[2], pl.DT_INT32], stop: pl.DT_BOOL):
        with pl.section_vector():
            out[0] = 1
            if stop:
                pl.trap()
            out[1] = 2

    out = torch.zeros(2, dtype=torch.int32)
    k(out, False)
    assert out.tolist() == [1, 2] and k.last_report.traps == []
    out.zero_()
    k(out, True)
    assert out.tolist() == [1, 0]
    assert "pl.trap stopped AIV-0" in k.last_report.traps[0]


def test_dump_tensor_whole_and_window():
    @pl.jit()
    def k(out: pl.Tensor[[2, 4], pl.DT_INT32]):
        with pl.section_vector():
            for i in pl.range(0, 8):
                pl.setval(out, i, i * 10 - 20)
            pl.dump_data(out)
            pl.dump_data(out, offsets=[1, 1], shapes=[1, 2], flag="cp")

    out = torch.zeros(2, 4, dtype=torch.int32)
    k(out)
    assert _log(k) == ("DumpHead: AIV-0, CoreType=AIV, block dim=1\n"
                       "=== [dump_tensor] dtype: int32, Layout: ND, shape=[1,1,1,2,4] ===\n"
                       "  Batch [0, 0, 0]:\n-20 -10 0 10 \n20 30 40 50 \n"
                       "=== [flag] cp ===\n"
                       "=== [dump_tensor] dtype: int32, Layout: ND, shape=[1,1,1,1,2] ===\n"
                       "  Batch [0, 0, 0]:\n30 40 \n")


def _vec_dump_kernel(window: bool):
    @pl.jit(auto_mutex=True)
    def k(a: pl.Tensor[[4, 8], pl.DT_FP32], out: pl.Tensor[[4, 8], pl.DT_FP32]):
        tt = pl.TileType(shape=[4, 8], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec,
                         valid_shape=[-1, -1])
        g = pl.make_tile_group(type=tt, addrs=0x0, mutex_ids=[0])
        with pl.section_vector():
            t = g.current()
            pl.set_validshape(t, [3, 6])
            pl.load(t, a, [0, 0])
            pl.add(t, t, t)
            if window:
                pl.dump_data(t, offsets=[1, 4], shapes=[8, 8])
            else:
                pl.dump_data(t)
            pl.store(out, t, [0, 0])
    return k


def test_dump_vec_tile_marks_the_valid_region():
    k = _vec_dump_kernel(False)
    a = torch.arange(32, dtype=torch.float32).reshape(4, 8)
    out = torch.zeros(4, 8)
    k(a, out)
    lines = _log(k).splitlines()
    assert lines[1] == "=== [dump_tile] dtype: float32, shape=[4,8], valid=[3,6], Layout: ND ==="
    assert lines[2].startswith("0.000000 2.000000 4.000000 6.000000 8.000000 10.000000 | ")
    assert lines[5] == "--------" and len(lines) == 7  # after the last valid row, then the 4th row


def test_dump_vec_tile_window_is_cut_at_the_valid_shape():
    k = _vec_dump_kernel(True)
    a = torch.arange(32, dtype=torch.float32).reshape(4, 8)
    k(a, torch.zeros(4, 8))
    assert _log(k).splitlines()[1:] == [
        "=== [TPRINT Tile Window] Data Type: float32, Layout: ND, TileType: Vec ===",
        "  Source Shape: [4, 8], Window Offsets: [1, 4], Requested Shape: [8, 8], Valid Shape: [2, 2]",
        "24.000000 26.000000 ", "40.000000 42.000000 "]


def test_dump_acc_tile_goes_through_the_workspace():
    @pl.jit(auto_mutex=True)
    def k(a: pl.Tensor[[16, 16], pl.DT_FP16], b: pl.Tensor[[16, 16], pl.DT_FP16],
          out: pl.Tensor[[16, 16], pl.DT_FP32], ws: pl.Tensor[[16, 16], pl.DT_FP32]):
        mk = pl.make_tile_group
        a1 = mk(type=pl.TileType(shape=[16, 16], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat), addrs=0x0,
                mutex_ids=[0])
        b1 = mk(type=pl.TileType(shape=[16, 16], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat), addrs=0x1000,
                mutex_ids=[1])
        l0 = mk(type=pl.TileType(shape=[16, 16], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Left), addrs=0x0,
                mutex_ids=[2])
        r0 = mk(type=pl.TileType(shape=[16, 16], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Right), addrs=0x0,
                mutex_ids=[3])
        acc = mk(type=pl.TileType(shape=[16, 16], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Acc), addrs=0x0,
                 mutex_ids=[4])
        with pl.section_cube():
            ta, tb, tl, tr, tc = a1.current(), b1.current(), l0.current(), r0.current(), acc.current()
            pl.load(ta, a, [0, 0])
            pl.load(tb, b, [0, 0])
            pl.move(tl, ta)
            pl.move(tr, tb)
            pl.matmul(tc, tl, tr)
            pl.dump_data(tc, offsets=[14, 15], shapes=[4, 4], workspace=ws)
            pl.store(out, tc, [0, 0])

    rng = np.random.default_rng(0)
    a = torch.from_numpy(rng.integers(-3, 4, (16, 16)).astype(np.float16))
    b = torch.from_numpy(rng.integers(-3, 4, (16, 16)).astype(np.float16))
    out, ws = torch.zeros(16, 16), torch.zeros(16, 16)
    k(a, b, out, ws)
    ref = a.float() @ b.float()
    assert torch.equal(out, ref) and torch.equal(ws, ref)  # the whole tile was written to the workspace
    lines = _log(k).splitlines()
    assert lines[0] == "DumpHead: AIC-0, CoreType=AIC, block dim=1"
    assert lines[1] == "=== [TPRINT Acc Tile Window] Data Type: float32, Layout: NZ, TileType: Acc ==="
    assert lines[2].endswith("Window Offsets: [14, 15], Requested Shape: [4, 4], Valid Shape: [2, 1]")
    assert lines[3:] == ["%f " % ref[14, 15].item(), "%f " % ref[15, 15].item()]


def _compile(body: str, params: str = "out: pl.Tensor[[4], pl.DT_INT32], v: pl.DT_INT32, u: pl.DT_UINT32"):
    src = (f"import pypto_pro.language as pl\n@pl.jit()\ndef k({params}):\n"
           "    t = pl.make_tile(pl.TileType(shape=[8, 8], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec),"
           " addr=0)\n    with pl.section_vector():\n" + "".join(f"        {line}\n" for line in body.split(";")))
    name = f"<debug-misuse-{abs(hash(src))}>"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)  # the frontend reads kernels' source
    ns: dict = {}
    exec(compile(src, name, "exec"), ns)
    return ns["k"].compile()


@pytest.mark.parametrize("body, message", [
    ('pl.printf("%d %d", v)', "expects 2 scalar arguments, but got 1"),
    ('pl.printf("%u", v)', "requires an unsigned integer or bool scalar, but got DT_INT32"),
    ('pl.printf("%d", u)', "requires a signed integer or bool scalar, but got DT_UINT32"),
    ('pl.printf("%x", True)', "requires an unsigned integer scalar"),
    ('pl.printf("%f", v)', "requires an FP32 scalar"),
    ('pl.printf("%s", v)', "does not support conversion '%s'"),
    ('pl.printf("%lld", v)', "does not support conversion '%l'"),
    ('pl.printf("100%%")', "does not support literal '%%'"),
    ('pl.printf("%.f", v)', "precision must be followed by digits"),
    ('pl.printf("%p", v)', "requires a pl.Ptr pointer"),
    ('pl.printf("x", loc=1)', "requires a bool loc flag"),
    ("pl.pto_assert(v)", "requires a scalar bool condition, but got DT_INT32"),
    ('pl.dump_data(out, offsets=[0])', "offsets and shapes must be provided together"),
    ('pl.dump_data(out, offsets=[0, 0], shapes=[1, 1])', "must match the tensor rank 1"),
    ('pl.dump_data(out, offsets=[0], shapes=[0])', "shape at axis 0 must be positive"),
    ('pl.dump_data(out, workspace=out)', "workspace is only valid for Tile inputs"),
    ('pl.dump_data(t, workspace=out)', "workspace is only valid for Acc tiles"),
    ('pl.dump_data(v)', "requires a Tensor or a Tile"),
    ('pl.dump_data(out, flag=3)', "requires a str flag"),
])
def test_misuse_is_a_located_compile_error(body, message):
    with pytest.raises(CompileError, match=r"<debug-misuse-\d+>:6:") as exc:
        _compile(body)
    assert message in str(exc.value)
