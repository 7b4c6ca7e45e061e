"""The Cube's float64 product with its operands bound once per record (``ops/matrix.py`` ``BOUND``, issue 15).

A memoized ``pl.matmul`` / ``pl.matmul_acc`` record runs thousands of times in a GEMM (every K step of
every block reuses it), and the fused path (``matrix.FUSED``) rebuilt per call what never changes: each
boxed operand's box view (``fractal.Region._blocks``), a fresh float64 array for each operand, the
product and the accumulator, and the reshapes between them. :func:`bind` does that once, at dispatch:
the box views, and float64 scratch taken from a per-shape pool; each run then only copies and
computes:

* each operand's fp16 / bf16 bytes cast to float64 into its scratch, through the same 4-D box view and
  the same NumPy cast ``Region.astype`` uses (``out.reshape(boxes.shape)[...] = boxes``);
* ``np.matmul(a, b, out=prod)``: the same BLAS ``dgemm`` as ``a @ b`` on C-contiguous operands of the
  same shapes (``beta = 0``: what ``prod`` held before is not read);
* the accumulator cast to float64 the same way, added in place (``np.add(prod, acc, out=prod)``,
  the fused path's ufunc on the same contiguous layouts), and the result cast to the accumulator's
  dtype as it is stored into the Acc window's boxes (``Region.__setitem__``'s assignment).

So every value, NaN payloads included, is the fused path's (``tests/ops/test_matrix_bound.py`` compares
``BOUND`` on and off on whole launches). Scratch is shared by records of equal shapes (the pool holds
at most a few arrays per distinct tile shape); a run that finds its scratch in use (not expected: the
simulator runs one instruction's numerics at a time) takes the unbound path.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from pypto_pro.backends.sim.fractal import Region

_POOL: dict[tuple, np.ndarray] = {}  # (role, element count) -> float64 scratch, shared by every record


def _scratch(role: str, shape: tuple[int, int]) -> np.ndarray:
    n = shape[0] * shape[1]
    buf = _POOL.get((role, n))
    if buf is None:
        buf = _POOL[(role, n)] = np.empty(n, np.float64)
    return buf.reshape(shape)


def _source(view, role: str, shape: tuple[int, int]) -> tuple | None:
    """(what to copy from, the float64 scratch, the scratch seen as the source's shape) or None."""
    if isinstance(view, Region):
        got = view._blocks()
        if got is None or not got[1]:
            return None
        blk = got[0]
        n0, ir, n2, ic = blk.shape
        if (n0 * ir, n2 * ic) != shape:
            return None
        buf = _scratch(role, shape)
        return blk, buf, buf.reshape(blk.shape)
    if isinstance(view, np.ndarray) and view.shape == shape:
        buf = _scratch(role, shape)
        return view, buf, buf
    return None


def _sink(view, shape: tuple[int, int]) -> tuple | None:
    """(the destination to assign to, how the product is seen for it) or None."""
    if isinstance(view, Region):
        got = view._blocks()
        if got is None or not got[1] or view.shape != shape:
            return None
        return got[0], got[0].shape
    if isinstance(view, np.ndarray) and view.shape == shape:
        return view, shape
    return None


def bind(av, bv, acc_view, out_view, m: int, k: int, n: int,
         unbound: Callable[[np.ndarray], None]) -> Callable[[np.ndarray], None] | None:
    """``compute(out)`` of a float64 product ``av @ bv (+ acc_view)`` into ``out`` (``out_view`` itself when
    undeferred, else a scratch array), equal to the fused path's byte for byte; None when a view is not
    a whole-box window or an array of the product's shape (the caller keeps the unbound path)."""
    a = _source(av, "a", (m, k))
    b = _source(bv, "b", (k, n))
    acc = _source(acc_view, "acc", (m, n)) if acc_view is not None else None
    dst = _sink(out_view, (m, n))
    if a is None or b is None or dst is None or (acc_view is not None and acc is None):
        return None
    a_src, a64, a_fill = a
    b_src, b64, b_fill = b
    prod = _scratch("prod", (m, n))
    dst_view, dst_shape = dst
    prod_out = prod.reshape(dst_shape)
    busy = _BUSY
    acc_src, acc64, acc_fill = acc if acc is not None else (None, None, None)

    def compute(out: np.ndarray) -> None:
        if busy[0]:
            unbound(out)
            return
        busy[0] = True
        try:
            a_fill[...] = a_src
            b_fill[...] = b_src
            np.matmul(a64, b64, out=prod)
            if acc_fill is not None:
                acc_fill[...] = acc_src  # read before anything is stored (dst may be the accumulator)
                np.add(prod, acc64, out=prod)
            if out is out_view:
                dst_view[...] = prod_out
            else:
                out[...] = prod
        finally:
            busy[0] = False
    return compute


_BUSY = [False]  # a bound run is in progress (its scratch is in use)
