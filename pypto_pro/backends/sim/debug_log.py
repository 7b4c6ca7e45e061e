"""The device print log of a simulated launch: what ``pl.printf``, ``pl.pto_assert``, ``pl.dump_data``
and ``pl.trap`` write, kept per core in program order and shown when the launch ends.

On the chip each core writes its prints into its own buffer, and the runtime shows the buffers
after the kernel, each under a head naming the core (CANN's ``DumpHead: AIV-0, CoreType=AIV, ...``).
The simulator does the same: every core's text in the order its scalar unit issued the prints,
under ``DumpHead: AIV-<n>, CoreType=AIV, block dim=<block_num>`` (``AIC-<block>`` for a Cube core;
``n`` is the Vector core's global index ``block * subblock_num + subblock``). A print's text is
reserved when the core issues it and filled when it runs (a ``dump_data`` reads the data then),
so the order is the program's even though the timed simulator runs instructions out of order.

The log of a launch is printed to ``sys.stdout`` when the launch ends (also when it fails) and kept
as ``report.device_log``. This module also formats the text exactly as the chip's code does:
:func:`format_printf` (the real ``cce::printf`` lowering) and the ``dump_data`` layouts.
"""
from __future__ import annotations

import contextlib
import re
import sys
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np

_CONV = re.compile(r"%([-+ #0]*)(\d*)(?:\.(\d+))?([diuxfp])")


@dataclass
class DeviceLog:
    """Per-core print buffers of one launch: ``(block, kind, subblock)`` -> list of text pieces."""

    block_num: int = 0
    cores: dict[tuple[int, str, int], list] = field(default_factory=dict)
    labels: dict[tuple[int, str, int], str] = field(default_factory=dict)
    asserts: list[str] = field(default_factory=list)  # every failed pto_assert, located
    traps: list[str] = field(default_factory=list)    # every pl.trap that stopped a core, located

    @staticmethod
    def core_name(core: tuple[int, str, int, int]) -> str:
        """``AIV-3 (block 1, subblock 1)`` / ``AIC-0 (block 0)``."""
        block, kind, sub, subs = core
        if kind == "AIV":
            return f"AIV-{block * subs + sub} (block {block}, subblock {sub})"
        return f"AIC-{block} (block {block})"

    def reserve(self, core: tuple[int, str, int, int]) -> list:
        """A slot in ``core``'s buffer, in issue order; the caller appends its text when it runs."""
        block, kind, sub, subs = core
        key = (block, kind, sub)
        buf = self.cores.get(key)
        if buf is None:
            buf = self.cores[key] = []
            idx = block * subs + sub if kind == "AIV" else block
            self.labels[key] = f"DumpHead: {kind}-{idx}, CoreType={kind}, block dim={self.block_num}"
        slot: list = []
        buf.append(slot)
        return slot

    def write(self, core: tuple[int, str, int, int], text: str) -> None:
        self.reserve(core).append(text)

    def text(self) -> str:
        """Every core's output under its head: blocks in order, a block's Cube core before its Vector cores."""
        order = sorted(self.cores, key=lambda k: (k[0], k[1] != "AIC", k[2]))
        out = []
        for key in order:
            body = "".join(piece for slot in self.cores[key] for piece in slot)
            if not body:
                continue
            out.append(self.labels[key] + "\n" + body + ("" if body.endswith("\n") else "\n"))
        return "".join(out)


_current: DeviceLog | None = None


def current() -> DeviceLog | None:
    """The log of the launch being simulated (None outside a launch)."""
    return _current


@contextlib.contextmanager
def capture(block_num: int, show: bool = True) -> Iterator[DeviceLog]:
    """Collect the device prints of one launch; print them when it ends (even when it fails)."""
    global _current
    saved, log = _current, DeviceLog(block_num)
    _current = log
    try:
        yield log
    finally:
        _current = saved
        text = log.text()
        if text and show:
            sys.stdout.write(text)
            sys.stdout.flush()


# ---- printf ----------------------------------------------------------------------------------


def printf_segments(fmt: str) -> list[tuple[str, str, str]]:
    """``fmt`` cut as the real lowering cuts it: one ``(prefix, spec, suffix)`` per conversion (the text
    before it, ``%...c``, and for the last one the text after it); a format with no conversion is one
    ``(fmt, "", "")``."""
    out: list[tuple[str, str, str]] = []
    pos = 0
    for m in _CONV.finditer(fmt):
        out.append((fmt[pos:m.start()], m.group(0), ""))
        pos = m.end()
    if not out:
        return [(fmt, "", "")]
    p, s, _ = out[-1]
    out[-1] = (p, s, fmt[pos:])
    return out


def _c_format(spec: str, value) -> str:
    """One C conversion of an ``int`` / ``float`` value (C and Python differ only on ``%#x`` of 0)."""
    m = _CONV.fullmatch(spec)
    assert m is not None
    flags, width, prec, conv = m.groups()
    if conv == "x" and value == 0:
        flags = flags.replace("#", "")  # C prints no 0x prefix for zero
    pyconv = {"i": "d", "u": "d", "p": "d"}.get(conv, conv)
    return ("%" + flags + width + (f".{prec}" if prec is not None else "") + pyconv) % value


def format_printf(fmt: str, values: list, kinds: list[str]) -> str:
    """The text ``cce::printf`` prints for ``fmt``: ``values[i]`` is the i-th argument (already of its
    dtype), ``kinds[i]`` ``"u64"`` for a UINT64 argument (the real lowering prints those in pieces,
    dropping width and flags: ``%u`` as up to three base-10^9 parts, ``%x`` as ``[0x]%x%08x`` when the
    high word is not zero), ``"int"`` / ``"float"`` / ``"ptr"`` for the others."""
    out = []
    for (prefix, spec, suffix), v, kind in zip(printf_segments(fmt), values, kinds):
        out.append(prefix)
        conv = spec[-1]
        if kind == "u64" and conv == "u":
            out.append(str(int(v)))
        elif kind == "u64" and conv == "x" and int(v) >> 32:
            v = int(v)
            out.append(("0x" if "#" in spec else "") + f"{v >> 32:x}{v & 0xFFFFFFFF:08x}")
        elif kind == "u64":
            out.append(_c_format(spec, int(v) & 0xFFFFFFFF))
        elif conv == "f":
            out.append(_c_format(spec, float(v)))
        else:
            out.append(_c_format(spec, int(v)))
        out.append(suffix)
    if not values:
        return fmt
    return "".join(out)


# ---- dump_data -------------------------------------------------------------------------------

_DTYPE_NAMES = {"DT_FP32": "float32", "DT_FP16": "float16", "DT_INT32": "int32", "DT_UINT32": "uint32",
                "DT_INT16": "int16", "DT_UINT16": "uint16", "DT_INT8": "int8", "DT_UINT8": "uint8"}


def dtype_name(dtype) -> str:
    """The name the chip's dump prints for an element type ("unknown" for the ones it lacks)."""
    return _DTYPE_NAMES.get(dtype.name, "unknown")


def value_text(v, dtype) -> str:
    """One element as the dump prints it (``__pypto_print_val``): floats ``%f``, signed integers as
    ``int``, unsigned as ``unsigned int`` (both truncated to 32 bits), 8-bit floats as their raw byte."""
    if dtype.is_float():
        if dtype.get_bit() == 8:
            return f"{int(np.asarray(v).view(np.uint8))} "
        return "%f " % float(v)
    if dtype.is_bool():
        return f"{int(bool(v))} "
    iv = int(v)
    if dtype.is_signed():
        iv = (iv & 0xFFFFFFFF) - ((iv & 0x80000000) << 1)
        return f"{iv} "
    return f"{iv & 0xFFFFFFFF} "


def tensor_text(data: np.ndarray, dtype) -> str:
    """``TPRINT`` of a GM tensor (window) ``data`` in ND layout: its shape padded to 5 dims, then one
    ``Batch`` per leading index with the last two dims as rows."""
    shape = (1,) * (5 - data.ndim) + tuple(data.shape)
    a = data.reshape(shape)
    head = (f"=== [dump_tensor] dtype: {dtype_name(dtype)}, Layout: ND, "
            f"shape=[{','.join(str(n) for n in shape)}] ===\n")
    out = [head]
    for i0 in range(shape[0]):
        for i1 in range(shape[1]):
            for i2 in range(shape[2]):
                out.append(f"  Batch [{i0}, {i1}, {i2}]:\n")
                for row in a[i0, i1, i2]:
                    out.append("".join(value_text(v, dtype) for v in row) + "\n")
    return "".join(out)


def tile_text(data: np.ndarray, valid: tuple[int, int], dtype, layout: str) -> str:
    """``TPRINT`` of a whole Vec tile: every physical row and column, ``| `` after the last valid column
    and a ``--------`` line after the last valid row (when they are not the tile's edge)."""
    rows, cols = data.shape
    vr, vc = valid
    out = [f"=== [dump_tile] dtype: {dtype_name(dtype)}, shape=[{rows},{cols}], valid=[{vr},{vc}], "
           f"Layout: {layout} ===\n"]
    for r in range(rows):
        line = []
        for c in range(cols):
            line.append(value_text(data[r, c], dtype))
            if c == vc - 1 and vc < cols:
                line.append("| ")
        out.append("".join(line) + "\n")
        if r == vr - 1 and vr < rows:
            out.append("--------\n")
    return "".join(out)


def window_bounds(requested: int, offset: int, limit: int) -> int:
    """How many rows (columns) of a window are printed: the request, cut at ``limit - offset``, >= 0."""
    return max(0, min(max(0, requested), limit - offset))


def tile_window_text(data: np.ndarray, offsets: tuple[int, int], requested: tuple[int, int],
                     shown: tuple[int, int], dtype, layout: str, space: str) -> str:
    """A tile window as the real lowering prints it (a Vec tile, or an Acc tile through its workspace)."""
    rows, cols = data.shape
    (ro, co), (rr, rc), (vr, vc) = offsets, requested, shown
    title = "Acc Tile Window" if space == "Acc" else "Tile Window"
    out = [f"=== [TPRINT {title}] Data Type: {dtype_name(dtype)}, Layout: {layout}, TileType: {space} ===\n",
           f"  Source Shape: [{rows}, {cols}], Window Offsets: [{ro}, {co}], Requested Shape: [{rr}, {rc}], "
           f"Valid Shape: [{vr}, {vc}]\n"]
    for r in range(vr):
        out.append("".join(value_text(data[ro + r, co + c], dtype) for c in range(vc)) + "\n")
    return "".join(out)
