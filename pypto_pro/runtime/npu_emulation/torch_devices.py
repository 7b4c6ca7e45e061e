"""The "npu" device in torch on the simulator: tensors created on, or moved to, an NPU are host (CPU)
tensors, and copies between host and "device" still copy.

``patch_torch()`` renames torch's PrivateUse1 backend to ``npu`` (so ``torch.device("npu:0")`` parses, as
with torch_npu), registers ``torch.npu``, and wraps only the torch entry points that take a device:
the factory functions (``torch.empty``, ``torch.rand``, ... and the ``*_like`` ones), ``torch.as_tensor``
/ ``torch.asarray``, ``Tensor.new_*``, ``Tensor.to``, ``Tensor.cpu``, and adds ``Tensor.npu`` /
``Tensor.is_npu`` / ``Module.npu``. A wrapper given no NPU device calls torch straight through.
Arithmetic, indexing and everything else are untouched (no TorchFunctionMode: it would add a Python
call to every torch operation), and the simulator itself does not use torch.

Which tensors are "on the NPU": those whose storage an NPU-device call allocated or copied there (the
storage is remembered in a weak set, so views of such a tensor are on the NPU too). ``x.npu()`` /
``x.to("npu")`` of a host tensor copies it, as a host-to-device transfer does; of an NPU tensor returns
it; ``x.cpu()`` of an NPU tensor copies it. So a kernel writing an NPU tensor in place never changes
the host tensor it was copied from, as on the chip. ``x.device`` reads ``cpu`` (the tensor *is* in
host memory); ``x.is_npu`` answers whether it is on the emulated NPU.
"""
from __future__ import annotations

import functools
import weakref
from typing import Any, Callable

from pypto_pro.runtime.npu_emulation.state import device_index, is_npu_device

FACTORIES = ("arange", "bartlett_window", "blackman_window", "empty", "empty_permuted", "empty_quantized",
             "empty_strided", "eye", "from_file", "full", "hamming_window", "hann_window", "kaiser_window",
             "linspace", "logspace", "normal", "ones", "rand", "randint", "randn", "randperm", "range",
             "scalar_tensor", "sparse_bsc_tensor", "sparse_bsr_tensor", "sparse_compressed_tensor",
             "sparse_coo_tensor", "sparse_csc_tensor", "sparse_csr_tensor", "tensor", "tril_indices",
             "triu_indices", "zeros")
LIKE = ("empty_like", "full_like", "ones_like", "rand_like", "randint_like", "randn_like", "zeros_like")
TENSOR_NEW = ("new_empty", "new_empty_strided", "new_full", "new_ones", "new_zeros", "new_tensor")
FFT = ("fftfreq", "rfftfreq")
_SCALARS = (list, tuple, int, float, bool, complex)

_ON_NPU: "weakref.WeakSet[Any]" = weakref.WeakSet()   # storages on the emulated NPU
_PATCHED = False


def on_npu(tensor: Any) -> bool:
    """Whether ``tensor`` is on the emulated NPU (its storage was allocated or copied there)."""
    try:
        return tensor.untyped_storage() in _ON_NPU
    except (NotImplementedError, RuntimeError, AttributeError, TypeError):  # sparse / meta: no storage
        return False


def _mark(result: Any) -> Any:
    try:
        _ON_NPU.add(result.untyped_storage())
    except (NotImplementedError, RuntimeError, AttributeError, TypeError):
        pass
    return result


def _factory(fn: Callable) -> Callable:
    name = f"torch.{fn.__name__}"

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        device = kwargs.get("device")
        if device is None or not is_npu_device(device):
            return fn(*args, **kwargs)
        device_index(device, name)
        kwargs["device"] = "cpu"
        return _mark(fn(*args, **kwargs))
    return wrapper


def _inherits(fn: Callable, what: str) -> Callable:
    """``torch.*_like(t)`` / ``t.new_*(...)``: without a device the result is on ``t``'s device."""

    @functools.wraps(fn)
    def wrapper(source: Any, *args: Any, **kwargs: Any) -> Any:
        device = kwargs.get("device")
        if device is None:
            result = fn(source, *args, **kwargs)
            return _mark(result) if on_npu(source) else result
        if not is_npu_device(device):
            return fn(source, *args, **kwargs)
        device_index(device, what)
        kwargs["device"] = "cpu"
        return _mark(fn(source, *args, **kwargs))
    return wrapper


def _host_to_device(fn: Callable, device_pos: int | None) -> Callable:
    """``torch.as_tensor`` / ``torch.asarray`` onto an NPU copy host data, as a transfer does (on the
    host they would share memory with a NumPy array or a CPU tensor)."""
    name = f"torch.{fn.__name__}"

    @functools.wraps(fn)
    def wrapper(data: Any, *args: Any, **kwargs: Any) -> Any:
        positional = device_pos is not None and len(args) > device_pos
        device = args[device_pos] if positional else kwargs.get("device")
        if device is None or not is_npu_device(device):
            return fn(data, *args, **kwargs)
        device_index(device, name)
        if positional:
            args = (*args[:device_pos], "cpu", *args[device_pos + 1:])
        else:
            kwargs["device"] = "cpu"
        result = fn(data, *args, **kwargs)
        if not isinstance(data, _SCALARS) and not on_npu(data):
            result = result.clone()
        return _mark(result)
    return wrapper


def _patch_tensor(torch: Any) -> None:
    tensor = torch.Tensor
    original_to, original_cpu = tensor.to, tensor.cpu

    def device_arg(args: tuple, kwargs: dict) -> tuple[Any, bool]:
        """(device, given positionally) of a ``Tensor.to`` call; device is None for ``to(dtype)``."""
        if args:
            first = args[0]
            if first.__class__ is str or first.__class__ is int or isinstance(first, torch.device):
                return first, True
        return kwargs.get("device"), False

    def to(self: Any, *args: Any, **kwargs: Any) -> Any:
        if args and isinstance(args[0], torch.Tensor):   # to(other, non_blocking, copy): other's device
            other = args[0]
            args = ("npu" if on_npu(other) else "cpu", other.dtype, *args[1:])
        device, positional = device_arg(args, kwargs)
        if device is None:                                # to(dtype, ...): stays where it is
            result = original_to(self, *args, **kwargs)
            return _mark(result) if result is not self and on_npu(self) else result
        to_npu = is_npu_device(device) or device.__class__ is int
        if to_npu:
            device_index(device, "Tensor.to")
        elif getattr(torch.device(device), "type", None) != "cpu":
            return original_to(self, *args, **kwargs)    # cuda, meta, ...: torch's business
        args = list(args)
        if positional:
            args[0] = "cpu"
        else:
            kwargs["device"] = "cpu"
        if to_npu != on_npu(self):                        # host <-> device: always a copy
            copy_pos = 3 if positional else (2 if args else None)
            if copy_pos is not None and len(args) > copy_pos:
                args[copy_pos] = True
            else:
                kwargs["copy"] = True
        result = original_to(self, *args, **kwargs)
        return _mark(result) if to_npu else result

    def cpu(self: Any, memory_format: Any = torch.preserve_format) -> Any:
        if on_npu(self):
            return original_to(self, "cpu", copy=True, memory_format=memory_format)
        return original_cpu(self, memory_format=memory_format)

    def npu(self: Any, device: Any = None, non_blocking: bool = False,
            memory_format: Any = torch.preserve_format) -> Any:
        target = "npu" if device is None else (f"npu:{device}" if isinstance(device, int) else device)
        if not is_npu_device(target):
            raise ValueError(f"Tensor.npu: expected an NPU device, got {device!r}")
        return to(self, target, non_blocking=non_blocking, memory_format=memory_format)

    functools.update_wrapper(to, original_to)
    functools.update_wrapper(cpu, original_cpu)
    tensor.to, tensor.cpu, tensor.npu = to, cpu, npu
    tensor.is_npu = property(on_npu, doc="Whether the tensor is on the emulated NPU (in host memory).")
    for name in TENSOR_NEW:
        if hasattr(tensor, name):
            setattr(tensor, name, _inherits(getattr(tensor, name), f"Tensor.{name}"))

    def module_npu(self: Any, device: Any = None) -> Any:
        return self.to("npu" if device is None else (f"npu:{device}" if isinstance(device, int) else device))

    torch.nn.Module.npu = module_npu


def patch_torch(npu_module: Any) -> None:
    """Make "npu" a host device in the imported torch (idempotent)."""
    global _PATCHED
    if _PATCHED:
        return
    import torch
    backend = torch._C._get_privateuse1_backend_name()
    if backend != "npu":
        if backend != "privateuseone":
            raise RuntimeError(f"cannot emulate the NPU: torch's PrivateUse1 backend is already {backend!r}")
        torch.utils.rename_privateuse1_backend("npu")
    if getattr(torch, "npu", None) is not npu_module:
        torch._register_device_module("npu", npu_module)
    for name in FACTORIES:
        if hasattr(torch, name):
            setattr(torch, name, _factory(getattr(torch, name)))
    for name in LIKE:
        if hasattr(torch, name):
            setattr(torch, name, _inherits(getattr(torch, name), f"torch.{name}"))
    for name in FFT:
        if hasattr(torch.fft, name):
            setattr(torch.fft, name, _factory(getattr(torch.fft, name)))
    torch.as_tensor = _host_to_device(torch.as_tensor, 1)
    torch.asarray = _host_to_device(torch.asarray, None)
    _patch_tensor(torch)
    from torch.utils import _device
    original_init = _device.DeviceContext.__init__

    def init(self: Any, device: Any) -> None:   # torch.set_default_device("npu") / with torch.device("npu")
        original_init(self, "cpu" if is_npu_device(device) or device.__class__ is int else device)

    _device.DeviceContext.__init__ = init
    _PATCHED = True
