"""Tile, data-movement and vector operations of the DSL (signatures and docs only).

Operations write their destination first, like PyPTO Pro and PTO-ISA. Numerics per op are
documented in ``docs/numerics.md``.
"""
from __future__ import annotations

from typing import Any, Sequence

from pypto_pro.language.intrinsic import intrinsic
from pypto_pro.language.types import TileType

# ---- placing tiles --------------------------------------------------------------------------


@intrinsic("make_tile")
def make_tile(type: TileType, addr: int) -> Any:
    """A single tile of ``type`` at byte address ``addr`` of its memory space."""


@intrinsic("make_tile_group")
def make_tile_group(type: TileType, addrs: int | Sequence[int], mutex_ids: Sequence[int] | None = None,
                    depth: int | None = None, fwd_ids: Sequence[int] | None = None,
                    bwd_ids: Sequence[int] | None = None) -> Any:
    """A ring of tiles (multi-buffering). ``addrs``: base address (slots back to back) or a list.

    ``mutex_ids`` (one per slot, 0-31) lets the framework order every op on each slot
    automatically. Methods: ``.next()``, ``.current()``, ``.previous()``, ``group[i]``.
    ``fwd_ids`` / ``bwd_ids`` (one cross-core event id per slot) make the group shareable between
    a Cube stage and a Vector stage of a pipelined loop (see ``pl.pipeline``).
    """


@intrinsic("make_view")
def make_view(tile: Any, type: TileType, offset: int = 0) -> Any:
    """A declared alias: ``tile``'s bytes (from byte ``offset``) seen as ``type``."""


@intrinsic("set_validshape")
def set_validshape(tile_or_group: Any, rows: int, cols: int) -> None:
    """Set the valid region of a tile (or of every slot of a group) at run time."""


# ---- sections and ids -------------------------------------------------------------------------


@intrinsic("section_vector")
def section_vector() -> Any:
    """``with pl.section_vector():`` code for the Vector cores (AIV)."""


@intrinsic("section_cube")
def section_cube() -> Any:
    """``with pl.section_cube():`` code for the Cube core (AIC)."""


@intrinsic("get_block_idx")
def get_block_idx() -> int:
    """Index of this block, 0 .. block_num - 1."""


@intrinsic("get_block_num")
def get_block_num() -> int:
    """Number of blocks of the launch (``kernel[stream, block_num]``)."""


@intrinsic("get_subblock_idx")
def get_subblock_idx() -> int:
    """Index of this Vector core inside its block (0 for vector-only kernels)."""


@intrinsic("get_subblock_num")
def get_subblock_num() -> int:
    """Vector cores per block: 2 for mixed Cube+Vector kernels, 1 for vector-only ones."""


@intrinsic("range")
def range(start: int, stop: int | None = None, step: int = 1) -> Any:
    """A loop executed at run time (bounds may be run-time values)."""


# ---- data movement ------------------------------------------------------------------------------


@intrinsic("load")
def load(tile: Any, tensor: Any, offsets: Sequence[int]) -> None:
    """GM -> tile at element ``offsets`` (one per tensor axis); moves only the in-bounds region."""


@intrinsic("load_tile")
def load_tile(tile: Any, tensor: Any, tile_coords: Sequence[int]) -> None:
    """GM -> tile at tile coordinates: offsets = coords * tile shape (last two axes)."""


@intrinsic("store")
def store(tensor: Any, tile: Any, offsets: Sequence[int]) -> None:
    """Tile -> GM at element ``offsets``; stores only the valid, in-bounds region."""


@intrinsic("store_tile")
def store_tile(tensor: Any, tile: Any, tile_coords: Sequence[int]) -> None:
    """Tile -> GM at tile coordinates."""


# ---- vector compute -------------------------------------------------------------------------------


def _binary(name: str):
    @intrinsic(name)
    def op(dst: Any, src0: Any, src1: Any) -> None:
        pass
    op.__doc__ = f"dst = {name}(src0, src1), elementwise over the valid region."
    op.__name__ = name
    return op


def _scalar(name: str):
    @intrinsic(name)
    def op(dst: Any, src: Any, scalar: Any) -> None:
        pass
    op.__doc__ = f"dst = {name[:-1]}(src, scalar), elementwise."
    op.__name__ = name
    return op


def _unary(name: str):
    @intrinsic(name)
    def op(dst: Any, src: Any) -> None:
        pass
    op.__doc__ = f"dst = {name}(src), elementwise."
    op.__name__ = name
    return op


def _reduce(name: str):
    @intrinsic(name)
    def op(dst: Any, src: Any, tmp: Any = None, dim: int = 1) -> None:
        pass
    op.__doc__ = (f"{name} over rows (dim=1: dst is [R, 1]) or columns (dim=0: dst is [1, C]); "
                  "``tmp`` is the scratch tile PTO-ISA's row reductions need.")
    op.__name__ = name
    return op


def _expand(name: str):
    @intrinsic(name)
    def op(dst: Any, src: Any, vec: Any, dim: int = 1) -> None:
        pass
    op.__doc__ = (f"dst = src {name[7:]} broadcast(vec): dim=1 broadcasts a [R, 1] column along rows, "
                  "dim=0 a [1, C] row down the columns.")
    op.__name__ = name
    return op


add, sub, mul, div, maximum, minimum = (_binary(n) for n in ("add", "sub", "mul", "div", "maximum", "minimum"))
adds, subs, muls, divs, maxs, mins = (_scalar(n) for n in ("adds", "subs", "muls", "divs", "maxs", "mins"))
exp, log, sqrt, rsqrt, recip, abs, neg, relu = (
    _unary(n) for n in ("exp", "log", "sqrt", "rsqrt", "recip", "abs", "neg", "relu"))
sum = _reduce("sum")
# TODO(lead): tile reduction. The row/column max and min reductions under a private name: the real
# pl.max / pl.min are scalar (below); the tile reductions get their real names with the tile-op rewrite.
_tile_max, _tile_min = _reduce("max"), _reduce("min")


@intrinsic("max")
def max(lhs: Any, rhs: Any) -> Any:
    """The larger of two scalars (``max(lhs, rhs)`` in kernel code is the same); for tiles use pl.maximum."""


@intrinsic("min")
def min(lhs: Any, rhs: Any) -> Any:
    """The smaller of two scalars (``min(lhs, rhs)`` in kernel code is the same); for tiles use pl.minimum."""
expand_add, expand_sub, expand_mul, expand_div, expand_max, expand_min = (
    _expand(n) for n in ("expand_add", "expand_sub", "expand_mul", "expand_div", "expand_max", "expand_min"))


@intrinsic("cast")
def cast(dst: Any, src: Any, mode: str = "rint") -> None:
    """Convert ``src`` to ``dst``'s dtype; ``mode`` in rint (default), round, floor, ceil, trunc."""


@intrinsic("expands")
def expands(dst: Any, scalar: Any) -> None:
    """Fill ``dst``'s valid region with ``scalar``."""


@intrinsic("move")
def move(dst: Any, src: Any, offset: Sequence[int] | None = None, transpose: bool = False,
         subblock: int | None = None) -> None:
    """Move a tile between on-chip buffers; the path follows from the two memory spaces:

    Vec -> Vec (V); Mat -> Left / Right (MTE1), taking ``dst``'s shape from ``src`` at element
    ``offset`` [row, col] and optionally transposing; Acc -> Mat (FIX, converting dtype);
    a5 only: Acc -> Vec (FIX, into the UB of AIV ``subblock``, or of every AIV when None) and
    Vec -> Mat (MTE3). a2a3 has neither: Cube and Vector exchange data through global memory.
    """


@intrinsic("matmul")
def matmul(dst: Any, lhs: Any, rhs: Any, bias: Any = None) -> None:
    """``dst = lhs @ rhs (+ bias)`` on the Cube: Left [M, K] x Right [K, N] -> Acc [M, N]."""


@intrinsic("matmul_acc")
def matmul_acc(dst: Any, acc: Any, lhs: Any, rhs: Any) -> None:
    """``dst = acc + lhs @ rhs`` on the Cube (``dst`` may be ``acc``): accumulate over K."""
