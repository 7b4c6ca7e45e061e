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
