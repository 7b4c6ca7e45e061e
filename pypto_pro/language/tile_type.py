"""``pl.TileType``: the specification of a tile (shape, dtype, memory space, valid shape, layout,
fractal, pad, compact), as the real PyPTO Pro defines it (TileType.md, TensorLayout.md,
TilePad.md, CompactMode.md).

A TileType allocates nothing: ``pl.make_tile`` / ``pl.make_tile_group`` place it at addresses.
``valid_shape`` entries are ints, ``-1`` (set at run time with ``pl.set_validshape``; the tile
starts out fully valid) or run-time scalars; ``None`` means ``[-1, -1]``. ``layout=None`` takes the
memory space's default on the kernel's arch (:func:`effective_layout`); an explicit layout the
space does not allow is a ``ValueError`` here, as in the real constructor.
"""
from __future__ import annotations

from typing import Any, Sequence

from pypto_pro.language.dtypes import DT_FP8E8M0, DT_FP32, DT_INT32, DT_INT64, DT_UINT64, DataType
from pypto_pro.language.enums import DN, ND, NN, NZ, ZN, ZZ, MemorySpace, TensorLayout, TilePad

DYNAMIC_VALID = -1

# default layout per memory space (TileType.md "默认布局表"); Vec has none
_DEFAULTS_A3 = {MemorySpace.Mat: NZ, MemorySpace.Left: ZZ, MemorySpace.Right: ZN, MemorySpace.Acc: NZ,
                MemorySpace.Scaling: ND}
_DEFAULTS_A5 = {MemorySpace.Mat: NZ, MemorySpace.Left: NZ, MemorySpace.Right: ZN, MemorySpace.Acc: NZ,
                MemorySpace.Scaling: ND, MemorySpace.ScaleLeft: ZZ, MemorySpace.ScaleRight: NN}
_A5_ONLY = (MemorySpace.ScaleLeft, MemorySpace.ScaleRight)


def allowed_layouts(space: MemorySpace, dtype: DataType) -> tuple[TensorLayout, ...] | None:
    """Layouts a tile of ``space`` / ``dtype`` may declare (None: any, checked by each API)."""
    if space is MemorySpace.Mat:
        extra = (ND,) if dtype in (DT_INT64, DT_UINT64) else (ZZ, NN) if dtype is DT_FP8E8M0 else ()
        return (NZ, ZN, *extra)
    if space is MemorySpace.Left:
        return (ZZ, NZ)
    fixed = _DEFAULTS_A5.get(space)
    return (fixed,) if fixed is not None else None


def default_layout(space: MemorySpace, arch_name: str) -> TensorLayout | None:
    table = _DEFAULTS_A5 if arch_name == "a5" else _DEFAULTS_A3
    return table.get(space)


def _pad_value(pad: Any) -> TilePad | None:
    if pad is None:
        return None
    if isinstance(pad, TilePad):
        return pad
    if isinstance(pad, int) and not isinstance(pad, bool):
        if not 0 <= pad <= 3:
            raise ValueError("TileType.pad must be one of TilePad.null/zero/max/min (0-3)")
        return TilePad(pad)
    raise TypeError(f"TileType.pad must be a TilePad or an integer 0/1/2/3, got {pad!r}")


def _is_runtime(v: Any) -> bool:
    """A run-time scalar of kernel code (an IR expression), without importing the IR here."""
    return type(v).__module__.startswith("pypto_pro.ir.")


class TileType:
    """A 2-D tile specification (the real ``pl.TileType``)."""

    __slots__ = ("shape", "dtype", "target_memory", "valid_shape", "layout", "fractal", "pad", "compact")

    def __init__(self, shape: Sequence[int], dtype: DataType, target_memory: MemorySpace = MemorySpace.Vec,
                 valid_shape: Sequence[Any] | None = None, layout: TensorLayout | None = None,
                 fractal: int | None = None, pad: TilePad | int | None = None, compact: int | None = None) -> None:
        if not isinstance(shape, (list, tuple)) or len(shape) != 2:
            if target_memory is MemorySpace.Scaling:  # the real frontend's wording for a per-channel scale tile
                shown = list(shape) if isinstance(shape, (list, tuple)) else shape
                raise ValueError(f"scale tile must be 2D, got shape {shown!r} (a Scaling tile is [1, N] DT_INT64: "
                                 "one quant word per output column)")
            raise ValueError(f"TileType shape must be [rows, cols] (only 2-D tiles), got {shape!r}")
        for s in shape:
            if not isinstance(s, int) or isinstance(s, bool) or s <= 0:
                raise ValueError(f"TileType shape entries must be positive compile-time ints, got {list(shape)!r}")
        if not isinstance(dtype, DataType):
            raise TypeError(f"TileType dtype must be a pl.DT_* type, got {dtype!r}")
        if not isinstance(target_memory, MemorySpace) or target_memory is MemorySpace.DDR:
            raise TypeError(f"TileType target_memory must be an on-chip pl.MemorySpace, got {target_memory!r}")
        valid = self._check_valid(tuple(shape), valid_shape)
        if layout is not None:
            if not isinstance(layout, TensorLayout):
                raise TypeError(f"TileType layout must be a pl.TensorLayout (pl.ND, pl.DN, pl.NZ, ...), got {layout!r}")
            allowed = allowed_layouts(target_memory, dtype)
            if allowed is not None and layout not in allowed:
                names = ", ".join(sorted(x.name for x in allowed))
                raise ValueError(f"{target_memory.name} tiles require layout in {{{names}}}, got {layout.name}")
        if fractal is not None and (not isinstance(fractal, int) or isinstance(fractal, bool) or fractal <= 0):
            raise ValueError(f"TileType fractal must be a positive int, got {fractal!r}")
        if compact is not None and (not isinstance(compact, int) or isinstance(compact, bool) or compact not in (0, 1, 2)):
            raise ValueError(f"TileType compact must be None, 0, 1 or 2, got {compact!r}")
        if fractal is None:
            if target_memory is MemorySpace.Acc and dtype in (DT_FP32, DT_INT32):
                fractal = 1024
            elif dtype is DT_FP8E8M0 and (target_memory in _A5_ONLY or layout in (ZZ, NN)):
                fractal = 32
        object.__setattr__(self, "shape", (int(shape[0]), int(shape[1])))
        object.__setattr__(self, "dtype", dtype)
        object.__setattr__(self, "target_memory", target_memory)
        object.__setattr__(self, "valid_shape", valid)
        object.__setattr__(self, "layout", layout)
        object.__setattr__(self, "fractal", fractal)
        object.__setattr__(self, "pad", _pad_value(pad))
        object.__setattr__(self, "compact", compact)

    @staticmethod
    def _check_valid(shape: tuple[int, int], valid_shape: Sequence[Any] | None) -> tuple[Any, Any]:
        if valid_shape is None:
            return (DYNAMIC_VALID, DYNAMIC_VALID)
        if not isinstance(valid_shape, (list, tuple)) or len(valid_shape) != 2:
            raise ValueError(f"TileType valid_shape must be [rows, cols], got {valid_shape!r}")
        for v, s in zip(valid_shape, shape):
            if _is_runtime(v):
                continue
            if not isinstance(v, int) or isinstance(v, bool) or not (v == DYNAMIC_VALID or 0 < v <= s):
                raise ValueError(f"TileType valid_shape {list(valid_shape)} must hold -1 or values in 1..shape "
                                 f"{list(shape)}")
        return (valid_shape[0], valid_shape[1])

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("TileType is immutable")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TileType) and all(
            _same(getattr(self, k), getattr(other, k)) for k in TileType.__slots__)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.target_memory, self.layout))

    # ---- derived ------------------------------------------------------------------------

    @property
    def rows(self) -> int:
        return self.shape[0]

    @property
    def cols(self) -> int:
        return self.shape[1]

    @property
    def nbytes(self) -> int:
        """The bytes the tile's elements occupy (a packed 4-bit type: half a byte each)."""
        return self.dtype.nbytes(self.rows * self.cols)

    @property
    def slot_size(self) -> int:
        """make_tile's default ``size`` and a tile group's slot pitch, as the real ``tile_slot_size``: elements
        x ``max(1, bytes per element)`` (so a packed FP4 tile's slot is as wide as an 8-bit one's)."""
        return self.rows * self.cols * max(1, (self.dtype.bits + 7) // 8)

    @property
    def static_valid(self) -> tuple[int, int] | None:
        """The valid shape when both entries are compile-time ints (-1 counts as the full shape)."""
        out = []
        for v, s in zip(self.valid_shape, self.shape):
            if _is_runtime(v):
                return None
            out.append(s if v == DYNAMIC_VALID else v)
        return out[0], out[1]

    @property
    def dynamic_valid(self) -> bool:
        """True when ``pl.set_validshape`` may change the valid shape at run time."""
        return any(_is_runtime(v) or v == DYNAMIC_VALID for v in self.valid_shape)

    def effective_layout(self, arch_name: str) -> TensorLayout:
        """The layout the tile has on ``arch_name``: the declared one, else the space's default
        (row-major ND for Vec tiles), except that a Vec column ``[R, 1]`` (R > 1) is column-major
        (DN): the real C++ backend declares every tile with one column ``BLayout::ColMajor``."""
        if self.layout is not None:
            return self.layout
        if self.target_memory is MemorySpace.Vec and self.cols == 1 and self.rows > 1:
            return DN
        return default_layout(self.target_memory, arch_name) or ND

    def __repr__(self) -> str:
        extra = ""
        if self.valid_shape != (DYNAMIC_VALID, DYNAMIC_VALID):
            extra += f", valid_shape={list(self.valid_shape)}"
        for k in ("layout", "fractal", "pad", "compact"):
            v = getattr(self, k)
            if v is not None:
                extra += f", {k}={v!r}" if k != "layout" else f", layout=pl.{v.name}"
        return f"pl.TileType([{self.rows}, {self.cols}], {self.dtype!r}, {self.target_memory!r}{extra})"


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a is b if _is_runtime(a) or _is_runtime(b) else a == b


# the layouts a DN / column-major tile uses (row reductions' [R, 1] results)
COLUMN_MAJOR = (DN,)
