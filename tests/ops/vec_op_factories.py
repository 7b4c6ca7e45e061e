"""Kernel factories shared by the vector-op tests (test_vector_ops_e2e.py, test_vector_ops_more.py).

Every tile is a one-slot group with a mutex id, so the MTE2 -> V -> MTE3 hand-offs are synchronised
automatically (the kernels are straight-line code: ownership transfer on a2a3, locks on a5)."""
import pypto_pro.language as pl


def tensor_t(dt):
    """A 2-D GM tensor of ``dt`` with dynamic shape."""
    return pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], dt]


def jit(fn, name: str, arch: str = "a5"):
    """``pl.jit(fn)`` for ``arch``, the kernel named ``name`` (its reports and emitted files say which case)."""
    fn.__name__ = name
    return pl.jit(fn, arch=arch)


def unary_kernel(name: str, kernel_name: str, src_t, dst_t, region, out_addr: int, kind: str = "unary",
                 mode=None, scalar=None):
    """``dst = OP(src)`` on the ``region`` of both tiles: ``OP(dst, src)``, ``OP(dst, src, mode=mode)`` for
    ``kind="cast"`` or ``OP(dst, src, scalar)`` for ``kind="scalar"`` (a compile-time closure constant);
    src is at UB 0, dst at ``out_addr``."""
    OP, TA, TC, GA, GC = getattr(pl, name), src_t, dst_t, tensor_t(src_t.dtype), tensor_t(dst_t.dtype)
    KIND, MODE, S, REGION = kind, mode, scalar, tuple(region)

    def kernel(a: GA, c: GC):
        ga = pl.make_tile_group(type=TA, addrs=[0x0000], mutex_ids=[0])
        gc = pl.make_tile_group(type=TC, addrs=[out_addr], mutex_ids=[1])
        with pl.section_vector():
            ta, tc = ga[0], gc[0]
            pl.set_validshape(ta, list(REGION))
            pl.set_validshape(tc, list(REGION))
            pl.load(ta, a, [0, 0])
            if KIND == "cast":
                OP(tc, ta, mode=MODE)
            elif KIND == "scalar":
                OP(tc, ta, S)
            else:
                OP(tc, ta)
            pl.store(c, tc, [0, 0])
    return jit(kernel, kernel_name)


def binary_kernel(name: str, kernel_name: str, src_t, out_t, region, step: int, *, inplace: bool = False,
                  target_type=None, store_back: bool = False, arch: str = "a5"):
    """``OP(out, a, b)`` (``OP(out, a, b, target_type=...)`` with ``target_type``) on the ``region`` of the
    three tiles: a at UB 0, b at ``step``, out at ``2 * step``; ``inplace``: ``OP(a, a, b)`` and a is the
    result stored. ``store_back``: the kernel takes a fourth tensor and also stores a to it (to see
    whether the op overwrote it)."""
    OP, TA, TO, GA, GO = getattr(pl, name), src_t, out_t, tensor_t(src_t.dtype), tensor_t(out_t.dtype)
    R, TGT, INPLACE = list(region), target_type, inplace

    def groups():
        """(inlined, before the section) the one-slot groups of a, b and out."""
        ga = pl.make_tile_group(type=TA, addrs=[0x0000], mutex_ids=[0])
        gb = pl.make_tile_group(type=TA, addrs=[step], mutex_ids=[1])
        gc = pl.make_tile_group(type=TO, addrs=[2 * step], mutex_ids=[2])
        return ga, gb, gc

    def compute(ga, gb, gc, a, b, c):
        """(inlined, in the section) load a and b, apply OP, store the result to c; returns a's tile."""
        ta, tb, tc = ga[0], gb[0], gc[0]
        pl.set_validshape(ta, R)
        pl.set_validshape(tb, R)
        pl.set_validshape(tc, R)
        pl.load(ta, a, [0, 0])
        pl.load(tb, b, [0, 0])
        if INPLACE:
            OP(ta, ta, tb)
            pl.store(c, ta, [0, 0])
        elif TGT is None:
            OP(tc, ta, tb)
            pl.store(c, tc, [0, 0])
        else:
            OP(tc, ta, tb, target_type=TGT)
            pl.store(c, tc, [0, 0])
        return ta

    if store_back:
        def kernel(a: GA, b: GA, c: GO, a_back: GA):
            ga, gb, gc = groups()
            with pl.section_vector():
                ta = compute(ga, gb, gc, a, b, c)
                pl.store(a_back, ta, [0, 0])
    else:
        def kernel(a: GA, b: GA, c: GO):
            ga, gb, gc = groups()
            with pl.section_vector():
                compute(ga, gb, gc, a, b, c)
    return jit(kernel, kernel_name, arch)
