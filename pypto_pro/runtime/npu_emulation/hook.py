"""How the emulation gets into a process: one finder at the front of ``sys.meta_path``.

It answers ``import torch_npu`` / ``import torch_npu.npu`` / ``import pypto`` with the emulated modules,
raises ``NotEmulatedImportError`` for any other submodule of theirs, and wraps the loader of ``torch``
so that torch is patched (``torch_devices.patch_torch``) the moment its import finishes, as torch's own
device-backend autoloading does for the real torch_npu: ``torch.npu.set_device(...)`` works after a
bare ``import torch``, at module level too. Nothing is imported until the script imports it.
"""
from __future__ import annotations

import importlib.machinery
import sys
import types
from typing import Any, Callable

from pypto_pro.runtime.npu_emulation import npu_api, pypto_api
from pypto_pro.runtime.npu_emulation.errors import NotEmulatedError, NotEmulatedImportError

_NPU_MODULE: types.ModuleType | None = None


def npu_module() -> types.ModuleType:
    """The one ``torch_npu.npu`` / ``torch.npu`` module of this process."""
    global _NPU_MODULE
    if _NPU_MODULE is None:
        _NPU_MODULE = npu_api.build_module()
    return _NPU_MODULE


def patch_torch() -> None:
    from pypto_pro.runtime.npu_emulation.torch_devices import patch_torch as patch
    patch(npu_module())


def build_torch_npu() -> types.ModuleType:
    import torch  # noqa: F401  (the real torch_npu imports torch too; this import patches it)
    patch_torch()
    module = types.ModuleType("torch_npu", "torch_npu on the pypto_pro simulator (emulated: devices, streams, "
                                           "events, synchronize and device queries; see docs/npu_scripts.md).")
    module.npu = npu_module()  # type: ignore[attr-defined]
    module.__version__ = "0.0.0+pypto_pro.emulated"  # type: ignore[attr-defined]
    from pypto_pro.runtime.npu_emulation.quant_param import npu_trans_quant_param
    module.npu_trans_quant_param = npu_trans_quant_param  # type: ignore[attr-defined]

    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(f"module 'torch_npu' has no attribute {name!r}")
        raise NotEmulatedError(f"torch_npu.{name}")

    module.__getattr__ = __getattr__  # type: ignore[attr-defined]
    sys.modules["torch_npu.npu"] = module.npu  # type: ignore[attr-defined]
    return module


class _Built:
    """A loader whose module is made by a function (the emulated modules have no source file)."""

    def __init__(self, build: Callable[[], types.ModuleType]):
        self.build = build

    def create_module(self, spec: Any) -> types.ModuleType:
        return self.build()

    def exec_module(self, module: types.ModuleType) -> None:
        return None


class _ThenPatch:
    """torch's own loader, followed by ``patch_torch`` once torch's ``__init__`` has run."""

    def __init__(self, loader: Any):
        self._loader = loader

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self._loader.exec_module(module)
        patch_torch()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


class EmulationFinder:
    """The ``sys.meta_path`` entry of the emulation."""

    def __init__(self, torch_npu: bool, pypto: bool):
        self.torch_npu, self.pypto = torch_npu, pypto
        self._torch_wrapped = False

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        top = fullname.partition(".")[0]
        if top == "torch" and fullname == "torch" and self.torch_npu:
            return self._torch_spec(path, target)
        if top == "torch_npu" and self.torch_npu:
            if fullname == "torch_npu":
                return importlib.machinery.ModuleSpec(fullname, _Built(build_torch_npu), is_package=True)
            if fullname == "torch_npu.npu":
                return importlib.machinery.ModuleSpec(fullname, _Built(npu_module))
            raise NotEmulatedImportError(fullname)
        if top == "pypto" and self.pypto:
            if fullname == "pypto":
                return importlib.machinery.ModuleSpec(fullname, _Built(pypto_api.build_module), is_package=True)
            raise NotEmulatedImportError(fullname, pypto_api.SUBMODULE_WHY)
        return None

    def _torch_spec(self, path: Any, target: Any) -> Any:
        if self._torch_wrapped:
            return None
        self._torch_wrapped = True
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find("torch", path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _ThenPatch(spec.loader)
                return spec
        return None


_FINDER: EmulationFinder | None = None


def install_finder(torch_npu: bool, pypto: bool) -> EmulationFinder:
    """Put the finder in front of ``sys.meta_path`` (once per process); patch torch now if it is
    already imported."""
    global _FINDER
    if _FINDER is None:
        _FINDER = EmulationFinder(torch_npu, pypto)
        sys.meta_path.insert(0, _FINDER)
    if torch_npu and "torch" in sys.modules:
        _FINDER._torch_wrapped = True
        patch_torch()
    return _FINDER
