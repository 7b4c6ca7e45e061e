"""Shared by the ``test_vf_arith*.py`` files: one-register kernels for the basic_arithmetic ``vf.*`` ops,
their inputs (seeded random lanes with the dtype's special values mixed in) and the lane-wise checks of
the result against an independent NumPy reference.

A kernel loads ``src0`` (and ``src1``) from one [2, lanes] tile and the destination's old value from
another, runs the op under a partial (``M3``: lanes ``i % 3 == 0``, mask_pattern.md) or an all-lanes
predicate and stores every lane: active lanes must be the reference's bytes, inactive ones 0 (ZEROING,
the default) or the old destination (MERGING)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import torch

import pypto_pro.language as pl
from pypto_pro.language import Vf as vf

from vf_kernels import ALL, NP, lanes, vf_kernel

BF16 = np.dtype(ml_dtypes.bfloat16)
INTS = [pl.DT_INT8, pl.DT_UINT8, pl.DT_INT16, pl.DT_UINT16, pl.DT_INT32, pl.DT_UINT32]
FLOATS = [pl.DT_FP16, pl.DT_BF16, pl.DT_FP32]
ALL_TYPES = INTS + FLOATS
PATTERNS = {"M3": pl.MaskPattern.M3, "ALL": ALL}
MODES = {"default": None, "ZEROING": pl.MergeMode.ZEROING, "MERGING": pl.MergeMode.MERGING}


def active_lanes(pattern: str, n: int) -> np.ndarray:
    """The lanes a pattern selects, from mask_pattern.md (M3: the first of every 3 elements)."""
    i = np.arange(n)
    return i % 3 == 0 if pattern == "M3" else np.ones(n, bool)


def uview(x: np.ndarray) -> np.ndarray:
    """The lanes' bit patterns (NaN payloads and -0.0 compared exactly)."""
    return x.view(f"u{x.dtype.itemsize}")


def specials(dt) -> np.ndarray:
    """The values a lane of ``dt`` must get right: extremes, signed zeros, subnormals, infinities, NaN."""
    t = NP[dt]
    if t.kind in "iu":
        info = np.iinfo(t)
        vals = [info.min, info.max, 0, 1, info.max - 1, info.min + 1]
        if t.kind == "i":
            vals += [-1, -2]
        return np.array(vals, dtype=t)
    fi = ml_dtypes.finfo(t) if t == BF16 else np.finfo(t)
    tiny, big = float(fi.smallest_subnormal), float(fi.max)
    return np.array([0.0, -0.0, np.inf, -np.inf, np.nan, tiny, -tiny, float(fi.tiny), big, -big, 1.0, -1.0,
                     2.5, -2.5], np.float64).astype(t)


def rand(dt, seed: int, low: float | None = None, high: float | None = None, special: bool = True) -> np.ndarray:
    """One register of seeded random lanes (integers over the whole range, floats in [low, high) or
    normal * 8), with ``specials(dt)`` (or the given ``special`` array) scattered over lanes 0, 1, 3, 4, ...:
    both active and inactive lanes of M3 hold some."""
    n, t = lanes(dt), NP[dt]
    g = np.random.default_rng(seed)
    if t.kind in "iu":
        info = np.iinfo(t)
        x = g.integers(info.min, info.max, n, dtype=t, endpoint=True) if t.itemsize == 8 else \
            g.integers(info.min, int(info.max) + 1, n, dtype=np.int64).astype(t)
    elif low is not None:
        x = g.uniform(low, high, n).astype(t)
    else:
        x = (g.standard_normal(n) * 8).astype(t)
    sp = specials(dt) if special is True else (np.asarray(special).astype(t) if special is not False else None)
    if sp is not None and len(sp):
        pos = g.permutation(n)[:len(sp)]
        x[pos] = sp
    return x


def to_torch(x: np.ndarray) -> torch.Tensor:
    if x.dtype == BF16:
        return torch.from_numpy(x.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(x.copy())


def from_torch(t: torch.Tensor, dt) -> np.ndarray:
    if dt is pl.DT_BF16:
        return t.view(torch.int16).numpy().view(BF16)
    return t.numpy()


def _kernel(body, dt):
    n = lanes(dt)
    return vf_kernel(body, [(dt, [2, n]), (dt, [1, n])], (dt, [1, n]))


def binary_kernel(op: str, dt, pattern: str, mode: str):
    """``z = vf.<op>(x, y, m, mode=...)`` into the register ``z`` holds the old destination in."""
    fn, mp, md, n = getattr(vf, op), PATTERNS[pattern], MODES[mode], lanes(dt)

    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=mp, dtype=dt)
        full = vf.create_mask(pattern=ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        y = vf.load_align(ta, n)
        z = vf.load_align(tb, 0)
        z = fn(x, y, m, mode=md)
        vf.store_align(to, z, full)
    return _kernel(body, dt)


def unary_kernel(op: str, dt, pattern: str, mode: str):
    fn, mp, md = getattr(vf, op), PATTERNS[pattern], MODES[mode]

    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=mp, dtype=dt)
        full = vf.create_mask(pattern=ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        z = vf.load_align(tb, 0)
        z = fn(x, m, mode=md)
        vf.store_align(to, z, full)
    return _kernel(body, dt)


def scalar_kernel(op: str, dt, scalar, pattern: str, mode: str):
    """``z = vf.<op>(x, scalar, m, mode=...)``, the scalar a compile-time number."""
    fn, mp, md = getattr(vf, op), PATTERNS[pattern], MODES[mode]

    @pl.vector_function
    def body(ta, tb, to):
        m = vf.create_mask(pattern=mp, dtype=dt)
        full = vf.create_mask(pattern=ALL, dtype=dt)
        x = vf.load_align(ta, 0)
        z = vf.load_align(tb, 0)
        z = fn(x, scalar, m, mode=md)
        vf.store_align(to, z, full)
    return _kernel(body, dt)


def launch(kernel, dt, src0: np.ndarray, src1: np.ndarray | None, old: np.ndarray) -> np.ndarray:
    """Run a kernel of this module: returns the stored register's lanes."""
    n = lanes(dt)
    srcs = np.stack([src0, src0 if src1 is None else src1])
    out = to_torch(np.zeros((1, n), NP[dt]))
    kernel[None, 1](to_torch(srcs), to_torch(old[None]), out)
    return from_torch(out, dt)[0]


def check(got: np.ndarray, ref: np.ndarray, old: np.ndarray, pattern: str, mode: str) -> None:
    """Active lanes: the reference's bits (a NaN: any NaN, the pages say nothing of payloads); inactive
    lanes: the old destination (MERGING) or 0."""
    act = active_lanes(pattern, len(got))
    floats = got.dtype.kind == "f" or got.dtype == BF16
    nan = act & np.isnan(ref.astype(np.float64)) if floats else np.zeros(len(got), bool)
    assert np.isnan(got[nan].astype(np.float64)).all(), f"lanes {np.flatnonzero(nan)} must be NaN"
    want = np.where(act, ref, old if mode == "MERGING" else np.zeros_like(old)).astype(got.dtype)
    bad = (uview(got) != uview(want)) & ~nan
    assert not bad.any(), (f"lanes {np.flatnonzero(bad)[:8]}: got {got[bad][:4]}, want {want[bad][:4]} "
                           f"(active {act[bad][:4]})")


def round_to(x64: np.ndarray, dt) -> np.ndarray:
    """A float64 value rounded once to ``dt`` (round to nearest even): exact-then-round."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(x64, np.float64).astype(NP[dt])


def wrap(x: np.ndarray, dt) -> np.ndarray:
    """Python-int results wrapped to ``dt``'s width (two's complement)."""
    t = NP[dt]
    bits = t.itemsize * 8
    v = np.asarray(x, object) % (1 << bits)
    if t.kind == "i":
        v = np.where(v >= (1 << (bits - 1)), v - (1 << bits), v)
    return np.array([int(q) for q in v], np.int64).astype(t) if t.kind == "i" else \
        np.array([int(q) for q in v], np.uint64).astype(t)
