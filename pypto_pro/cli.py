"""The ``pypto-pro`` command.

    pypto-pro run [--arch a5] [--npu auto] SCRIPT [args...]   run an NPU script (torch_npu, pypto.options)
    pypto-pro run [--arch a5] [--npu auto] -m MODULE [args...] unchanged on the simulator, as python would
                                                   (-m pytest tests/ for a test suite); see docs/npu_scripts.md
    pypto-pro trace SCRIPT [--out DIR] [args...]   run a script; write each launch's timeline files
                                                   (arguments it does not know are passed to the script)
    pypto-pro build FILE.py::KERNEL [--arch a5] [--out dist/]
                                                   binary release: every valid TilingKey's kernel*.cpp,
                                                   launchers, a C header with the key encoding, a manifest
    pypto-pro passes                               list the compiler's stages in order
    pypto-pro arch [NAME]                          print a machine model with the source of each number
                                                   (NAME: a2, a3, a5, a2a3 or a 950 variant such as 950DT_9581)
"""
from __future__ import annotations

import argparse
import os
import runpy
import sys
from pathlib import Path

from pypto_pro.errors import PyptoError


RUN_USAGE = "usage: pypto-pro run [--arch NAME] [--npu auto|emulate|real] (SCRIPT | -m MODULE) [args ...]"
RUN_HELP = f"""{RUN_USAGE}

Run a script or module written for an NPU (import torch_npu, device="npu:0", .npu(), torch.npu.synchronize(),
@pypto.options(...)) unchanged on the simulator: NPU tensors are host tensors and kernels run on the simulator.
Everything after SCRIPT or -m MODULE goes to it, as with python.

  --arch NAME   the emulated NPU: a5 (Ascend950PR_9589, default), a2a3 or a2 (Ascend910B1), a3 (Ascend910_9391);
                also $PYPTO_PRO_NPU_ARCH. Kernels without pl.jit(arch=...) compile for its arch.
  --npu MODE    auto (default): emulate torch_npu / pypto unless a real one is importable;
                emulate: always; real: never (plain python)
"""


def _parse_run(argv: list[str]) -> tuple[dict, str | None]:
    """Options of ``pypto-pro run`` (before the script, as with python); an error message or None."""
    opts: dict = {"arch": None, "npu": "auto", "script": None, "module": None, "args": []}
    i = 0
    while i < len(argv):
        a = argv[i]
        name, eq, value = a.partition("=")
        if a in ("-h", "--help"):
            opts["help"] = True
            return opts, None
        if name in ("--arch", "--npu"):
            if not eq:
                if i + 1 >= len(argv):
                    return opts, f"{name} needs a value"
                i, value = i + 1, argv[i + 1]
            opts[name[2:]] = value
        elif a == "-m" or (a.startswith("-m") and not a.startswith("--")):
            module = a[2:] or (argv[i + 1] if i + 1 < len(argv) else "")
            if not module:
                return opts, "-m needs a module name"
            opts["module"], opts["args"] = module, argv[i + (1 if a[2:] else 2):]
            return opts, None
        elif a.startswith("-"):
            return opts, f"unknown option {a!r} (options of the script go after it)"
        else:
            opts["script"], opts["args"] = a, argv[i + 1:]
            return opts, None
        i += 1
    return opts, "give a SCRIPT or -m MODULE"


def _run(argv: list[str]) -> int:
    from pypto_pro.runtime import npu_emulation as emulation
    from pypto_pro.runtime.npu_emulation import program
    opts, error = _parse_run(argv)
    if opts.get("help"):
        print(RUN_HELP)
        return 0
    arch = opts["arch"] or os.environ.get(emulation.ARCH_ENV) or "a5"
    try:
        emulation.devices.lookup(arch)
        what = emulation.plan(opts["npu"])
    except ValueError as exc:
        error = error or str(exc)
    if error:
        print(f"{RUN_USAGE}\npypto-pro run: error: {error}", file=sys.stderr)
        return 2
    script = opts["script"]
    if script is not None and not os.path.isfile(script):
        print(f"pypto-pro run: can't open file {os.path.abspath(script)!r}: [Errno 2] No such file or directory",
              file=sys.stderr)
        return 2
    if what.note:
        print(f"pypto-pro run: {what.note}", file=sys.stderr)
    device = emulation.install(what, arch)
    if what.torch_npu or what.pypto:
        os.environ.update(emulation.environment_for_children(what, device, arch))
    return program.run(script, opts["module"], opts["args"])


def _trace(args: argparse.Namespace) -> int:
    from pypto_pro.runtime import kernel as kernel_mod

    script = Path(args.script)
    if not script.is_file():
        print(f"pypto-pro trace: no such script: {script}", file=sys.stderr)
        return 2
    out = Path(args.out or Path("traces") / script.stem).resolve()
    saved = os.environ.get("PYPTO_PRO_TRACE"), sys.argv, list(sys.path)
    os.environ["PYPTO_PRO_TRACE"] = str(out)
    kernel_mod.LAUNCH_LOG.clear()
    sys.argv = [str(script), *args.script_args]
    sys.path.insert(0, str(script.parent.resolve()))
    try:
        runpy.run_path(str(script), run_name="__main__")
    except PyptoError as exc:
        print(f"pypto-pro trace: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    except SystemExit as exc:
        if exc.code not in (None, 0):
            return int(exc.code) if isinstance(exc.code, int) else 1
    finally:  # the CLI can run in-process (tests, notebooks): leave the caller's state as it was
        trace_env, sys.argv, sys.path[:] = saved
        if trace_env is None:
            os.environ.pop("PYPTO_PRO_TRACE", None)
        else:
            os.environ["PYPTO_PRO_TRACE"] = trace_env
    if not kernel_mod.LAUNCH_LOG:
        print("pypto-pro trace: the script launched no kernel", file=sys.stderr)
        return 1
    for report in kernel_mod.LAUNCH_LOG:
        print(report.summary())
        for f in report.trace_files:
            print(f"  {f}")
    return 0


def _build(args: argparse.Namespace) -> int:
    import importlib.util
    import json
    import shutil

    from pypto_pro.runtime.kernel import JitKernel

    target = args.target
    if "::" not in target:
        print("pypto-pro build: give FILE.py::KERNEL", file=sys.stderr)
        return 2
    path, name = target.split("::", 1)
    if not Path(path).is_file():
        print(f"pypto-pro build: no such file: {path}", file=sys.stderr)
        return 2
    sys.path.insert(0, str(Path(path).resolve().parent))
    spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    except PyptoError as exc:
        print(f"pypto-pro build: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    kernel = getattr(module, name, None)
    if not isinstance(kernel, JitKernel):
        print(f"pypto-pro build: {name!r} in {path} is not a @pl.jit kernel", file=sys.stderr)
        return 2
    if args.arch:
        kernel = JitKernel(kernel.fn, arch=args.arch, auto_mutex=kernel.auto_mutex, device="sim", check=kernel.check,
                           build_dir=kernel.build_dir, pipeline=kernel.pipeline,
                           tiling_key=kernel.tiling_key.cls if kernel.tiling_key else None)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    import itertools

    from pypto_pro.runtime.kernel import variant_symbol
    keys = list(kernel.tiling_key.combinations()) if kernel.tiling_key else [None]
    dvars = kernel.dtype_vars()
    dtype_sets = [dict(zip((v.name for v in dvars), combo)) for combo in itertools.product(*(v.choices for v in dvars))]
    manifest = {"kernel": kernel.name, "arch": kernel.arch.name, "source": str(Path(path).resolve()),
                "tiling_key": None, "dtype_vars": {v.name: [c.name for c in v.choices] for v in dvars}, "variants": []}
    try:
        for dtypes in dtype_sets:
            for key in keys:
                entry = kernel.emit(tiling_key=key, dtypes=dtypes)
                code = kernel.tiling_key.encode(key) if key else None
                symbol = variant_symbol(kernel.name, code, dtypes)
                suffix = symbol[len(kernel.name):]
                files = []
                for f in sorted(entry.iterdir()):
                    if f.name == "manifest.json":
                        continue
                    dest = out / f"{f.stem}{suffix}{f.suffix}"
                    shutil.copyfile(f, dest)
                    files.append(dest.name)
                manifest["variants"].append({"tiling_key": key, "code": code,
                                             "dtypes": {k: v.name for k, v in dtypes.items()}, "symbol": symbol,
                                             "files": files, "cache": str(entry)})
    except PyptoError as exc:
        print(f"pypto-pro build: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    if kernel.tiling_key:
        schema = kernel.tiling_key
        manifest["tiling_key"] = {"class": schema.name, "bits": schema.bits,
                                  "fields": [{"name": f.name, "bits": f.bits, "values": list(f.values),
                                              "shift": f.offset} for f in schema.fields]}
        header = schema.header(kernel.name)
        first = manifest["variants"][0]
        launcher = (out / next(f for f in first["files"] if f.startswith("launcher"))).read_text()
        for dtypes in dtype_sets:
            names = {k: d.name for k, d in dtypes.items()}
            variants = [v for v in manifest["variants"] if v["dtypes"] == names]
            header += _selector(variant_symbol(kernel.name, None, dtypes), variants, launcher)
        (out / f"{kernel.name}_tiling.h").write_text(header)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2))
    print(f"built {len(manifest['variants'])} variant(s) of {kernel.name} for {kernel.arch.name} into {out}")
    return 0


def _selector(group: str, variants: list[dict], launcher: str) -> str:
    """C declarations of one dtype variant's launchers and a selector from key code to launcher
    (the launcher's parameter list is taken from the emitted launcher)."""
    import re
    found = re.search(r'extern "C" int launch_\w+\(([^)]*)\)', launcher)
    params = found.group(1) if found else "void"
    lines = ["", "#ifdef __cplusplus", 'extern "C" {', "#endif",
             f"typedef int (*{group}_launch_fn)({params});"]
    lines += [f"int launch_{v['symbol']}({params});" for v in variants]
    lines.append(f"static inline {group}_launch_fn {group}_select(uint64_t code) {{")
    lines.append("    switch (code) {")
    lines += [f"    case {v['code']}: return launch_{v['symbol']};" for v in variants]
    lines += ["    default: return 0;  /* not a valid key */", "    }", "}", "#ifdef __cplusplus", "}", "#endif", ""]
    return "\n".join(lines)


def _passes(_args: argparse.Namespace) -> int:
    from pypto_pro.passes.manager import pass_names
    for i, name in enumerate(pass_names()):
        print(f"{i:2d}  {name}")
    return 0


def _arch(args: argparse.Namespace) -> int:
    from pypto_pro.arch import A2A3, A5, A5_VARIANTS, DEFAULT_VARIANT, UnknownArchError, resolve_arch
    from pypto_pro.arch.describe import describe
    if args.name:
        try:
            models = [resolve_arch(args.name)]
        except UnknownArchError as exc:
            print(f"pypto-pro arch: {exc.bare_message}", file=sys.stderr)
            return 2
    else:
        models = [A2A3, A5]
    for a in models:
        print(describe(a))
        print()
    if not args.name:
        print(f"Ascend 950 variants (arch=NAME; 'a5' is {DEFAULT_VARIANT}, or the one $PYPTO_PRO_SOC names):")
        for name, v in A5_VARIANTS.items():
            print(f"  {name:12} {int(v.cube_cores.value):3d} AI cores, {v.vector_cores:3d} vector cores, "
                  f"GM cap {v.gm_bandwidth_cap_gb_s.value:g} GB/s")  # type: ignore[union-attr]
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["run"]:  # python's own command line, not argparse: everything after the script is its
        return _run(argv[1:])
    ap = argparse.ArgumentParser(prog="pypto-pro", description="pypto_pro kernel tools")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("run", help="run an NPU script or test suite (-m pytest) unchanged on the simulator",
                   add_help=False)
    t = sub.add_parser("trace", help="run a script and write Perfetto/HTML timelines of its launches")
    t.add_argument("script")
    t.add_argument("--out", help="directory for the trace files (default: traces/<script name>)")
    t.set_defaults(fn=_trace)
    b = sub.add_parser("build", help="binary release: emit every TilingKey variant, header and manifest")
    b.add_argument("target", help="FILE.py::KERNEL")
    b.add_argument("--arch", default=None, help="a2, a3, a5, a2a3 or a 950 variant (default: the kernel's)")
    b.add_argument("--out", default="dist")
    b.set_defaults(fn=_build)
    sub.add_parser("passes", help="list the compiler stages").set_defaults(fn=_passes)
    a = sub.add_parser("arch", help="print machine models with sources")
    a.add_argument("name", nargs="?")
    a.set_defaults(fn=_arch)
    args, extra = ap.parse_known_args(argv)
    if args.cmd != "trace" and extra:
        ap.error(f"unrecognized arguments: {' '.join(extra)}")
    args.script_args = extra  # everything the trace command does not know goes to the script
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
