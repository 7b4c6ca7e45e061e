"""Independent references for the VF op tests: exact rationals (``fractions.Fraction``) rounded once
to a lane type by round-to-nearest-even, written from IEEE 754 (no pypto_pro numerics), special
values per lane type, a byte comparison that takes any NaN for a NaN, and a one-tile VF kernel
over NumPy arrays (``reg_kernel``: a [rows, lanes] input tile, one register per row)."""
from __future__ import annotations

from fractions import Fraction

import numpy as np

import pypto_pro.language as pl

from vf_kernels import NP, lanes, vf_kernel


def uint_of(t: np.dtype) -> np.dtype:
    return np.dtype(f"u{np.dtype(t).itemsize}")


def round_exact(x: Fraction, t: np.dtype, neg_zero: bool = False):
    """The value of ``t`` nearest to the rational ``x`` (ties to the even significand), +-inf past the
    largest finite value plus half its ulp; ``neg_zero``: the sign of an exact zero."""
    t = np.dtype(t)
    u = uint_of(t)
    sign = x < 0
    ax = -x if sign else x
    if ax == 0:
        return np.array([0x8000 << (8 * t.itemsize - 16) if neg_zero else 0], u).view(t)[0]
    fmax = Fraction(float(np.finfo(t).max))
    below_max = np.array([np.finfo(t).max], t).view(u)[0] - 1
    half_ulp = (fmax - Fraction(float(np.array([below_max], u).view(t)[0]))) / 2
    if ax >= fmax + half_ulp:
        r = np.array([np.inf], t)[0]
    else:
        guess = np.array([min(float(ax), float(np.finfo(t).max))], np.float64).astype(t).view(u)[0]
        cands = [int(b) for b in (int(guess) - 1, int(guess), int(guess) + 1) if b >= 0]
        cands = [b for b in cands if np.isfinite(np.array([b], u).view(t)[0])]
        best = min(cands, key=lambda b: (abs(Fraction(float(np.array([b], u).view(t)[0])) - ax), b & 1))
        r = np.array([best], u).view(t)[0]
    return -r if sign else r


def fraction(v) -> Fraction:
    return Fraction(float(v))


def finite(*vs) -> bool:
    return all(np.isfinite(float(v)) for v in vs)


def specials(dt) -> list[float]:
    """Special values of a float lane type: zeros of both signs, infinities, NaN, the smallest
    subnormal, the largest finite value (fp16: 65504, whose doubling overflows), ties."""
    fi = np.finfo(NP[dt])
    return [0.0, -0.0, np.inf, -np.inf, np.nan, float(fi.smallest_subnormal), -float(fi.smallest_subnormal),
            float(fi.max), -float(fi.max), float(fi.tiny), 1.0, -1.0, 0.5, 2.5, -2.5, 3.0]


def random_floats(dt, n: int, seed: int, scale: float = 4.0) -> np.ndarray:
    """``n`` seeded values of ``dt``, a quarter of them ``specials(dt)``."""
    g = np.random.default_rng(seed)
    x = (g.standard_normal(n) * scale).astype(NP[dt])
    sp = np.array(specials(dt), np.float64).astype(NP[dt])
    at = g.choice(n, n // 4, replace=False)
    x[at] = g.choice(sp, at.size)
    return x


def assert_same(got: np.ndarray, want: np.ndarray, where: str = "") -> None:
    """Byte equality lane by lane, except that a NaN lane only needs to be a NaN (payloads are not on
    the pages) and is compared as such."""
    got, want = np.asarray(got).ravel(), np.asarray(want, got.dtype).ravel()
    if got.dtype.kind == "f" or got.dtype == NP[pl.DT_BF16]:
        gn, wn = np.isnan(got.astype(np.float64)), np.isnan(want.astype(np.float64))
        np.testing.assert_array_equal(gn, wn, err_msg=f"NaN lanes differ {where}")
        u = uint_of(got.dtype)
        bad = np.flatnonzero((got.view(u) != want.view(u)) & ~gn)
    else:
        bad = np.flatnonzero(got != want)
    assert bad.size == 0, (f"{bad.size} lanes differ {where}; first lanes {bad[:6].tolist()}: got "
                           f"{got[bad[:6]].tolist()} want {want[bad[:6]].tolist()}")


def reg_kernel(body, in_dt, rows: int, out_dt, out_rows: int = 1):
    """A kernel: one [rows, lanes(in_dt)] input tile (register k at element offset k * lanes), ``body(ti,
    to)``, one [out_rows, lanes(out_dt)] output tile."""
    return vf_kernel(body, [(in_dt, [rows, lanes(in_dt)])], (out_dt, [out_rows, lanes(out_dt)]))


def run_kernel(kernel, x: np.ndarray, out_dt, out_rows: int = 1) -> np.ndarray:
    out = np.full((out_rows, lanes(out_dt)), 7, NP[out_dt])
    kernel[None, 1](np.ascontiguousarray(x), out)
    return out
