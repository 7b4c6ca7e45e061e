"""Shared by the per-family VF tests (compare, logical, reduce): a one-register kernel whose VF body
takes the active-lane count ``n`` as a scalar (``vf.update_mask(n)``: lanes ``0 .. n-1`` active), so
one compiled kernel serves a partial mask, all lanes and an empty mask; NumPy helpers for the data
(seeded random plus special values) and the NumPy types of the register dtypes."""
from __future__ import annotations

import ml_dtypes
import numpy as np

import pypto_pro.language as pl

from vf_kernels import NP, lanes, vf_kernel

UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32}


def bits(x: np.ndarray) -> np.ndarray:
    """The bit patterns of ``x`` (NaN payloads and -0.0 compare exactly)."""
    return np.ascontiguousarray(x).view(UINT[x.dtype.itemsize])


def masked_kernel(body, in_dts, out_dt, out_rows: int = 1, scalar: bool = False):
    """``body(*tiles, out_tile, n)`` on [1, lanes] tiles of ``in_dts`` (one or two) into a
    [out_rows, lanes] one of ``out_dt``; ``kernel[None, 1](*arrays, out, n, s)``. ``scalar``: the body
    also takes the second INT64 scalar ``s`` after ``n``."""
    ins = [(dt, [1, lanes(dt)]) for dt in in_dts]
    addrs = [0, 0x400][:len(in_dts)] + [0x800]
    return vf_kernel(body, ins, (out_dt, [out_rows, lanes(out_dt)]), addrs=addrs, scalars=2 if scalar else 1)


def run(kernel, ins, out_dt, n: int, out_rows: int = 1, s: int = 0) -> np.ndarray:
    """Run ``kernel`` on ``ins`` (NumPy [lanes] arrays) with ``n`` active lanes (and the scalar ``s``);
    the out row (rows), pre-filled with 0x5A bytes so a lane the body does not write shows."""
    out = np.full(out_rows * 256, 0x5A, np.uint8).view(NP[out_dt]).reshape(out_rows, -1)
    kernel[None, 1](*(x.reshape(1, -1) for x in ins), out, n, s)
    return out[0] if out_rows == 1 else out


def special_floats(np_t) -> np.ndarray:
    """NaN, +-inf, +-0.0, the smallest subnormal, +-max, 1, -1 of ``np_t``."""
    info = ml_dtypes.finfo(np_t)
    tiny = np.array([1], UINT[np.dtype(np_t).itemsize]).view(np_t)[0]  # the smallest positive subnormal
    vals = [np.nan, np.inf, -np.inf, 0.0, -0.0, float(tiny), -float(tiny), float(info.max), -float(info.max), 1.0, -1.0]
    return np.array(vals, np.float64).astype(np_t)


def special_ints(np_t) -> np.ndarray:
    info = np.iinfo(np_t)
    return np.array([info.min, info.max, 0, 1, info.max - 1, info.min + 1], np.int64).astype(np_t)


def random_data(dt, seed: int, specials: bool = True) -> np.ndarray:
    """One register of ``dt``: seeded random values (floats N(0, 3) rounded to the type, integers over
    their whole range), the special values in the first lanes when ``specials``."""
    g = np.random.default_rng(seed)
    n, t = lanes(dt), NP[dt]
    if dt.is_float():
        x = (g.standard_normal(n) * 3).astype(np.float32).astype(t)
        sp = special_floats(t)
    else:
        info = np.iinfo(t)
        x = g.integers(info.min, info.max, n, endpoint=True, dtype=np.int64).astype(t)
        sp = special_ints(t)
    if specials:
        x[:sp.size] = sp
    return x


def assert_refused(fn, in_dts, out_dt, match: str, token: str | None) -> None:
    """``fn`` (a plain function ``(*tiles, out_tile, n)`` with one line marked ``# <- here``) as a VF
    body: compiling it raises a CompileError matching ``match`` located at ``token`` of that line."""
    import pytest
    from pypto_pro.errors import CompileError

    from located import check_location, marked_line
    kernel = masked_kernel(pl.vector_function(fn), in_dts, out_dt)
    with pytest.raises(CompileError, match=match) as info:
        kernel.compile()
    path, line, text = marked_line(fn)
    check_location(info.value, path, line, text, token)
