"""pypto-pro run: an NPU-style script or pytest suite runs unchanged, with python's argv, sys.path,
__main__, exit codes and exception reports; unsupported torch_npu features say what they are."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pypto_pro.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]

KERNEL = (ROOT / "tests" / "runtime" / "npu_cases" / "double_kernel.py").read_text()


def run(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYPTO_PRO_BUILD_DIR": str(cwd / "build"), **(env or {})}
    for var in ("PYPTO_PRO_NPU_EMULATION", "PYPTO_PRO_NPU_ARCH"):
        if var not in (env or {}):
            full.pop(var, None)
    return subprocess.run([sys.executable, "-m", "pypto_pro.cli", "run", *args], cwd=cwd, env=full,
                          capture_output=True, text=True, timeout=600)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def npu_script(tmp_path: Path) -> Path:
    return write(tmp_path / "scripts" / "npu_double.py", KERNEL + textwrap.dedent('''
        import subprocess, sys
        import torch
        import torch_npu

        print("argv", sys.argv[1:], "path0", sys.path[0], "name", __name__)
        device = "npu:0"
        torch.npu.set_device(device)
        x = torch.rand([64, 128], dtype=torch.float16).npu()
        z = torch.empty([64, 128], device=device, dtype=torch.float16)
        stream = torch.npu.current_stream()
        double[stream, 2](x, z)
        torch.npu.synchronize()
        assert torch.equal(z.cpu(), (x + x).cpu())
        print("device", torch.npu.get_device_name(), "kernel arch", double.arch.name)
        child = subprocess.run([sys.executable, "-c", "import torch_npu; print(torch_npu.npu.get_device_name())"],
                               capture_output=True, text=True)
        print("child", child.stdout.strip(), child.returncode)
        torch_npu.npu_format_cast(z, 29)
    '''))


def test_npu_script_runs_unchanged(tmp_path):
    script = npu_script(tmp_path)
    done = run(str(script), "first", "--arch", "a9", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    out = done.stdout
    assert f"argv ['first', '--arch', 'a9'] path0 {script.parent} name __main__" in out
    assert "device Ascend950PR_9589 kernel arch a5" in out and "child Ascend950PR_9589 0" in out
    err = done.stderr
    assert "torch_npu.npu_format_cast is not emulated" in err and "NotEmulatedError" in err
    assert 'npu_double.py", line' in err and "runpy" not in err and "cli.py" not in err


def test_pytest_suite_with_module_level_set_device(tmp_path):
    write(tmp_path / "suite" / "test_npu_suite.py", KERNEL + '''
import pytest
import torch

import pypto

torch.npu.set_device("npu:0")
ON_A5 = "Ascend950" in torch.npu.get_device_name()


@pypto.options(pass_options={"enable_slice": False})
def test_double():
    x = torch.rand([32, 128], device="npu:0", dtype=torch.float16)
    z = torch.zeros_like(x)
    double[None, 1](x, z)
    torch.npu.synchronize()
    torch.testing.assert_close(z, x + x)


@pytest.mark.skipif(not ON_A5, reason="A5 only")
def test_a5_only():
    assert torch.npu.get_device_name().startswith("Ascend950")


def test_kernels_compile_for_the_emulated_arch():
    assert double.arch.name == ("a5" if ON_A5 else "a2a3")


def test_fails():
    assert torch.zeros(1, device="npu").is_npu is False
''')
    a2 = run("--arch", "a2", "-m", "pytest", "-q", "-p", "no:cacheprovider", "suite", cwd=tmp_path)
    assert a2.returncode == 1 and "1 failed, 2 passed, 1 skipped" in a2.stdout, a2.stdout + a2.stderr
    usage = run("-m", "pytest", "-q", "-p", "no:cacheprovider", "suite", "--arch", cwd=tmp_path)
    assert usage.returncode == 4 and "--arch" in usage.stderr   # pytest's own usage error: argv is pytest's


def test_exit_codes_and_errors_as_python(tmp_path):
    exits = write(tmp_path / "exits.py", "import sys\nsys.exit(int(sys.argv[1]) if sys.argv[1:] else 'bye')\n")
    assert run(str(exits), "7", cwd=tmp_path).returncode == 7
    says = run(str(exits), cwd=tmp_path)
    assert says.returncode == 1 and says.stderr.strip() == "bye"
    boom = write(tmp_path / "boom.py", "def f():\n    raise KeyError('k')\nf()\n")
    done = run(str(boom), cwd=tmp_path)
    assert done.returncode == 1 and done.stderr.startswith("Traceback") and "KeyError: 'k'" in done.stderr
    assert done.stderr.count('File "') == 2   # the script's two frames, none of ours
    missing = run("nope.py", cwd=tmp_path)
    assert missing.returncode == 2 and "can't open file" in missing.stderr
    no_module = run("-m", "no_such_module_here", cwd=tmp_path)
    assert no_module.returncode == 1 and "No module named no_such_module_here" in no_module.stderr


def test_npu_real_runs_plain_python(tmp_path):
    script = write(tmp_path / "real.py", "import torch_npu\n")
    done = run("--npu", "real", str(script), cwd=tmp_path)
    assert done.returncode == 1 and "No module named 'torch_npu'" in done.stderr


def test_run_usage(capsys):
    assert cli_main(["run", "--help"]) == 0
    assert "--arch NAME" in capsys.readouterr().out
    assert cli_main(["run"]) == 2
    assert "give a SCRIPT or -m MODULE" in capsys.readouterr().err
    assert cli_main(["run", "--arch", "a9", "x.py"]) == 2
    assert "unknown NPU arch 'a9'" in capsys.readouterr().err
    assert cli_main(["run", "--verbose", "x.py"]) == 2
    assert cli_main(["run", "--npu", "maybe", "x.py"]) == 2


@pytest.mark.slow
def test_arch_by_option_and_environment(tmp_path):
    script = npu_script(tmp_path)
    a3 = run("--arch", "a3", str(script), cwd=tmp_path)
    assert "device Ascend910_9391 kernel arch a2a3" in a3.stdout and "child Ascend910_9391 0" in a3.stdout
    by_env = run(str(script), cwd=tmp_path, env={"PYPTO_PRO_NPU_ARCH": "a2a3"})
    assert "device Ascend910B1 kernel arch a2a3" in by_env.stdout
    a5 = run("-m", "pytest", "-q", "-p", "no:cacheprovider", str(write(tmp_path / "suite" / "test_a5.py", KERNEL + (
        "import torch\ntorch.npu.set_device(0)\n\ndef test_a5():\n    assert double.arch.name == 'a5'\n"))),
        cwd=tmp_path)
    assert a5.returncode == 0 and "1 passed" in a5.stdout, a5.stdout + a5.stderr


@pytest.mark.slow
def test_seed_example_verbatim(tmp_path):
    done = run(str(ROOT / "examples" / "npu_add.py"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "add_kernel 8192x4096 fp16 on Ascend950PR_9589 (emulated): matches torch" in done.stdout


@pytest.mark.slow
def test_pytest_xdist_workers_get_the_emulation(tmp_path):
    pytest.importorskip("xdist")
    write(tmp_path / "suite" / "test_w.py", "import torch\ntorch.npu.set_device(0)\n\ndef test_w():\n"
                                            "    assert torch.ones(1, device='npu').is_npu\n")
    done = run("-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "suite", cwd=tmp_path)
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr
