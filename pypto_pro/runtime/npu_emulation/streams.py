"""``torch.npu.Stream`` / ``torch.npu.Event`` on the simulator.

A kernel launch runs to completion before ``kernel[stream, block_dim](...)`` returns, so every stream is
always idle: ``synchronize`` / ``wait_*`` have nothing to wait for and ``query`` is True, which is
exactly what a real device would report once its queued work had finished. What a real stream has
and this one cannot honestly give (a raw ``aclrtStream`` handle, device-side timing between events)
raises ``NotEmulatedError``.
"""
from __future__ import annotations

from typing import Any

from pypto_pro.runtime.npu_emulation.errors import NotEmulatedError
from pypto_pro.runtime.npu_emulation.state import STATE, device_index

_NO_CLOCK = ("The simulator has no device clock; the simulated time of a launch is on the LaunchReport "
             "that kernel[stream, block_dim](...) returns (report.us, report.summary()).")
_NO_HANDLE = "There is no device queue, so there is no raw stream handle."


class _Absent:
    """Names a missing feature in the error instead of a bare AttributeError."""

    _prefix = ""
    _why: dict[str, str] = {}

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise NotEmulatedError(f"{self._prefix}.{name}", self._why.get(name))


class Stream(_Absent):
    """An emulated NPU stream (always idle: launches complete synchronously)."""

    _prefix = "torch.npu.Stream"
    _why = {"npu_stream": _NO_HANDLE, "_as_parameter_": _NO_HANDLE}

    def __init__(self, device: Any = None, priority: int = 0, **kwargs: Any):
        if kwargs:
            raise TypeError(f"torch.npu.Stream() got unexpected arguments: {', '.join(kwargs)}")
        self.device_index = device_index(device, "torch.npu.Stream")
        self.priority = priority

    @property
    def device(self) -> Any:
        import torch
        return torch.device("npu", self.device_index)

    def synchronize(self) -> None:
        """Nothing is pending: the simulator finished every launch before it returned."""

    def query(self) -> bool:
        return True

    def wait_event(self, event: "Event") -> None:
        _check(event, Event, "Stream.wait_event")

    def wait_stream(self, stream: "Stream") -> None:
        _check(stream, Stream, "Stream.wait_stream")

    def record_event(self, event: "Event | None" = None) -> "Event":
        event = Event() if event is None else _check(event, Event, "Stream.record_event")
        event.record(self)
        return event

    def __repr__(self) -> str:
        return f"<torch.npu.Stream (emulated) device=npu:{self.device_index} priority={self.priority}>"


class Event(_Absent):
    """An emulated NPU event (always complete)."""

    _prefix = "torch.npu.Event"
    _why = {"elapsed_time": _NO_CLOCK, "ipc_handle": _NO_HANDLE}

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False):
        self.enable_timing, self.blocking, self.interprocess = enable_timing, blocking, interprocess
        self.recorded = False

    def record(self, stream: Stream | None = None) -> None:
        if stream is not None:
            _check(stream, Stream, "Event.record")
        self.recorded = True

    def wait(self, stream: Stream | None = None) -> None:
        if stream is not None:
            _check(stream, Stream, "Event.wait")

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        """Nothing is pending (see Stream.synchronize)."""

    def __repr__(self) -> str:
        return f"<torch.npu.Event (emulated) recorded={self.recorded}>"


def _check(value: Any, cls: type, what: str) -> Any:
    if not isinstance(value, cls):
        raise TypeError(f"torch.npu.{what}: expected a torch.npu.{cls.__name__}, got {type(value).__name__}")
    return value


def current_stream(device: Any = None) -> Stream:
    index = device_index(device, "torch.npu.current_stream")
    stream = STATE.streams.get(index)
    if stream is None:
        stream = STATE.streams[index] = default_stream(index)
    return stream


_DEFAULT: dict[int, Stream] = {}


def default_stream(device: Any = None) -> Stream:
    index = device_index(device, "torch.npu.default_stream")
    if index not in _DEFAULT:
        _DEFAULT[index] = Stream(index)
    return _DEFAULT[index]


def set_stream(stream: Stream) -> None:
    _check(stream, Stream, "set_stream")
    STATE.streams[stream.device_index] = stream


class StreamContext:
    """``with torch.npu.stream(s):`` makes ``s`` the current stream of its device inside the block."""

    def __init__(self, stream: Stream | None):
        self.stream = None if stream is None else _check(stream, Stream, "stream")
        self._saved: Stream | None = None

    def __enter__(self) -> Stream | None:
        if self.stream is not None:
            self._saved = current_stream(self.stream.device_index)
            set_stream(self.stream)
        return self.stream

    def __exit__(self, *exc: Any) -> None:
        if self._saved is not None:
            set_stream(self._saved)


def stream(stream: Stream | None) -> StreamContext:
    return StreamContext(stream)
