"""The object ``@pl.jit`` returns: compiles on first launch, caches per signature, launches.

``kernel[stream, block_dim](*args)`` launches ``block_dim`` blocks; ``kernel(*args)`` one block;
the other bracket forms are in ``runtime/launch_config.py``. One compiled variant per
:class:`Specialization` (dynamic dims never recompile; ``pl.STATIC`` dims do, per value).
"""
from __future__ import annotations

import collections
import copy
import functools
import hashlib
import inspect
import os
from dataclasses import dataclass, field
from typing import Any, Callable

from pypto_pro.arch import resolve_arch
from pypto_pro.backends.sim.executor import SimExecutable
from pypto_pro.backends.sim.report import LaunchReport
from pypto_pro.errors import CompileError, LaunchError, PyptoError
from pypto_pro.frontend.params import signature_params
from pypto_pro.frontend.parser import parse_kernel
from pypto_pro.ir.nodes import GMRef, KernelIR, TensorParam, TileOp, walk_stmts
from pypto_pro.passes.manager import CompiledPrograms, PassOptions, run_passes, write_dumps
from pypto_pro.runtime.binding import bind_arguments
from pypto_pro.runtime.build_dir import kernel_build_dir, safe_symbol, write_launch_report
from pypto_pro.runtime.launch_config import (bind_datatype, check_block_dim, parse_launch_key,
                                             validate_datatype_context, validate_datatype_schema)
from pypto_pro.runtime.launch_memo import LaunchMemo

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
    memo: LaunchMemo = field(default_factory=LaunchMemo, compare=False)


class JitKernel:
    """A ``@pl.jit`` kernel: the real ``_TileJitKernel`` API (bracket launches, ``tilingkey_schema``,
    ``datatype_schema``, per-signature compile cache) plus ours (``compile``, ``emit``,
    ``options``, ``last_report``)."""

    __pypto_kernel__ = True

    def __init__(self, fn: Callable, *, arch: str | None = None, auto_mutex: bool = True, device: str = "sim",
                 check: str = "raise", build_dir: str | None = None, timing: bool = True, trace: str | None = None,
                 pipeline: Any = None, tiling_key: Any = None, name: str | None = None, datatype: Any = None,
                 compile_timeout: int | None = None, scope: dict[str, Any] | None = None):
        if arch is None:  # the emulated NPU's arch under pypto-pro run, as the real jit detects the device's
            from pypto_pro.runtime.npu_emulation import default_kernel_arch
            arch = default_kernel_arch()
        resolved = resolve_arch(arch, fn.__name__)  # UnknownArchError (a CompileError and a ValueError)
        if device != "sim":
            raise CompileError(f"unknown device {device!r} for kernel '{fn.__name__}'; this release runs on 'sim'")
        if check not in CHECK_MODES:
            raise CompileError(f"check must be one of {', '.join(CHECK_MODES)}, got {check!r}")
        if name is not None and (not isinstance(name, str) or not name):
            raise CompileError(f"name must be a non-empty string (it names the kernel; its C symbol and build "
                               f"directory are derived from it), got {name!r}", kind="value")
        if compile_timeout is not None and (not isinstance(compile_timeout, int) or compile_timeout <= 0):
            raise CompileError(f"compile_timeout must be a positive number of seconds, got {compile_timeout!r}",
                               kind="value")
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
        self._name = name
        self.compile_timeout = compile_timeout  # the real toolchain's limit; the simulator compiles in-process
        from pypto_pro.runtime.tilingkey import TilingKeySchema, check_name_conflicts
        self._tilingkey_schema = TilingKeySchema(tiling_key) if tiling_key is not None else None
        if self._tilingkey_schema is not None:
            check_name_conflicts(self._tilingkey_schema, fn, scope if scope is not None else dict(fn.__globals__))
        self._scope = scope  # where @pl.jit ran: TilingKey name checks, annotation names
        self._datatype_schema = validate_datatype_schema(datatype)
        validate_datatype_context(self._datatype_schema, fn,
                                  self._tilingkey_schema.field_names() if self._tilingkey_schema else [])
        self.build_dir = build_dir
        self._compiled_by_signature: dict[tuple, CompiledKernel] = {}
        self._kernel_def_by_static_signature: dict[tuple, KernelIR] = {}
        self._params = None
        self.last_report: LaunchReport | None = None
        functools.update_wrapper(self, fn)

    # ---- the real kernel object's attributes ----------------------------------------------------

    @property
    def name(self) -> str:
        return self._name or self.fn.__name__

    @property
    def tilingkey_schema(self):
        """The ``TilingKeySchema`` of ``@pl.jit(tiling_key=...)`` (None without one)."""
        return self._tilingkey_schema

    @property
    def tiling_key(self):  # ours (pypto-pro build)
        return self._tilingkey_schema

    @property
    def datatype_schema(self) -> dict[str, str] | None:
        """``@pl.jit(datatype=...)``: parameter name -> dtype variable name (None without one)."""
        return self._datatype_schema

    @property
    def _cache(self) -> dict[tuple, "CompiledKernel"]:  # ours, older name
        return self._compiled_by_signature

    # ---- compile -------------------------------------------------------------------------------

    def _compile(self, spec: "Specialization") -> CompiledKernel:
        fold = {**(spec.key or {}), **spec.datatype}
        kernel: KernelIR = parse_kernel(self.fn, self.arch, spec.constexprs, fold=fold or None,
                                        pipeline=self.pipeline, dtypes=spec.dtypes, shapes=spec.shapes,
                                        jit_scope=self._scope)
        self._kernel_def_by_static_signature[spec.cache_key(self.arch.name)] = kernel
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
        stored = frozenset(getattr(s.dst.param, "base", s.dst.param).name for p in compiled.programs.values()
                           for s in walk_stmts(p.body) if isinstance(s, TileOp) and isinstance(s.dst, GMRef))
        return CompiledKernel(compiled, exe, stored)

    def _specialization(self, constexprs: dict[str, Any], tiling_key: Any, dtypes: dict[str, Any] | None,
                        datatype: Any, static_shapes: dict | None) -> "Specialization":
        key = self._resolve_key(tiling_key)
        consts = bind_datatype(self._datatype_schema, datatype, self.name)
        shapes = {k: tuple(int(x) for x in v) for k, v in (static_shapes or {}).items()}
        params = self._signature_params() or []
        static = tuple((p.index, a, shapes[p.name][a]) for p in params if isinstance(p, TensorParam)
                       and p.type.needs_binding and p.name in shapes
                       for a in p.type.static_axes(len(shapes[p.name])))
        return Specialization(constexprs, key, self._resolve_dtypes(dtypes), consts, shapes, static)

    @_hide_internals
    def compile(self, tiling_key: dict[str, int] | None = None, dtypes: dict[str, Any] | None = None,
                datatype: dict[str, Any] | None = None, static_shapes: dict[str, Any] | None = None,
                **constexprs: Any) -> CompiledPrograms:
        """Compile without launching (for dumps and inspection); returns the lowered programs.
        ``dtypes`` binds the kernel's ``pl.DTypeVar``s by name (launches bind them from arguments);
        ``datatype`` is a launch's ``{param: pl.DT_*}`` dict; ``static_shapes`` gives the shape of
        each tensor parameter with ``pl.STATIC`` dims or ``...``."""
        return self._get(self._specialization(constexprs, tiling_key, dtypes, datatype, static_shapes)).programs

    def dtype_vars(self) -> list:
        """The ``pl.DTypeVar``s of the kernel's tensor annotations, in parameter order."""
        from pypto_pro.language.types import DTypeVar
        found: dict[str, Any] = {}
        for p in self._signature_params() or []:
            if isinstance(p, TensorParam) and isinstance(p.type.dtype, DTypeVar):
                found.setdefault(p.type.dtype.name, p.type.dtype)
        return list(found.values())

    def _resolve_dtypes(self, given: dict[str, Any] | None) -> dict[str, Any]:
        variables = {v.name: v for v in self.dtype_vars()}
        given = dict(given or {})
        for name, dt in given.items():
            if name not in variables:
                raise LaunchError(f"{self.name} has no dtype variable {name!r}", kind="value")
            if dt not in variables[name].choices:
                raise LaunchError(f"{self.name}: {name}={dt!r} is not one of {list(variables[name].choices)}",
                                  kind="value")
        missing = [n for n in variables if n not in given]
        if missing:
            raise LaunchError(f"{self.name}: bind dtype variable(s) {', '.join(missing)} (dtypes={{...}})",
                              kind="value")
        return given

    @_hide_internals
    def emit(self, tiling_key: dict[str, int] | None = None, cache: Any = None, dtypes: dict[str, Any] | None = None,
             datatype: dict[str, Any] | None = None, static_shapes: dict[str, Any] | None = None, **constexprs: Any):
        """Emit the PTO-ISA C++ of one specialisation into the on-disk build cache (and the build
        directory); returns the cache entry's path. Builds the shared object too when the CANN
        toolchain is present (``pypto_pro.backends.pto.toolchain``)."""
        from pypto_pro.runtime.build_cache import BuildCache, cache_key
        spec = self._specialization(constexprs, tiling_key, dtypes, datatype, static_shapes)
        entry = self._get(spec)
        key, all_dtypes = spec.key, {**spec.dtypes, **spec.datatype}
        cache = cache if cache is not None else BuildCache()
        signature = repr([(p.name, getattr(p, "type", getattr(p, "ty", None))) for p in entry.programs.kernel.params])
        ck = cache_key(self.fn, signature=signature + repr(sorted((k, v.name) for k, v in all_dtypes.items())),
                       tiling_key=key, arch=self.arch.name,
                       extra={"constexprs": {k: repr(v) for k, v in constexprs.items()}, "auto_mutex": self.auto_mutex,
                              # the lowered programs themselves: values a kernel captures from its enclosing
                              # scope (a factory's op, a tile type) are not in its source text
                              "programs": _programs_digest(entry.programs),
                              "pipeline": repr(self.pipeline), "toolchain": _toolchain_version(),
                              "static": repr(spec.static)})

        symbol = variant_symbol(self.name, self._tilingkey_schema.pack(key) if key is not None else None, all_dtypes)

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
        schema = self._tilingkey_schema
        if schema is None:
            if given is not None:
                raise LaunchError(f"{self.name} has no tiling_key; launch it as {self.name}[stream, block_dim](...)",
                                  kind="value")
            return None
        if given is None:
            fields = ", ".join(f'"{n}": ...' for n in schema.field_names())
            raise LaunchError(f"{self.name} is specialised by {schema.cls_name}: launch it as "
                              f"{self.name}[stream, block_dim, {{{fields}}}](...)", kind="value")
        try:
            schema.validate_concrete(given)
        except LaunchError as exc:
            raise LaunchError(f"{self.name}: {exc}", kind="value") from None
        return schema.canonical(given)

    def _get(self, spec: "Specialization") -> CompiledKernel:
        cache_key = spec.cache_key(self.arch.name)
        entry = self._compiled_by_signature.get(cache_key)
        if entry is None:
            entry = self._compile(spec)
            self._compiled_by_signature[cache_key] = entry
        return entry

    def _signature_params(self):
        """Parameter kinds from the annotations alone, so argument errors are reported before
        compiling (None if an annotation is wrong: compiling reports it, located)."""
        if self._params is None:
            self._params = signature_params(self.fn, self._scope)
        return self._params

    def options(self, *, check: str | None = None, timing: bool | None = None, trace: str | None = None) -> "JitKernel":
        """The same kernel (sharing its compile cache) with launch-time overrides: ``check`` mode,
        ``timing`` on/off, ``trace`` directory for the timeline files."""
        if check is not None and check not in CHECK_MODES:
            raise LaunchError(f"check must be one of {', '.join(CHECK_MODES)}, got {check!r}", kind="value")
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
        from pypto_pro.ir.storage import TilingParam
        from pypto_pro.ir.views import PtrParam
        unsupported = [p.name for p in params if isinstance(p, (TilingParam, PtrParam))]
        if unsupported:
            raise LaunchError(f"{self.name}: pl.Ptr and tiling parameters ({', '.join(unsupported)}) do not run on the "
                              "NPU path yet; pass CPU tensors to run on the simulator", kind="runtime")
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
        """``kernel[block_dim]``, ``kernel[stream, block_dim]``, ``kernel[stream, block_dim, tilingkey]``,
        ``kernel[stream, block_dim, datatype]`` (datatype schema, no tiling key) and
        ``kernel[stream, block_dim, tilingkey, datatype]``: a launcher taking the kernel's arguments."""
        return self._launcher(config)

    @_hide_internals
    def _launcher(self, config: Any) -> Callable[..., LaunchReport]:
        launch = parse_launch_key(config, self._tilingkey_schema is not None, self._datatype_schema is not None,
                                  self.name)
        block_dim = check_block_dim(launch.block_dim, self.name)
        key = self._resolve_key(launch.tiling_key)
        return functools.partial(self._launch, block_dim, key, launch.datatype)

    @_hide_internals
    def __call__(self, *args: Any, **kwargs: Any) -> LaunchReport:
        """A launch of one block on the default stream (kernels without compile-time specialisation)."""
        if self._tilingkey_schema is not None or self._datatype_schema is not None:
            raise LaunchError(f"Kernel '{self.name}' has compile-time specialization and cannot be called directly; "
                              "use bracket-launch syntax", kind="value")
        return self._launch(1, None, None, *args, **kwargs)

    @_hide_internals
    def _launch(self, block_dim: int, key: dict[str, int] | None, datatype: Any, *args: Any,
                **kwargs: Any) -> LaunchReport:
        params = self._signature_params()
        if params is None:
            self._get(Specialization({}, key, {}, {}, {}, ()))  # raises the located CompileError of the annotation
            raise AssertionError("unreachable")
        consts = bind_datatype(self._datatype_schema, datatype, self.name)
        from pypto_pro.runtime import npu_launch
        if any(npu_launch.is_npu_tensor(a) for a in (*args, *kwargs.values())):
            return self._launch_npu(block_dim, key, params, args, kwargs)
        bound = bind_arguments(self.name, params, args, kwargs, inspect.signature(self.fn), defer_scalars=True)
        spec = Specialization(bound.constexprs, key, bound.dtypes, consts, bound.shapes, bound.static_signature)
        entry = self._get(spec)
        if bound.scalar_error is not None:  # after compiling, as the real launcher checks scalars
            raise bound.scalar_error
        for p in params:
            arr = bound.arrays[p.index]
            if p.name in entry.stored_params and arr is not None and not arr.flags.writeable:
                raise LaunchError(f"{self.name}: output argument '{p.name}' is read-only", kind="value")
        check = self.check if self._check_explicit else os.environ.get("PYPTO_PRO_CHECK", self.check)
        if check not in CHECK_MODES:
            raise LaunchError(f"PYPTO_PRO_CHECK must be one of {', '.join(CHECK_MODES)}, got {check!r}", kind="value")
        trace_dir = self.trace or os.environ.get("PYPTO_PRO_TRACE")
        events: list | None = [] if trace_dir and self.timing else None
        def run(dispatched=None) -> LaunchReport:
            return entry.executable.launch(block_dim, bound.arrays, bound.scalars, timing=self.timing, check=check,
                                           trace=events, dispatched=dispatched)
        if events is None:  # an identical relaunch of a slow launch gives the same bytes (launch_memo)
            report = entry.memo.launch(run, block_dim, bound.arrays, bound.scalars, (self.timing, check))
        else:
            report = run()
        if events is not None:
            from pypto_pro.backends.sim.trace import write_trace
            report.trace_files = write_trace(trace_dir, self.name, report, events, entry.programs)
        self.last_report = report
        LAUNCH_LOG.append(report)
        write_launch_report(kernel_build_dir(self.name, self.build_dir), report)
        return report


@dataclass(frozen=True)
class Specialization:
    """Everything one compiled variant is specialised on: ``pl.Constexpr`` values, the tiling key,
    ``pl.DTypeVar`` bindings, ``datatype=`` variables, and the launch shapes of ``pl.STATIC`` /
    ``...`` dims (``static``: (param index, axis, value), as the real runtime keys its cache)."""

    constexprs: dict[str, Any]
    key: dict[str, int] | None
    dtypes: dict[str, Any]
    datatype: dict[str, Any]
    shapes: dict[str, tuple[int, ...]]
    static: tuple

    def cache_key(self, arch: str) -> tuple:
        return (arch, tuple(sorted((k, _freeze(v)) for k, v in self.constexprs.items())),
                tuple(sorted(self.key.items())) if self.key else (),
                tuple(sorted((k, v.name) for k, v in self.dtypes.items())),
                tuple(sorted((k, v.name) for k, v in self.datatype.items())), self.static)


def variant_symbol(name: str, code: int | None, dtypes: dict[str, Any]) -> str:
    """C symbol of one specialisation: ``add`` / ``add_5`` / ``add_5_T_fp16`` (unique per variant)."""
    parts = [safe_symbol(name)] + ([str(code)] if code is not None else [])
    parts += [f"{k}_{v.name[3:].lower()}" for k, v in sorted(dtypes.items())]
    return "_".join(parts)


def _programs_digest(programs: CompiledPrograms) -> str:
    """A digest of the lowered per-engine programs (what the C++ emitter reads)."""
    text = "\n".join(f"{k}\n{v}" for k, v in sorted(programs.dumps.items()) if k.startswith("lowered."))
    return hashlib.sha256(text.encode()).hexdigest()


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
