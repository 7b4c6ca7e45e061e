"""Element types of tensors, tiles and scalars: every ``pl.DT_*`` of the real PyPTO Pro.

Each :class:`DataType` knows its bit width and kind (the real ``DataType`` query methods:
``get_bit()``, ``is_float()``, ``is_int()``, ``is_signed_int()``, ...), the C type PTO-ISA
spells it with, and how the simulator stores it:

* ``np_dtype``: the NumPy dtype of one element in memory (ml_dtypes for bf16 / fp8 / e8m0).
  Sub-byte types (INT4, UINT4, FP4 variants, HF4) have ``np_dtype = None``: two elements share a
  byte (``packed``); their values are unpacked by ``pypto_pro.language.lowbit``.
* ``value_dtype``: the NumPy dtype that holds one *value* exactly (float32 for fp8 / fp4 / hf8,
  int8 / uint8 for int4 / uint4), used wherever the simulator needs numbers.

Sources: the real ``docs/zh/pypto_pro/api/SIMD-API/basic_data_structures/DataType.md`` (names,
widths, signedness, C types) and ``Scalar.md`` (which types may be scalars).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np


class DataType:
    """A device element type. Compared by identity (one object per ``pl.DT_*``)."""

    __slots__ = ("name", "short", "bits", "kind", "c_type", "np_dtype", "value_dtype", "scalar_ok", "torch_name")

    def __init__(self, name: str, short: str, bits: int, kind: str, c_type: str | None,
                 np_dtype: np.dtype | None, value_dtype: np.dtype, scalar_ok: bool, torch_name: str | None):
        self.name = name            # "DT_FP16"
        self.short = short          # "fp16" (str(dtype), as the real to_string())
        self.bits = bits            # storage width of one element
        self.kind = kind            # "bool" | "int" | "uint" | "float"
        self.c_type = c_type        # PTO-ISA / C spelling, None where the real docs give none
        self.np_dtype = np_dtype    # one element in memory; None for packed sub-byte types
        self.value_dtype = value_dtype
        self.scalar_ok = scalar_ok  # allowed in scalar expressions (Scalar.md)
        self.torch_name = torch_name

    # ---- the real DataType query methods --------------------------------------------------

    def get_bit(self) -> int:
        return self.bits

    def is_float(self) -> bool:
        return self.kind == "float"

    def is_int(self) -> bool:
        return self.kind in ("int", "uint")

    def is_signed_int(self) -> bool:
        return self.kind == "int"

    is_signed = is_signed_int

    def is_unsigned_int(self) -> bool:
        return self.kind == "uint"

    is_unsigned = is_unsigned_int

    def is_bool(self) -> bool:
        return self.kind == "bool"

    def to_string(self) -> str:
        return self.short

    def to_c_type_string(self) -> str:
        return self.c_type or self.short

    # ---- storage --------------------------------------------------------------------------

    @property
    def packed(self) -> bool:
        """Two elements per byte (the 4-bit types)."""
        return self.bits < 8

    @property
    def itemsize(self) -> int:
        """Bytes of one element; 1 for the packed 4-bit types (use :meth:`nbytes` for sizes)."""
        return max(1, self.bits // 8)

    def nbytes(self, elements: int) -> int:
        """Bytes that ``elements`` elements occupy (sub-byte types round up to whole bytes)."""
        return (elements * self.bits + 7) // 8

    def __str__(self) -> str:
        return self.short

    def __repr__(self) -> str:
        return f"pl.{self.name}"

    def __reduce__(self):  # pickle by name: one object per dtype
        return (by_name, (self.name,))


def _dt(name: str, short: str, bits: int, kind: str, c_type: str | None, np_dtype, value_dtype,
        scalar_ok: bool = False, torch_name: str | None = None) -> DataType:
    return DataType(name, short, bits, kind, c_type, np.dtype(np_dtype) if np_dtype is not None else None,
                    np.dtype(value_dtype), scalar_ok, torch_name)


_F32 = np.float32
DT_BOOL = _dt("DT_BOOL", "bool", 8, "bool", "bool", np.bool_, np.bool_, True, "bool")
DT_INT4 = _dt("DT_INT4", "int4", 4, "int", None, None, np.int8)
DT_INT8 = _dt("DT_INT8", "int8", 8, "int", "int8_t", np.int8, np.int8, True, "int8")
DT_INT16 = _dt("DT_INT16", "int16", 16, "int", "int16_t", np.int16, np.int16, True, "int16")
DT_INT32 = _dt("DT_INT32", "int32", 32, "int", "int32_t", np.int32, np.int32, True, "int32")
DT_INT64 = _dt("DT_INT64", "int64", 64, "int", "int64_t", np.int64, np.int64, True, "int64")
DT_UINT4 = _dt("DT_UINT4", "uint4", 4, "uint", None, None, np.uint8)
DT_UINT8 = _dt("DT_UINT8", "uint8", 8, "uint", "uint8_t", np.uint8, np.uint8, True, "uint8")
DT_UINT16 = _dt("DT_UINT16", "uint16", 16, "uint", "uint16_t", np.uint16, np.uint16, True, "uint16")
DT_UINT32 = _dt("DT_UINT32", "uint32", 32, "uint", "uint32_t", np.uint32, np.uint32, True, "uint32")
DT_UINT64 = _dt("DT_UINT64", "uint64", 64, "uint", "uint64_t", np.uint64, np.uint64, True, "uint64")
DT_FP4 = _dt("DT_FP4", "fp4", 4, "float", None, None, _F32)
DT_FP8E4M3FN = _dt("DT_FP8E4M3FN", "fp8e4m3fn", 8, "float", "float8_e4m3_t", ml_dtypes.float8_e4m3fn, _F32,
                   torch_name="float8_e4m3fn")
DT_FP8E5M2 = _dt("DT_FP8E5M2", "fp8e5m2", 8, "float", "float8_e5m2_t", ml_dtypes.float8_e5m2, _F32,
                 torch_name="float8_e5m2")
DT_FP8E8M0 = _dt("DT_FP8E8M0", "fp8e8m0", 8, "float", "float8_e8m0_t", ml_dtypes.float8_e8m0fnu, _F32,
                 torch_name="float8_e8m0fnu")
DT_FP4E2M1 = _dt("DT_FP4E2M1", "fp4e2m1", 4, "float", "float4_e2m1x2_t", None, _F32, torch_name="float4_e2m1fn_x2")
DT_FP4E1M2 = _dt("DT_FP4E1M2", "fp4e1m2", 4, "float", "float4_e1m2x2_t", None, _F32)
DT_FP16 = _dt("DT_FP16", "fp16", 16, "float", "half", np.float16, np.float16, True, "float16")
DT_FP32 = _dt("DT_FP32", "fp32", 32, "float", "float", np.float32, np.float32, True, "float32")
DT_BF16 = _dt("DT_BF16", "bf16", 16, "float", "bfloat16_t", ml_dtypes.bfloat16, ml_dtypes.bfloat16, True, "bfloat16")
DT_HF4 = _dt("DT_HF4", "hf4", 4, "float", None, None, _F32)
DT_HF8 = _dt("DT_HF8", "hf8", 8, "float", "hifloat8_t", np.uint8, _F32)

# every real dtype, in the order of the real DataType.md table
ALL_DTYPES: tuple[DataType, ...] = (
    DT_BOOL, DT_INT4, DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_UINT4, DT_UINT8, DT_UINT16, DT_UINT32, DT_UINT64,
    DT_FP4, DT_FP8E4M3FN, DT_FP8E5M2, DT_FP8E8M0, DT_FP4E2M1, DT_FP4E1M2, DT_FP16, DT_FP32, DT_BF16, DT_HF4, DT_HF8)
BY_NAME: dict[str, DataType] = {d.name: d for d in ALL_DTYPES}
# host NumPy dtypes with an unambiguous device dtype (uint8 storage of HF8 does not count)
BY_NUMPY: dict[np.dtype, DataType] = {d.np_dtype: d for d in ALL_DTYPES if d.np_dtype is not None and d is not DT_HF8}

FLOAT_DTYPES = (DT_FP16, DT_BF16, DT_FP32)                     # vector-computable floats
INT_DTYPES = (DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32, DT_INT64, DT_UINT64)
ARITH_DTYPES = (DT_FP16, DT_BF16, DT_FP32, DT_INT16, DT_INT32)   # the common add/sub/mul/max/min set
SCALAR_DTYPES = tuple(d for d in ALL_DTYPES if d.scalar_ok)
# the default type of a bare literal in kernel code (DataType.md: ints are INT64, floats FP32)
DEFAULT_INT = DT_INT64
DEFAULT_FLOAT = DT_FP32


def by_name(name: str) -> DataType:
    return BY_NAME[name]


def is_dtype(v: object) -> bool:
    return isinstance(v, DataType)
