"""The fixpipe's conversion of an accumulator on its way out of L0C, with a per-tensor quantisation
scale (``pl.store`` / ``pl.store_tile`` / ``pl.move`` Acc -> Vec with ``scale=``).

The scale reaches the hardware as a 64-bit deqScalar: the fp32 bits of the scale in its low word
(the real frontend's encoding of a float scale; a run-time fp32 scalar is bit-cast, a run-time int
scalar carries the bits already) and, for an int8 output, bit 46 set (signed requantisation). Per
element, as PTO-ISA's CPU model (``include/pto/cpu/common.hpp::quantize_element``) computes it:

* ``v = float32(src) * float32(scale)`` (one fp32 multiply; an int32 source is rounded to fp32 first);
* to int8 (QF322B8_PRE / REQ8): round half to even, add the offset (bits 37-45, 0 here), clamp to
  [-128, 127] (signed, bit 46) or [0, 255];
* to fp16 from fp32 (QF322F16_PRE): a finite value clamps to +-65504, inf and NaN pass; from int32
  (DEQF16): clamps always; then rounded to nearest even;
* ReLU (``relu_pre_mode``) applies after the clamp; fp32 -> fp32 and int32 -> int32 have no quant
  mode, so the scale does not apply (PTO-ISA's ``GetScalarPreQuantMode``), except an a5 store of fp32
  to GM (``GetScalarPreQuantModeGm``: QF322F32_PRE, one fp32 multiply; ``ops/data_movement.py``).
"""
from __future__ import annotations

import struct

import numpy as np

F16_MAX = 65504.0
SIGNED_BIT = 1 << 46
# (accumulator dtype, output dtype) pairs a scale quantises (the real frontend rejects uint8 and bf16)
SCALED = {("DT_FP32", "DT_INT8"), ("DT_FP32", "DT_FP16"), ("DT_INT32", "DT_INT8"), ("DT_INT32", "DT_FP16")}


def encode(scale: float, dst_name: str) -> int:
    """The deqScalar of a float scale for an output dtype."""
    bits = struct.unpack("<I", struct.pack("<f", float(scale)))[0]
    return bits | SIGNED_BIT if dst_name == "DT_INT8" else bits


def with_sign(bits: int, dst_name: str) -> int:
    return (int(bits) & ~SIGNED_BIT) | SIGNED_BIT if dst_name == "DT_INT8" else int(bits)


def quantize(src: np.ndarray, out_dtype: np.dtype, deq: int, relu: bool) -> np.ndarray:
    """``src`` (fp32 or int32 accumulator values) scaled and converted into ``out_dtype``."""
    scale = np.array([deq & 0xFFFFFFFF], np.uint32).view(np.float32)[0]
    v = np.asarray(src).astype(np.float32) * scale
    out_dtype = np.dtype(out_dtype)
    if out_dtype.kind == "i" or out_dtype == np.uint8:
        offset = float((deq >> 37) & 0x1FF)
        lo, hi = (-128.0, 127.0) if (deq >> 46) & 1 else (0.0, 255.0)
        v = np.clip(np.rint(v + np.float32(offset)), lo, hi)
    elif np.asarray(src).dtype.kind == "i":
        v = np.clip(v, -F16_MAX, F16_MAX)
    else:
        v = np.where(np.isfinite(v), np.clip(v, -F16_MAX, F16_MAX), v)
    if relu:
        v = np.where(v > 0, v, np.float32(0))  # C++ ReLU: NaN -> 0
    return v.astype(out_dtype)
