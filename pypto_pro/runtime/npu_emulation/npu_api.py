"""``torch.npu`` (= ``torch_npu.npu``) on the simulator: devices, synchronize, device queries, streams,
events, the random seed and the (empty) device allocator statistics. Anything else is absent and its
access raises ``NotEmulatedError`` naming it.
"""
from __future__ import annotations

import types
from typing import Any

from pypto_pro.runtime.npu_emulation import streams
from pypto_pro.runtime.npu_emulation.devices import DEVICE_COUNT
from pypto_pro.runtime.npu_emulation.errors import NotEmulatedError
from pypto_pro.runtime.npu_emulation.state import STATE, device_index

# ---- devices -------------------------------------------------------------------------------------


def is_available() -> bool:
    """True: the emulated device is always there (tensors "on" it live in host memory)."""
    return True


def device_count() -> int:
    return DEVICE_COUNT


def set_device(device: Any) -> None:
    STATE.current = device_index(device, "torch.npu.set_device")
    STATE.initialized = True


def current_device() -> int:
    return STATE.current


def init() -> None:
    STATE.initialized = True


def is_initialized() -> bool:
    return STATE.initialized


def synchronize(device: Any = None) -> None:
    """Returns at once: every kernel launch ran to completion on the simulator before it returned."""
    device_index(device, "torch.npu.synchronize")


def get_device_name(device: Any = None) -> str:
    device_index(device, "torch.npu.get_device_name")
    return STATE.device.name


def get_soc_version() -> int:
    return STATE.device.soc_version


class DeviceProperties:
    """What ``torch.npu.get_device_properties`` answers: the name and the core counts of the machine
    model of the emulated device's arch (``pypto-pro arch NAME`` shows them with their sources)."""

    def __init__(self) -> None:
        from pypto_pro.arch import get_arch
        model = get_arch(STATE.device.arch)
        self.name = STATE.device.name
        self.cube_core_num = int(model.cube_cores.value)
        self.vector_core_num = model.vector_cores

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise NotEmulatedError(f"torch.npu.get_device_properties().{name}",
                               "The emulated device reports its name, cube_core_num and vector_core_num.")

    def __repr__(self) -> str:
        return (f"_NPUDeviceProperties(name='{self.name}', cube_core_num={self.cube_core_num}, "
                f"vector_core_num={self.vector_core_num}) (emulated)")


def get_device_properties(device: Any = None) -> DeviceProperties:
    device_index(device, "torch.npu.get_device_properties")
    return DeviceProperties()


class device:
    """``with torch.npu.device(i):`` makes ``i`` the current device inside the block."""

    def __init__(self, device: Any):
        self.index = device_index(device, "torch.npu.device")
        self._saved = STATE.current

    def __enter__(self) -> "device":
        self._saved, STATE.current = STATE.current, self.index
        return self

    def __exit__(self, *exc: Any) -> None:
        STATE.current = self._saved


# ---- random numbers: one generator, the host's ---------------------------------------------------
# Tensors "on" the emulated device are host tensors, so their random numbers come from torch's CPU
# generator; seeding the device seeds it (torch.manual_seed calls manual_seed_all here too).


def manual_seed(seed: int) -> None:
    import torch
    torch.random.default_generator.manual_seed(int(seed))


manual_seed_all = manual_seed


def seed() -> None:
    import torch
    torch.random.default_generator.seed()


seed_all = seed


def initial_seed() -> int:
    import torch
    return torch.random.default_generator.initial_seed()


def get_rng_state(device: Any = None) -> Any:
    import torch
    device_index(device, "torch.npu.get_rng_state")
    return torch.random.get_rng_state()


def set_rng_state(new_state: Any, device: Any = None) -> None:
    import torch
    device_index(device, "torch.npu.set_rng_state")
    torch.random.set_rng_state(new_state)


def _is_in_bad_fork() -> bool:  # torch.manual_seed asks before seeding a custom device
    return False


# ---- device memory: none is used ------------------------------------------------------------------
# No tensor lives in device memory, so the device allocator holds 0 bytes and has no cache to release.


def empty_cache() -> None:
    """Nothing to release: the emulated device allocates no memory."""


def _zero_statistic(name: str):
    def statistic(device: Any = None) -> int:
        device_index(device, f"torch.npu.{name}")
        return 0
    statistic.__name__ = statistic.__qualname__ = name
    statistic.__doc__ = "0: the emulated device allocates no memory."
    return statistic


memory_allocated = _zero_statistic("memory_allocated")
memory_reserved = _zero_statistic("memory_reserved")
max_memory_allocated = _zero_statistic("max_memory_allocated")
max_memory_reserved = _zero_statistic("max_memory_reserved")


def reset_peak_memory_stats(device: Any = None) -> None:
    device_index(device, "torch.npu.reset_peak_memory_stats")


EXPORTS = {
    **{f.__name__: f for f in (is_available, device_count, set_device, current_device, init, is_initialized,
                               synchronize, get_device_name, get_soc_version, get_device_properties,
                               manual_seed, seed, initial_seed, get_rng_state, set_rng_state, _is_in_bad_fork,
                               empty_cache, memory_allocated, memory_reserved, max_memory_allocated,
                               max_memory_reserved, reset_peak_memory_stats)},
    "manual_seed_all": manual_seed_all, "seed_all": seed_all, "device": device,
    "Stream": streams.Stream, "Event": streams.Event, "current_stream": streams.current_stream,
    "default_stream": streams.default_stream, "set_stream": streams.set_stream, "stream": streams.stream,
    "StreamContext": streams.StreamContext,
}


def build_module() -> types.ModuleType:
    """The ``torch_npu.npu`` module object (also registered as ``torch.npu``)."""
    module = types.ModuleType("torch_npu.npu", "torch.npu on the pypto_pro simulator (emulated; see "
                                               "docs/npu_scripts.md).")
    module.__dict__.update(EXPORTS)

    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(f"module 'torch_npu.npu' has no attribute {name!r}")
        raise NotEmulatedError(f"torch.npu.{name}")

    module.__getattr__ = __getattr__  # type: ignore[attr-defined]
    module.__all__ = sorted(n for n in EXPORTS if not n.startswith("_"))
    return module
