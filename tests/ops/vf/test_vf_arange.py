"""vf.arange (``sorting_and_indexing/arange.md``) for every dtype the page lists and both IndexOrder
values, against NumPy.

INCREASE_ORDER (the default): ``dst[i] = start + i``. DECREASE_ORDER: the page's prose says
``start - i`` but its own measured example (start 63 on 64 uint32 lanes -> 126, 125, ..., 63) is
``start + (lanes - 1 - i)``, which is also what PTO-ISA's TCI relies on; we follow the example. The
64-bit types have no 8-byte vci: the page (and the real backend) build them from an int32 vci as the low
words with zero high words, plus start as a 64-bit add, so INCREASE gives ``start + i`` (32 lanes) and
DECREASE, where the int32 sequence is negated before the zero high words are attached, gives
``start + ((-i) mod 2^32)``: we pin what that lowering computes. Integers wrap at their width (the
page is silent; vci is modular). Floats: ``start + i`` exact (the starts here keep every value exact).
"""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.errors import CompileError
from pypto_pro.language import Vf as vf

from located import check_location, marked_line
from vf_kernels import lanes, vf_kernel

COVERED = frozenset({"arange"})

TYPES = [pl.DT_INT8, pl.DT_UINT8, pl.DT_INT16, pl.DT_UINT16, pl.DT_INT32, pl.DT_UINT32, pl.DT_FP16, pl.DT_FP32,
         pl.DT_INT64, pl.DT_UINT64]
ORDERS = [None, pl.IndexOrder.INCREASE_ORDER, pl.IndexOrder.DECREASE_ORDER]



def starts(dt) -> list:
    if dt.is_float():
        return [0.0, 1.5, -100.0]
    info = np.iinfo(dt.np_dtype)
    return [0, 63, 5 if info.min == 0 else -5, int(info.max) - 3]  # the last wraps past the top


def arange_body(dt, order, values):
    n = lanes(dt)

    @pl.vector_function
    def body(ti, to):
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=dt)
        for k in range(len(values)):  # unrolled: one arange per start, one output row each
            r = vf.arange(values[k], dtype=dt, index_order=order)
            vf.store_align(to, r, full, k * n)
    return body


def reference(dt, order, start) -> np.ndarray:
    n = lanes(dt)
    i = np.arange(n)
    down = order is pl.IndexOrder.DECREASE_ORDER
    if dt.is_float():
        vals = start + ((n - 1 - i) if down else i)
        return np.array(vals, np.float64).astype(dt.np_dtype)
    if dt.bits == 64:
        off = [(-int(k)) % 2**32 if down else int(k) for k in i]
    else:
        off = [int(n - 1 - k) if down else int(k) for k in i]
    bits = dt.bits
    return np.array([(int(start) + o) % 2**bits for o in off], np.uint64).astype(f"u{bits // 8}").view(dt.np_dtype)


@pytest.mark.parametrize("order", ORDERS, ids=lambda o: getattr(o, "name", "default"))
@pytest.mark.parametrize("dt", TYPES, ids=lambda d: d.name)
def test_arange(dt, order):
    values = starts(dt)
    n = lanes(dt)
    out = np.zeros((len(values), n), dt.np_dtype)
    vf_kernel(arange_body(dt, order, values), [(dt, [1, n])], (dt, [len(values), n]))[None, 1](
        np.zeros((1, n), dt.np_dtype), out)
    for k, start in enumerate(values):
        np.testing.assert_array_equal(out[k].view(f"u{dt.bits // 8}"), reference(dt, order, start).view(f"u{dt.bits // 8}"),
                                      err_msg=f"start {start}")


def test_the_page_decreasing_example():
    """arange.md's second example, as the page measures it: start 63, DECREASE_ORDER, 64 uint32 lanes."""
    dt = pl.DT_UINT32
    out = np.zeros((1, 64), np.uint32)
    vf_kernel(arange_body(dt, pl.IndexOrder.DECREASE_ORDER, [63]), [(dt, [1, 64])], (dt, [1, 64]))[None, 1](
        np.zeros((1, 64), np.uint32), out)
    np.testing.assert_array_equal(out[0], np.arange(126, 62, -1))


def arange_bf16():
    @pl.vector_function
    def body(ti, to):
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_BF16)
        r = vf.arange(0, dtype=pl.DT_BF16)  # <- here
        vf.store_align(to, r, full)
    return body, pl.DT_BF16, "pl.DT_BF16)", "DT_BF16 is not supported"


def arange_float_start_for_ints():
    @pl.vector_function
    def body(ti, to):
        full = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_INT32)
        r = vf.arange(1.5, dtype=pl.DT_INT32)  # <- here
        vf.store_align(to, r, full)
    return body, pl.DT_INT32, "1.5", "is a float"


@pytest.mark.parametrize("make", [arange_bf16, arange_float_start_for_ints], ids=lambda m: m.__name__)
def test_refused_is_a_located_error(make):
    body, dt, token, match = make()
    n = lanes(dt)
    with pytest.raises(CompileError, match=match) as info:
        vf_kernel(body, [(dt, [1, n])], (dt, [1, n])).compile()
    check_location(info.value, *marked_line(body), token)
