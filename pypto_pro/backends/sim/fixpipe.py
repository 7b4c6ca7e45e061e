"""The fixpipe's conversion of an accumulator on its way out of L0C, with a quantisation scale
(``pl.store`` / ``pl.store_tile`` / ``pl.move`` Acc -> Vec with ``scale=``): per tensor (one 64-bit
deqScalar) or per channel (a Scaling tile: one 64-bit quant word per output column).

A quant word packs (PTO-ISA ``include/pto/cpu/common.hpp::quantize_element``):

* bits 0-31: the scale. A **scalar** mode (per tensor) reads all 32 bits as an fp32; a **vector**
  mode (per channel) reads only M1 = bits 13-31 (sign, 8-bit exponent, the top 10 mantissa bits:
  ``extract_m1_from_quant``), i.e. the fp32 with its low 13 bits dropped -- which is what
  ``torch_npu.npu_trans_quant_param`` keeps. Exponent and mantissa both zero is 0; otherwise
  ``(-1)^s * (1 + m/1024) * 2^(e-127)`` (an exponent of 0 is not a subnormal there);
* bits 37-45: an offset (zero point, a signed 9-bit integer) added before rounding to int8; bit 46:
  signed int8 (clamp to [-128, 127], else [0, 255]). The real frontend sets bit 46 of a per-tensor
  scale for an int8 output; a per-channel word is used as the user wrote it. PTO-ISA's CPU model
  reads the offset unsigned; it is read signed here, because the real codegen widens a run-time
  DT_INT32 scale with ``static_cast<uint64_t>`` (sign extension): a negative scale's bits then carry
  an offset field of all ones, -1 as a signed field (the real on-chip tests accept that off-by-one
  with ``atol=1``), 511 as an unsigned one (which would saturate every value).

Per element: ``v = float32(src) * scale`` (one fp32 multiply; an int32 source is rounded to fp32
first), then by mode: to int8 (QF322B8_PRE / REQ8 / VQF322B8_PRE / VREQ8) round half to even after
adding the offset and clamp; to fp16 from int32 (DEQF16 / VDEQF16) clamp to +-65504; to fp16 from
fp32 (QF322F16_PRE) clamp a finite value to +-65504 (inf / NaN pass), then round to nearest even;
to fp32 (a5 QF322F32_PRE) nothing more; to HiFloat8 (a5 QF322HIF8_PRE) the HiF8 encoding of ``v``.
ReLU (``relu_pre_mode``) applies last. Which pairs have a mode is per arch (``MODES``: PTO-ISA
``npu/a5/TStore.hpp::Get{Scalar,Vector}PreQuantModeGm`` and the a2a3 / CPU model's
``Get{Scalar,Vector}PreQuantMode``); a pair without one ignores the scale (a2a3 fp32 -> fp32). The
a5 vector modes the CPU model lacks (VQF322F16 / F32 / HIF8) are taken to work as their scalar
counterparts on an M1 scale.
"""
from __future__ import annotations

import struct

import numpy as np

F16_MAX = 65504.0
SIGNED_BIT = 1 << 46

_FP32, _INT32 = "DT_FP32", "DT_INT32"
_A5 = {(_FP32, "DT_INT8"): "b8", (_FP32, "DT_HF8"): "hf8", (_FP32, "DT_FP16"): "f16", (_FP32, "DT_BF16"): "bf16",
       (_FP32, _FP32): "f32", (_INT32, "DT_INT8"): "b8", (_INT32, "DT_FP16"): "f16", (_INT32, "DT_BF16"): "bf16"}
# (arch, vector mode?) -> (accumulator dtype, output dtype) -> quant mode
MODES: dict[tuple[str, bool], dict[tuple[str, str], str]] = {
    ("a5", False): _A5,
    ("a5", True): _A5,
    ("a2a3", False): {(_FP32, "DT_INT8"): "b8", (_FP32, "DT_FP16"): "f16", (_FP32, "DT_BF16"): "bf16",
                      (_INT32, "DT_INT8"): "b8", (_INT32, "DT_FP16"): "f16"},
    ("a2a3", True): {(_FP32, "DT_INT8"): "b8", (_INT32, "DT_INT8"): "b8", (_INT32, "DT_FP16"): "f16"},
}


def quant_mode(arch: str, src_name: str, dst_name: str, vector: bool) -> str | None:
    """The fixpipe's quant mode for an accumulator -> output pair on ``arch`` (None: no mode)."""
    return MODES.get((arch, vector), {}).get((src_name, dst_name))


def quant_outputs(arch: str, src_name: str, vector: bool) -> tuple[str, ...]:
    """Output dtypes a scale quantises an accumulator of ``src_name`` into on ``arch``."""
    return tuple(d for (s, d) in MODES.get((arch, vector), {}) if s == src_name)


def encode(scale: float, dst_name: str) -> int:
    """The deqScalar of a float scale for an output dtype."""
    bits = struct.unpack("<I", struct.pack("<f", float(scale)))[0]
    return bits | SIGNED_BIT if dst_name == "DT_INT8" else bits


def with_sign(bits: int, dst_name: str) -> int:
    return (int(bits) & ~SIGNED_BIT) | SIGNED_BIT if dst_name == "DT_INT8" else int(bits)


def scale_of(deq, vector: bool) -> np.ndarray:
    """The fp32 scale(s) of quant word(s): all 32 low bits (scalar mode) or M1 (vector mode)."""
    words = np.asarray(deq, dtype=np.uint64)
    low = (words & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    if not vector:
        return low.view(np.float32)
    m1 = (low >> np.uint32(13)).astype(np.int64)
    sign = np.where((m1 >> 18) & 1, np.float32(-1), np.float32(1)).astype(np.float32)
    exponent = (m1 >> 10) & 0xFF
    mantissa = m1 & 0x3FF
    mag = np.ldexp(np.float32(1) + mantissa.astype(np.float32) / np.float32(1024), (exponent - 127).astype(np.int32))
    with np.errstate(over="ignore"):
        value = (sign * mag.astype(np.float32)).astype(np.float32)
    return np.where((exponent == 0) & (mantissa == 0), np.float32(0), value).astype(np.float32)


def scaled(src: np.ndarray, deq, vector: bool = False) -> np.ndarray:
    """``float32(src) * scale``: ``deq`` one word, or one per column (vector mode)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(src).astype(np.float32) * scale_of(deq, vector)


def quantize(src: np.ndarray, out_dtype: np.dtype, deq, relu: bool, vector: bool = False) -> np.ndarray:
    """``src`` (fp32 or int32 accumulator values) scaled and converted into ``out_dtype`` (int8, fp16,
    fp32); ``deq`` is one quant word or (vector mode) one per column."""
    v = scaled(src, deq, vector)
    out_dtype = np.dtype(out_dtype)
    words = np.asarray(deq, dtype=np.uint64)
    if out_dtype.kind == "i" or out_dtype == np.uint8:
        field = ((words >> np.uint64(37)) & np.uint64(0x1FF)).astype(np.int64)
        offset = np.where(field >= 256, field - 512, field).astype(np.float32)  # a signed 9-bit zero point
        signed = ((words >> np.uint64(46)) & np.uint64(1)).astype(bool)
        lo = np.where(signed, np.float32(-128), np.float32(0))
        hi = np.where(signed, np.float32(127), np.float32(255))
        with np.errstate(invalid="ignore"):
            v = np.clip(np.rint(v + offset), lo, hi)
    elif out_dtype == np.float16:
        if np.asarray(src).dtype.kind == "i":
            v = np.clip(v, -F16_MAX, F16_MAX)
        else:
            v = np.where(np.isfinite(v), np.clip(v, -F16_MAX, F16_MAX), v)
    if relu:
        v = np.where(v > 0, v, np.float32(0))  # C++ ReLU: NaN -> 0
    with np.errstate(invalid="ignore"):
        return v.astype(out_dtype)
