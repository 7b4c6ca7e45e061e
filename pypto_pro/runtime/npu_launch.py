"""Launching a kernel on an Ascend NPU (torch_npu tensors) through the shared object the CANN
toolchain builds from the emitted ``kernel.cpp`` / ``launcher.cpp``.

Arguments are marshalled by name from the emitted launcher's C signature
(``launch_<symbol>(uint32_t block_dim, void* stream, void* <tensor>..., int64_t <tensor>_dim<axis>...,
<scalars>...)``), so the Python side and the C side cannot drift apart.

Not exercised on hardware in this repository's tests (no NPU or CANN toolkit on these machines):
the signature parsing and marshalling are tested; the ``ctypes`` call itself is not.
"""
from __future__ import annotations

import ctypes
import re
from pathlib import Path
from typing import Any

from pypto_pro.errors import LaunchError

_CTYPES = {"uint32_t": ctypes.c_uint32, "int64_t": ctypes.c_int64, "float": ctypes.c_float, "bool": ctypes.c_bool,
           "void*": ctypes.c_void_p}


def is_npu_tensor(v: Any) -> bool:
    device = getattr(v, "device", None)
    return getattr(device, "type", None) == "npu"


def parse_signature(launcher: str, symbol: str) -> list[tuple[str, str]]:
    """(C type, name) of each parameter of ``launch_<symbol>`` in the emitted launcher."""
    found = re.search(rf'extern "C" int launch_{re.escape(symbol)}\(([^)]*)\)', launcher)
    if found is None:
        raise LaunchError(f"the emitted launcher has no launch_{symbol}")
    params = []
    for part in found.group(1).split(","):
        ctype, _, name = part.strip().rpartition(" ")
        ctype = ctype.replace(" *", "*").strip()
        if ctype not in _CTYPES:
            raise LaunchError(f"launch_{symbol}: parameter '{part.strip()}' has no ctypes mapping")
        params.append((ctype, name))
    return params


def marshal(params: list[tuple[str, str]], block_dim: int, stream: Any, tensors: dict[str, tuple[int, tuple]],
            scalars: dict[str, Any]) -> list[Any]:
    """ctypes values for the launcher, by parameter name: tensors as (device pointer, shape)."""
    out: list[Any] = []
    for ctype, name in params:
        if name == "block_dim":
            value: Any = block_dim
        elif name == "stream":
            value = stream
        elif name in tensors:
            value = tensors[name][0]
        elif (m := re.fullmatch(r"(\w+)_dim(\d+)", name)) and m.group(1) in tensors:
            value = tensors[m.group(1)][1][int(m.group(2))]
        elif name in scalars:
            value = scalars[name]
        else:
            raise LaunchError(f"no value for launcher parameter '{name}' (a5/a2a3 FFTS addresses are not supported)")
        out.append(_CTYPES[ctype](value))
    return out


def launch(library: Path, symbol: str, launcher: str, block_dim: int, stream: Any,
           tensors: dict[str, tuple[int, tuple]], scalars: dict[str, Any]) -> None:
    params = parse_signature(launcher, symbol)
    fn = getattr(ctypes.CDLL(str(library)), f"launch_{symbol}")
    fn.restype = ctypes.c_int
    rc = fn(*marshal(params, block_dim, stream, tensors, scalars))
    if rc != 0:
        raise LaunchError(f"launch_{symbol} returned {rc}")
