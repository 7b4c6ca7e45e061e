"""Chains of a batched VF plan run as one scan step (``backends/sim/vf/batch_scan.py``): the same bytes.

Loop-carried accumulators (``mul_add_dst`` with its products hoisted, ``add`` / ``max`` per level) over
inputs full of NaN payloads (quiet and signalling, both signs), signed zeros, subnormals and infinities,
in fp32, fp16, bf16 (converted operands: the per-level form) and int16 / int32 (wrapping), with
broadcast (BRC) operands, a store of an intermediate value (the chain splits around it), a partial
predicate (no scan form) and MERGING: outputs and the whole report must be those of the run with
``batch_scan.SCAN`` off and of the one-by-one run (``batch.BATCH`` off), and a scan must really run.
Chains read only after their loop compute their last level alone (``lanes._last_level``: one
``ufunc.reduce``); one read inside the loop keeps every level.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.backends.sim.vf import batch, batch_scan
from pypto_pro.language import Vf as vf

from vf_kernels import ALL, TORCH, lanes, vf_kernel

F32, F16, BF16, I16, I32 = pl.DT_FP32, pl.DT_FP16, pl.DT_BF16, pl.DT_INT16, pl.DT_INT32
_F32_SPECIAL = [0x7FC00000, 0xFFC00001, 0x7F800001, 0x7FBFFFFF, 0xFFA00005, 0x00000000, 0x80000000,
                0x7F800000, 0xFF800000, 0x00000001, 0x807FFFFF, 0x00400000, 0x7F7FFFFF, 0xFF7FFFFF]
_H_SPECIAL = [0x7E00, 0xFE01, 0x7C01, 0x7DFF, 0x0000, 0x8000, 0x7C00, 0xFC00, 0x0001, 0x83FF, 0x7BFF]


def specials(dt, seed: int, rows: int) -> torch.Tensor:
    """Random values of ``dt`` with a quarter of the lanes special bit patterns."""
    n = lanes(dt)
    g = np.random.default_rng(seed)
    size = rows * n
    if dt in (I16, I32):
        info = np.iinfo(np.int16 if dt is I16 else np.int32)
        x = g.integers(info.min, info.max, size, endpoint=True).astype(info.dtype)
        x[g.choice(size, size // 8, replace=False)] = info.min
        return torch.from_numpy(x.reshape(rows, n))
    if dt is F32:
        x = (g.standard_normal(size) * 8).astype(np.float32)
        bits, special = x.view(np.uint32), np.array(_F32_SPECIAL, np.uint32)
    else:  # fp16 / bf16 patterns as 16-bit words
        x = (g.standard_normal(size) * 4).astype(np.float16 if dt is F16 else np.float32)
        bits = x.view(np.uint16) if dt is F16 else (x.view(np.uint32) >> 16).astype(np.uint16)
        special = np.array(_H_SPECIAL if dt is F16 else [b >> 16 for b in _F32_SPECIAL], np.uint16)
    at = g.choice(size, size // 4, replace=False)
    bits[at] = g.choice(special, at.size)
    if dt is BF16:
        return torch.from_numpy(bits.reshape(rows, n).view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(bits.view(x.dtype).reshape(rows, n).copy())


def chain_body(dt, steps: int, brc: bool, mid_store: bool, partial: bool, merging: bool):
    """Two accumulators through ``mul_add_dst`` and one through ``add`` and ``max`` over ``steps`` iterations."""
    n = lanes(dt)
    mode = pl.MergeMode.MERGING if merging else pl.MergeMode.ZEROING

    @pl.vector_function
    def body(ta, tb, to):
        full = vf.create_mask(pattern=ALL, dtype=dt)
        m = vf.update_mask(n - 3, dtype=dt) if partial else full
        acc0 = vf.load_align(ta, 0)
        acc1 = vf.load_align(tb, 0)
        s = vf.load_align(ta, n)
        mx = vf.load_align(tb, n)
        for h in pl.range(0, steps):
            x = vf.load_align(ta, (h + 2) * n)
            y = vf.load_align(tb, (h + 2) * n)
            if brc:
                w = vf.load_align(tb, h, dist=pl.LoadDist.BRC_B32)
            else:
                w = y
            acc0 = vf.mul_add_dst(x, w, m)
            acc1 = vf.mul_add_dst(y, x, full)
            s = vf.add(s, x, m, mode=mode)  # (mul_add_dst is ZEROING only, as on the chip)
            mx = vf.max(y, mx, full)
            if mid_store and h == 3:
                vf.store_align(to, acc0, full, 4 * n)
        vf.store_align(to, acc0, full, 0)
        vf.store_align(to, acc1, full, n)
        vf.store_align(to, s, full, 2 * n)
        vf.store_align(to, mx, full, 3 * n)
    return body


def _run(make, args, out, scan: bool, batched: bool = True, dead: list | None = None):
    """(output bytes, report) or (error type, message); and the number of scan steps the plans held
    (``dead``: gets, per plan run, how many of them compute only their last level). ``make()`` gives a
    new kernel (a call site keeps its plans)."""
    scans = []
    real = batch.Plan.run

    def counting(self, *a):
        scans.append(sum(isinstance(s, batch_scan.Scan) for s in self.steps))
        if dead is not None:
            dead.append(sum(isinstance(s, batch_scan.Scan) and s.dead for s in self.steps))
        return real(self, *a)
    batch_scan.SCAN, batch.BATCH, batch.Plan.run = scan, batched, counting
    try:
        report = make()[None, 1](*args, out)
        rep = {f: v for f, v in dataclasses.asdict(report).items() if f != "trace_files"}
        got = (out.numpy().tobytes() if out.dtype != torch.bfloat16 else out.view(torch.int16).numpy().tobytes(),
               repr(rep))
    except Exception as exc:  # noqa: BLE001 (the error itself is compared)
        got = (type(exc).__name__, str(exc))
    finally:
        batch_scan.SCAN, batch.BATCH, batch.Plan.run = True, True, real
    return got, scans


CASES = [(F32, 12, True, False, False, False), (F32, 9, False, True, False, False),
         (F32, 8, True, False, True, True), (F32, 8, False, False, True, False),
         (F16, 10, False, False, False, False), (BF16, 7, False, True, False, False),
         (I32, 8, False, False, False, False), (I16, 6, False, False, False, True),
         (F32, 2, False, False, False, False)]


@pytest.mark.parametrize("dt,steps,brc,mid_store,partial,merging", CASES)
def test_scan_gives_the_bytes_of_one_step_per_level(dt, steps, brc, mid_store, partial, merging):
    n = lanes(dt)
    def kernel():
        return vf_kernel(chain_body(dt, steps, brc, mid_store, partial, merging),
                         [(dt, [steps + 2, n]), (dt, [steps + 2, n])], (dt, [5, n]), dynamic=True)
    args = (specials(dt, 1, steps + 2), specials(dt, 2, steps + 2))
    fresh = lambda: torch.zeros((5, n), dtype=TORCH[dt])  # noqa: E731
    on, scans = _run(kernel, args, fresh(), True)
    off, scans_off = _run(kernel, args, fresh(), False)
    one, _ = _run(kernel, args, fresh(), True, batched=False)
    assert on[0] not in ("SimulationError", "TypeError") and on == off == one
    assert not any(scans_off)
    if steps >= batch_scan.MIN_LEVELS and not partial:  # a partial chain: too deep to batch (no plan)
        assert any(scans), "no chain ran as a scan"
    else:
        assert not any(scans)


def test_hoisted_products_are_the_fused_numerics():
    """mul_add_dst's split form: ``ufunc(pre(a, b), d)`` is ``fn(d, a, b)`` bit for bit, specials included."""
    from pypto_pro.ops.vf.decl import VF_INSTRS
    fn = _numerics_of(VF_INSTRS["vmul_add_dst"])
    pos, pre, ufunc = fn.split
    assert pos == 0
    g = np.random.default_rng(9)
    bits = g.integers(0, 2**32, (3, 4, 64), dtype=np.uint64).astype(np.uint32)
    bits[:, :, ::5] = np.array(_F32_SPECIAL, np.uint32)[g.integers(0, len(_F32_SPECIAL), (3, 4, 13))]
    d, a, b = bits.view(np.float32)
    with np.errstate(all="ignore"):
        want = fn(d, a, b).astype(np.float32)
        p = pre(a[None], b[None])[0]
        buf = np.empty(p.shape, p.dtype)
        ufunc(p, d, out=buf)  # d widened by the ufunc, as scan_form runs it
        got = buf.astype(np.float32)
    assert got.view(np.uint32).tobytes() == want.view(np.uint32).tobytes()


def _numerics_of(spec):
    """The lane function a lane-wise instruction was declared with (kept by its sim builder's closure)."""
    build = spec.sim
    for cell in build.__closure__ or ():
        if callable(cell.cell_contents) and hasattr(cell.cell_contents, "split"):
            return cell.cell_contents
    raise AssertionError("vmul_add_dst's numerics not found")


def _levels_and_last(uf, pos, dt, seed):
    """(every level by the chain's own calls, the last level by ``lanes._last_level``) over specials."""
    from pypto_pro.ops.vf import lanes as lanes_mod
    n, steps, rows = lanes(dt), 9, 3
    xs = specials(dt, seed, steps * rows).numpy().reshape(steps, rows, n)
    carry0 = specials(dt, seed + 1, rows).numpy()
    outs = [np.empty_like(carry0) for _ in range(steps)]

    def levels():
        c = carry0
        for k in range(steps):
            uf(*((c, xs[k]) if pos == 0 else (xs[k], c)), out=outs[k])
            c = outs[k]
    last = np.empty_like(carry0)
    run = lanes_mod._last_level(uf, pos, carry0, xs, last, lambda: np.copyto(last, (levels(), outs[-1])[1]))
    assert run is not None
    with np.errstate(all="ignore"):
        levels()
        want = outs[-1].copy()
        run()
    return want, last


@pytest.mark.parametrize("name", ["add", "mul", "max", "min"])
@pytest.mark.parametrize("pos", [0, 1])
@pytest.mark.parametrize("dt", [F32, F16, I32, I16])
def test_last_level_alone_is_the_chains_last_level(name, pos, dt):
    """Specials in every position: NaN payloads (a swapped chain with a NaN result falls back to the
    levels), signed zeros (max / min's page signs), infinities, wrapping integers."""
    from pypto_pro.ops.vf import arith
    uf = {"add": np.add, "mul": np.multiply, "max": arith._max, "min": arith._min}[name]
    for seed in range(4):
        want, got = _levels_and_last(uf, pos, dt, 10 * seed + 3)
        assert got.tobytes() == want.tobytes()


def test_last_level_has_no_form_for_a_swapped_non_commutative_ufunc():
    from pypto_pro.ops.vf import lanes as lanes_mod
    x = np.zeros((4, 1, 64), np.float32)
    c = np.zeros((1, 64), np.float32)
    assert lanes_mod._last_level(np.subtract, 1, c, x, c.copy(), lambda: None) is None
    assert lanes_mod._last_level(np.subtract, 0, c, x, c.copy(), lambda: None) is not None


def read_inside_body(dt, steps: int, read_at: int | None):
    """A sum (carried first) and a max (carried second) over ``steps`` levels; ``read_at``: both
    accumulators are also stored at that iteration (their levels are then read)."""
    n = lanes(dt)

    @pl.vector_function
    def body(ta, tb, to):
        full = vf.create_mask(pattern=ALL, dtype=dt)
        s = vf.load_align(ta, 0)
        mx = vf.load_align(tb, 0)
        for h in pl.range(0, steps):
            x = vf.load_align(ta, (h + 1) * n)
            y = vf.load_align(tb, (h + 1) * n)
            s = vf.add(s, x, full)
            mx = vf.max(y, mx, full)
            if read_at is not None and h == read_at:
                vf.store_align(to, s, full, 2 * n)
                vf.store_align(to, mx, full, 3 * n)
        vf.store_align(to, s, full, 0)
        vf.store_align(to, mx, full, n)
    return body


@pytest.mark.parametrize("dt", [F32, F16, I32])
@pytest.mark.parametrize("read_at", [None, 4])
def test_a_chain_read_only_after_its_loop_runs_its_last_level_alone(dt, read_at):
    n, steps = lanes(dt), 10

    def kernel():
        return vf_kernel(read_inside_body(dt, steps, read_at), [(dt, [steps + 1, n]), (dt, [steps + 1, n])],
                         (dt, [4, n]), dynamic=True)
    args = (specials(dt, 5, steps + 1), specials(dt, 6, steps + 1))
    fresh = lambda: torch.zeros((4, n), dtype=TORCH[dt])  # noqa: E731
    dead: list = []
    on, scans = _run(kernel, args, fresh(), True, dead=dead)
    one, _ = _run(kernel, args, fresh(), True, batched=False)
    assert on[0] not in ("SimulationError", "TypeError") and on == one
    assert any(scans), "no chain ran as a scan"
    if read_at is None:
        assert dead and all(d == s for d, s in zip(dead, scans)), "a chain read only after its loop kept every level"
    else:
        assert not any(dead), "a chain read inside its loop ran only its last level"


@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("pos", [0, 1])
def test_last_level_alone_keeps_the_pages_zero_signs(name, pos):
    """Columns of -0, +0 and one sign of non-zero: most results are a zero whose sign the page fixes."""
    from pypto_pro.ops.vf import arith
    from pypto_pro.ops.vf import lanes as lanes_mod
    uf = arith._max if name == "max" else arith._min
    g = np.random.default_rng(4)
    pool = np.array([-0.0, 0.0, -1.0 if name == "max" else 1.0], np.float32)
    xs = g.choice(pool, (3, 2, 64)).astype(np.float32)
    carry0 = g.choice(pool, (2, 64)).astype(np.float32)
    c = carry0
    for k in range(3):
        c = uf(*((c, xs[k]) if pos == 0 else (xs[k], c)))
    last = np.empty_like(carry0)
    lanes_mod._last_level(uf, pos, carry0, xs, last, lambda: None)()
    assert (c == 0).sum() > 32 and np.signbit(c).any() and not np.signbit(c).all()
    assert last.tobytes() == c.tobytes()
