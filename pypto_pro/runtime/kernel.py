"""The object ``@pl.jit`` returns: compiles on first launch, caches per signature, launches.

``kernel[stream, block_dim](*args)`` launches ``block_dim`` blocks; ``kernel(*args)`` one block.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable

from pypto_pro.arch import resolve_arch
import collections
import copy
import numbers
import os

from pypto_pro.backends.sim.executor import SimExecutable
from pypto_pro.backends.sim.report import LaunchReport
from pypto_pro.errors import CompileError, LaunchError, PyptoError
from pypto_pro.frontend.parser import parse_kernel
from pypto_pro.ir.nodes import GMRef, KernelIR, TileOp, walk_stmts
from pypto_pro.passes.manager import CompiledPrograms, PassOptions, run_passes, write_dumps
from pypto_pro.runtime.binding import bind_arguments
from pypto_pro.runtime.build_dir import kernel_build_dir

CHECK_MODES = ("raise", "warn", "off")
LAUNCH_LOG: "collections.deque[LaunchReport]" = collections.deque(maxlen=64)  # recent reports (CLI)


def _hide_internals(fn: Callable) -> Callable:
    """Re-raise our errors without the compiler's internal frames in the traceback."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except PyptoError as exc:
            raise exc.with_traceback(None) from None
    return wrapper


@dataclass
class CompiledKernel:
    programs: CompiledPrograms
    executable: SimExecutable
    stored_params: frozenset[str]


class JitKernel:
    """A ``@pl.jit`` kernel."""

    __pypto_kernel__ = True

    def __init__(self, fn: Callable, *, arch: str | None, auto_mutex: bool, device: str, check: str,
                 build_dir: str | None, timing: bool = True, trace: str | None = None, pipeline: Any = None,
                 tiling_key: Any = None):
        resolved = resolve_arch(arch, fn.__name__)  # UnknownArchError (a CompileError and a ValueError)
        if device != "sim":
            raise CompileError(f"unknown device {device!r} for kernel '{fn.__name__}'; this release runs on 'sim'")
        if check not in CHECK_MODES:
            raise CompileError(f"check must be one of {', '.join(CHECK_MODES)}, got {check!r}")
        self.fn = fn
        self.arch = resolved
        self.auto_mutex = auto_mutex
        self.check = check
        self._check_explicit = False  # options(check=...) wins over $PYPTO_PRO_CHECK
        self.timing = timing
        self.trace = trace
        from pypto_pro.language.pipeline import PipelineConfig
        if pipeline is not None and not isinstance(pipeline, PipelineConfig):
            raise CompileError(f"pipeline must be a pl.pipeline.PipelineConfig, got {pipeline!r}")
        self.pipeline = pipeline
        from pypto_pro.runtime.tilingkey import TilingKeySchema
        self.tiling_key = TilingKeySchema(tiling_key) if tiling_key is not None else None
        self.build_dir = build_dir
        self._cache: dict[tuple, CompiledKernel] = {}
        self._params = None
        self.last_report: LaunchReport | None = None
        functools.update_wrapper(self, fn)

    # ---- compile -------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.fn.__name__

    def _compile(self, constexprs: dict[str, Any], key: dict[str, int] | None = None,
                 dtypes: dict[str, Any] | None = None) -> CompiledKernel:
        kernel: KernelIR = parse_kernel(self.fn, self.arch, constexprs, fold=key, pipeline=self.pipeline,
                                        dtypes=dtypes)
        directory = kernel_build_dir(self.name, self.build_dir)
        if kernel.generated is not None:
            from pypto_pro.frontend.pipeline_file import render
            from pypto_pro.frontend.scope import Scope, closure_vars
            directory.mkdir(parents=True, exist_ok=True)
            (directory / "pipeline_generated.py").write_text(
                render(self.fn, kernel.generated, Scope(self.fn.__globals__, closure_vars(self.fn)), self.arch,
                       self.auto_mutex))
        compiled = run_passes(kernel, PassOptions(self.arch, self.auto_mutex))
        exe = SimExecutable(self.name, compiled.programs, self.arch)
        write_dumps(compiled.dumps, directory)
        exe.write_sources(directory)
        stored = frozenset(s.dst.param.name for p in compiled.programs.values() for s in walk_stmts(p.body)
                           if isinstance(s, TileOp) and isinstance(s.dst, GMRef))
        return CompiledKernel(compiled, exe, stored)

    @_hide_internals
    def compile(self, tiling_key: dict[str, int] | None = None, dtypes: dict[str, Any] | None = None,
                **constexprs: Any) -> CompiledPrograms:
        """Compile without launching (for dumps and inspection); returns the lowered programs.
        ``dtypes`` binds the kernel's ``pl.DTypeVar``s by name (launches bind them from arguments)."""
        return self._get(constexprs, self._resolve_key(tiling_key), self._resolve_dtypes(dtypes)).programs

    def dtype_vars(self) -> list:
        """The ``pl.DTypeVar``s of the kernel's tensor annotations, in parameter order."""
        import inspect
        from pypto_pro.frontend.scope import closure_vars
        from pypto_pro.language.types import DTypeVar, TensorType
        try:
            hints = inspect.get_annotations(self.fn, eval_str=True, locals=closure_vars(self.fn))
        except Exception:
            return []
        found: dict[str, Any] = {}
        for ann in hints.values():
            if isinstance(ann, TensorType) and isinstance(ann.dtype, DTypeVar):
                found.setdefault(ann.dtype.name, ann.dtype)
        return list(found.values())

    def _resolve_dtypes(self, given: dict[str, Any] | None) -> dict[str, Any]:
        variables = {v.name: v for v in self.dtype_vars()}
        given = dict(given or {})
        for name, dt in given.items():
            if name not in variables:
                raise LaunchError(f"{self.name} has no dtype variable {name!r}")
            if dt not in variables[name].choices:
                raise LaunchError(f"{self.name}: {name}={dt!r} is not one of {list(variables[name].choices)}")
        missing = [n for n in variables if n not in given]
        if missing:
            raise LaunchError(f"{self.name}: bind dtype variable(s) {', '.join(missing)} (dtypes={{...}})")
        return given

    @_hide_internals
    def emit(self, tiling_key: dict[str, int] | None = None, cache: Any = None, dtypes: dict[str, Any] | None = None,
             **constexprs: Any):
        """Emit the PTO-ISA C++ of one specialisation into the on-disk build cache (and the build
        directory); returns the cache entry's path. Builds the shared object too when the CANN
        toolchain is present (``pypto_pro.backends.pto.toolchain``)."""
        from pypto_pro.runtime.build_cache import BuildCache, cache_key
        key = self._resolve_key(tiling_key)
        dtypes = self._resolve_dtypes(dtypes)
        entry = self._get(constexprs, key, dtypes)
        cache = cache if cache is not None else BuildCache()
        signature = repr([(p.name, getattr(p, "type", getattr(p, "ty", None))) for p in entry.programs.kernel.params])
        ck = cache_key(self.fn, signature=signature + repr(sorted((k, v.name) for k, v in dtypes.items())),
                       tiling_key=key, arch=self.arch.name,
                       extra={"constexprs": {k: repr(v) for k, v in constexprs.items()}, "auto_mutex": self.auto_mutex,
                              "pipeline": repr(self.pipeline), "toolchain": _toolchain_version()})

        symbol = variant_symbol(self.name, self.tiling_key.encode(key) if key is not None else None, dtypes)

        def build(tmp) -> None:
            from pypto_pro.backends.pto.emitter import emit_kernel
            for name, text in emit_kernel(entry.programs.programs, symbol, self.arch).items():
                (tmp / name).write_text(text)
            try:
                from pypto_pro.backends.pto import toolchain
            except ImportError:
                return
            toolchain.maybe_build(tmp, symbol, self.arch)

        path = cache.get_or_build(ck, build)
        directory = kernel_build_dir(self.name, self.build_dir)
        directory.mkdir(parents=True, exist_ok=True)
        for f in path.iterdir():
            if f.suffix in (".cpp", ".h"):
                (directory / f.name).write_text(f.read_text())
        return path

    def _resolve_key(self, given: Any) -> dict[str, int] | None:
        if self.tiling_key is None:
            if given is not None:
                raise LaunchError(f"{self.name} has no tiling_key; launch it as {self.name}[stream, block_dim](...)")
            return None
        if given is None:
            fields = ", ".join(f'"{f.name}": ...' for f in self.tiling_key.fields)
            raise LaunchError(f"{self.name} is specialised by {self.tiling_key.name}: launch it as "
                              f"{self.name}[stream, block_dim, {{{fields}}}](...)")
        return self.tiling_key.resolve(given, self.name)

    def _get(self, constexprs: dict[str, Any], key: dict[str, int] | None = None,
             dtypes: dict[str, Any] | None = None) -> CompiledKernel:
        cache_key = (self.arch.name, tuple(sorted((k, _freeze(v)) for k, v in constexprs.items())),
                     tuple(sorted(key.items())) if key else (),
                     tuple(sorted((k, v.name) for k, v in (dtypes or {}).items())))
        entry = self._cache.get(cache_key)
        if entry is None:
            entry = self._compile(constexprs, key, dtypes)
            self._cache[cache_key] = entry
        return entry

    def _signature_params(self):
        if self._params is None:
            # Parameter kinds come from the annotations, which parse_kernel validates; a cheap parse
            # of the signature alone lets argument errors be reported before compiling.
            import inspect
            from pypto_pro.ir.nodes import ScalarParam, TensorParam
            from pypto_pro.language.types import Constexpr, TensorType
            from pypto_pro.frontend.scope import closure_vars
            params = []
            try:
                hints = inspect.get_annotations(self.fn, eval_str=True, locals=closure_vars(self.fn))
            except Exception:
                return None  # parse_kernel reports the bad annotation with its location
            for i, name in enumerate(inspect.signature(self.fn).parameters):
                ann = hints.get(name)
                if isinstance(ann, TensorType):
                    params.append(TensorParam(name, ann, i))
                elif ann in (int, float):
                    params.append(ScalarParam(name, ann.__name__, i))
                elif ann is Constexpr:
                    params.append(ScalarParam(name, "constexpr", i))
                else:
                    return None  # parse_kernel reports the bad annotation with its location
            self._params = params
        return self._params

    def options(self, *, check: str | None = None, timing: bool | None = None, trace: str | None = None) -> "JitKernel":
        """The same kernel (sharing its compile cache) with launch-time overrides: ``check`` mode,
        ``timing`` on/off, ``trace`` directory for the timeline files."""
        if check is not None and check not in CHECK_MODES:
            raise LaunchError(f"check must be one of {', '.join(CHECK_MODES)}, got {check!r}")
        view = copy.copy(self)
        view.check = check if check is not None else self.check
        view._check_explicit = self._check_explicit or check is not None
        view.timing = timing if timing is not None else self.timing
        view.trace = trace if trace is not None else self.trace
        return view

    # ---- launch --------------------------------------------------------------------------------

    def _launch_npu(self, block_dim: int, key: dict[str, int] | None, params, args: tuple, kwargs: dict):
        """torch_npu tensors: build the shared object with the CANN toolchain and launch it."""
        from pypto_pro.backends.pto import toolchain
        from pypto_pro.runtime import npu_launch
        if not toolchain.available():
            raise LaunchError(f"{self.name}: arguments are on an NPU but the CANN toolkit is not available "
                              "(ASCEND_HOME_PATH and bisheng on PATH); pass CPU tensors to run on the simulator")
        values = dict(zip((p.name for p in params), args), **kwargs)
        from pypto_pro.ir.nodes import TensorParam
        dtypes: dict[str, Any] = {}
        tensors: dict[str, tuple[int, tuple]] = {}
        from pypto_pro.language.dtypes import ALL_DTYPES
        from pypto_pro.language.types import DTypeVar
        by_torch = {f"torch.{d.np_dtype.name}": d for d in ALL_DTYPES}
        for p in params:
            v = values.get(p.name)
            if isinstance(p, TensorParam):
                if not npu_launch.is_npu_tensor(v) or not v.is_contiguous():
                    raise LaunchError(f"{self.name}: argument '{p.name}' must be a contiguous NPU tensor")
                got, want = by_torch.get(str(v.dtype)), p.type.dtype
                if isinstance(want, DTypeVar):
                    want = dtypes.setdefault(want.name, got) if got in want.choices else None
                if got is None or got != want or v.dim() != p.type.rank:
                    raise LaunchError(f"{self.name}: argument '{p.name}' is {v.dtype} of rank {v.dim()}; expected "
                                      f"{p.type!r}")
                tensors[p.name] = (v.data_ptr(), tuple(v.shape))
        scalars = {p.name: values[p.name] for p in params if not isinstance(p, TensorParam)}
        entry = self.emit(tiling_key=key, dtypes=dtypes)
        symbol = variant_symbol(self.name, self.tiling_key.encode(key) if key is not None else None, dtypes)
        import torch  # torch_npu registers the device and its streams
        stream = torch.npu.current_stream().npu_stream  # type: ignore[attr-defined]
        npu_launch.launch(entry / f"lib{symbol}.so", symbol, (entry / "launcher.cpp").read_text(), block_dim,
                          stream, tensors, scalars)
        report = LaunchReport(self.name, self.arch.name, self.arch.clock_mhz.value, block_dim, 0, 0, timed=False)
        self.last_report = report
        return report

    def __getitem__(self, config: Any) -> Callable[..., LaunchReport]:
        if not isinstance(config, tuple):
            config = (config,)
        if len(config) < 2:
            raise LaunchError(f"{self.name}[stream, block_dim](...): give a stream (or None) and a block count")
        if len(config) > 3:
            raise LaunchError(f"{self.name}[stream, block_dim, tiling_key]: unexpected extra launch settings "
                              f"{config[3:]!r}")
        block_dim = config[1]
        key = config[2] if len(config) == 3 else None
        return functools.partial(self._launch, block_dim, key)

    def __call__(self, *args: Any, **kwargs: Any) -> LaunchReport:
        return self._launch(1, None, *args, **kwargs)

    @_hide_internals
    def _launch(self, block_dim: Any, tiling: Any, *args: Any, **kwargs: Any) -> LaunchReport:
        if isinstance(block_dim, bool) or not isinstance(block_dim, numbers.Integral) or block_dim < 1:
            raise LaunchError(f"{self.name}: block_dim must be a positive int, got {block_dim!r}")
        params = self._signature_params()
        if params is None:
            self._get({})  # raises the located CompileError for the bad annotation
            raise AssertionError("unreachable")
        key = self._resolve_key(tiling)
        from pypto_pro.runtime import npu_launch
        if any(npu_launch.is_npu_tensor(a) for a in (*args, *kwargs.values())):
            return self._launch_npu(block_dim, key, params, args, kwargs)
        bound = bind_arguments(self.name, params, args, kwargs)
        entry = self._get(bound.constexprs, key, bound.dtypes)
        for p in params:
            arr = bound.arrays[p.index]
            if p.name in entry.stored_params and arr is not None and not arr.flags.writeable:
                raise LaunchError(f"{self.name}: output argument '{p.name}' is read-only")
        check = self.check if self._check_explicit else os.environ.get("PYPTO_PRO_CHECK", self.check)
        if check not in CHECK_MODES:
            raise LaunchError(f"PYPTO_PRO_CHECK must be one of {', '.join(CHECK_MODES)}, got {check!r}")
        trace_dir = self.trace or os.environ.get("PYPTO_PRO_TRACE")
        events: list | None = [] if trace_dir and self.timing else None
        block_dim = int(block_dim)
        report = entry.executable.launch(block_dim, bound.arrays, bound.scalars, timing=self.timing, check=check,
                                         trace=events)
        if events is not None:
            from pypto_pro.backends.sim.trace import write_trace
            report.trace_files = write_trace(trace_dir, self.name, report, events, entry.programs)
        self.last_report = report
        LAUNCH_LOG.append(report)
        return report


def variant_symbol(name: str, code: int | None, dtypes: dict[str, Any]) -> str:
    """C symbol of one specialisation: ``add`` / ``add_5`` / ``add_5_T_fp16`` (unique per variant)."""
    parts = [name] + ([str(code)] if code is not None else [])
    parts += [f"{k}_{v.name[3:].lower()}" for k, v in sorted(dtypes.items())]
    return "_".join(parts)


def _toolchain_version() -> str:
    from pypto_pro.backends.pto.toolchain import version
    return version()


def _freeze(v: Any) -> Any:
    if isinstance(v, list):
        return tuple(_freeze(x) for x in v)
    try:
        hash(v)
        return v
    except TypeError:
        return repr(v)
