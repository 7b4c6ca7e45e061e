"""Fast paths inside the numerics compute the slow paths' bytes (issue 15; a difference is a bug).

* Scalar conversions are memoized: equal to converting afresh; ``-0.0`` and ``0.0`` stay apart.
* One ``np.errstate`` per launch (``numerics.launch_errstate``): the ops stay quiet outside a
  launch too, and the thread's state is restored after it.
"""
from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest

from pypto_pro.backends.sim import numerics

BF16 = np.dtype(ml_dtypes.bfloat16)


@pytest.mark.parametrize("dt", [np.dtype(np.float32), np.dtype(np.float16), BF16, np.dtype(np.int8),
                                np.dtype(np.int32), np.dtype(np.uint16)], ids=str)
def test_memoized_scalars_equal_fresh_conversions(dt):
    values = [0.0, -0.0, 1.0, -1.0, 0.1, -1e30, 1e30, 3.4e38, 65504.0, 65520.0, 1e-45, float("inf"),
              float("-inf"), 0, 1, -1, 255, 65535, 1 << 40, -(1 << 63), 7.9, -7.9]
    for v in values * 2:  # the second round hits the memo
        got, want = numerics._scalar(dt, v), numerics._convert_scalar(dt, v)
        assert type(got) is type(want) and got.tobytes() == want.tobytes(), v
    if dt.kind == "f":
        assert numerics._scalar(dt, -0.0).tobytes() != numerics._scalar(dt, 0.0).tobytes()
        assert np.isnan(numerics._scalar(dt, float("nan")))  # not memoized (NaN keys never match)


def test_ops_are_quiet_inside_and_outside_a_launch_and_the_state_is_restored():
    big = np.full((4, 4), 3e38, np.float32)
    out = np.empty_like(big)
    before = np.geterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        numerics.binary("add", out, big, big)  # overflow: no warning outside a launch
        with numerics.launch_errstate():
            assert numerics._state.quiet
            numerics.binary("add", out, big, big)
            with numerics.launch_errstate():  # nested launches (a kernel run from a device callback)
                pass
            assert numerics._state.quiet
        assert not numerics._state.quiet
    assert np.geterr() == before
    assert np.isinf(out).all()


def test_a_launch_is_the_same_with_one_errstate_per_op(monkeypatch):
    """Flash attention with specials in its inputs (NaN, inf): outputs and every report field are the
    same whether the launch enters one errstate or every op enters its own."""
    import contextlib
    import dataclasses

    from example_modules import load_example
    fa = load_example("flash_attention")
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal((1, 2, 128, 64)).astype(np.float16) for _ in range(3))
    q[0, 0, 3, :5] = [np.nan, np.inf, -np.inf, 0.0, -0.0]
    kern = fa.make_flash_attention("a5", 64, False, 1, check="warn")
    got = []
    for per_launch in (True, False):
        if not per_launch:
            monkeypatch.setattr(numerics, "launch_errstate", contextlib.nullcontext)
        args = [q, k, v, np.zeros_like(q), fa.causal_mask(), *fa.workspaces(2, 64, 1)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = kern[None, 2](*args)
        got.append(([a.tobytes() for a in args[3:]],
                    {f: v for f, v in dataclasses.asdict(report).items() if f != "trace_files"}))
    assert got[0] == got[1]


def test_dtype_checks_through_sets_accept_what_the_tables_list():
    """``_check_dtype`` looks dtypes up in a set made from SUPPORTED_DTYPES: the same answers."""
    every = [np.dtype(c) for c in ("f2", "f4", "f8", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", ">f4", "?")]
    for op, allowed in numerics.SUPPORTED_DTYPES.items():
        for dt in every + [BF16]:
            try:
                numerics._check_dtype(op, dt)
                accepted = True
            except ValueError:
                accepted = False
            assert accepted == (dt in allowed), (op, dt)


@pytest.mark.parametrize("dtype_name", ["DT_FP16", "DT_FP32", "DT_INT8", "DT_BF16"])
def test_boxed_windows_at_box_corners_read_and_write_the_offset_maps_bytes(dtype_name):
    """``tile[a:r, b:c]`` of a boxed tile, ``a`` and ``b`` on box corners (an L1 window at a K offset),
    keeps the box view: reads, conversions and writes give the gather / scatter's bytes."""
    import pypto_pro.language as pl
    from pypto_pro.backends.sim import fractal
    from pypto_pro.language.enums import NN, NZ, ZN, ZZ
    dtype = getattr(pl, dtype_name)
    rng = np.random.default_rng(6)
    boxed_offsets = 0
    for layout in (NZ, ZN, ZZ, NN):
        for shape in ((64, 128), (32, 64)):
            try:
                tt = pl.TileType(shape=list(shape), dtype=dtype, target_memory=pl.MemorySpace.Mat)
            except Exception:  # a combination the TileType rejects
                continue
            raw = rng.integers(0, 256, 70000, dtype=np.uint8)  # NaNs of every payload among the floats
            whole = fractal.tile_view(raw, tt, layout)
            if whole.boxes is None:
                continue
            ir, ic = whole.boxes.shape[1], whole.boxes.shape[3]
            for a0, a1, r, c in ((0, ic, shape[0], 2 * ic), (ir, 0, 2 * ir, shape[1]), (ir, 2 * ic, 3 * ir, 3 * ic),
                                 (0, ic, None, None), (ir, ic, 999, 999), (ir, ic, ir + 5, ic + 7), (ir, ic, 0, 3),
                                 (shape[0], 0, None, None), (1, 0, 8, 8), (0, 3, 8, 8)):
                key = (slice(a0, r), slice(a1, c))
                fast, slow = whole[key], fractal.Region(whole.flat, whole.idx[key])
                boxed_offsets += fast.boxes is not None and (a0 or a1)
                got, want = fast.read(), slow.read()
                assert got.shape == want.shape and got.tobytes() == want.tobytes() and got.flags.c_contiguous
                assert fast[:4, :4].read().tobytes() == slow[:4, :4].read().tobytes()  # a window of the window
                for wide in (np.float64, np.float32):
                    with np.errstate(all="ignore"):
                        assert fast.astype(wide).tobytes() == slow.astype(wide).tobytes()
                val = rng.integers(0, 256, want.nbytes, dtype=np.uint8).view(want.dtype).reshape(want.shape)
                outs = []
                for boxed in (True, False):
                    mem = raw.copy()
                    t = fractal.tile_view(mem, tt, layout)
                    window = t[key] if boxed else fractal.Region(t.flat, t.idx[key])
                    window[...] = val
                    outs.append(mem.tobytes())
                assert outs[0] == outs[1], (layout, shape, key)
    assert boxed_offsets  # the fast path ran
