"""Counted unaligned stores (``vf.store_unalign(..., count)``: ``vstus``, flushed by ``vstas``) in batched
VF plans (``backends/sim/vf/batch.py``, ``ops/vf/unaligned.py``) write the bytes of the one-by-one run.

The FA masked-softmax bodies store one reduced value per row with ``store_unalign(t, r, ureg, 1,
post_update=True)``, flush with ``store_unalign_post`` and read the values back as BRC loads after a
``mem_bar``. Each kernel runs with ``batch.BATCH`` on and off on inputs full of NaN payloads, signed
zeros, subnormals and infinities, in several dtypes, with and without post-update, with counts that
vary per store, stores over bytes that earlier loads read (WAR) and later loads read back (RAW),
stores of one address (WAW), and a count that does not fit one register (the same fault): outputs,
the whole launch report and any error must be the same, and the batched plan must really run, in
fewer steps than the old barrier-per-store plan could (which was not worth batching at all).
"""
from __future__ import annotations

import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.language import Vf as vf

from test_vf_batch import _run, specials
from vf_kernels import ALL, vf_kernel

F32, F16 = pl.DT_FP32, pl.DT_FP16
MERGING, ZEROING = pl.MergeMode.MERGING, pl.MergeMode.ZEROING


def rowmax_body(rows: int, scale: float):
    """The with_mask softmax shape: per row a load, muls, reduce_max, one unaligned store (post-update),
    the flush, a mem_bar, then per row a BRC load of the stored value, exp_sub, reduce_sum, a second
    unaligned store run; the rows' stores overwrite bytes the first loop's loads read (WAR)."""
    @pl.vector_function
    def body(ta, tb, to):
        full = vf.create_mask(pattern=ALL, dtype=F32)
        u_max = vf.unalign_reg_for_store()
        u_sum = vf.unalign_reg_for_store()
        w = vf.load_align(tb, 0)
        vf.store_align(to, w, full, 0)  # row 0 whole before the second run's stores over its first bytes (WAW)
        for m in pl.range(rows):
            x = vf.load_align(ta, m * 64)
            x = vf.muls(x, scale, full)
            y = vf.load_align(tb, m * 64)  # bytes the unaligned store below overwrites
            vf.store_align(to, y, full, (m + 2) * 64)
            mx = vf.reduce_max(x, full, merge_mode=ZEROING)
            vf.store_unalign(tb, mx, u_max, 1, post_update=True)
        vf.store_unalign_post(tb, u_max, 0, post_update=True)
        vf.mem_bar(mode=pl.MemBarMode.VST_VLD)
        for i in pl.range(rows):
            b = vf.load_align(tb, i, dist=pl.LoadDist.BRC_B32)  # what the store of row i wrote (RAW)
            x2 = vf.load_align(ta, i * 64)
            e = vf.exp_sub(x2, b, full)
            s = vf.reduce_sum(e, full, merge_mode=ZEROING)
            vf.store_unalign(to, s, u_sum, 1, post_update=True)
        vf.store_unalign_post(to, u_sum, 0, post_update=True)
        z = vf.load_align(tb, 0)
        vf.store_align(to, z, full, 64)
    return body


@pytest.mark.parametrize("rows,scale", [(16, 0.5), (7, -0.0), (1, 2.5)])
def test_row_max_stores_batch_and_give_the_one_by_one_bytes(rows, scale):
    kernel = vf_kernel(rowmax_body(rows, scale), [(F32, [16, 64]), (F32, [16, 64])], (F32, [18, 64]), dynamic=True)
    args = (specials(11, (16, 64)), specials(12, (16, 64)))
    on, ran = _run(kernel, args, torch.full((18, 64), 7.0), True)
    off, ran_off = _run(kernel, args, torch.full((18, 64), 7.0), False)
    assert ran and not ran_off, "the batched plan did not run"
    assert isinstance(on[0], bytes) and on == off
    if rows == 16:  # 16 * 11 + 10 instructions; a barrier per vstus made > 0.8 of that in steps (not batched)
        assert ran[0] <= 24


def counted_body(dt, post: bool, counts: tuple[int, ...]):
    """Raw registers of ``dt`` (NaN payloads kept: no arithmetic) stored with per-store counts, post-update
    (a packed run) or each at a fixed offset (with ``post`` False, stores 2k and 2k+1 share an address:
    WAW, their order kept), over a row first stored whole (WAW); a MERGING max between them; a load of
    the stored bytes back (RAW)."""
    n = len(counts)
    lanes = 256 // (dt.bits // 8)

    @pl.vector_function
    def body(ta, tb, to):
        full = vf.create_mask(pattern=ALL, dtype=dt)
        ureg = vf.unalign_reg_for_store()
        for r in pl.range(4):
            w = vf.load_align(tb, r * lanes)
            vf.store_align(to, w, full, r * lanes)
        for i in pl.range(n):
            x = vf.load_align(ta, i * lanes)
            y = vf.load_align(tb, i * lanes)
            if post:
                vf.store_unalign(to, x, ureg, counts[i], post_update=True)
            else:
                vf.store_unalign(to + (i // 2) * 3, x, ureg, counts[i])
            y = vf.max(y, x, full, mode=MERGING)
            vf.store_align(to, y, full, (i + 4) * lanes)
        vf.store_unalign_post(to, ureg, 0, post_update=post)
        vf.mem_bar(mode=pl.MemBarMode.VST_VLD)
        z = vf.load_align(to, 0)
        vf.store_align(to, z, full, 3 * lanes)
    return body


def _typed(x: torch.Tensor, dt) -> torch.Tensor:
    """fp32 bit patterns as a tensor of ``dt`` (the same bytes: NaN payloads in every half-word too)."""
    return x.view({F32: torch.float32, F16: torch.float16, pl.DT_INT32: torch.int32, pl.DT_INT16: torch.int16}[dt])


def _counted(dt, post: bool, counts: tuple[int, ...], seed: int):
    n = len(counts)
    lanes = 256 // (dt.bits // 8)
    kernel = vf_kernel(counted_body(dt, post, counts), [(dt, [n, lanes]), (dt, [n, lanes])], (dt, [n + 4, lanes]),
                       dynamic=True)
    args = (_typed(specials(seed, (n, 64)), dt), _typed(specials(seed + 1, (n, 64)), dt))
    on, ran = _run(kernel, args, torch.zeros((n + 4, lanes), dtype=args[0].dtype), True)
    off, ran_off = _run(kernel, args, torch.zeros((n + 4, lanes), dtype=args[0].dtype), False)
    return on, off, ran, ran_off


@pytest.mark.parametrize("dt", [F32, F16, pl.DT_INT32, pl.DT_INT16])
@pytest.mark.parametrize("post", [True, False])
def test_counted_stores_of_several_dtypes(dt, post):
    lanes = 256 // (dt.bits // 8)
    counts = (1, 3, lanes, 0, 5, 1, lanes - 1, 2)  # counts differ per store: one copy per distinct count
    on, off, ran, ran_off = _counted(dt, post, counts, 13)
    assert ran and not ran_off and isinstance(on[0], bytes) and on == off


def test_count_past_a_register_faults_at_the_same_instruction():
    counts = (1, 2, 65, 1, 1, 1, 1, 1)  # the third store's count does not fit 64 lanes: the one-by-one run faults
    on, off, _, _ = _counted(F32, True, counts, 15)
    assert on[0] != "ok" and "do not fit" in on[1] and on == off


def reduce_body(kind: str, dt, count: int, datablock: bool):
    """Per row a reduction (``kind``) under a full or partial mask (``count`` lanes; 0: all), its result
    stored and one result fed to the next row's reduction input (a chain beside the independent rows)."""
    lanes = 256 // (dt.bits // 8)
    red = {"sum": vf.reduce_sum, "max": vf.reduce_max, "min": vf.reduce_min}[kind]

    @pl.vector_function
    def body(ta, to):
        full = vf.create_mask(pattern=ALL, dtype=dt)
        m = vf.update_mask(count if count else lanes, dtype=dt)
        for i in pl.range(8):
            x = vf.load_align(ta, i * lanes)
            r = red(x, m, datablock=datablock)
            vf.store_align(to, r, full, i * lanes)
        c = vf.load_align(ta, 0)
        for i in pl.range(3):
            c = red(c, full, datablock=datablock)
            vf.store_align(to, c, full, (8 + i) * lanes)
    return body


@pytest.mark.parametrize("kind", ["sum", "max", "min"])
@pytest.mark.parametrize("dt,count,datablock", [(F32, 0, False), (F32, 37, False), (F16, 0, False), (F16, 100, True),
                                                (pl.DT_INT32, 0, False), (pl.DT_INT16, 9, False),
                                                (F32, 0, True), (pl.DT_INT32, 21, True)])
def test_batched_reductions_give_the_one_by_one_bytes(kind, dt, count, datablock):
    lanes = 256 // (dt.bits // 8)
    kernel = vf_kernel(reduce_body(kind, dt, count, datablock), [(dt, [8, lanes])], (dt, [11, lanes]), dynamic=True)
    a = _typed(specials(17, (8, 64)), dt)
    if dt in (F32, F16):  # rows of signed zeros only / one NaN payload among zeros: which one the reduction keeps
        a[1] = _typed(torch.full((1, 64), -0.0), dt)[0]
        a[2] = 0.0
        a[2, 5] = _typed(torch.tensor([[float("-0.0")]]), dt)[0, 0]
        a[3] = _typed(specials(18, (1, 64)), dt)[0].abs() * 0.0
    on, ran = _run(kernel, (a,), torch.zeros((11, lanes), dtype=a.dtype), True)
    off, ran_off = _run(kernel, (a,), torch.zeros((11, lanes), dtype=a.dtype), False)
    assert ran and not ran_off and isinstance(on[0], bytes) and on == off
    assert ran[0] <= 10  # 29 instructions: the eight rows' loads, reductions and stores are a group each


_UNSIGNED = {8: (pl.DT_UINT8, torch.uint8), 16: (pl.DT_UINT16, torch.uint16), 32: (pl.DT_UINT32, torch.uint32)}


def dist_body(dist, lanes: int, two: bool):
    """Per pair of rows a load with ``dist`` (DINTLV: two registers), both stored: the loads of the eight
    pairs are one group (each writes its whole destinations, so no chain through their registers)."""
    @pl.vector_function
    def body(ta, to):
        full = vf.create_mask(pattern=ALL, dtype=pl.DT_UINT32)
        for i in pl.range(8):
            if two:
                x, y = vf.load_align(ta, i * 2 * lanes, dist=dist)
            else:
                x = vf.load_align(ta, i * 2 * lanes, dist=dist)
                y = vf.load_align(ta, i * 2 * lanes + lanes)
            vf.store_align(to, x, full, i * 2 * lanes)
            vf.store_align(to, y, full, (i * 2 + 1) * lanes)
    return body


@pytest.mark.parametrize("dist,bits", [("DINTLV_B32", 32), ("DINTLV_B16", 16), ("DINTLV_B8", 8), ("US_B16", 16),
                                       ("DS_B16", 16), ("US_B8", 8), ("UNPK_B16", 16), ("UNPK_B8", 8), ("UNPK4", 32),
                                       ("BLK", 32), ("E2B_B32", 32), ("E2B_B16", 16)])
def test_batched_load_distributions_give_the_one_by_one_bytes(dist, bits):
    dt, tdt = _UNSIGNED[bits]
    lanes = 256 // (bits // 8)
    kernel = vf_kernel(dist_body(getattr(pl.LoadDist, dist), lanes, dist.startswith("DINTLV")), [(dt, [16, lanes])],
                       (dt, [16, lanes]), dynamic=True)
    a = specials(19, (16, 64)).view(tdt)
    on, ran = _run(kernel, (a,), torch.zeros((16, lanes), dtype=tdt), True)
    off, ran_off = _run(kernel, (a,), torch.zeros((16, lanes), dtype=tdt), False)
    assert ran and not ran_off and isinstance(on[0], bytes) and on == off
    assert ran[0] <= 5  # 1 + 8 * 4 instructions: one pset, the loads, the stores
