"""The NPU launch path: argument marshalling from the emitted launcher's signature (testable here),
and a clear LaunchError for NPU tensors when the CANN toolkit is absent (no NPU on these machines)."""
import ctypes

import pytest

from pypto_pro import LaunchError
from pypto_pro.backends.pto.emitter import emit_kernel
from pypto_pro.runtime import npu_launch

from example_modules import load_example

add = load_example("add")


def test_marshalling_follows_the_emitted_signature():
    programs = add.add_kernel.compile().programs
    launcher = emit_kernel(programs, "add_kernel", add.add_kernel.arch)["launcher.cpp"]
    params = npu_launch.parse_signature(launcher, "add_kernel")
    assert [n for _, n in params][:5] == ["block_dim", "stream", "x", "y", "z"]
    tensors = {"x": (0x1000, (256, 512)), "y": (0x2000, (256, 512)), "z": (0x3000, (256, 512))}
    values = npu_launch.marshal(params, 8, 0xABC, tensors, {})
    by_name = {n: v.value for (_, n), v in zip(params, values)}
    assert by_name["block_dim"] == 8 and by_name["stream"] == 0xABC and by_name["y"] == 0x2000
    assert by_name["x_dim0"] == 256 and by_name["z_dim1"] == 512
    assert isinstance(values[0], ctypes.c_uint32) and isinstance(values[-1], ctypes.c_int64)
    with pytest.raises(LaunchError, match="no value for launcher parameter 'z'"):
        npu_launch.marshal(params, 8, 0, {k: v for k, v in tensors.items() if k != "z"}, {})


class FakeNpuTensor:
    class device:
        type = "npu"


def test_npu_tensors_without_toolkit_are_a_launch_error(monkeypatch):
    monkeypatch.delenv("ASCEND_HOME_PATH", raising=False)
    t = FakeNpuTensor()
    with pytest.raises(LaunchError, match="CANN toolkit is not available"):
        add.add_kernel[None, 1](t, t, t)
