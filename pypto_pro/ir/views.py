"""Global-memory pointers and tensor views of the IR (``pl.Ptr`` parameters, ``pl.make_tensor``).

A ``pl.Ptr[dtype]`` parameter is a :class:`PtrParam`: a flat buffer of its dtype (a
``TensorParam`` of rank 1, so the launch binds and checks it like a tensor). ``pl.make_tensor``
makes a :class:`TensorView` of a parameter's memory: a shape, strides (in elements of the view's
dtype) and a byte offset, all scalar expressions evaluated when an instruction uses the view. A
view stands where a tensor parameter does (``GMRef.param``); the simulator builds the strided
window at dispatch and checks every element it touches lies inside the parameter's memory.
"""
from __future__ import annotations

from dataclasses import dataclass

from pypto_pro.ir.expr import Const, Expr
from pypto_pro.ir.nodes import TensorParam
from pypto_pro.language.dtypes import DataType
from pypto_pro.language.types import DYNAMIC, TensorType


@dataclass(frozen=True)
class PtrParam(TensorParam):
    """A ``pl.Ptr[dtype]`` kernel parameter: the argument's bytes, as a flat buffer of ``dtype``."""

    @property
    def dtype(self) -> DataType:
        return self.type.dtype  # type: ignore[return-value]

    @staticmethod
    def of(name: str, dtype: DataType, index: int) -> "PtrParam":
        return PtrParam(name, TensorType((DYNAMIC,), dtype), index)


@dataclass(frozen=True, eq=False)
class TensorView:
    """``pl.make_tensor(ptr_or_tensor, shape, stride, dtype)``: a strided window of ``base``'s memory.

    ``type`` has the view's rank and dtype (dims are ints where the shape is a constant, else
    ``pl.DYNAMIC``); ``shape`` / ``strides`` are in elements of that dtype; ``offset`` is in bytes
    from the start of ``base``'s memory. ``gm_index`` numbers the view among the program's GM
    operands after the parameters (the simulator's GM binding slot)."""

    name: str
    base: TensorParam
    type: TensorType
    shape: tuple[Expr, ...]
    strides: tuple[Expr, ...]
    offset: Expr
    gm_index: int

    @property
    def index(self) -> int:
        return self.gm_index

    def view_exprs(self) -> tuple[Expr, ...]:
        """The run-time values an instruction on the view needs: shape, strides, byte offset."""
        return (*self.shape, *self.strides, self.offset)

    def dim_expr(self, axis: int) -> Expr | int:
        d = self.shape[axis]
        return d.value if isinstance(d, Const) else d
