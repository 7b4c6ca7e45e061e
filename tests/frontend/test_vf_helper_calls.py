"""Calls of Python functions inside a ``@pl.vector_function`` body: another vector function is inlined;
a plain helper given run-time values is a located CompileError (the real parser: a vector function
cannot call a non-vector inline function); a plain helper of compile-time values runs in Python."""
import numpy as np

import pypto_pro.language as pl
from pypto_pro.language import Vf as vf

from vf_masked import assert_refused, masked_kernel, run

F32 = pl.DT_FP32


def doubled(x, m):
    d = vf.add(x, x, m)
    return d


def half_of(n):
    return n // 2


@pl.vector_function
def store_doubled(ta, to, m):
    x = vf.load_align(ta, 0)
    d = vf.add(x, x, m)
    vf.store_align(to, d, m)


def test_a_plain_helper_of_registers_is_a_located_error():
    def body(ta, to, n):
        m = vf.update_mask(n, dtype=F32)
        x = vf.load_align(ta, 0)
        d = doubled(x, m)  # <- here
        vf.store_align(to, d, m)
    assert_refused(body, (F32,), F32, "cannot call the non-vector Python function 'doubled'", "doubled(x, m)")


def test_a_plain_helper_of_constants_runs_in_python():
    def body(ta, to, n):
        m = vf.update_mask(half_of(128), dtype=F32)
        x = vf.load_align(ta, 0)
        d = vf.add(x, x, m)
        vf.store_align(to, d, m)
    a = np.arange(64, dtype=np.float32)
    got = run(masked_kernel(pl.vector_function(body), (F32,), F32), [a], F32, 64)
    np.testing.assert_array_equal(got, 2 * a)


def test_a_vector_function_is_inlined():
    def body(ta, to, n):
        m = vf.update_mask(n, dtype=F32)
        store_doubled(ta, to, m)
    a = np.arange(64, dtype=np.float32)
    got = run(masked_kernel(pl.vector_function(body), (F32,), F32), [a], F32, 64)
    np.testing.assert_array_equal(got, 2 * a)
