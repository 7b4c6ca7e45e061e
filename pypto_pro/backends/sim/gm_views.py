"""Global memory beyond whole tensor parameters: ``pl.make_tensor`` views and ``pl.setval`` writes.

A view (``pypto_pro.ir.views.TensorView``) is built at dispatch from its run-time shape,
strides and byte offset as a NumPy window over the base parameter's bytes (writes go through
to the argument). Every element it can address must lie inside those bytes, else the access is
a located out-of-bounds fault, as a GM access outside its tensor is.

For the global-memory checker, accesses through views report one byte range per row of the
window (exact for rows of contiguous elements; the bounding range otherwise), keyed by the
base's memory when the base is a ``pl.Ptr`` (so two views of one workspace are checked against
each other) and by a memory of its own for a view of a tensor parameter (whose direct accesses
are checked in the tensor's own coordinates).
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from pypto_pro.ir.nodes import GMRef, KernelIR, TileOp, walk_stmts
from pypto_pro.ir.views import PtrParam, TensorView


def program_views(program: KernelIR) -> list[TensorView]:
    """The views the program's instructions use, by GM binding index."""
    from pypto_pro.ops.getval import gm_reads
    seen: dict[int, TensorView] = {}
    for s in walk_stmts(program.body):
        if isinstance(s, TileOp):
            for o in (s.dst, *s.srcs):
                if isinstance(o, GMRef) and isinstance(o.param, TensorView):
                    seen.setdefault(o.param.gm_index, o.param)
    for r in gm_reads(program.body):  # pl.getval of a view
        if isinstance(r.param, TensorView):
            seen.setdefault(r.param.gm_index, r.param)
    return [seen[k] for k in sorted(seen)]


def view_obj(view: TensorView, base_obj: int) -> int:
    """The checker's memory id of a view: its Ptr base's, or its own (see the module doc)."""
    return base_obj if isinstance(view.base, PtrParam) else view.gm_index


def window(fault: Callable[[str], Exception], view: TensorView, base: np.ndarray, shape: Sequence[int],
           strides: Sequence[int], offset: int) -> np.ndarray:
    """The view as an ndarray over ``base``'s bytes (shape / strides in elements, offset in bytes)."""
    item = view.type.dtype.itemsize  # type: ignore[union-attr]
    nbytes = base.nbytes
    if offset < 0 or offset % item:
        raise fault(f"view '{view.name}' starts at byte {offset} of '{view.base.name}': it must be a non-negative "
                    f"multiple of the {view.type.dtype.name} element size ({item} bytes)")  # type: ignore[union-attr]
    if any(s < 0 for s in shape):
        raise fault(f"view '{view.name}' has a negative dimension in shape {list(shape)}")
    lo = hi = offset
    for n, st in zip(shape, strides):
        if n == 0:
            lo, hi = offset, offset - item
            break
        span = (n - 1) * st * item
        if span >= 0:
            hi += span
        else:
            lo += span
    if lo < 0 or hi + item > nbytes:
        raise fault(f"view '{view.name}' (shape {list(shape)}, strides {list(strides)}, byte offset {offset}) "
                    f"reaches bytes {lo}..{hi + item} of '{view.base.name}', which has {nbytes} bytes")
    flat = base.reshape(-1).view(np.uint8)
    return np.ndarray(tuple(shape), view.type.dtype.np_dtype, buffer=flat, offset=offset,  # type: ignore[union-attr]
                      strides=tuple(s * item for s in strides))


def row_rects(arr: np.ndarray, base: np.ndarray, idx: tuple) -> tuple[tuple, ...]:
    """Byte ranges (one per row) that ``arr[idx]`` (a 2-D or 1-D window of a view) touches."""
    sub = arr[idx]
    if sub.size == 0:
        return ()
    start = base.reshape(-1).view(np.uint8).__array_interface__["data"][0]
    addr = sub.__array_interface__["data"][0] - start
    item = sub.itemsize
    if sub.ndim == 1:
        sub = sub[None, :]
    rows, cols = sub.shape[-2], sub.shape[-1]
    rs, cs = sub.strides[-2], sub.strides[-1]
    if cs == item:
        return _row_ranges(addr, rs, rows, cols * item)
    ends = [addr + i * rs + j * cs for i in (0, rows - 1) for j in (0, cols - 1)]
    return (((min(ends), max(ends) + item),),)


_RANGES: dict[tuple, tuple] = {}  # (addr, row stride, rows, row bytes) -> row_rects' answer (immutable)


class Rows(tuple):
    """Byte ranges of a view window's rows, with ``geom`` = (start, rows, stride, width) when the rows are
    disjoint and ascending (the GM checker holds such an access as one strided entry), else None."""
    geom: tuple | None


def _row_ranges(addr: int, rs: int, rows: int, width: int) -> tuple[tuple, ...]:
    """``rows`` byte ranges of ``width`` bytes, ``rs`` apart from ``addr`` (kept: tiles reload the same windows)."""
    key = (addr, rs, rows, width)
    got = _RANGES.get(key)
    if got is None:
        if len(_RANGES) >= 1 << 14:
            _RANGES.clear()
        got = _RANGES[key] = Rows(((addr + i * rs, addr + i * rs + width),) for i in range(rows))
        got.geom = (addr, rows, rs, width) if rs >= width > 0 else None  # type: ignore[attr-defined]
    return got


def records(pidx: int, name: str, rects: tuple, write: bool) -> tuple:
    """The GM records of one access through a view (one per row range: what the recorder and the
    per-row checker read); for strided rows a ``Rows`` carrying their ``geom``."""
    recs = tuple((pidx, name, r, write) for r in rects)
    geom = getattr(rects, "geom", None)
    if geom is None:
        return recs
    out = Rows(recs)
    out.geom = geom  # type: ignore[attr-defined]
    return out


def element(param, arrays: list, view: Sequence[int], offset: int, fault: Callable[[str], Exception],
            write: bool) -> tuple[np.ndarray, tuple, tuple]:
    """Element ``offset`` (row-major) of a GM tensor or view (``view``: its run-time shape, strides and
    byte offset): the array it is in, its index there and its global-memory access records."""
    is_view = isinstance(param, TensorView)
    base = arrays[param.base.index if is_view else param.index]
    g = base
    if is_view:
        rank = param.type.rank
        g = window(fault, param, base, view[:rank], view[rank:2 * rank], view[-1])
    if not 0 <= offset < g.size:
        raise fault(f"'{param.name}': element offset {offset} is outside its {g.size} elements")
    index = tuple(int(i) for i in np.unravel_index(offset, g.shape))
    if is_view:
        cell = index[:-1] + (slice(index[-1], index[-1] + 1),)
        gm = tuple((param.gm_index, param.name, r, write) for r in row_rects(g, base, cell))
    else:
        gm = ((param.index, param.name, tuple((i, i + 1) for i in index), write),)
    return g, index, gm


def scalar_write(op: TileOp, arrays: list, fault: Callable[[str], Exception]) -> Callable:
    """``pl.setval(tensor, offset, value)``: one element of a GM tensor, written on the S pipe."""
    from pypto_pro.backends.sim.kit import Prepared, write_at_end
    ref = op.dst
    assert isinstance(ref, GMRef)
    param = ref.param
    dtype = param.type.dtype
    item = dtype.itemsize  # type: ignore[union-attr]
    nview = len(param.view_exprs()) if isinstance(param, TensorView) else 0

    def dispatch(*args) -> Prepared:
        g, index, gm = element(param, arrays, args[1:1 + nview], args[0], fault, True)
        converted = convert_scalar(args[-1], dtype)

        def commit() -> None:
            g[index] = converted
        return Prepared(1, 1, True, (), gm, item, write_at_end(commit))
    return dispatch


def convert_scalar(value, dtype) -> np.generic:
    """A scalar as one element of ``dtype``, as the scalar unit stores it: floats round through
    fp32 (the scalar unit's float) to the element type; ints wrap to the element width."""
    np_dtype = dtype.np_dtype
    if dtype.is_float():
        return np.asarray(np.float32(value)).astype(np_dtype)[()]
    if dtype.is_bool():
        return np.bool_(bool(value))
    bits = dtype.get_bit()
    v = int(value) & ((1 << bits) - 1)
    if dtype.is_signed_int() and v >= 1 << (bits - 1):
        v -= 1 << bits
    return np.asarray(v, dtype=np_dtype)[()]
