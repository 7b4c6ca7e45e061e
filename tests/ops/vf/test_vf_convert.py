"""vf.truncate and vf.bit_cast (``vf_computation/type_conversion``) against NumPy references; vf.astype
has its own files (``test_vf_astype_*.py``).

truncate.md: ``trunc(src)`` in the same float type (FP16 / BF16 / FP32), inactive lanes 0, MERGING not
supported; the page's signature has no round mode (the real API's stub neither; its backend's hidden
``round_mode`` kwarg is not reachable from Python), so ``round_mode=`` is refused like any unknown
argument. bit_cast.md: the bits unchanged, for source and destination of one width (every pair of the
8-, 16-, 32- and 64-bit types here, both ways and onto itself).
"""
import itertools

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.errors import CompileError
from pypto_pro.language import Vf as vf

from located import check_location, marked_line
from vf_exact import NP, assert_same, random_floats, run_kernel
from vf_kernels import lanes, vf_kernel

COVERED = frozenset({"truncate", "bit_cast"})

F16, BF16, F32 = pl.DT_FP16, pl.DT_BF16, pl.DT_FP32



# ---- truncate ---------------------------------------------------------------------------------------


def truncate_body(dt, pattern):
    @pl.vector_function
    def body(ti, to):
        m = vf.create_mask(pattern=pattern, dtype=dt)
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=dt)
        a = vf.load_align(ti, 0)
        r = vf.truncate(a, m)
        vf.store_align(to, r, full)
    return body


@pytest.mark.parametrize("pattern", [pl.MaskPattern.M3, pl.MaskPattern.ALL], ids=lambda p: p.name)
@pytest.mark.parametrize("dt", [F16, BF16, F32], ids=lambda d: d.name)
def test_truncate_rounds_toward_zero(dt, pattern):
    """3.7 -> 3, -2.3 -> -2 (the page's figure), -0.5 -> -0.0, subnormals -> +-0, values with no fraction
    bits (large ones: the random data reach fp16's and bf16's, +-max, +-inf) unchanged, NaN stays NaN; inactive lanes +0."""
    n = lanes(dt)
    t = NP[dt]
    x = random_floats(dt, n, 51, scale=40.0)
    edge = [3.7, -2.3, -0.5, 0.5, -0.0, 1000.5, -(2.0**10) - 1.0, 1.0 - 2**-11, -(1.0 - 2**-11), 2.5, -2.5]
    x[0:3 * len(edge):3] = np.array(edge, np.float64).astype(t)
    x[1] = np.float64(np.finfo(t).smallest_subnormal).astype(t)
    got = run_kernel(vf_kernel(truncate_body(dt, pattern), [(dt, [1, n])], (dt, [1, n])), x[None], dt)[0]
    with np.errstate(invalid="ignore"):
        want = np.trunc(x.astype(np.float64)).astype(t)  # trunc of a float is a float of the same type
    act = np.arange(n) % 3 == 0 if pattern is pl.MaskPattern.M3 else np.ones(n, bool)
    assert_same(got, np.where(act, want, np.zeros_like(want)), f"truncate {dt.name}")


def truncate_int32():
    @pl.vector_function
    def body(ti, to):
        m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_INT32)
        a = vf.load_align(ti, 0)
        r = vf.truncate(a, m)  # <- here
        vf.store_align(to, r, m)
    return body, pl.DT_INT32, "a, m", "vf.truncate"


def truncate_merging():
    @pl.vector_function
    def body(ti, to):
        m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=F32)
        a = vf.load_align(ti, 0)
        r = vf.truncate(a, m, mode=pl.MergeMode.MERGING)  # <- here
        vf.store_align(to, r, m)
    return body, F32, "pl.MergeMode.MERGING", "only MergeMode.ZEROING"


def truncate_round_mode():
    @pl.vector_function
    def body(ti, to):
        m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=F32)
        a = vf.load_align(ti, 0)
        r = vf.truncate(a, m, round_mode=pl.VFRoundMode.CAST_FLOOR)  # <- here
        vf.store_align(to, r, m)
    return body, F32, "round_mode=", "no parameter 'round_mode'"


def bit_cast_mask():
    @pl.vector_function
    def body(ti, to):
        m = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=F32)
        r = vf.bit_cast(m, dtype=pl.DT_UINT32)  # <- here
        vf.store_align(to, r, m)
    return body, F32, "m, dtype", "must be a vector register"


@pytest.mark.parametrize("make", [truncate_int32, truncate_merging, truncate_round_mode, bit_cast_mask],
                         ids=lambda m: m.__name__)
def test_refused_is_a_located_error(make):
    body, dt, token, match = make()
    n = lanes(dt)
    with pytest.raises(CompileError, match=match) as info:
        vf_kernel(body, [(dt, [1, n])], (dt, [1, n])).compile()
    check_location(info.value, *marked_line(body), token)


# ---- bit_cast ---------------------------------------------------------------------------------------

WIDTHS = {
    8: [pl.DT_INT8, pl.DT_UINT8, pl.DT_FP8E4M3FN, pl.DT_FP8E5M2, pl.DT_FP8E8M0, pl.DT_HF8],
    16: [pl.DT_INT16, pl.DT_UINT16, F16, BF16],
    32: [pl.DT_INT32, pl.DT_UINT32, F32],
    64: [pl.DT_INT64, pl.DT_UINT64],
}
PAIRS = [(s, d) for ts in WIDTHS.values() for s, d in itertools.product(ts, ts)]


def bit_cast_body(src, dst):
    @pl.vector_function
    def body(ti, to):
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=dst)
        a = vf.load_align(ti, 0)
        r = vf.bit_cast(a, dtype=dst)
        vf.store_align(to, r, full)
    return body


def bit_cast_nested_body(src, dst):
    """The page's nested form: bit_cast as an operand of another instruction (here an OR with itself)."""
    @pl.vector_function
    def body(ti, to):
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=dst)
        a = vf.load_align(ti, 0)
        r = vf.or_(vf.bit_cast(a, dtype=dst), vf.bit_cast(a, dtype=dst), full)
        vf.store_align(to, r, full)
    return body


def _np(dt):
    return dt.np_dtype if dt.np_dtype is not None else np.uint8


@pytest.mark.parametrize("src,dst", PAIRS, ids=lambda d: d.name)
def test_bit_cast_keeps_every_bit(src, dst):
    """Random bytes (NaN payloads, signalling NaNs, -0.0 and subnormals among them) come out unchanged."""
    n = lanes(src)
    raw = np.random.default_rng(src.bits * 7 + len(src.name)).integers(0, 256, 256, dtype=np.uint8)
    x = raw.view(_np(src)).reshape(1, n)
    out = np.zeros((1, lanes(dst)), _np(dst))
    vf_kernel(bit_cast_body(src, dst), [(src, [1, n])], (dst, [1, lanes(dst)]))[None, 1](x, out)
    np.testing.assert_array_equal(out.view(np.uint8).ravel(), raw)


@pytest.mark.parametrize("src,dst", [(F32, pl.DT_UINT32), (BF16, pl.DT_INT16), (pl.DT_FP8E5M2, pl.DT_UINT8)],
                         ids=lambda d: d.name)
def test_bit_cast_as_an_operand(src, dst):
    n = lanes(src)
    raw = np.random.default_rng(3).integers(0, 256, 256, dtype=np.uint8)
    x = raw.view(_np(src)).reshape(1, n)
    out = np.zeros((1, lanes(dst)), _np(dst))
    vf_kernel(bit_cast_nested_body(src, dst), [(src, [1, n])], (dst, [1, lanes(dst)]))[None, 1](x, out)
    np.testing.assert_array_equal(out.view(np.uint8).ravel(), raw)
