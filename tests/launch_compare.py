"""Launch a kernel under two simulator settings and compare everything it leaves behind.

The on / off tests of the simulator's fast paths (the rules' memo, the scheduler's ready heap) run one
kernel both ways and require the same output bytes, every report field and the trace files byte for
byte; the inputs mix in the values a fast path is most likely to get wrong.
"""
from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path

import numpy as np

_SPECIAL_BITS = {
    np.dtype(np.float16): (np.uint16, [0x7E01, 0xFC17, 0x7C00, 0xFC00, 0x0000, 0x8000, 0x0001, 0x83FF]),
    np.dtype(np.float32): (np.uint32, [0x7FC00001, 0xFF800017, 0x7F800000, 0xFF800000, 0, 0x80000000, 1,
                                       0x807FFFFF]),
}


def specials(shape: tuple, rng: np.random.Generator, dtype=np.float16) -> np.ndarray:
    """Normal values with NaN payloads of both signs, signed zeros, subnormals and infinities mixed in
    (one element in 64)."""
    x = rng.standard_normal(shape).astype(dtype)
    ut, codes = _SPECIAL_BITS[np.dtype(dtype)]
    bits, special = x.view(ut).reshape(-1), np.array(codes, ut)
    idx = rng.choice(bits.size, size=max(1, bits.size // 64), replace=False)
    bits[idx] = special[rng.integers(0, special.size, idx.size)]
    return x


def capture(kernel, args: list, blocks: int, trace: Path | None, check: str = "raise",
            catch: bool = False) -> tuple[list[bytes], dict | str, dict[str, bytes]]:
    """Launch ``kernel`` on copies of ``args``: (the arrays' bytes after it, the report's fields but its
    trace file list, the trace directory's files by name). ``catch``: a raised fault becomes its
    message in place of the fields (two runs must fail alike)."""
    arrays = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    opts = {"check": check} if trace is None else {"check": check, "trace": str(trace)}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            report = kernel.options(**opts)[None, blocks](*arrays)
        fields = {k: v for k, v in dataclasses.asdict(report).items() if k != "trace_files"}
    except Exception as exc:
        if not catch:
            raise
        fields = f"{type(exc).__name__}: {exc}"
    files = {p.name: p.read_bytes() for p in sorted(trace.glob("*")) if p.is_file()} if trace else {}
    return [a.tobytes() for a in arrays if isinstance(a, np.ndarray)], fields, files


def assert_same(a: tuple, b: tuple, dir_a: str, dir_b: str, need_files: bool = False):
    """Two :func:`capture` results are equal; the trace files, which name their directory (``dir_a`` /
    ``dir_b``), are compared without it. ``need_files``: there must be trace files. Returns a's fields."""
    assert a[0] == b[0]
    assert a[1] == b[1]
    assert (a[2] or not need_files) and a[2].keys() == b[2].keys()
    for name in a[2]:
        assert a[2][name].replace(f"/{dir_a}".encode(), f"/{dir_b}".encode()) == b[2][name], name
    return a[1]
