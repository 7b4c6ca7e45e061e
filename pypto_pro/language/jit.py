"""``@pl.jit`` (a kernel, compiled on first launch) and ``@pl.inline`` (a helper inlined into kernels)."""
from __future__ import annotations

from typing import Any, Callable, TypeVar

F = TypeVar("F", bound=Callable)


def jit(fn: Callable | None = None, *, arch: str | None = None, auto_mutex: bool = True, device: str = "sim",
        check: str = "raise", build_dir: str | None = None, timing: bool = True, trace: str | None = None,
        pipeline: Any = None, tiling_key: Any = None) -> Any:
    """Turn a Python function into a kernel. Use bare (``@pl.jit``) or with options.

    ``arch``: ``"a5"`` (Ascend 950), ``"a2"``/``"a3"``/``"a2a3"``, a 950 variant (``"950DT_9581"``)
    or None/``"auto"`` (default: ``$PYPTOPRO_JIT_ARCH``, else ``"a5"``; ``pypto_pro.arch.names``);
    ``auto_mutex``: order ops on tile-group slots
    automatically; ``device``: ``"sim"`` (the embedded simulator); ``build_dir``: where stage dumps
    go (default ``./build/<kernel>``, or ``$PYPTO_PRO_BUILD_DIR/<kernel>``); ``check``: what the
    simulator does on a race or other fault: ``"raise"`` (default), ``"warn"``, ``"off"`` (a
    deadlock or an out-of-bounds GM access cannot be run past and raises in every mode);
    ``timing``: model per-pipe timing (default) or run functionally only; ``trace``: directory for the
    Perfetto trace and HTML timeline of each launch (also ``$PYPTO_PRO_TRACE``); ``pipeline``: a
    ``pl.pipeline.PipelineConfig`` to overlap Cube and Vector stages (see ``pl.pipeline``);
    ``tiling_key``: a class of ``TilingKeyField``s (``pypto_pro.runtime.tilingkey``) whose values
    are chosen at launch, ``kernel[stream, block_dim, {"FIELD": value}]``, and folded to constants.
    """
    from pypto_pro.runtime.kernel import JitKernel

    def wrap(f: Callable) -> JitKernel:
        return JitKernel(f, arch=arch, auto_mutex=auto_mutex, device=device, check=check, build_dir=build_dir,
                         timing=timing, trace=trace, pipeline=pipeline, tiling_key=tiling_key)

    return wrap(fn) if fn is not None else wrap


def inline(fn: F) -> F:
    """Mark a helper whose calls are inlined into kernels (it may take tiles and run-time scalars)."""
    fn.__pypto_inline__ = True  # type: ignore[attr-defined]
    return fn
