"""``pl.printf`` / ``pl.pto_assert`` as device prints (``cce::printf``), as the real lowering writes them
(``backend_cce_ops.cpp``): consecutive conversions share one call; a signed 64-bit value prints with
``%lld`` / ``%lli`` and a ``long long`` cast; 8- and 16-bit values are widened to ``int`` /
``unsigned int``; a 64-bit unsigned ``%u`` / ``%x`` is printed from 32-bit pieces (the device printf has
no 64-bit conversions): decimal as up to three 9-digit groups, hex as a high word and a zero-padded low
word. The simulator's ``debug_log.format_printf`` formats the same way.
"""
from __future__ import annotations

import re

from pypto_pro.language.dtypes import DataType

_CONV = re.compile(r"%%|%([-+ #0]*\d*(?:\.\d*)?)([diuxfp])")


def c_string(text: str) -> str:
    """``text`` as a C string literal."""
    out = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
    return f'"{out}"'


def _segments(fmt: str) -> list[tuple[str, str, str]]:
    """(text before, the conversion spec ``%...c``, conversion char) per conversion; the text after the last
    one is returned as a final ("", "", "") segment's prefix."""
    segs: list[tuple[str, str, str]] = []
    pos, text = 0, ""
    for m in _CONV.finditer(fmt):
        text += fmt[pos:m.start()]
        pos = m.end()
        if m.group(0) == "%%":
            text += "%%"
            continue
        segs.append((text, m.group(0), m.group(2)))
        text = ""
    segs.append((text + fmt[pos:], "", ""))
    return segs


def _cast(arg: str, dt: DataType, conv: str) -> tuple[str, str]:
    """(the length modifier to insert, the cast argument) of one non-u64 conversion."""
    if conv == "f":
        return "", arg
    if conv in "di" and dt.name == "DT_INT64":
        return "ll", f"static_cast<long long>({arg})"
    if dt.name == "DT_BOOL":
        return "", f"static_cast<unsigned int>({arg})" if conv == "u" else f"static_cast<int>({arg})"
    if dt.name in ("DT_INT8", "DT_INT16"):
        return "", f"static_cast<int>({arg})"
    if dt.name in ("DT_UINT8", "DT_UINT16"):
        return "", f"static_cast<unsigned int>({arg})"
    return "", arg


def printf_statements(fmt: str, args: list[str], dtypes: list[DataType], tmp: list[int]) -> list[str]:
    """C++ statements printing ``fmt`` with the C++ expressions ``args`` (of ``dtypes``); ``tmp`` numbers
    the temporaries of 64-bit pieces."""
    out: list[str] = []
    batch_fmt, batch_args = "", []

    def flush() -> None:
        nonlocal batch_fmt, batch_args
        if batch_fmt:
            out.append(f"cce::printf({', '.join([c_string(batch_fmt), *batch_args])});")
        batch_fmt, batch_args = "", []

    segs = _segments(fmt)
    for i, (before, spec, conv) in enumerate(segs):
        if not spec:
            batch_fmt += before
            continue
        arg, dt = args[i], dtypes[i]
        if dt.name == "DT_UINT64" and conv in "ux":
            batch_fmt += before
            flush()
            out += _u64_statements(arg, spec, conv, tmp)
            continue
        length, cast = _cast(arg, dt, conv)
        batch_fmt += before + spec[:-1] + length + spec[-1]
        batch_args.append(cast)
    flush()
    return out


def _u64_statements(arg: str, spec: str, conv: str, tmp: list[int]) -> list[str]:
    n = tmp[0]
    tmp[0] += 1
    v, lo, mid, hi, rest = (f"pp_u64_{x}_{n}" for x in ("value", "low", "mid", "high", "rest"))
    head = [f"{{ const uint64_t {v} = static_cast<uint64_t>({arg});"]
    if conv == "u":
        return head + [
            f"  const unsigned int {lo} = static_cast<unsigned int>({v} % 1000000000ULL);",
            f"  const uint64_t {rest} = {v} / 1000000000ULL;",
            f"  const unsigned int {mid} = static_cast<unsigned int>({rest} % 1000000000ULL);",
            f"  const unsigned int {hi} = static_cast<unsigned int>({rest} / 1000000000ULL);",
            f'  if ({hi} != 0U) {{ cce::printf("%u%09u%09u", {hi}, {mid}, {lo}); }}',
            f'  else if ({mid} != 0U) {{ cce::printf("%u%09u", {mid}, {lo}); }}',
            f'  else {{ cce::printf("%u", {lo}); }} }}']
    alt = "#" in spec
    return head + [
        f"  const unsigned int {hi} = static_cast<unsigned int>({v} >> 32);",
        f"  const unsigned int {lo} = static_cast<unsigned int>({v} & 0xffffffffULL);",
        f'  if ({hi} != 0U) {{ cce::printf({c_string("0x%x%08x" if alt else "%x%08x")}, {hi}, {lo}); }}',
        f"  else {{ cce::printf({c_string(spec)}, {lo}); }} }}"]
