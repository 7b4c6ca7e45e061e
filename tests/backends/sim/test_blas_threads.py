"""One BLAS thread during a launch (backends/sim/blas_threads.py): the count is restored, and the
Cube's float64 products are the same bytes with one thread as with the default threads."""
import numpy as np
import pytest

from pypto_pro.backends.sim import blas_threads
from pypto_pro.backends.sim.blas_threads import one_blas_thread

needs_blas = pytest.mark.skipif(blas_threads.blas_threads() is None, reason="no OpenBLAS found in this process")


@needs_blas
def test_one_thread_inside_and_restored_after():
    before = blas_threads.blas_threads()
    with one_blas_thread():
        assert blas_threads.blas_threads() == 1
        with one_blas_thread():  # nested: still one, and the outer exit restores
            assert blas_threads.blas_threads() == 1
        assert blas_threads.blas_threads() == 1
    assert blas_threads.blas_threads() == before


@needs_blas
def test_restored_when_the_body_raises():
    before = blas_threads.blas_threads()
    with pytest.raises(RuntimeError):
        with one_blas_thread():
            raise RuntimeError("boom")
    assert blas_threads.blas_threads() == before


@pytest.mark.parametrize("m,k,n", [(128, 64, 128), (300, 520, 200), (512, 512, 512)])
def test_products_are_the_same_bytes(m, k, n):
    rng = np.random.default_rng(m + k + n)
    a = rng.standard_normal((m, k)).astype(np.float16).astype(np.float64)
    b = rng.standard_normal((k, n)).astype(np.float16).astype(np.float64)
    default = a @ b
    with one_blas_thread():
        single = a @ b
    assert np.array_equal(default.view(np.uint64), single.view(np.uint64))


def test_a_launch_runs_with_one_thread_and_restores(monkeypatch):
    import pypto_pro.language as pl
    from kernels import add_fn
    seen = []
    real = np.copyto

    def spy(*args, **kwargs):  # loads copy their window: record the thread count while they run
        seen.append(blas_threads.blas_threads())
        return real(*args, **kwargs)
    before = blas_threads.blas_threads()
    x = np.ones((128, 128), np.float16)
    z = np.zeros_like(x)
    monkeypatch.setattr(np, "copyto", spy)
    pl.jit(add_fn)[None, 1](x, x, z)
    monkeypatch.undo()
    assert (z == 2).all()
    assert seen and set(seen) == ({1} if before is not None else {None})
    assert blas_threads.blas_threads() == before
