"""Element types of tensors and tiles, mapped to NumPy (bf16 through ml_dtypes)."""
from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np


@dataclass(frozen=True)
class DataType:
    """A device element type: its DSL name, NumPy dtype and size in bytes."""

    name: str
    np_dtype: np.dtype
    is_float: bool

    @property
    def itemsize(self) -> int:
        return self.np_dtype.itemsize

    @property
    def is_int(self) -> bool:
        return not self.is_float

    def __repr__(self) -> str:
        return f"pl.{self.name}"


DT_FP16 = DataType("DT_FP16", np.dtype(np.float16), True)
DT_BF16 = DataType("DT_BF16", np.dtype(ml_dtypes.bfloat16), True)
DT_FP32 = DataType("DT_FP32", np.dtype(np.float32), True)
DT_INT8 = DataType("DT_INT8", np.dtype(np.int8), False)
DT_UINT8 = DataType("DT_UINT8", np.dtype(np.uint8), False)
DT_INT16 = DataType("DT_INT16", np.dtype(np.int16), False)
DT_INT32 = DataType("DT_INT32", np.dtype(np.int32), False)

ALL_DTYPES: tuple[DataType, ...] = (DT_FP16, DT_BF16, DT_FP32, DT_INT8, DT_UINT8, DT_INT16, DT_INT32)
BY_NUMPY: dict[np.dtype, DataType] = {d.np_dtype: d for d in ALL_DTYPES}
FLOAT_DTYPES = tuple(d for d in ALL_DTYPES if d.is_float)
ARITH_DTYPES = (DT_FP16, DT_BF16, DT_FP32, DT_INT16, DT_INT32)
