"""pl.get_spr(): the kernel reads AR, the byte count the last vf.squeeze(STORE_REG) of the core left
(vf.clear_spr: 0); AR is the core's, shared by every VF function; inside a VF body it is a located error."""
from __future__ import annotations

import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.errors import CompileError
from pypto_pro.language import Vf as vf

from vf_kernels import to_mte3, to_v

COVERED = frozenset({"clear_spr"})

TT = pl.TileType(shape=[1, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)


@pl.vector_function
def squeeze_vf(src, dst):
    full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    x = vf.load_align(src, 0)
    pos = vf.gt(x, 0.0, full)
    packed = vf.squeeze(x, pos, gather_mode=pl.SqueezeMode.STORE_REG)
    vf.store_align(dst, packed, full)


@pl.vector_function
def clear_vf(src, dst):
    vf.clear_spr()


@pl.jit()
def read_ar(a: pl.Tensor[[1, 64], pl.DT_FP32], out: pl.Tensor[[1, 64], pl.DT_FP32],
            ar: pl.Tensor[[1, 2], pl.DT_INT64]):
    ta = pl.make_tile(TT, addr=0, size=256)
    to = pl.make_tile(TT, addr=256, size=256)
    with pl.section_vector():
        pl.load(ta, a, [0, 0])
        to_v()
        squeeze_vf(ta, to)
        to_mte3()
        pl.store(out, to, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.S, event_id=2)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.S, event_id=2)
        n = pl.get_spr()
        pl.setval(ar, 0, n)
        clear_vf(ta, to)
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.S, event_id=3)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.S, event_id=3)
        m = pl.get_spr()
        pl.setval(ar, 1, m)


def test_get_spr_reads_the_squeeze_byte_count_then_zero_after_clear():
    a = torch.randn(1, 64, generator=torch.Generator().manual_seed(2))
    out = torch.zeros(1, 64)
    ar = torch.full((1, 2), -1, dtype=torch.int64)
    read_ar[None, 1](a, out, ar)
    assert ar[0, 0].item() == 4 * int((a > 0).sum()) and ar[0, 1].item() == 0


def test_get_spr_inside_a_vector_function_is_a_located_error():
    with pytest.raises(CompileError, match="get_spr.. cannot be used inside a @pl.vector_function") as e:
        @pl.vector_function
        def bad(src, dst):
            n = pl.get_spr()

        @pl.jit()
        def k(a: pl.Tensor[[1, 64], pl.DT_FP32]):
            ta = pl.make_tile(TT, addr=0, size=256)
            with pl.section_vector():
                bad(ta, ta)
        k.compile()
    assert "test_vf_get_spr.py" in str(e.value)
