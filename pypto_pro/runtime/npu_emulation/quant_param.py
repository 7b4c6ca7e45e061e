"""``torch_npu.npu_trans_quant_param(scale, offset=None, round_mode=0)`` on the host: the fp32 scales (and
int9 offsets) packed into the 64-bit quant words the fixpipe reads, bit for bit as the device op does.

The device op is CANN's TransQuantParamV2 / V3 kernel (``trans_quant_param_v2.h``); torch_npu's wrapper
(op-plugin ``TransQuantParamKernelNpuOpApi.cpp``) gives the result int64 dtype and the shape of ``scale``
(for a 1-D ``scale`` with an ``offset``: the longer of the two). Per element ``i`` (a length-1 ``scale``
or ``offset`` applies to every element):

* ``round_mode=0``: ``(fp32 bits of scale & 0xFFFFE000) | 1 << 46`` (the top 19 bits, signed-int8 flag);
* ``round_mode=1``: the scale rounded to fp19 (sign, 8-bit exponent, 10-bit mantissa) to nearest even
  on the 13 dropped bits (exponent 0 -> signed zero, exponent 255 kept with the truncated mantissa, a
  carry past exponent 254 -> exponent 255 with mantissa 0), shifted back by 13, ``| 1 << 46``;
* an offset: rounded to an integer to nearest even, clamped to [-256, 255], its low 9 bits at bit 37.
"""
from __future__ import annotations

from typing import Any

import numpy as np

_DEQ_MASK = 0xFFFFE000
_SIGNED_INT8 = 1 << 46


def _fp19(bits: int) -> int:
    sign, exponent, mantissa = (bits >> 31) & 1, (bits >> 23) & 0xFF, bits & 0x7FFFFF
    m19, round_bit, sticky = mantissa >> 13, (mantissa >> 12) & 1, mantissa & 0xFFF
    if exponent == 0:
        return sign << 18
    if exponent == 0xFF:
        return (sign << 18) | (exponent << 10) | m19
    if round_bit and (sticky or (m19 & 1)):
        m19 += 1
        if m19 >= 1 << 10:
            m19, exponent = 0, exponent + 1
    if exponent > 0xFF:
        return (sign << 18) | (0xFF << 10)
    return (sign << 18) | (exponent << 10) | m19


def _word(bits: int, round_mode: int) -> int:
    if round_mode == 0:
        return (bits & _DEQ_MASK) | _SIGNED_INT8
    return (_fp19(bits) << 13) | _SIGNED_INT8


def _offset_bits(value: float) -> int:
    v = int(np.clip(np.rint(np.float32(value)), -256, 255))
    return (v & 0x1FF) << 37


def npu_trans_quant_param(scale: Any, offset: Any = None, round_mode: int | None = 0) -> Any:
    """The quant words of ``scale`` (fp32, shape ``(t,)`` or ``(1, n)``) and ``offset`` as an int64 tensor."""
    import torch

    round_mode = 0 if round_mode is None else int(round_mode)
    if round_mode not in (0, 1):
        raise RuntimeError(f"round_mode must be 0 or 1. but now is {round_mode}")
    if scale.dtype != torch.float32:
        raise RuntimeError(f"npu_trans_quant_param: scale must be float32, got {scale.dtype}")
    if offset is not None and offset.dtype != torch.float32:
        raise RuntimeError(f"npu_trans_quant_param: offset must be float32, got {offset.dtype}")
    shape = tuple(scale.shape)
    if scale.dim() == 1 and offset is not None and offset.shape[0] > scale.shape[0]:
        shape = tuple(offset.shape)
    s = scale.detach().cpu().contiguous().numpy().reshape(-1).view(np.uint32)
    o = offset.detach().cpu().contiguous().numpy().reshape(-1) if offset is not None else None
    n = max(s.size, o.size if o is not None else 0)
    words = np.empty(n, np.uint64)
    for i in range(n):
        w = _word(int(s[0 if s.size == 1 else i]), round_mode)
        if o is not None and o.size:
            w |= _offset_bits(float(o[0 if o.size == 1 else i]))
        words[i] = w
    return torch.from_numpy(words.view(np.int64).reshape(shape)).to(scale.device)
