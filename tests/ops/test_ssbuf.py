"""pl.ssbuf_store / pl.ssbuf_load: a struct's C bytes through the block's shared scalar buffer, from a
Vector core to the Cube core after a cross-core signal on S (the load waits for the schedule)."""
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.backends.pto import emit_kernel
from pypto_pro.errors import CompileError
from pypto_pro.errors_sim import RaceError, UninitializedReadError

P = pl.PipeType


def handoff(signal: bool):
    def k(x: pl.Tensor[[3], pl.DT_INT32], f: pl.Tensor[[1], pl.DT_FP32], n: pl.DT_INT32):
        msg = pl.struct("Message", batch=0, scale=0.0, ids=[0, 0])
        with pl.section_vector():
            msg.batch = n * 2
            msg.scale = 0.5
            msg.ids[1] = n + 7
            if pl.get_subblock_idx() == 0:
                pl.ssbuf_store(msg, 16)
                if signal:
                    pl.system.set_cross_core(pipe=P.S, event_id=15)
        with pl.section_cube():
            if signal:
                pl.system.wait_cross_core(pipe=P.S, event_id=15, sync_mode=pl.CrossCoreSyncMode.UNICAST_BLOCK)
            pl.ssbuf_load(msg, 16)
            x[0] = msg.batch
            x[1] = msg.ids[1]
            x[2] = msg.ids[0]
            f[0] = msg.scale
    return k


def test_the_cube_core_reads_what_a_vector_core_stored():
    x, f = torch.zeros(3, dtype=torch.int32), torch.zeros(1)
    pl.jit(handoff(True))(x, f, 5)
    assert x.tolist() == [10, 12, 0] and f.item() == 0.5


def test_without_the_signal_the_load_is_a_race():
    with pytest.raises(RaceError, match=r"SSBUF bytes 16\.\.32"):
        pl.jit(handoff(False))(torch.zeros(3, dtype=torch.int32), torch.zeros(1), 5)


def test_a_load_of_bytes_nothing_stored_is_a_never_written_read():
    def k(x: pl.Tensor[[1], pl.DT_INT32]):
        m = pl.struct("M", a=1)
        with pl.section_vector():
            pl.ssbuf_load(m, 8)
            x[0] = m.a
    with pytest.raises(UninitializedReadError, match="ssbuf_load on S"):
        pl.jit(k)(torch.zeros(1, dtype=torch.int32))


def test_struct_size_must_be_whole_words():
    def k(x: pl.Tensor[[1], pl.DT_INT32]):
        m = pl.struct("Flags", a=True, b=False)
        with pl.section_vector():
            pl.ssbuf_store(m, 0)
    with pytest.raises(CompileError, match="2 bytes; SSBUF copies whole 32-bit words"):
        pl.jit(k).compile()


def test_offset_outside_the_ssbuf_is_a_compile_error():
    def k(x: pl.Tensor[[1], pl.DT_INT32]):
        m = pl.struct("M", a=1)
        with pl.section_vector():
            pl.ssbuf_store(m, 256)
    with pytest.raises(CompileError, match="outside the 256-byte SSBUF"):
        pl.jit(k).compile()


def test_cpp_copies_words():
    k = pl.jit(handoff(True))
    src = emit_kernel(k.compile().programs, k.name, k.arch)["kernel.cpp"]
    assert "reinterpret_cast<__ssbuf__ uint32_t*>((uint64_t)(16))" in src and "ssbuf_i < 4" in src


@pl.jit
def flush_only(inp: pl.Tensor[[16, 16], pl.DT_FP32], out: pl.Tensor[[16, 16], pl.DT_FP32]):
    pl.system.dcci(inp, 512, cache_line=pl.CacheLine.SINGLE_CACHE_LINE)  # no section: shared code


def test_dcci_of_a_tensor_outside_sections_runs():
    out = torch.ones(16, 16)
    flush_only(torch.ones(16, 16), out)
    assert torch.equal(out, torch.ones(16, 16))
