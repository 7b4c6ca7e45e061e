"""The register rearrangements (``vf_computation/advanced_computation``): interleave, de_interleave, pack,
unpack, unsqueeze, against NumPy permutations written from the pages' formulas, over random bit
patterns of every dtype each page lists (byte comparison: NaN payloads and -0.0 must survive a
permutation), plus their mask-register forms observed through ``vf.select`` at b8 (one predicate bit
per lane). The mask interleave granularity (``dtype=``) has its own file,
``test_vf_mask_interleave_granularity.py``.
"""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.errors import CompileError
from pypto_pro.language import Vf as vf

from located import check_location, marked_line
from vf_kernels import lanes, vf_kernel

COVERED = frozenset({"interleave", "de_interleave", "pack", "unpack", "unsqueeze"})

ALL_TYPES = [pl.DT_INT8, pl.DT_UINT8, pl.DT_INT16, pl.DT_UINT16, pl.DT_FP16, pl.DT_BF16, pl.DT_INT32, pl.DT_UINT32,
             pl.DT_FP32, pl.DT_INT64, pl.DT_UINT64]
U8 = pl.DT_UINT8



def np_of(dt):
    return dt.np_dtype


def random_bits(dt, rows: int, seed: int) -> np.ndarray:
    raw = np.random.default_rng(seed).integers(0, 256, 256 * rows, dtype=np.uint8)
    return raw.view(np_of(dt)).reshape(rows, lanes(dt))


def run(body, in_dt, rows, out_dt, out_rows, x):
    out = np.zeros((out_rows, lanes(out_dt)), np_of(out_dt))
    vf_kernel(body, [(in_dt, [rows, lanes(in_dt)])], (out_dt, [out_rows, lanes(out_dt)]))[None, 1](x, out)
    return out


def same_bits(got, want):
    np.testing.assert_array_equal(np.ascontiguousarray(got).view(np.uint8), np.ascontiguousarray(want).view(np.uint8))


# ---- interleave / de_interleave ---------------------------------------------------------------------


def permute_body(op, dt):
    n = lanes(dt)
    fn = getattr(vf, op)

    @pl.vector_function
    def body(ti, to):
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=dt)
        a = vf.load_align(ti, 0)
        b = vf.load_align(ti, n)
        d0, d1 = fn(a, b)
        vf.store_align(to, d0, full)
        vf.store_align(to, d1, full, n)
    return body


@pytest.mark.parametrize("dt", ALL_TYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("op", ["interleave", "de_interleave"])
def test_register_permutation(op, dt):
    """interleave: dst0[2i] = src0[i], dst0[2i+1] = src1[i] over the first half, dst1 over the second;
    de_interleave: dst0[i] = (src0 ++ src1)[2i], dst1[i] = (src0 ++ src1)[2i + 1]."""
    x = random_bits(dt, 2, dt.bits + len(op))
    got = run(permute_body(op, dt), dt, 2, dt, 2, x)
    n = lanes(dt)
    if op == "interleave":
        mixed = np.empty(2 * n, x.dtype)
        mixed[0::2], mixed[1::2] = x[0], x[1]
        want = mixed.reshape(2, n)
    else:
        both = x.reshape(-1)
        want = np.stack([both[0::2], both[1::2]])
    same_bits(got, want)


def roundtrip_body(dt):
    n = lanes(dt)

    @pl.vector_function
    def body(ti, to):
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=dt)
        a = vf.load_align(ti, 0)
        b = vf.load_align(ti, n)
        i0, i1 = vf.interleave(a, b)
        a, b = vf.de_interleave(i0, i1)  # the results may overwrite the sources (the pages allow it)
        vf.store_align(to, a, full)
        vf.store_align(to, b, full, n)
    return body


@pytest.mark.parametrize("dt", [pl.DT_INT8, pl.DT_BF16, pl.DT_FP32, pl.DT_UINT64], ids=lambda d: d.name)
def test_de_interleave_undoes_interleave_in_place(dt):
    x = random_bits(dt, 2, 9)
    same_bits(run(roundtrip_body(dt), dt, 2, dt, 2, x), x)


# ---- pack / unpack ----------------------------------------------------------------------------------

PACK = [(pl.DT_INT16, U8), (pl.DT_UINT16, U8), (pl.DT_INT32, pl.DT_UINT16), (pl.DT_UINT32, pl.DT_UINT16),
        (pl.DT_INT64, pl.DT_UINT32), (pl.DT_UINT64, pl.DT_UINT32)]
UNPACK = [(pl.DT_INT8, pl.DT_INT16), (U8, pl.DT_UINT16), (pl.DT_INT16, pl.DT_INT32), (pl.DT_UINT16, pl.DT_UINT32),
          (pl.DT_INT32, pl.DT_INT64), (pl.DT_UINT32, pl.DT_UINT64)]
PARTS = [None, pl.PackPart.LOWER, pl.PackPart.UPPER]


def pack_body(op, src, dst, part):
    fn = getattr(vf, op)

    @pl.vector_function
    def body(ti, to):
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=dst)
        a = vf.load_align(ti, 0)
        r = fn(a, dtype=dst, part=part)
        vf.store_align(to, r, full)
    return body


@pytest.mark.parametrize("part", PARTS, ids=lambda p: getattr(p, "name", "default"))
@pytest.mark.parametrize("src,dst", PACK, ids=lambda d: d.name)
def test_pack_keeps_the_low_half_of_each_element(src, dst, part):
    """The low dst-width bits of every element into the lower (LOWER, the default) or upper (UPPER) half
    of dst; the other half 0. (The page's note that the 64-bit form takes LOWER only is not enforced: the
    real backend lowers UPPER too, through vdintlv with a zero register, which gives the same layout.)"""
    x = random_bits(src, 1, src.bits * 3)
    got = run(pack_body("pack", src, dst, part), src, 1, dst, 1, x)[0]
    n = lanes(dst)
    low = (x[0].view(f"u{src.bits // 8}") & ((1 << dst.bits) - 1)).astype(np_of(dst))
    want = np.zeros(n, np_of(dst))
    if part is pl.PackPart.UPPER:
        want[n // 2:] = low
    else:
        want[:n // 2] = low
    same_bits(got, want)


@pytest.mark.parametrize("part", PARTS, ids=lambda p: getattr(p, "name", "default"))
@pytest.mark.parametrize("src,dst", UNPACK, ids=lambda d: d.name)
def test_unpack_widens_one_half(src, dst, part):
    """The lower (LOWER, default) or upper (UPPER) half of src widened: sign-extended for a signed source,
    zero-extended for an unsigned one (the page). The data hold each type's min, max, -1 and 0."""
    x = random_bits(src, 1, src.bits * 5)
    info = np.iinfo(np_of(src))
    n = lanes(src)
    for k, v in enumerate([info.min, info.max, -1 if info.min else info.max, 0]):
        x[0, k] = v
        x[0, n // 2 + k] = v
    got = run(pack_body("unpack", src, dst, part), src, 1, dst, 1, x)[0]
    half = x[0, n // 2:] if part is pl.PackPart.UPPER else x[0, :n // 2]
    want = np.array([int(v) for v in half], object)  # the value, extended by the source's signedness
    want = np.array([v % (1 << dst.bits) for v in want], np.uint64).astype(f"u{dst.bits // 8}").view(np_of(dst))
    same_bits(got, want)


def mask_pack_body(op, part):
    fn = getattr(vf, op)

    @pl.vector_function
    def body(ti, to):
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=U8)
        a = vf.load_align(ti, 0)
        ones = vf.load_align(ti, 256)
        m = vf.gt(a, 127, full)                      # one predicate bit per byte lane
        pm = fn(m, part=part)
        zero = vf.sub(ones, ones, full)
        r = vf.select(ones, zero, pm)
        vf.store_align(to, r, full)
    return body


@pytest.mark.parametrize("part", PARTS, ids=lambda p: getattr(p, "name", "default"))
@pytest.mark.parametrize("op", ["pack", "unpack"])
def test_mask_pack_unpack(op, part):
    """Mask registers (no dtype: the register type stays): pack puts the even predicate bits into the lower
    / upper half (the rest 0); unpack spreads the lower / upper half over the whole mask, each bit twice
    (the b8 predicates of one half as b16 ones)."""
    x = np.random.default_rng(7).integers(0, 256, (2, 256), dtype=np.uint8)
    x[1] = 1
    got = run(mask_pack_body(op, part), U8, 2, U8, 1, x)[0]
    bits = x[0] > 127
    upper = part is pl.PackPart.UPPER
    if op == "pack":
        want = np.zeros(256, bool)
        want[slice(128, 256) if upper else slice(0, 128)] = bits[0::2]
    else:
        want = np.repeat(bits[128:] if upper else bits[:128], 2)
    np.testing.assert_array_equal(got, want.astype(np.uint8))


# ---- unsqueeze --------------------------------------------------------------------------------------

UNSQ_TYPES = [pl.DT_INT8, U8, pl.DT_INT16, pl.DT_UINT16, pl.DT_INT32, pl.DT_UINT32]


def unsqueeze_body(dt, pattern):
    @pl.vector_function
    def body(ti, to):
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=dt)
        m = vf.create_mask(pattern=pattern, dtype=dt)
        r = vf.unsqueeze(m, dtype=dt)
        vf.store_align(to, r, full)
    return body


@pytest.mark.parametrize("pattern", [pl.MaskPattern.M3, pl.MaskPattern.VL16, pl.MaskPattern.ALL, pl.MaskPattern.ALLF],
                         ids=lambda p: p.name)
@pytest.mark.parametrize("dt", UNSQ_TYPES, ids=lambda d: d.name)
def test_unsqueeze(dt, pattern):
    """unsqueeze.md is self-contradictory: its formula (and first sentence) give lane i = 1 where the mask
    is active, else 0; its prose algorithm describes a running count (dst[0] = 0, +1 per active lane, the
    top bit ignored), and the real backend's comment calls vusqz AscendC's PrefixSum. We keep the formula
    (what the simulator does and docs/vf.md states) and record the question in the wave-15 report; this
    test pins the formula so a change is deliberate."""
    n = lanes(dt)
    x = np.zeros((1, n), np_of(dt))
    got = run(unsqueeze_body(dt, pattern), dt, 1, dt, 1, x)[0]
    idx = np.arange(n)
    act = {pl.MaskPattern.M3: idx % 3 == 0, pl.MaskPattern.VL16: idx < 16, pl.MaskPattern.ALL: idx >= 0,
           pl.MaskPattern.ALLF: idx < 0}[pattern]
    np.testing.assert_array_equal(got, act.astype(np_of(dt)))


# ---- refusals ---------------------------------------------------------------------------------------


def pack_without_dtype():
    @pl.vector_function
    def body(ti, to):
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_UINT32)
        a = vf.load_align(ti, 0)
        r = vf.pack(a, part=pl.PackPart.LOWER)  # <- here
        vf.store_align(to, r, full)
    return body, pl.DT_UINT32, "vf.pack", "dtype= .* is required"


def unpack_without_dtype():
    @pl.vector_function
    def body(ti, to):
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_UINT16)
        a = vf.load_align(ti, 0)
        r = vf.unpack(a)  # <- here
        vf.store_align(to, r, full)
    return body, pl.DT_UINT16, "vf.unpack", "dtype= .* is required"


def pack_same_width():
    @pl.vector_function
    def body(ti, to):
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_UINT32)
        a = vf.load_align(ti, 0)
        r = vf.pack(a, dtype=pl.DT_INT32)  # <- here
        vf.store_align(to, r, full)
    return body, pl.DT_UINT32, "vf.pack", "must halve the element width"


def unsqueeze_fp32():
    @pl.vector_function
    def body(ti, to):
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
        r = vf.unsqueeze(full, dtype=pl.DT_FP32)  # <- here
        vf.store_align(to, r, full)
    return body, pl.DT_FP32, "pl.DT_FP32)", "must be an integer type"


def interleave_mixed():
    @pl.vector_function
    def body(ti, to):
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_UINT32)
        a = vf.load_align(ti, 0)
        b = vf.load_align(ti, 64, dtype=pl.DT_UINT16)
        d0, d1 = vf.interleave(a, b)  # <- here
        vf.store_align(to, d0, full)
    return body, pl.DT_UINT32, "b)", "'src1'"


@pytest.mark.parametrize("make", [pack_without_dtype, unpack_without_dtype, pack_same_width, unsqueeze_fp32,
                                  interleave_mixed], ids=lambda m: m.__name__)
def test_refused_is_a_located_error(make):
    body, dt, token, match = make()
    n = lanes(dt)
    with pytest.raises(CompileError, match=match) as info:
        vf_kernel(body, [(dt, [2, n])], (dt, [1, n])).compile()
    check_location(info.value, *marked_line(body), token)
