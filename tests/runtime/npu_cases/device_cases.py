"""Device-layer cases, run *under* the emulation by tests/runtime/test_npu_emulation.py
(``pypto-pro run -m pytest`` on this file in a subprocess: the emulation patches torch for the whole
process, so it never runs inside the main test process). Not collected by the default test run."""
import numpy as np
import pytest
import torch

from double_kernel import double

from pypto_pro.runtime.kernel import JitKernel

torch.npu.set_device("npu:0")   # at module level, before any test: the emulation is already there
DEVICE = "npu:0"
F16 = torch.float16


@pytest.mark.parametrize("make", [
    lambda: torch.rand(64, 128, device=DEVICE, dtype=F16),
    lambda: torch.rand(64, 128, device=torch.device("npu", 0), dtype=F16),
    lambda: torch.rand(64, 128, dtype=F16).npu(),
    lambda: torch.rand(64, 128, dtype=F16).to("npu:0"),
    lambda: torch.rand(64, 128, dtype=F16).to(torch.device("npu:0")),
    lambda: torch.rand(64, 128).to(DEVICE, F16),
    lambda: torch.rand(64, 128, dtype=F16).to(device=DEVICE),
    lambda: torch.rand(64, 128, dtype=F16).to(0),
    lambda: torch.as_tensor(np.random.rand(64, 128).astype(np.float16), device=DEVICE),
], ids=["device=str", "device=torch.device", ".npu()", ".to(str)", ".to(torch.device)", ".to(dev, dtype)",
        ".to(device=)", ".to(int)", "as_tensor"])
def test_every_way_onto_the_npu_gives_a_host_tensor_the_simulator_takes(make, monkeypatch):
    def no_real_launch(*a, **k):
        raise AssertionError("an emulated tensor must not take the CANN launch path")
    monkeypatch.setattr(JitKernel, "_launch_npu", no_real_launch)
    x = make()
    z = torch.empty(64, 128, device=DEVICE, dtype=F16)
    assert x.device.type == "cpu" and x.is_npu and z.is_npu
    double[None, 2](x, z)
    torch.npu.synchronize()
    assert torch.equal(z.cpu(), x.cpu() + x.cpu())


def test_transfers_copy_like_host_device_copies():
    host = torch.zeros(4)
    dev = host.npu()
    dev.add_(1)                                  # a kernel writing the device copy ...
    assert host.tolist() == [0.0] * 4            # ... leaves the host tensor alone
    assert dev.to(DEVICE) is dev and dev.npu() is dev   # already there: no copy
    back = dev.cpu()
    back.add_(1)
    assert dev.tolist() == [1.0] * 4 and not back.is_npu
    assert dev.to("cpu").data_ptr() != dev.data_ptr()
    assert host.cpu() is host                    # host tensors stay as torch has them
    assert host.to("cpu") is host
    arr = np.zeros(4, np.float32)
    torch.as_tensor(arr, device=DEVICE).add_(1)
    torch.asarray(arr, device=DEVICE).add_(1)
    assert arr.tolist() == [0.0] * 4


def test_device_follows_views_likes_and_dtype_moves():
    dev = torch.zeros(8, 8, device=DEVICE)
    assert dev[2:].is_npu and dev.view(64).is_npu and dev.t().is_npu
    assert torch.empty_like(dev).is_npu and torch.zeros_like(torch.zeros(2)).is_npu is False
    assert dev.new_zeros(3).is_npu and dev.to(torch.float16).is_npu
    assert torch.zeros(3).to(dev).is_npu and dev.to(torch.zeros(1)).is_npu is False
    assert torch.zeros(2, device="cpu").is_npu is False


def test_factory_functions_take_npu_devices():
    for fn, args in ((torch.empty, (2,)), (torch.zeros, (2,)), (torch.ones, (2,)), (torch.full, ((2,), 3.0)),
                     (torch.arange, (4,)), (torch.eye, (2,)), (torch.randn, (2,)), (torch.randint, (0, 5, (2,))),
                     (torch.randperm, (3,)), (torch.linspace, (0, 1, 5)), (torch.tensor, ([1, 2],)),
                     (torch.empty_strided, ((2, 2), (2, 1))), (torch.tril_indices, (3, 3))):
        t = fn(*args, device=DEVICE)
        assert t.device.type == "cpu" and t.is_npu, fn.__name__
    with pytest.raises(RuntimeError, match="invalid device npu:1"):
        torch.zeros(1, device="npu:1")
    m = torch.nn.Linear(2, 2).npu()
    assert m.weight.is_npu and m.to("cpu").weight.is_npu is False


def test_default_device_context():
    with torch.device("npu"):
        assert torch.zeros(1).device.type == "cpu"


def test_every_torch_entry_point_that_takes_a_device_is_mapped():
    from pypto_pro.runtime.npu_emulation import torch_devices
    wrapped = set(torch_devices.FACTORIES) | set(torch_devices.LIKE) | {"as_tensor", "asarray", "to"}
    wrapped |= set(torch_devices.TENSOR_NEW) | set(torch_devices.FFT)
    takes_device = {s.name[len("aten::"):] for s in torch._C._jit_get_all_schemas()
                    if s.name.startswith("aten::") and any(a.name == "device" for a in s.arguments)}
    public = {n for n in takes_device if not n.startswith("_") and n != "Generator"
              and (hasattr(torch, n) or hasattr(torch.Tensor, n) or hasattr(torch.fft, n.removeprefix("fft_")))}
    public = {n.removeprefix("fft_") for n in public} - {"is_pinned", "pin_memory"}  # deprecated device args
    assert public <= wrapped, sorted(public - wrapped)


def test_device_queries_streams_events():
    import torch_npu
    assert torch.npu is torch_npu.npu and torch.npu.is_available() and torch.npu.device_count() == 1
    assert torch.npu.current_device() == 0 and torch.npu.is_initialized()
    assert "Ascend950" in torch.npu.get_device_name() and torch_npu.npu.get_soc_version() == 260
    s = torch.npu.Stream()
    e = s.record_event()
    torch.npu.current_stream().wait_event(e)
    with torch.npu.stream(s):
        assert torch.npu.current_stream() is s
    assert torch.npu.current_stream() is torch.npu.default_stream() and s.query() and e.query()
    s.synchronize(), e.synchronize(), torch.npu.synchronize("npu:0")
    assert str(s.device) == "npu:0"
    with pytest.raises(AttributeError, match=r"torch.npu.Event.elapsed_time is not emulated.*report.us"):
        e.elapsed_time(e)
    with pytest.raises(ValueError, match="expected an NPU device"):
        torch.npu.set_device("cpu")
    assert torch.npu.memory_allocated() == 0 and torch.npu.get_device_properties(0).vector_core_num > 0


def test_seeding_the_device_makes_its_draws_repeat():
    torch.manual_seed(5)
    a = torch.rand(4, device=DEVICE)
    torch.npu.manual_seed(5)
    assert torch.equal(torch.rand(4, device=DEVICE), a)


def test_unsupported_features_name_themselves():
    import torch_npu
    for feature in ("npu_format_cast", "profiler", "get_npu_format"):
        with pytest.raises(AttributeError, match=rf"^torch_npu\.{feature} is not emulated"):
            getattr(torch_npu, feature)
    with pytest.raises(AttributeError, match=r"^torch\.npu\.set_compile_mode is not emulated"):
        torch.npu.set_compile_mode(jit_compile=False)
    with pytest.raises(ImportError, match=r"^torch_npu\.profiler is not emulated"):
        import torch_npu.profiler  # noqa: F401
    with pytest.raises(ImportError, match=r"^torch_npu\.contrib is not emulated"):
        from torch_npu.contrib import transfer_to_npu  # noqa: F401
    assert not hasattr(torch_npu, "npu_format_cast")


def test_trans_quant_param_packs_the_fixpipe_words():
    # CANN's TransQuantParamV2/V3 kernel: top 19 bits (or fp19 round to nearest even), bit 46, int9 offset
    import numpy as np
    import torch_npu
    flag = 1 << 46

    def bits(v):
        return int(np.float32(v).view(np.uint32))
    x = 1 + 2.0 ** -11 + 2.0 ** -20  # round bit and sticky set: fp19 rounds up to 1 + 2**-10
    scale = torch.tensor([[2.0, 0.1, x, -3.0]], dtype=torch.float32, device=DEVICE)
    w0 = torch_npu.npu_trans_quant_param(scale)
    assert w0.dtype == torch.int64 and w0.shape == (1, 4) and str(w0.device) == str(scale.device)
    assert w0.cpu().tolist()[0] == [(bits(v) & 0xFFFFE000) | flag for v in (2.0, 0.1, x, -3.0)]
    w1 = torch_npu.npu_trans_quant_param(scale, round_mode=1).cpu().tolist()[0]
    assert w1[2] == bits(1 + 2.0 ** -10) | flag and w1[1] == (bits(0.1) & 0xFFFFE000) | flag
    offs = torch.tensor([3.5, -300.0, 2.5], dtype=torch.float32, device=DEVICE)
    w = torch_npu.npu_trans_quant_param(torch.tensor([0.5], device=DEVICE), offs).cpu().tolist()
    base = bits(0.5) | flag
    assert w == [base | (4 << 37), base | (0x100 << 37), base | (2 << 37)]  # rint, clamp to -256, ties to even
    with pytest.raises(RuntimeError, match="round_mode must be 0 or 1"):
        torch_npu.npu_trans_quant_param(scale, round_mode=2)


def test_pypto_options_only():
    import pypto

    @pypto.options(pass_options={"enable_slice": False})
    def f(a, b=2):
        return a + b

    assert f(1) == 3 and f.__name__ == "f"
    with pypto.options(name="scope", codegen_options={"x": 1}):
        pass
    with pytest.raises(TypeError):
        pypto.options(no_such_option=1)
    with pytest.raises(AttributeError, match=r"^pypto\.frontend is not emulated"):
        pypto.frontend
    with pytest.raises(ImportError, match=r"^pypto\.pypto_impl is not emulated"):
        import pypto.pypto_impl  # noqa: F401
