"""pl.printf / pl.pto_assert as the real lowering's cce::printf statements: 64-bit signed values with
%lld, narrow ints widened, 64-bit unsigned printed from 32-bit pieces. Run on PTO-ISA's CPU model
(when PTO_ISA_ROOT is set, its cce::printf is the host printf): the text matches the simulator's
device log."""
from __future__ import annotations

import numpy as np

import pypto_pro.language as pl
import test_emitter as te


def _prints(out: pl.Tensor[[1], pl.DT_INT32], flag: pl.DT_BOOL, v8: pl.DT_INT8, v64: pl.DT_INT64,
            f: pl.DT_FP32, u32: pl.DT_UINT32, u64: pl.DT_UINT64):
    with pl.section_vector():
        pl.printf("flag=%d i8=%i i64=%d\n", flag, v8, v64)
        pl.printf("value=%+08.3f\n", f)
        pl.printf("addr=%#08x u64=%5u hex=%#010x small=%x\n", u32, u64, u64, pl.const(7, pl.DT_UINT64))
        pl.pto_assert(v8 > 0, "v8=%d f=%.2f\n", v8, f)
        pl.pto_assert(v64 < 0, "not printed %d\n", v8)
        out[0] = 1


SCALARS = {"flag": True, "v8": -42, "v64": -1234567890123, "f": 3.14, "u32": 0x1234, "u64": 2**40 + 5}


def test_printf_statements_follow_the_real_lowering():
    src = te._emit(pl.jit(_prints, arch="a5"))[2]["kernel.cpp"]
    assert 'cce::printf("flag=%d i8=%i i64=%lld\\n", static_cast<int>(flag), static_cast<int>(v8), ' \
           "static_cast<long long>(v64));" in src
    assert 'cce::printf("%u%09u%09u", ' in src and 'cce::printf("0x%x%08x", ' in src
    assert 'cce::printf("Assertion failed: v8 > 0\\n");' in src


@te.needs_pto
def test_device_prints_match_the_simulators_log(tmp_path):
    k = pl.jit(_prints, arch="a5")
    te._run_on_pto_cpu(tmp_path, k, {"out": np.zeros(1, np.int32)}, block_dim=1, scalars=SCALARS)
    printed = te.LAST_RUN["stdout"]
    log = k.last_report.device_log
    body = [line for line in log.splitlines() if line and not line.startswith("DumpHead:")]  # the runtime's per-core header
    assert body and all(line in printed for line in body), (log, printed)
    assert "i64=-1234567890123" in printed and "u64=1099511627781" in printed and "hex=0x10000000005" in printed
    assert "Assertion failed: v8 > 0" in printed and "not printed" not in printed
