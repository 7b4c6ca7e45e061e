"""The errors of the NPU emulation: a feature of ``torch_npu`` or ``pypto`` that the simulator does not
provide is an error naming that feature, never a silent stand-in.

An unsupported attribute (``torch_npu.npu_format_cast``, ``torch.npu.config``, ``pypto.frontend``) raises
``NotEmulatedError``, an ``AttributeError``: ``hasattr`` answers False and ``getattr(mod, name, default)``
returns the default, as for any attribute a module does not have. An unsupported submodule
(``import torch_npu.profiler``) raises ``NotEmulatedImportError``, a ``ModuleNotFoundError``.
"""
from __future__ import annotations

DOC = "docs/npu_scripts.md"
SUPPORTED = "devices, streams, events, synchronize and device queries"


def _message(feature: str, why: str | None) -> str:
    reason = f" {why}" if why else ""
    return (f"{feature} is not emulated: pypto-pro run runs NPU scripts on the simulator, with no real device, "
            f"and provides only the {SUPPORTED} of torch_npu, and pypto.options.{reason} See {DOC}.")


class NotEmulatedError(AttributeError):
    """A ``torch_npu`` / ``torch.npu`` / ``pypto`` attribute the emulation does not provide."""

    def __init__(self, feature: str, why: str | None = None):
        super().__init__(_message(feature, why))
        self.feature = feature


class NotEmulatedImportError(ModuleNotFoundError):
    """A ``torch_npu.*`` / ``pypto.*`` submodule the emulation does not provide."""

    def __init__(self, feature: str, why: str | None = None):
        super().__init__(_message(feature, why), name=feature)
        self.feature = feature
