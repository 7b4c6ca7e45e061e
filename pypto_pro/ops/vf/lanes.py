"""The generic lane-wise VF instruction: ``dst[i] = f(src...[i], scalars...)`` on the active lanes.

Used by the arithmetic, logical, comparison and composite families. Numerics per lane, as the
real pages define them: a float op computes in its own type and rounds once (bf16 computes in fp32
and rounds back); integers wrap at their width; inactive lanes become 0 (``MergeMode.ZEROING``,
the default) or keep the destination's value (``MERGING``).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from pypto_pro.backends.sim.vf.batch import Spec, merge_rows
from pypto_pro.backends.sim.vf.regfile import (PerRegFile, active, active_rows, compute_dtype, lanes, merge, np_of,
                                               view)
from pypto_pro.frontend.vf.values import RegValue
from pypto_pro.ir.vf import RegRead
from pypto_pro.language import dtypes as D
from pypto_pro.language.enums import MergeMode
from pypto_pro.ops.vf import common as c
from pypto_pro.ops.vf import cpp as vcpp
from pypto_pro.ops.vf.decl import vf_api, vf_instr

FLOATS = (D.DT_FP16, D.DT_BF16, D.DT_FP32)
INTS = (D.DT_INT8, D.DT_UINT8, D.DT_INT16, D.DT_UINT16, D.DT_INT32, D.DT_UINT32)
INTS64 = INTS + (D.DT_INT64, D.DT_UINT64)
NUMERIC = FLOATS + INTS

Numerics = Callable[..., np.ndarray]   # (*operand lanes in the compute dtype, *scalars) -> result lanes


def sim_lanewise(fn: Numerics, out_dtype_attr: str = "dtype") -> Callable:
    """The sim builder of a lane-wise instruction: register operands (``RegRead``) then an optional mask
    (the last ``RegRead`` of a mask register) then scalars, as the check emitted them."""
    def build(instr):
        d = instr.dsts[0]
        odt = instr.attrs[out_dtype_attr]
        merging = instr.attrs.get("merging", False)
        regs = [a for a in instr.args if isinstance(a, RegRead) and a.reg.kind == c.VREG]
        mk = next((a for a in instr.args if isinstance(a, RegRead) and a.reg.kind == c.MASK), None)
        ct = compute_dtype(np_of(odt))
        cts = [compute_dtype(np_of(r.dtype)) for r in regs]
        ot = np_of(odt)
        if getattr(fn, "on_bits", False):  # a bitwise instruction: the lanes' bits, whatever their type
            return _bitwise_run(fn, d, odt, regs, mk, merging, instr)

        casts = [t for r, t in zip(regs, cts) if np_of(r.dtype) != t]  # operands computed in another type
        views = PerRegFile(lambda rf: ([view(rf.v[r.reg.uid], r.dtype) for r in regs], view(rf.v[d.uid], odt),
                                       None if mk is None else active(rf.m[mk.reg.uid], odt)))  # ins, dst, pred

        def finish(res):
            return res if res.dtype == ot else res.astype(ct, copy=False).astype(ot)

        # a scalar operand is of the lane type (the C++ form takes one): a BF16 register's scalar is rounded
        # to BF16 before it is widened to the FP32 the lanes compute in (a constant keeps its Python value)
        sct = ot.type if ct != ot else None

        def result(ins, scalars):
            if casts:
                ins = [x.astype(t, copy=False) for x, t in zip(ins, cts)]
            if not scalars:
                return finish(np.asarray(fn(*ins)))
            return finish(np.asarray(fn(*ins, *(ct.type(sct(x) if sct else x) for x in scalars))))
        # scan_form's hoisted form (operands taken as they are): store a result as result() would give it
        result.store = (None if casts else _assign if ct == ot  # type: ignore[attr-defined]
                        else lambda out, res: _assign(out, finish(res)))

        def run(rf, mem, bases, *scalars):
            ins, out, act = views(rf)
            if act is None:
                out[:] = result(ins, scalars)
            else:
                merge(out, result(ins, scalars), act, merging)

        def full(rf, mem, bases, *scalars):  # every lane active: the merge is a copy (call.py's plan)
            ins, out, _ = views(rf)
            out[:] = result(ins, scalars)
        if mk is not None:
            run.full, run.full_mask = full, (mk.reg.uid, odt)  # type: ignore[attr-defined]
        _batched(instr, run, full, regs, mk, odt, merging, result, fn)
        return run
    build.lanewise = True  # type: ignore[attr-defined]  (lane i of each operand matters only where lane i is active)
    return build


def on_bits(fn: Numerics) -> Numerics:
    """``fn`` applied to the lanes' bit patterns (unsigned integers of the lane width): the real
    logical instructions take float registers too (``vf.or_`` of two fp16 registers ORs their bits)."""
    def bits(*xs):
        return fn(*xs)
    bits.on_bits = True  # type: ignore[attr-defined]
    return bits


def _bitwise_run(fn: Numerics, d, odt, regs, mk, merging: bool, instr) -> Callable:
    ut = np.dtype(f"u{np_of(odt).itemsize}")

    views = PerRegFile(lambda rf: ([view(rf.v[r.reg.uid], r.dtype).view(ut) for r in regs], view(rf.v[d.uid], odt),
                                   None if mk is None else active(rf.m[mk.reg.uid], odt)))  # operand bits, dst, pred

    def run(rf, mem, bases, *scalars):
        ins, out, act = views(rf)
        res = fn(*ins)
        if act is None:
            out.view(ut)[:] = res
        else:
            merge(out, np.asarray(res, ut).view(out.dtype), act, merging)

    def full(rf, mem, bases, *scalars):  # every lane active (vf/call.py's plan): the merge is a bit copy
        ins, out, _ = views(rf)
        out.view(ut)[:] = np.asarray(fn(*ins), ut)
    if mk is not None:
        run.full, run.full_mask = full, (mk.reg.uid, odt)  # type: ignore[attr-defined]
    _batched(instr, run, full, regs, mk, odt, merging, lambda xs, scalars: np.asarray(fn(*xs), ut), fn, ut)
    return run


def _batched(instr, run, full, regs, mk, odt, merging: bool, result, fn, bits: np.dtype | None = None) -> None:
    """The batched forms of a lane-wise instruction (``backends/sim/vf/batch.py``): the same ``result``
    over ``[N, lanes]`` stacks of operands (bitwise: their bit patterns as ``bits``)."""
    reads = [a for a in instr.args if isinstance(a, RegRead) and a.reg.kind in (c.VREG, c.MASK)]
    at = [reads.index(r) for r in regs]
    types = [bits if bits is not None else np_of(r.dtype) for r in regs]
    mp = reads.index(mk) if mk is not None else None
    ot = bits if bits is not None else np_of(odt)
    key = ("lanewise", instr.op, fn, odt, tuple(r.dtype for r in regs), tuple(at), mp, len(reads), merging, bits)

    # a NumPy ufunc, or a callable that acts as one (``ufunc_like``: arith._ZeroSigned), into ``out=``
    direct = (isinstance(fn, np.ufunc) or getattr(fn, "ufunc_like", False)) and bits is None and \
        all(t == compute_dtype(t) == ot for t in types)

    def make(is_full: bool):
        def build(bases, scs, size):
            scalars = scs[0]

            def kernel(ins, outs, mem):
                res = result([ins[j].view(t) for j, t in zip(at, types)], scalars)
                out = outs[0].view(ot)
                if is_full or mp is None:
                    out[...] = res
                else:
                    merge_rows(out, res, active_rows(ins[mp], odt), merging)
            if direct and (is_full or mp is None):
                kernel.bind = lambda ins, outs: _direct(fn, [ins[j].view(t) for j, t in zip(at, types)],
                                                        [ot.type(x) for x in scalars], outs[0].view(ot))
            return kernel
        return build
    run.batched = Spec(key + (False,), make(False), overwrites=not merging or mk is None)  # type: ignore[attr-defined]
    full_make = make(True)
    full_make.scan = scan_form(at, types, ot, result, getattr(fn, "split", None),  # type: ignore[attr-defined]
                               fn if direct else None)
    full.batched = Spec(key + (True,), full_make)  # type: ignore[attr-defined]


def _assign(out: np.ndarray, res) -> None:
    """``out[...] = res``: NumPy's cast of ``res`` to ``out``'s dtype, the one ``astype`` makes."""
    out[...] = res


def scan_form(at: list[int], types: list, ot: np.dtype, result: Callable, split=None,
              ufunc: np.ufunc | None = None) -> Callable:
    """The scan form (``backends/sim/vf/batch_scan.py``) of a lane-wise instruction's all-lanes group:
    level by level, ``result`` of that level's operands, the carried one read from the previous level's
    rows. ``split = (pos, pre, ufunc)``: ``fn(*xs) == ufunc(pre(*others), xs[pos])`` with ``pre``
    element-wise (``mul_add_dst``'s product, then ``np.add``): ``pre`` runs once over every level's
    stacked operands, the ufunc once per level into a buffer of ``pre``'s dtype. ``ufunc``: ``fn`` when
    it is a ufunc computing in the output type with no casts (``_batched``'s ``direct``); the bound form
    (``scan.bind``) then runs it straight into each level's rows (``_direct``'s argument)."""
    def maker(bases, scs, size, carried):
        if carried not in at:
            return None  # the chain carries the predicate
        pos = at.index(carried)
        scalars = scs[0]
        t_c = types[pos]
        others = [(j, t) for j, t in zip(at, types) if j != carried]
        store = getattr(result, "store", None)  # None: operands are converted first (no hoisted form)
        hoist = split is not None and split[0] == pos and not scalars and store is not None

        def scan(stacks, outs):
            xs = [stacks[j].view(t) for j, t in others]
            if hoist:
                pre, ufunc = split[1](*xs), split[2]
                buf = np.empty(np.broadcast_shapes(pre.shape[1:], outs[0].view(t_c).shape), pre.dtype)
                for k in range(len(outs) - 1):
                    ufunc(pre[k], outs[k].view(t_c), out=buf)
                    store(outs[k + 1].view(ot), buf)
                return
            for k in range(len(outs) - 1):
                ins = [x[k] for x in xs]
                ins.insert(pos, outs[k].view(t_c))
                outs[k + 1].view(ot)[...] = result(ins, scalars)

        def bind(stacks, outs, dead: bool = False) -> Callable:
            """``scan`` over fixed operand stacks and output rows (``batch_scan.Scan.bind``: buffers it
            fills before each call): the same per-level operations, the views made once. ``dead``: only
            the last level's rows are read afterwards (``_last_level``)."""
            xs = [stacks[j].view(t) for j, t in others]
            carry = [o.view(t_c) for o in outs]
            dsts = [o.view(ot) for o in outs[1:]]
            if hoist:
                pre_of, uf = split[1], split[2]
                levels = list(zip(carry, dsts))

                def hoisted() -> None:
                    pre = pre_of(*xs)
                    buf = np.empty(np.broadcast_shapes(pre.shape[1:], carry[0].shape), pre.dtype)
                    for k, (c_k, d_k) in enumerate(levels):
                        uf(pre[k], c_k, out=buf)
                        store(d_k, buf)
                return hoisted
            per_level = []
            for k in range(len(outs) - 1):
                ins = [x[k] for x in xs]
                ins.insert(pos, carry[k])
                per_level.append((ins, dsts[k]))
            if ufunc is not None:
                sc = [ot.type(x) for x in scalars]
                probe = np.asarray(ufunc(*(np.zeros(1, x.dtype) for x in per_level[0][0]), *sc))
                fresh = not any(np.shares_memory(d, x) for ins, d in per_level for x in ins)
                if probe.dtype == ot and fresh:
                    calls = [(*ins, *sc) for ins, _ in per_level]
                    outs_k = [d for _, d in per_level]

                    def direct() -> None:
                        for args, d in zip(calls, outs_k):
                            ufunc(*args, out=d)
                    last = _last_level(ufunc, pos, carry[0], xs[0], dsts[-1], direct) \
                        if dead and len(xs) == 1 and not sc else None
                    return last or direct

            def levels_run() -> None:
                for ins, d in per_level:
                    d[...] = result(ins, scalars)
            return levels_run
        scan.bind = bind  # type: ignore[attr-defined]
        return scan
    return maker


COMMUTATIVE = frozenset({np.add, np.multiply, np.maximum, np.minimum})  # bit for bit, NaN payloads aside


def _last_level(ufunc, pos: int, carry0: np.ndarray, xs: np.ndarray, last: np.ndarray,
                levels: Callable) -> Callable | None:
    """The last level of a chain ``c[k + 1] = ufunc(c[k], xs[k])`` (``pos`` 0; ``pos`` 1: ``ufunc(xs[k],
    c[k])``) whose other levels nobody reads, as one ``ufunc.reduce`` over ``[c[0], xs[0], ...]`` along the
    first axis: NumPy reduces a non-innermost axis one row at a time in order, ``acc = ufunc(acc, row)``,
    the chain's own calls (``tests/backends/sim/vf/test_vf_batch_scan.py`` compares it with the levels on
    every special value). With the carried operand second the operands of each call are swapped, the same
    bits for a commutative ufunc except which NaN a NaN result carries: a float result with a NaN lane
    is recomputed level by level (``levels``). None: no such form for this ufunc."""
    reduce = getattr(ufunc, "reduce", None)
    if reduce is None or (pos != 0 and getattr(ufunc, "commutes", ufunc) not in COMMUTATIVE):
        return None
    buf = np.empty((xs.shape[0] + 1, *last.shape), last.dtype)
    swapped_float = pos != 0 and last.dtype.kind == "f"
    isnan = np.isnan

    def run() -> None:
        buf[0] = carry0
        buf[1:] = xs
        reduce(buf, axis=0, out=last)
        if swapped_float and isnan(last).any():
            levels()
    return run


def _direct(fn: np.ufunc, ins: list, scalars: list, out: np.ndarray):
    """``kernel`` of a group whose operands are fixed arena rows (``batch._Group.bind``): the ufunc
    straight into the destination rows, or None. Exactly ``result``'s bytes: no cast on either side (the
    operands, the scalars and the result are all the output type) and the destination rows are fresh
    versions, never an operand's, so the ufunc runs the loop it runs into a new array of that layout."""
    probe = np.asarray(fn(*(np.zeros(1, x.dtype) for x in ins), *scalars))
    if probe.dtype != out.dtype or any(np.shares_memory(out, x) for x in ins):
        return None
    args = (*ins, *scalars)
    return lambda rf, mem, bases: fn(*args, out=out)


def merge_mode(p, a, name: str = "mode", merging: bool = True) -> bool:
    """Whether ``mode=`` asks for MERGING (default ZEROING). ``merging=False``: the op's page says MERGING
    is not supported yet and the real backend refuses it (``VFZeroingOnly``): a located error."""
    merge = c.enum_arg(p, a, name, MergeMode, MergeMode.ZEROING) is MergeMode.MERGING
    if merge and not merging:
        p.fail(a.node(name), f"{a.display}(): {name}=pl.MergeMode.MERGING is not supported here: only "
                             "MergeMode.ZEROING is supported (the page says MERGING is not, on the current chip)")
    return merge


def declare_binary(family: str, name: str, fn: Numerics, cost: str, dtypes: tuple, doc: str,
                   params: str = "src0, src1, mask, mode=None", instr: str | None = None,
                   on_masks: Callable | None = None, merging: bool = True) -> None:
    """``dst = vf.<name>(src0, src1, mask, mode=None)``: two registers of one dtype. ``on_masks(a, b)``:
    the predicate form (``pand`` ...) when the operands are mask registers, under the mask.
    ``merging=False``: ``mode=MERGING`` is a located error (``merge_mode``)."""
    op = instr or f"v{name.rstrip('_')}"
    pop = f"p{name.rstrip('_')}"

    def check(p, node, a):
        if on_masks is not None and isinstance(a["src0"], RegValue) and a["src0"].is_mask:
            return mask_logic(p, node, a, pop, ("src0", "src1"), name)
        regs = [c.reg(p, a, n, dtypes) for n in ("src0", "src1")]
        dt = c.same_dtype(p, a, ("src0", "src1"), regs)
        m = c.mask(p, a, "mask")
        d = c.dst(p, c.VREG, dt)
        c.emit(p, node, op, (d,), (*map(c.read, regs), c.read(m)), dtype=dt, merging=merge_mode(p, a, merging=merging),
               lanes=lanes(dt), api=name)
        return d
    vf_api(family, name, params, doc, check)
    vf_instr(op, family, sim_lanewise(fn), cost, **vcpp.lanewise(op))
    if on_masks is not None:
        vf_instr(pop, family, sim_mask_logic(on_masks), "VMASK", **vcpp.lanewise(pop))


def mask_logic(p, node, a, op: str, names: tuple[str, ...], api: str) -> RegValue:
    """A predicate instruction: every operand and the result are mask registers; lanes the last mask
    does not select are 0."""
    ms = [c.mask(p, a, n) for n in names]
    sel = c.mask(p, a, "mask")
    d = c.dst(p, c.MASK, ms[0].dtype)
    c.emit(p, node, op, (d,), (*map(c.read, ms), c.read(sel)), api=api)
    return d


def sim_mask_logic(fn: Callable) -> Callable:
    def build(instr):
        *ins, sel = instr.args
        uid = instr.dsts[0].uid

        def run(rf, mem, bases):
            rf.m[uid][:] = fn(*(rf.m[r.reg.uid] for r in ins)) & rf.m[sel.reg.uid]
        return run
    return build


def declare_unary(family: str, name: str, fn: Numerics, cost: str, dtypes: tuple, doc: str,
                  params: str = "src, mask, mode=None", instr: str | None = None,
                  on_masks: Callable | None = None, merging: bool = True) -> None:
    """``dst = vf.<name>(src, mask, mode=None)`` (``merging``: as ``declare_binary``)."""
    op = instr or f"v{name.rstrip('_')}"
    pop = f"p{name.rstrip('_')}"

    def check(p, node, a):
        if on_masks is not None and isinstance(a["src"], RegValue) and a["src"].is_mask:
            return mask_logic(p, node, a, pop, ("src",), name)
        r = c.reg(p, a, "src", dtypes)
        m = c.mask(p, a, "mask")
        d = c.dst(p, c.VREG, r.dtype)
        c.emit(p, node, op, (d,), (c.read(r), c.read(m)), dtype=r.dtype, merging=merge_mode(p, a, merging=merging),
               lanes=lanes(r.dtype), api=name)
        return d
    vf_api(family, name, params, doc, check)
    vf_instr(op, family, sim_lanewise(fn), cost, **vcpp.lanewise(op))
    if on_masks is not None:
        vf_instr(pop, family, sim_mask_logic(on_masks), "VMASK", **vcpp.lanewise(pop))


def declare_scalar(family: str, name: str, fn: Numerics, cost: str, dtypes: tuple, doc: str,
                   scalar_name: str = "scalar", instr: str | None = None, merging: bool = True) -> None:
    """``dst = vf.<name>(src, scalar, mask, mode=None)``: the scalar converted to the register dtype
    (``merging``: as ``declare_binary``)."""
    op = instr or f"v{name}"

    def check(p, node, a):
        r = c.reg(p, a, "src", dtypes)
        m = c.mask(p, a, "mask")
        s = c.scalar(p, a, scalar_name, r.dtype)
        d = c.dst(p, c.VREG, r.dtype)
        c.emit(p, node, op, (d,), (c.read(r), c.read(m), s), dtype=r.dtype, merging=merge_mode(p, a, merging=merging),
               lanes=lanes(r.dtype), api=name)
        return d
    vf_api(family, name, f"src, {scalar_name}, mask, mode=None", doc, check)
    vf_instr(op, family, sim_lanewise(fn), cost, **vcpp.lanewise(op))


def accumulator(p, node, dt) -> RegValue:
    """The destination of an accumulating instruction (``axpy``, ``mul_add_dst``): the register the
    assignment's target already names (its old value is an operand)."""
    cur = p.target_value()
    if not (isinstance(cur, RegValue) and cur.reg.kind == c.VREG and cur.dtype is dt):
        p.fail(node, f"this instruction accumulates into its destination: the assignment's target must already "
                     f"hold a register of {dt.name}")
    return cur
