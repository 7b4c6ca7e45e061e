"""One BLAS thread while the simulator runs: the Cube's numerics are thousands of small float64
matmuls (a 128 x 64 x 128 step is about a millisecond of work), and OpenBLAS splitting each across
threads costs far more than it saves. On the 2-core machine of issue 15, under load from other
processes, a 128 x 64 x 128 product took 42 ms with NumPy's default threads and 1 ms with one:
the same GEMM launch went from 65 s to 3 s. This is also why a GEMM benchmark's time moved 3x
between machines: it measured thread contention, not the simulator.

The products are the same bytes either way (OpenBLAS splits the output among threads; each element
is summed by the same kernel in the same order), which ``tests/backends/sim/test_blas_threads.py``
checks. Found through NumPy's bundled OpenBLAS by its exported symbols with ctypes; when no such
library is loaded (another BLAS, another platform) this is a no-op.
"""
from __future__ import annotations

import contextlib
import ctypes
import threading
from pathlib import Path
from typing import Iterator

# (get, set) symbol pairs of the OpenBLAS builds NumPy ships with (scipy-openblas, 64-bit ints) or links
_SYMBOLS = (("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
            ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
            ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
            ("openblas_get_num_threads", "openblas_set_num_threads"))

_lock = threading.Lock()
_depth = 0
_saved = 0
_api: tuple | None = None
_probed = False


def _loaded_blas_paths() -> list[str]:
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return []
    seen: list[str] = []
    for line in maps.splitlines():
        path = line.split(maxsplit=5)[-1] if line.count(" ") >= 5 else ""
        if "blas" in Path(path).name.lower() and path not in seen:
            seen.append(path)
    return seen


def _find() -> tuple | None:
    """(get, set) of the loaded OpenBLAS, or None."""
    import numpy  # noqa: F401  (loads the BLAS NumPy uses)
    for path in _loaded_blas_paths():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for get_name, set_name in _SYMBOLS:
            get, put = getattr(lib, get_name, None), getattr(lib, set_name, None)
            if get is not None and put is not None:
                get.restype, get.argtypes = ctypes.c_int, []
                put.restype, put.argtypes = None, [ctypes.c_int]
                return get, put
    return None


def _blas() -> tuple | None:
    global _api, _probed
    if not _probed:
        _api, _probed = _find(), True
    return _api


def blas_threads() -> int | None:
    """The loaded OpenBLAS's thread count (None when none was found)."""
    api = _blas()
    return api[0]() if api is not None else None


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the body with one OpenBLAS thread; nested and concurrent uses restore the count once."""
    global _depth, _saved
    api = _blas()
    if api is None:
        yield
        return
    get, put = api
    with _lock:
        if _depth == 0:
            _saved = get()
            if _saved != 1:
                put(1)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _saved != 1:
                put(_saved)
