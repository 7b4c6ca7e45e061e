"""What each tile operation is: its kind (operand shape rules), pipe, dtypes and memory spaces.

The frontend type-checks calls with this table; the simulator and emitters key on ``name``.
"""
from __future__ import annotations

from dataclasses import dataclass

from pypto_pro.language.dtypes import (ARITH_DTYPES, DT_BF16, DT_FP16, DT_FP32, DT_INT8, DT_INT16, DT_INT32,
                                       DT_UINT8, FLOAT_DTYPES, DataType)

# dtypes the vector unit moves, fills and converts between
ALL_DTYPES = (DT_FP16, DT_BF16, DT_FP32, DT_INT8, DT_UINT8, DT_INT16, DT_INT32)
from pypto_pro.language.enums import MemorySpace, PipeType

VEC = (MemorySpace.Vec,)


@dataclass(frozen=True)
class OpSpec:
    name: str
    kind: str  # binary | scalar | unary | reduce | expand | cast | fill | move
    pipe: PipeType
    dtypes: tuple[DataType, ...]
    spaces: tuple[MemorySpace, ...] = VEC


def _specs() -> dict[str, OpSpec]:
    table: dict[str, OpSpec] = {}

    def add(name: str, kind: str, dtypes: tuple[DataType, ...]) -> None:
        table[name] = OpSpec(name, kind, PipeType.V, dtypes)

    for n in ("add", "sub", "mul", "maximum", "minimum"):
        add(n, "binary", ARITH_DTYPES)
    add("div", "binary", FLOAT_DTYPES)
    for n in ("adds", "subs", "muls", "maxs", "mins"):
        add(n, "scalar", ARITH_DTYPES)
    add("divs", "scalar", FLOAT_DTYPES)
    for n in ("exp", "log", "sqrt", "rsqrt", "recip"):
        add(n, "unary", FLOAT_DTYPES)
    for n in ("abs", "neg", "relu"):
        add(n, "unary", ARITH_DTYPES)
    for n in ("sum", "max", "min"):
        add(n, "reduce", ARITH_DTYPES)
    for n in ("expand_add", "expand_sub", "expand_mul", "expand_max", "expand_min"):
        add(n, "expand", ARITH_DTYPES)
    add("expand_div", "expand", FLOAT_DTYPES)
    add("cast", "cast", ALL_DTYPES)
    add("expands", "fill", ALL_DTYPES)
    add("move", "move", ALL_DTYPES)
    return table


OPS: dict[str, OpSpec] = _specs()

CAST_MODES = ("rint", "round", "floor", "ceil", "trunc")

# Data movement: (tile memory space) -> pipe, per direction. GM <-> Vec is UB traffic; GM <-> Mat
# is L1 traffic; Acc -> GM goes through the fixpipe.
LOAD_PIPES: dict[MemorySpace, PipeType] = {MemorySpace.Vec: PipeType.MTE2, MemorySpace.Mat: PipeType.MTE2}
STORE_PIPES: dict[MemorySpace, PipeType] = {MemorySpace.Vec: PipeType.MTE3, MemorySpace.Acc: PipeType.FIX}

# Cube: (lhs dtype, rhs dtype) -> accumulator dtype (PTO-ISA TMATMUL).
MATMUL_DTYPES: dict[tuple[DataType, DataType], DataType] = {
    (DT_FP16, DT_FP16): DT_FP32, (DT_BF16, DT_BF16): DT_FP32, (DT_INT8, DT_INT8): DT_INT32,
    (DT_FP32, DT_FP32): DT_FP32,
}
# Fixpipe conversions from an accumulator on its way out of L0C.
ACC_STORE_DTYPES: dict[DataType, tuple[DataType, ...]] = {
    DT_FP32: (DT_FP32, DT_FP16, DT_BF16), DT_INT32: (DT_INT32,),
}
