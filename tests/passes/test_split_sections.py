"""A kernel with no section is shared by both engines (the real runtime's rule): one program per
engine, and at launch the AIC and each AIV of a block run the whole body."""
from __future__ import annotations

import torch

import pypto_pro.language as pl
from pypto_pro.arch import get_arch
from pypto_pro.frontend.parser import parse_kernel
from pypto_pro.language.enums import SectionKind
from pypto_pro.passes.split_sections import split_sections


@pl.jit()
def sectionless(out: pl.Tensor[[16], pl.DT_INT32], n: pl.DT_INT32):
    b = pl.get_block_idx()
    if b < n:
        pl.printf("block %d of %d\n", b, pl.get_block_num())


def test_sectionless_kernel_is_one_program_per_engine():
    k = parse_kernel(sectionless.fn, get_arch("a5"))
    programs = split_sections(k)
    assert set(programs) == {SectionKind.CUBE, SectionKind.VECTOR}
    assert k.subblocks == 2
    assert all(p.body for p in programs.values())


def test_sectionless_kernel_runs_on_the_aic_and_every_aiv():
    out = torch.zeros(16, dtype=torch.int32)
    sectionless[None, 2](out, 2)
    log = sectionless.last_report.device_log
    # blocks 0 and 1: the AIC of each block sees its block id; AIV k of block b sees b * 2 + k
    lines = [l for l in log.splitlines() if l.startswith("block ")]
    assert sorted(lines) == ["block 0 of 2", "block 0 of 2", "block 1 of 2", "block 1 of 2"]
    assert log.count("CoreType=AIC") == 2 and log.count("CoreType=AIV") == 2
