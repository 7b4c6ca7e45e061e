"""Type constructors of the DSL, as the real PyPTO Pro spells them.

``pl.Tensor[[dims], dtype(, layout)(, memref)]`` (GM tensor parameters), ``pl.Ptr[dtype]``
(raw GM pointers), ``pl.Tile[[shape], dtype(, memref)]`` (tile annotations of helpers),
``pl.MemRef``, ``pl.Scalar``, the shape policies ``pl.DYNAMIC`` / ``pl.STATIC`` and ``pl.TileType``.
Scalar parameters are annotated with a dtype (``n: pl.DT_INT32``). They are ordinary Python
objects: the frontend evaluates them at compile time.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from pypto_pro.language.dtypes import DataType
from pypto_pro.language.enums import MemorySpace, TensorLayout  # noqa: F401
from pypto_pro.language.tile_type import TileType  # noqa: F401  (pl.TileType lives in tile_type.py)


class _ShapePolicy:
    """A tensor dimension not fixed by its annotation: ``pl.DYNAMIC`` (read at launch, one
    compiled variant for every value) or ``pl.STATIC`` (read at launch, one variant per value)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"pl.{self.name}"

    def __reduce__(self):
        return (_policy, (self.name,))


def _policy(name: str) -> "_ShapePolicy":
    return DYNAMIC if name == "DYNAMIC" else STATIC


_Dynamic = _ShapePolicy  # the name older code imports
DYNAMIC = _ShapePolicy("DYNAMIC")
STATIC = _ShapePolicy("STATIC")


@dataclass(frozen=True, eq=False)
class DTypeVar:
    """A dtype chosen by the arguments at launch: ``T = pl.DTypeVar("T", [pl.DT_FP16, pl.DT_BF16])``
    annotates ``pl.Tensor[[...], T]``; inside the kernel ``T`` is the bound dtype (a compile-time
    constant), each binding compiles its own program, and releases emit every choice. (Ours; the
    real PyPTO Pro's form is ``@pl.jit(datatype={"x": "T"})``, bound at launch, also supported.)"""

    name: str
    choices: tuple[DataType, ...]

    def __init__(self, name: str, choices: Sequence[DataType]):
        if not isinstance(name, str) or not name.isidentifier():
            raise TypeError(f"DTypeVar name must be an identifier, got {name!r}")
        if not isinstance(choices, (list, tuple)) or not choices or \
                not all(isinstance(c, DataType) for c in choices) or len(set(choices)) != len(choices):
            raise TypeError(f"DTypeVar {name}: choices must be distinct pl.DT_* types, got {choices!r}")
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "choices", tuple(choices))

    def __repr__(self) -> str:
        return f"pl.DTypeVar({self.name!r}, [{', '.join(repr(c) for c in self.choices)}])"


@dataclass(frozen=True)
class MemRef:
    """``pl.MemRef(memory_space, addr, size[, id])``: an explicit memory reference of a tensor or
    tile annotation (recorded; the simulator places GM tensors where their arguments are)."""

    memory_space: MemorySpace
    addr: Any = 0
    size: int = 0
    id: int | None = None

    def __repr__(self) -> str:
        tail = f", {self.id}" if self.id is not None else ""
        return f"pl.MemRef({self.memory_space!r}, {self.addr!r}, {self.size}{tail})"


Dim = Any  # int | DYNAMIC | STATIC | Ellipsis (last only)


@dataclass(frozen=True)
class TensorType:
    """A global-memory tensor: dims, dtype, optional layout and memref.

    In an annotation a dim is an int, ``pl.DYNAMIC``, ``pl.STATIC`` or a final ``...`` (the rest
    of the dims, each STATIC); once bound to a launch (:meth:`bind_shape`) every dim is an int or
    ``pl.DYNAMIC``. The dtype may be a :class:`DTypeVar` until launch arguments bind it."""

    dims: tuple[Dim, ...]
    dtype: DataType | DTypeVar
    layout: Any = None
    memref: MemRef | None = None
    expr = None  # the real annotation's attribute: an annotation wraps no IR expression

    @property
    def shape(self) -> list[Dim]:
        """The dims as the real ``Tensor`` annotation holds them (``.shape``)."""
        return list(self.dims)

    def bind(self, dtypes: dict[str, DataType]) -> "TensorType":
        if isinstance(self.dtype, DTypeVar):
            return TensorType(self.dims, dtypes[self.dtype.name], self.layout, self.memref)
        return self

    @property
    def rank(self) -> int:
        """The rank (of a bound type; for an annotation with ``...``, the explicit dims)."""
        return len(self.dims) - (1 if self.has_ellipsis else 0)

    @property
    def has_ellipsis(self) -> bool:
        return bool(self.dims) and self.dims[-1] is Ellipsis

    @property
    def needs_binding(self) -> bool:
        """True if a launch's shapes specialise it (``pl.STATIC`` or ``...``)."""
        return any(d is STATIC or d is Ellipsis for d in self.dims)

    def bind_shape(self, shape: Sequence[int]) -> "TensorType":
        """This annotation specialised to an argument of ``shape``: STATIC dims and the ``...``
        tail become that shape's ints (the caller has checked rank and fixed dims)."""
        if not self.needs_binding:
            return self
        out: list[Dim] = []
        for axis, d in enumerate(self.dims):
            if d is Ellipsis:
                out.extend(int(x) for x in shape[axis:])
                break
            out.append(int(shape[axis]) if d is STATIC else d)
        return TensorType(tuple(out), self.dtype, self.layout, self.memref)

    def static_axes(self, rank: int) -> list[int]:
        """The axes of a rank-``rank`` argument this annotation specialises on (``pl.STATIC`` dims
        and the ``...`` tail): their sizes are part of the compile cache key."""
        axes = [a for a, d in enumerate(self.dims) if d is STATIC]
        if self.has_ellipsis:
            axes += list(range(len(self.dims) - 1, rank))
        return axes

    def __repr__(self) -> str:
        dims = ", ".join("..." if d is Ellipsis else (repr(d) if isinstance(d, _ShapePolicy) else str(d))
                         for d in self.dims)
        extra = "".join(f", {x!r}" for x in (self.layout, self.memref) if x is not None)
        return f"pl.Tensor[[{dims}], {self.dtype!r}{extra}]"


class _AnnotationClass(type):
    """The real ``pl.Tensor`` / ``pl.Tile`` / ``pl.Ptr`` are classes whose instances are their
    annotations; here the annotation objects are frozen dataclasses (``TensorType``, ...), and
    ``isinstance(pl.Tensor[[64], pl.DT_FP32], pl.Tensor)`` holds through this metaclass."""

    _annotation: type = object

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, cls._annotation) or super().__instancecheck__(obj)

    def __repr__(cls) -> str:
        return f"pl.{cls.__name__}"


def _no_runtime(kind: str) -> TypeError:
    return TypeError(f"pl.{kind}(expr=...) wraps an IR expression of the real frontend; here kernel code is "
                     f"compiled by pypto_pro's frontend, so a {kind} value exists inside a kernel only")


def _tensor_type(dims: Any, dtype: Any, layout: Any = None, memref: Any = None) -> TensorType:
    if not isinstance(dims, (list, tuple)) or not dims:
        raise TypeError("pl.Tensor shape must be a non-empty list of ints, pl.DYNAMIC, pl.STATIC or a final ...")
    for axis, d in enumerate(dims):
        if d is Ellipsis:
            if axis != len(dims) - 1:
                raise TypeError("pl.Tensor shape: the ellipsis must appear once and only as the final item")
            continue
        if isinstance(d, _ShapePolicy):
            continue
        if type(d) is not int or d <= 0:
            raise TypeError(f"pl.Tensor axis {axis} annotation must be DYNAMIC, STATIC, a positive integer, "
                            f"or final ellipsis; got {d!r}")
    if not isinstance(dtype, (DataType, DTypeVar)):
        raise TypeError(f"pl.Tensor dtype must be a pl.DT_* type or a pl.DTypeVar, got {dtype!r}")
    if layout is not None and not isinstance(layout, TensorLayout):
        raise TypeError(f"pl.Tensor layout must be a pl.TensorLayout (pl.ND, pl.DN, pl.NZ, ...), got {layout!r}")
    if memref is not None and not isinstance(memref, MemRef):
        raise TypeError(f"pl.Tensor memref must be a pl.MemRef, got {memref!r}")
    return TensorType(tuple(dims), dtype, layout, memref)


class Tensor(metaclass=_AnnotationClass):
    """A global-memory tensor type (the real ``language/typing/tensor.py``): ``pl.Tensor[[dims], dtype]``,
    ``[[dims], dtype, layout]``, ``[[dims], dtype, memref]``, ``[[dims], dtype, layout, memref]``, or
    the constructor ``pl.Tensor(shape, dtype, layout=..., memref=...)``; each gives a :class:`TensorType`
    (malformed forms raise ``TypeError`` / ``ValueError`` as the real ones do)."""

    _annotation = TensorType

    def __new__(cls, shape: Sequence[Any] | None = None, dtype: DataType | None = None, expr: Any = None,
                layout: TensorLayout | None = None, memref: MemRef | None = None,
                _annotation_only: bool = False) -> Any:
        if expr is not None:
            if _annotation_only or shape is not None or dtype is not None:
                raise ValueError("Runtime Tensor wrapping cannot include annotation arguments")
            raise _no_runtime("Tensor")
        if shape is None or dtype is None:
            raise ValueError("Tensor must be initialized with either (shape, dtype) for annotations or expr for "
                             "runtime wrapping")
        return _tensor_type(shape, dtype, layout, memref)

    def __class_getitem__(cls, item: Any) -> TensorType:
        if not isinstance(item, tuple) or len(item) not in (2, 3, 4):
            raise TypeError("Tensor requires [shape, dtype], [shape, dtype, layout_or_memref], or "
                            "[shape, dtype, layout, memref] notation, e.g. pl.Tensor[[pl.DYNAMIC, 128], pl.DT_FP16]")
        dims, dtype, *rest = item
        layout = memref = None
        if len(rest) == 2:
            layout, memref = rest
        elif rest:
            if isinstance(rest[0], MemRef):
                memref = rest[0]
            else:
                layout = rest[0]
        return _tensor_type(dims, dtype, layout, memref)


@dataclass(frozen=True)
class PtrType:
    """``pl.Ptr[dtype]``: a raw pointer into global memory with an element type. A ``Ptr`` kernel
    parameter takes a tensor (any shape) whose bytes are the buffer; ``pl.make_tensor`` views it."""

    dtype: DataType
    expr = None

    def __repr__(self) -> str:
        return f"pl.Ptr[{self.dtype!r}]"


class Ptr(metaclass=_AnnotationClass):
    """``pl.Ptr[dtype]`` (or ``pl.Ptr(dtype, _annotation_only=True)``, the real constructor): a
    :class:`PtrType`."""

    _annotation = PtrType

    def __new__(cls, dtype: DataType | None = None, expr: Any = None, _annotation_only: bool = False) -> Any:
        if _annotation_only:
            if dtype is None:
                raise ValueError("dtype is required for annotation mode")
            return cls[dtype]
        if expr is not None:
            raise _no_runtime("Ptr")
        raise ValueError("Either dtype (for annotation) or expr (for runtime) must be provided")

    def __class_getitem__(cls, dtype: Any) -> PtrType:
        if not isinstance(dtype, DataType):
            raise TypeError(f"pl.Ptr takes a dtype, e.g. pl.Ptr[pl.DT_FP16]; got {dtype!r}")
        return PtrType(dtype)


@dataclass(frozen=True)
class TileAnnotation:
    """``pl.Tile[[shape], dtype(, memref)]``: the annotation of a tile-valued helper parameter."""

    shape: tuple[int, ...]
    dtype: DataType
    memref: MemRef | None = None
    expr = None

    def __repr__(self) -> str:
        tail = f", {self.memref!r}" if self.memref is not None else ""
        return f"pl.Tile[{list(self.shape)}, {self.dtype!r}{tail}]"


class Tile(metaclass=_AnnotationClass):
    """``pl.Tile[[shape], dtype(, memref)]`` (or the real constructor ``pl.Tile(shape, dtype,
    memref=..., _annotation_only=True)``): a :class:`TileAnnotation`. Tiles themselves come from
    ``pl.make_tile`` / ``pl.make_tile_group``."""

    _annotation = TileAnnotation

    def __new__(cls, shape: Sequence[int] | None = None, dtype: DataType | None = None, expr: Any = None,
                memref: MemRef | None = None, _annotation_only: bool = False) -> Any:
        if _annotation_only:
            return TileAnnotation(tuple(shape) if isinstance(shape, (list, tuple)) else (shape,), dtype, memref)
        if expr is not None:
            raise _no_runtime("Tile")
        raise ValueError("Tile must be initialized with either (shape, dtype) for annotations or expr for runtime "
                         "wrapping")

    def __class_getitem__(cls, item: Any) -> TileAnnotation:
        if not isinstance(item, tuple) or len(item) not in (2, 3):
            raise TypeError("Tile requires [shape, dtype] or [shape, dtype, memref] notation")
        shape, dtype, *rest = item
        if rest and not isinstance(rest[0], MemRef):
            raise TypeError(f"Tile 3rd argument must be a MemRef instance, got {type(rest[0]).__name__}")
        return cls(shape, dtype, memref=rest[0] if rest else None, _annotation_only=True)


class Scalar:
    """The real ``pl.Scalar``: a run-time scalar value in kernel code. Scalar parameters are
    annotated with a dtype (``n: pl.DT_INT64``); ``pl.Scalar`` itself only names the kind."""

    def __init__(self, expr: Any = None) -> None:
        if expr is None:
            raise ValueError("expr is required")
        raise _no_runtime("Scalar")


class Constexpr:
    """Annotation for a kernel parameter that is a compile-time constant (part of the cache key)."""
