"""Steps of a batched VF plan made once per arena give the bytes of the plain steps (issue 15, wave 11).

* A scan step with a bound form (``batch_scan.BOUND``; ``ops/vf/lanes.py`` ``scan_form``'s ``bind``):
  operands gathered into the step's own buffers, per-level views made once, a plain ufunc run straight
  into each level's rows; over the chains of ``test_vf_batch_scan.py`` (NaN payloads, signed zeros,
  subnormals, fp16 / bf16 converted operands, int wrap-around, BRC operands, MERGING).
* A batched ``vsstb`` whose blocks lie on a grid (``blocks.STRIDED``): one strided view of UB instead of
  the byte index; full and partial masks, block strides that interleave the nodes' blocks, overlapping
  blocks (no batched form).

Each runs with the switch on and off and one instruction at a time (``batch.BATCH`` off): outputs and the
whole launch report must be the same bytes, and the fast form must really run (counted).
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.backends.sim.vf import batch_scan
from pypto_pro.language import Vf as vf
from pypto_pro.ops.vf import blocks

from test_vf_batch import _run as run_batch
from test_vf_batch import specials as f32_specials
from test_vf_batch_scan import CASES, TORCH, _run, chain_body, lanes, specials
from vf_kernels import ALL, vf_kernel

F32 = pl.DT_FP32
BLOCKS = pl.DataCopyMode.DATA_BLOCK_COPY


@pytest.mark.parametrize("dt,steps,brc,mid_store,partial,merging", CASES)
def test_bound_scan_gives_the_plain_scan_bytes(dt, steps, brc, mid_store, partial, merging, monkeypatch):
    n = lanes(dt)

    def kernel():
        return vf_kernel(chain_body(dt, steps, brc, mid_store, partial, merging),
                         [(dt, [steps + 2, n]), (dt, [steps + 2, n])], (dt, [5, n]), dynamic=True)
    args = (specials(dt, 3, steps + 2), specials(dt, 4, steps + 2))
    fresh = lambda: torch.zeros((5, n), dtype=TORCH[dt])  # noqa: E731
    bound = []
    real = batch_scan.Scan._bound

    def counting(*a):
        bound.append(1)
        return real(*a)
    monkeypatch.setattr(batch_scan.Scan, "_bound", staticmethod(counting))
    on, scans = _run(kernel, args, fresh(), True)
    monkeypatch.setattr(batch_scan, "BOUND", False)
    off, _ = _run(kernel, args, fresh(), True)
    n_on = len(bound)
    monkeypatch.setattr(batch_scan, "BOUND", True)
    one, _ = _run(kernel, args, fresh(), True, batched=False)
    assert on[0] not in ("SimulationError", "TypeError") and on == off == one
    if any(scans):
        assert n_on, "no scan ran through its bound form"


def test_direct_scan_levels_are_the_result_bytes():
    """The bound direct form's ``ufunc(carried, x, out=row)`` per level is ``result``'s bytes for max / add
    with NaN payloads in both operands (the operand order kept: the first NaN wins)."""
    from pypto_pro.ops.vf.lanes import scan_form
    g = np.random.default_rng(5)
    special = np.array([0x7FC00000, 0xFFC00001, 0x7F800001, 0x7FBFFFFF, 0x80000000, 0x00000000, 0x00000001],
                       np.uint32)
    for fn in (np.maximum, np.add, np.minimum):
        for carried in (0, 1):
            L, m = 6, 4
            bits = g.integers(0, 2**32, (L, m, 64), dtype=np.uint64).astype(np.uint32)
            bits[:, :, ::3] = special[g.integers(0, len(special), (L, m, 22))]
            first = g.integers(0, 2**32, (m, 64), dtype=np.uint64).astype(np.uint32)
            first[:, ::2] = special[g.integers(0, len(special), (m, 32))]
            t = np.dtype(np.float32)
            result = lambda ins, sc: np.asarray(fn(*ins))  # noqa: E731
            maker = scan_form([0, 1], [t, t], t, result, None, fn)
            stacks = [None, None]
            stacks[1 - carried] = bits.view(np.uint8).reshape(L, m, 256)

            def outs():
                rows = [first.view(np.uint8).reshape(m, 256).copy()] + [np.zeros((m, 256), np.uint8) for _ in range(L)]
                return rows
            want, got = outs(), outs()
            scan = maker(None, [()] * L, 0, carried)
            with np.errstate(all="ignore"):
                scan(stacks, want)
                scan.bind(stacks, got)()
            assert b"".join(r.tobytes() for r in got) == b"".join(r.tobytes() for r in want)


def block_store_body(count: int, stride: int, step: int, nodes: int, inner: int = 0):
    """``nodes`` registers stored block-wise (DATA_BLOCK_COPY, ``stride`` blocks apart) at ``step`` blocks
    from each other, under ``update_mask(count)``; with ``inner``, node ``i`` at block ``(i // 2) * step +
    (i % 2) * inner`` (the two interleaved rows of nodes of the FA softmax stores)."""
    @pl.vector_function
    def body(ta, to):
        m = vf.update_mask(count, dtype=F32)
        full = vf.create_mask(pattern=ALL, dtype=F32)
        for i in pl.range(0, nodes):
            x = vf.load_align(ta, i * 64)
            x = vf.adds(x, 1.0, full)
            if inner:
                vf.store_align(to + ((i // 2) * step + (i % 2) * inner) * 8, x, m, block_stride=stride,
                               data_copy_mode=BLOCKS)
            else:
                vf.store_align(to + i * step * 8, x, m, block_stride=stride, data_copy_mode=BLOCKS)
    return body


@pytest.mark.parametrize("count,stride,step,nodes,grid,inner", [
    (64, 1, 8, 8, True, 0), (37, 1, 8, 8, True, 0), (64, 2, 1, 2, True, 0), (5, 3, 24, 4, True, 0),
    (0, 1, 8, 8, True, 0),
    (64, 1, 4, 3, True, 0), (64, 0, 8, 8, False, 0),  # (overlapping nodes: one level each; stride 0: no batched form)
    (64, 9, 1, 8, True, 4), (21, 9, 1, 8, True, 4), (64, 9, 1, 6, True, 4)])  # two interleaved rows of nodes
def test_strided_block_store_gives_the_index_bytes(count, stride, step, nodes, grid, inner, monkeypatch):
    rows = max(8, (nodes * step * 32 + 8 * max(stride, 1) * 32 + inner * 32) // 256 + 1)
    grids = []
    real = blocks._grid

    def counting(*a):
        got = real(*a)
        grids.append(got is not None)
        return got
    monkeypatch.setattr(blocks, "_grid", counting)

    def kernel():
        return vf_kernel(block_store_body(count, stride, step, nodes, inner), [(F32, [8, 64])], (F32, [rows, 64]),
                         dynamic=True)
    args = (f32_specials(7, (8, 64)),)
    on, ran = run_batch(kernel(), args, torch.full((rows, 64), 7.0), True)
    n_grid = sum(grids)
    monkeypatch.setattr(blocks, "STRIDED", False)
    off, _ = run_batch(kernel(), args, torch.full((rows, 64), 7.0), True)
    monkeypatch.setattr(blocks, "STRIDED", True)
    one, _ = run_batch(kernel(), args, torch.full((rows, 64), 7.0), False)
    assert on[0] != "SimulationError" and on == off == one
    assert ran, "no batched plan ran"
    assert bool(n_grid) == grid, "the strided view did not run" if grid else "overlapping blocks took the grid"


def test_disjoint_is_the_unique_index_test():
    g = np.random.default_rng(2)
    for _ in range(300):
        n = int(g.integers(1, 6))
        starts = g.integers(0, 40, (n, 8)) * int(g.choice([1, 8, 16, 32]))
        idx = starts[:, :, None] + np.arange(32)
        assert blocks._disjoint(starts) == (np.unique(idx).size == idx.size)


def gathered_body(count: int):
    """Four loads (one group, rows in order), cast to fp16 in another order (a group reading scattered
    rows: no bound form), then stored."""
    @pl.vector_function
    def body(ta, to):
        full = vf.create_mask(pattern=ALL, dtype=F32)
        h = vf.update_mask(2 * count, dtype=pl.DT_FP16)
        x0 = vf.load_align(ta, 0)
        x1 = vf.load_align(ta, 64)
        x2 = vf.load_align(ta, 128)
        x3 = vf.load_align(ta, 192)
        y1 = vf.astype(x1, full, layout=pl.CastLayout.ZERO, dtype=pl.DT_FP16)
        y0 = vf.astype(x0, full, layout=pl.CastLayout.ZERO, dtype=pl.DT_FP16)
        y3 = vf.astype(x3, full, layout=pl.CastLayout.ZERO, dtype=pl.DT_FP16)
        y2 = vf.astype(x2, full, layout=pl.CastLayout.ZERO, dtype=pl.DT_FP16)
        vf.store_align(to, y0, h, 0)
        vf.store_align(to, y1, h, 128)
        vf.store_align(to, y2, h, 256)
        vf.store_align(to, y3, h, 384)
    return body


@pytest.mark.parametrize("count", [64, 37, 1])
def test_gathered_group_steps_give_the_unbound_bytes(count, monkeypatch):
    """``bind.gathered_step`` (``batch.BIND``): a group kernel without a bound form whose operands are
    scattered rows (casts of loads in another order) gets them through buffers of its own: the bytes of
    the unbound steps and of the one-by-one run (NaN payloads narrowed to fp16 included)."""
    from pypto_pro.backends.sim.vf import batch, bind
    used = []
    real = bind.gathered_step

    def counting(*a):
        used.append(1)
        return real(*a)
    monkeypatch.setattr(batch, "gathered_step", counting)

    def kernel():
        return vf_kernel(gathered_body(count), [(F32, [4, 64])], (pl.DT_FP16, [4, 128]), dynamic=True)
    args = (f32_specials(1, (4, 64)),)
    fresh = lambda: torch.full((4, 128), 7.0, dtype=torch.float16)  # noqa: E731
    on, ran = run_batch(kernel(), args, fresh(), True)
    n_on = len(used)
    monkeypatch.setattr(batch, "BIND", False)
    off, _ = run_batch(kernel(), args, fresh(), True)
    monkeypatch.setattr(batch, "BIND", True)
    one, _ = run_batch(kernel(), args, fresh(), False)
    assert ran and on[0] != "SimulationError" and on == off == one
    assert n_on, "no gathered group step ran"
