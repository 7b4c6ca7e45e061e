"""The NPU emulation behind ``pypto-pro run``. Its torch side patches torch for a whole process, so those
cases (tests/runtime/npu_cases/device_cases.py) run under ``pypto-pro run -m pytest`` in a subprocess;
the pieces that touch no global state are tested here directly."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pypto_pro.runtime import npu_emulation
from pypto_pro.runtime.npu_emulation import devices, pypto_api, streams
from pypto_pro.runtime.npu_emulation.errors import NotEmulatedError, NotEmulatedImportError
from pypto_pro.runtime.npu_emulation.state import STATE, device_index, is_npu_device

ROOT = Path(__file__).resolve().parents[2]


def pypto_pro_run(*args: str, cwd: Path = ROOT, env: dict | None = None, timeout: int = 600):
    """``pypto-pro run ARGS`` in a fresh interpreter; the CompletedProcess."""
    full_env = {**os.environ, **(env or {})}
    full_env.pop("PYPTO_PRO_NPU_EMULATION", None)
    return subprocess.run([sys.executable, "-m", "pypto_pro.cli", "run", *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout)


def test_device_cases_under_the_emulation(tmp_path):
    cases = ROOT / "tests" / "runtime" / "npu_cases" / "device_cases.py"
    done = pypto_pro_run("-m", "pytest", "-q", "-p", "no:cacheprovider", str(cases),
                         env={"PYPTO_PRO_BUILD_DIR": str(tmp_path / "build")})
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    passed = re.search(r"(\d+) passed", done.stdout)
    assert passed and int(passed.group(1)) >= 18 and "failed" not in done.stdout


def test_device_names_match_the_arch():
    assert "Ascend950" in devices.lookup("a5").name and devices.lookup("a5").soc_version == 260
    for arch in ("a2a3", "a2", "a3"):
        d = devices.lookup(arch)
        assert d.name.startswith("Ascend910") and "Ascend950" not in d.name and d.arch == "a2a3"
    assert devices.lookup(" A3 ").soc_version == 250
    with pytest.raises(ValueError, match="unknown NPU arch 'a9'.*a5, a2a3, a2, a3"):
        devices.lookup("a9")


def test_device_arguments():
    assert is_npu_device("npu") and is_npu_device("npu:0") and not is_npu_device("cpu")
    assert not is_npu_device("npux") and not is_npu_device(None)
    assert device_index(None) == STATE.current and device_index("npu:0") == 0 and device_index(0) == 0
    for bad in ("cpu", "npu:x", "cuda:0", True, 1.0):
        with pytest.raises(ValueError, match="expected an NPU device"):
            device_index(bad)
    with pytest.raises(RuntimeError, match="invalid device npu:2; .* 1 device"):
        device_index("npu:2")


def test_streams_and_events_are_always_idle():
    s = streams.Stream()
    e = streams.Event(enable_timing=True)
    e.record(s)
    assert s.query() and e.query() and e.recorded
    with pytest.raises(TypeError, match="expected a torch.npu.Event"):
        s.wait_event(s)
    with pytest.raises(NotEmulatedError, match="torch.npu.Stream.npu_stream is not emulated.*no raw stream handle"):
        s.npu_stream
    with pytest.raises(AttributeError):
        s.__no_such_dunder__


def test_unsupported_errors_are_the_python_kinds():
    assert issubclass(NotEmulatedError, AttributeError) and issubclass(NotEmulatedImportError, ImportError)
    err = NotEmulatedError("torch_npu.profiler")
    assert err.feature == "torch_npu.profiler" and "docs/npu_scripts.md" in str(err)


def test_pypto_module_has_options_only():
    pypto = pypto_api.build_module()
    calls = []

    @pypto.options(pass_options={"enable_slice": False}, name="x")
    def f(a):
        calls.append(a)
        return a * 2

    assert f(4) == 8 and calls == [4] and f.__wrapped__ is not None
    with pytest.raises(NotEmulatedError, match=r"^pypto\.get_current_scope is not emulated"):
        pypto.get_current_scope
    with pytest.raises(TypeError, match="decorates a function"):
        pypto.options()(3)


def test_plan(monkeypatch):
    assert npu_emulation.plan("real") == npu_emulation.Plan(False, False, None)
    assert npu_emulation.plan("emulate") == npu_emulation.Plan(True, True, None)
    found = {"torch_npu"}
    monkeypatch.setattr(npu_emulation, "_importable", lambda name: name in found)
    auto = npu_emulation.plan("auto")
    assert not auto.torch_npu and auto.pypto and "real torch_npu is installed" in auto.note
    found.clear()
    assert npu_emulation.plan() == npu_emulation.Plan(True, True, None)
    with pytest.raises(ValueError, match="--npu must be one of auto, emulate, real"):
        npu_emulation.plan("sometimes")


def test_children_get_the_same_emulation(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    env = npu_emulation.environment_for_children(npu_emulation.Plan(True, False, None), None, "a3")
    assert env["PYPTO_PRO_NPU_EMULATION"] == "a3 torch_npu"
    assert env["PYTHONPATH"].split(os.pathsep) == [str(npu_emulation.SITE_DIR), "/elsewhere"]
    assert (npu_emulation.SITE_DIR / "sitecustomize.py").is_file()
