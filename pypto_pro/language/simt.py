"""``pl.simt``: SIMT functions on the Ascend 950's Vector cores (the real ``language/_simt_api.py``).

``@pl.simt.function(max_threads=N)`` marks a *launchable* SIMT function and
``@pl.simt.function`` (no arguments) a SIMT *callee*, a helper that SIMT code calls. Neither is
parsed where it is defined: ``pl.simt.launch(fn, threads=..., args=(...))`` inside
``with pl.section_vector():`` compiles ``fn`` with the types of the arguments it is given, and runs
it on ``threads`` threads (one to three dimensions). Inside SIMT code, ``pl.simt.thread_idx()``,
``block_dim()``, ``block_idx()``, ``grid_dim()`` (each with ``.x`` / ``.y`` / ``.z``),
``linear_thread_idx()`` and ``warp_size()`` describe the thread; tiles and tensors are read and
written one element per thread (``dst[row, col] = src[row, col] + delta``).

The frontend (``pypto_pro/frontend/simt.py``) compiles every ``pl.simt.*`` call; calling one outside
a kernel raises, as the real declarations do.
"""
from __future__ import annotations

from typing import Any, Callable

from pypto_pro.language.intrinsic import intrinsic

_MARK = "__pypto_simt__"                # set on every @pl.simt.function
_MAX_THREADS = "__pypto_simt_max_threads__"  # its launch bound (None: a callee)


def simt_function(fn: Callable | None = None, *, max_threads: int | None = None) -> Callable:
    """Mark ``fn`` as a SIMT function; the frontend parses it where it is launched or called."""
    if fn is None and max_threads is None:
        raise TypeError("@pl.simt.function requires max_threads or a directly decorated function")

    def mark(func: Callable) -> Callable:
        setattr(func, _MARK, True)
        setattr(func, _MAX_THREADS, max_threads)
        return func
    return mark(fn) if fn is not None else mark


def is_simt_function(fn: Any) -> bool:
    """Whether ``fn`` was decorated with ``@pl.simt.function``."""
    return bool(getattr(fn, _MARK, False))


def simt_max_threads(fn: Any) -> Any:
    """The launch bound given to ``@pl.simt.function`` (None for a callee)."""
    return getattr(fn, _MAX_THREADS, None)


class Simt:
    """The ``pl.simt`` namespace: the SIMT decorator, thread queries and ``launch``."""

    @staticmethod
    def function(fn: Callable | None = None, *, max_threads: int | None = None) -> Callable:
        """Mark a function for SIMT parsing at its launch or call site.

        With ``max_threads`` (1..2048) the function can be launched with ``pl.simt.launch``; without
        it, it is a SIMT callee: a helper SIMT code calls, returning None or one scalar."""
        return simt_function(fn, max_threads=max_threads)

    @staticmethod
    @intrinsic("simt.thread_idx")
    def thread_idx() -> Any:
        """This thread's coordinates in its thread block (``.x``, ``.y``, ``.z``; UINT32)."""

    @staticmethod
    @intrinsic("simt.block_dim")
    def block_dim() -> Any:
        """The launch's thread-block dimensions (``threads=`` of ``pl.simt.launch``, padded with 1s)."""

    @staticmethod
    @intrinsic("simt.block_idx")
    def block_idx() -> Any:
        """The block's coordinates in the kernel's grid: ``.x`` is ``pl.get_block_idx()``, ``.y`` = ``.z`` = 0."""

    @staticmethod
    @intrinsic("simt.grid_dim")
    def grid_dim() -> Any:
        """The kernel grid's dimensions: ``.x`` is ``pl.get_block_num()``, ``.y`` = ``.z`` = 1."""

    @staticmethod
    @intrinsic("simt.linear_thread_idx")
    def linear_thread_idx() -> Any:
        """``x + y * block_dim.x + z * block_dim.x * block_dim.y`` (x-major; UINT32)."""

    @staticmethod
    @intrinsic("simt.warp_size")
    def warp_size() -> Any:
        """Threads per warp (32 on the Ascend 950; INT32)."""

    @staticmethod
    @intrinsic("simt.launch")
    def launch(callee: Any, *, threads: Any, args: Any) -> None:
        """Run ``callee`` (a ``@pl.simt.function(max_threads=...)``) on ``threads`` threads (an int or a
        tuple of one to three compile-time ints) with ``args`` (a tuple of scalars, tensors and tiles).

        Only inside ``with pl.section_vector():``; it is a V-pipe instruction, ordered with the other
        Vector instructions like any of them."""


simt = Simt
