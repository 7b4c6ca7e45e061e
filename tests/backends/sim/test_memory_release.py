"""A compiled kernel outlives its launches; it must not keep their tensors or its on-chip pages
alive (the test suite compiles thousands of kernels), and releasing them changes no result."""
import gc
import weakref

import numpy as np

import pypto_pro.language as pl
from example_modules import load_example
from kernels import add_fn
from pypto_pro.backends.sim.memory import CoreMemory


def test_launch_does_not_keep_its_tensors():
    kern = pl.jit(add_fn)
    x = np.ones((256, 128), np.float16)
    y = np.full_like(x, 2)
    z = np.zeros_like(x)
    kern[None, 2](x, y, z)
    assert (z == 3).all()
    refs = [weakref.ref(a) for a in (x, y, z)]
    del x, y, z
    gc.collect()
    assert all(r() is None for r in refs)
    runner = kern._cache[next(iter(kern._cache))].executable.runners[0]
    assert all(a is None for a in runner.gm.arrays)


def test_launch_failure_also_releases_the_tensors():
    kern = pl.jit(add_fn)
    x = np.ones((256, 128), np.float16)
    z = np.zeros((128, 128), np.float16)  # too small: the store leaves the tensor
    try:
        kern[None, 2](x, x, z)
    except Exception:  # noqa: BLE001  (a located OutOfBoundsError)
        pass
    runner = kern._cache[next(iter(kern._cache))].executable.runners[0]
    assert all(a is None for a in runner.gm.arrays)


def test_release_zeroes_pages_and_keeps_views():
    from pypto_pro.arch import get_arch
    from pypto_pro.language.enums import MemorySpace
    mem = CoreMemory(get_arch("a5"), (MemorySpace.Vec,))
    arr = mem.arrays[MemorySpace.Vec]
    view = arr[:16].view(np.float32)
    arr.fill(0xFF)
    mem.release()
    assert not arr.any()          # the pages went back: they read as zero
    view[:] = 1.5                 # and the old views still write into the same memory
    assert (arr[:16].view(np.float32) == 1.5).all()


def test_results_are_the_same_across_launches_after_release():
    """Repeated timed launches of a Cube + Vector kernel (memories released in between) give the same
    bytes and the same report."""
    kern = load_example("matmul_softmax").make_matmul_softmax("a5")
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((100, 64)) * 0.1).astype(np.float16)
    w = (rng.standard_normal((64, 128)) * 0.1).astype(np.float16)
    outs = []
    for _ in range(2):
        ws = np.zeros((2 * 2 * 128, 128), np.float32)
        out = np.zeros((100, 128), np.float16)
        rep = kern[None, 2](x, w, ws, out)
        outs.append((out.tobytes(), ws.tobytes(), rep.cycles, rep.pipe_busy, rep.faults))
    assert outs[0] == outs[1]
