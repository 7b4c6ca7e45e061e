"""The emulated NPU's state: which device model, which device is current, and each device's current
stream. One instance per process (``STATE``), set up by ``install``."""
from __future__ import annotations

from typing import Any

from pypto_pro.runtime.npu_emulation.devices import DEFAULT, DEVICE_COUNT, EmulatedDevice, lookup


class EmulationState:
    def __init__(self) -> None:
        self.device: EmulatedDevice = lookup(DEFAULT)
        self.current = 0
        self.initialized = False          # torch.npu.is_initialized(): a device was used
        self.streams: dict[int, Any] = {}  # device index -> its current stream


STATE = EmulationState()


def is_npu_device(device: Any) -> bool:
    """True for "npu", "npu:N" and a torch.device of type npu (cheap: called on every factory call
    that is given a device)."""
    if device.__class__ is str:
        return device == "npu" or device.startswith("npu:")
    return getattr(device, "type", None) == "npu"


def device_index(device: Any = None, what: str = "device") -> int:
    """The index of an NPU device given as None (the current one), an int, "npu", "npu:N" or a
    torch.device; an error like torch_npu's for anything else or an index past the emulated ones."""
    if device is None:
        return STATE.current
    if isinstance(device, bool):
        raise ValueError(f"{what}: expected an NPU device, got {device!r}")
    if isinstance(device, int):
        index: int | None = device
    elif isinstance(device, str):
        kind, _, rest = device.partition(":")
        if kind != "npu" or (rest and not rest.isdigit()):
            raise ValueError(f"{what}: expected an NPU device such as 'npu' or 'npu:0', got {device!r}")
        index = int(rest) if rest else None
    elif getattr(device, "type", None) == "npu":
        index = device.index
    else:
        raise ValueError(f"{what}: expected an NPU device such as 'npu' or 'npu:0', got {device!r}")
    if index is None:
        return STATE.current
    if not 0 <= index < DEVICE_COUNT:
        raise RuntimeError(f"{what}: invalid device npu:{index}; the pypto_pro NPU emulation has "
                           f"{DEVICE_COUNT} device (npu:0)")
    STATE.initialized = True
    return index
