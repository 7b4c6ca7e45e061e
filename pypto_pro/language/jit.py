"""``@pl.jit`` (a kernel, compiled on first launch) and ``@pl.inline`` (a helper inlined into kernels)."""
from __future__ import annotations

import inspect
from collections import ChainMap
from typing import Any, Callable, TypeVar

F = TypeVar("F", bound=Callable)


def jit(target: Callable | None = None, *, arch: str | None = None, auto_mutex: bool = True, name: str | None = None,
        pipeline: Any = None, tiling_key: Any = None, datatype: dict[str, str] | None = None,
        compile_timeout: int | None = None, device: str = "sim", check: str = "raise",
        build_dir: str | None = None, timing: bool = True, trace: str | None = None, **unknown: Any) -> Any:
    """Turn a Python function into a kernel. Use bare (``@pl.jit``) or with options.

    The real PyPTO Pro's keywords: ``arch``: ``"a5"`` (Ascend 950), ``"a2"`` / ``"a3"`` / ``"a2a3"``,
    a 950 variant (``"950DT_9581"``) or None / ``"auto"`` (the default: the arch of the NPU
    ``pypto-pro run`` emulates (``--arch``), else ``$PYPTOPRO_JIT_ARCH``, else ``"a5"``; see
    ``pypto_pro.arch.names``); ``auto_mutex``:
    order ops on tile-group slots automatically; ``name``: the kernel's name (its C symbol and
    build directory); ``pipeline``: a ``pl.pipeline.PipelineConfig`` to overlap Cube and Vector
    stages; ``tiling_key``: a class of ``TilingKeyField``s (``pypto_pro.runtime.tilingkey``) whose
    values are chosen at launch, ``kernel[stream, block_dim, {"FIELD": value}]``, and folded to
    constants; ``datatype``: ``{param name: variable name}``, the variables bound to dtypes at
    launch (``kernel[stream, block_dim, {"x": pl.DT_FP16}]``) and usable as compile-time dtypes in
    the kernel; ``compile_timeout``: seconds (for the CANN toolchain).

    Ours: ``device``: ``"sim"`` (the embedded simulator); ``check``: what the simulator does on a
    race or other fault: ``"raise"`` (default), ``"warn"``, ``"off"`` (a deadlock or an
    out-of-bounds GM access cannot be run past and raises in every mode); ``build_dir``: where stage
    dumps go (default ``./build/<kernel>``, or ``$PYPTO_PRO_BUILD_DIR/<kernel>``); ``timing``: model
    per-pipe timing (default) or run functionally only; ``trace``: directory for the Perfetto trace
    and HTML timeline of each launch (also ``$PYPTO_PRO_TRACE``).
    """
    from pypto_pro.runtime.kernel import JitKernel

    caller = inspect.currentframe().f_back  # type: ignore[union-attr]
    # the decorating scope, for TilingKey name conflicts (locals as they are now, globals live)
    scope = ChainMap(dict(caller.f_locals), caller.f_globals) if caller is not None else None
    del caller

    def wrap(f: Callable) -> JitKernel:
        if unknown:
            raise TypeError(f"jit() got unexpected keyword argument(s): {', '.join(unknown)}.")
        if _host_function(f):
            return _pass_through(f)  # type: ignore[return-value]
        return JitKernel(f, arch=arch, auto_mutex=auto_mutex, device=device, check=check, build_dir=build_dir,
                         timing=timing, trace=trace, pipeline=pipeline, tiling_key=tiling_key, name=name,
                         datatype=datatype, compile_timeout=compile_timeout, scope=scope)

    return wrap(target) if callable(target) else wrap


def inline(fn: F) -> F:
    """Mark a helper whose calls are inlined into kernels (it may take tiles and run-time scalars)."""
    fn.__pypto_inline__ = True  # type: ignore[attr-defined]
    return fn


def _host_function(f: Callable) -> bool:
    """Whether the real ``pl.jit`` would not make ``f`` a kernel: its ``_is_tile_kernel``
    (``runtime/jit.py``) wants at least one parameter annotated ``pl.Tensor[...]``, ``pl.Ptr[...]`` or
    a ``pl.DT_*`` dtype; any other function (no parameters, or none so annotated, as doc sketches
    ``def kernel(x, out): ...`` and host-side test functions under ``@pl.jit()``) stays a plain Python
    function. A kernel with some such parameters and an unannotated one is compiled, and the
    unannotated one is a located ParserTypeError, as the real parser's "missing type annotation"."""
    from pypto_pro.language.dtypes import DataType
    from pypto_pro.language.types import PtrType, TensorType, Tensor, Ptr

    for key, ann in getattr(f, "__annotations__", {}).items():
        if key == "return":
            continue
        if isinstance(ann, (TensorType, PtrType, DataType)) or ann is Tensor or ann is Ptr:
            return False
        if isinstance(ann, str):  # postponed (``from __future__ import annotations``): what it names
            if ann.split(".")[-1].startswith("DT_") or "Tensor[" in ann or "Ptr[" in ann:
                return False
            try:
                ann = eval(ann, getattr(f, "__globals__", {}))  # noqa: S307 - the user's own annotation
            except Exception:  # noqa: BLE001 - unresolvable here: compile it, the frontend reports it
                return False
            if isinstance(ann, (TensorType, PtrType, DataType)) or ann is Tensor or ann is Ptr:
                return False
    return True


def _pass_through(f: Callable) -> Callable:
    """A plain function, as the real pass-through (``functools.wraps``): tools that look for host-side
    test functions (``inspect.isfunction``) still find it."""
    import functools

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return f(*args, **kwargs)
    return wrapper
