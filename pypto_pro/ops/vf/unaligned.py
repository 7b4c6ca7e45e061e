"""Unaligned VF loads and stores (``vf_computation/data_movement``): ``vf.load_unalign_init``,
``vf.load_unalign_pre``, ``vf.load_unalign``, ``vf.unalign_reg_for_store``, ``vf.store_unalign``,
``vf.store_unalign_post``; and ``vf.move``.

The hardware streams unaligned data through an alignment register (``UnalignReg``): a store writes
the 32-byte-aligned part at once and keeps the tail in the register until the next store or the
``store_unalign_post`` flush; a load primes the register with ``load_unalign_pre``. The simulator
models the sequence's effect on memory: ``store_unalign(tile, src, ureg, count)`` writes the first
``count`` elements of ``src`` at the pointer (``post_update=True`` then moves it by ``count``;
without ``count`` the whole register), ``load_unalign`` reads 256 bytes at any address (with a
stride, the pointer moves by it, in elements as the C++ ``vldus`` post-update counts them);
``*_init`` / ``*_pre`` / ``*_post`` change no memory. (A VF load of the tail bytes between a store
and its flush would see them already written here.)
"""
from __future__ import annotations

import numpy as np

from pypto_pro.backends.sim.kit import fault
from pypto_pro.backends.sim.vf.batch import MemRows, Spec
from pypto_pro.backends.sim.vf.regfile import VL, active, lanes, merge, view
from pypto_pro.frontend.vf.values import RegValue
from pypto_pro.ir.expr import Const
from pypto_pro.ir.vf import VReg
from pypto_pro.language import dtypes as D
from pypto_pro.language.dtypes import DT_INT64
from pypto_pro.language.enums import MergeMode
from pypto_pro.ops.vf import common as c
from pypto_pro.ops.vf import cpp as vcpp
from pypto_pro.ops.vf import cpp_cce as cce
from pypto_pro.ops.vf.decl import vf_api, vf_instr

FAMILY = "vf_data_movement"


def _align_reg(p, a, name: str) -> RegValue:
    v = a[name]
    if not isinstance(v, RegValue) or v.reg.kind != c.ALIGN:
        p.fail(a.node(name), f"{a.display}(): '{name}' must be an unaligned register (vf.unalign_reg_for_store() / "
                             f"vf.load_unalign_init()), got {p.describe(v)}")
    return v


def _new_align(p) -> RegValue:
    names = p.target_names()
    name = names[0] if names and names[0] else f"_ureg{p.vf.temps}"
    p.vf.temps += 1
    return RegValue(VReg(c.ALIGN, None, name), None)


vf_api(FAMILY, "unalign_reg_for_store", "", "A new alignment register for a vf.store_unalign sequence.",
       lambda p, node, a: _new_align(p))
vf_api(FAMILY, "load_unalign_init", "", "A new alignment register for a vf.load_unalign sequence.",
       lambda p, node, a: _new_align(p))


def _check_load_pre(p, node, a):
    _align_reg(p, a, "ureg")
    c.tile_ptr(p, a, "src_ptr")
    return None


vf_api(FAMILY, "load_unalign_pre", "ureg, src_ptr",
       "Prime the alignment register for unaligned loads from src_ptr (no effect on the data model).",
       _check_load_pre, results=0)


def _check_load_unalign(p, node, a):
    _align_reg(p, a, "ureg")
    ptr = c.tile_ptr(p, a, "src_ptr")
    if not isinstance(a["post_update"], bool):
        p.fail(a.node("post_update"), "vf.load_unalign(): 'post_update' must be a compile-time bool")
    post = a["stride"] is not None or a["post_update"]  # the C++ vldus form with a stride is the POST_UPDATE one
    addr, cur = c.post_address(p, node, ptr, False) if post else (c.address(p, node, ptr, Const(0, DT_INT64), False),
                                                                  None)
    d = c.dst(p, c.VREG, ptr.dtype)
    c.emit(p, node, "vldus", (d,), (addr,), api="load_unalign", dtype=ptr.dtype, lanes=lanes(ptr.dtype))
    if post:
        step = c.scalar(p, a, "stride", DT_INT64) if a["stride"] is not None else Const(lanes(ptr.dtype), DT_INT64)
        c.advance(p, node, cur, step)
    return d


def _sim_vldus(instr):
    tile, uid = instr.args[0].tile, instr.dsts[0].uid

    def run(rf, mem, bases, off):
        at = bases[tile] + off
        rf.v[uid][:] = mem[at:at + VL]
    return run


vf_api(FAMILY, "load_unalign", "ureg, src_ptr, stride=None, post_update=False",  # post_update: on the page
       "Load a register from any UB address (vldus); with stride the pointer moves by stride elements.",
       _check_load_unalign)
vf_instr("vldus", FAMILY, _sim_vldus, "VLDS", mem=lambda i: (lambda off, t=i.args[0].tile: ((t, off, VL, False),)),
         cpp=vcpp.vldus)


def _check_store_unalign(p, node, a):
    ptr = c.tile_ptr(p, a, "dst_ptr")
    if isinstance(a["src"], RegValue) and a["src"].reg.kind == c.MASK:
        return _check_store_unalign_mask(p, node, a, ptr)
    src = c.reg(p, a, "src")
    _align_reg(p, a, "align_reg")
    if not isinstance(a["post_update"], bool):
        p.fail(a.node("post_update"), "vf.store_unalign(): 'post_update' must be a compile-time bool")
    w = c.width(src.dtype)
    # after vf.squeeze(STORE_REG) the strideless form is the AR stream (the real backend's vstur, POST_UPDATE
    # with or without post_update=): it writes the squeezed bytes at the pointer + the AR bytes before them
    from_ar = a["stride"] is None and p.vf.ar_set
    count = c.scalar(p, a, "stride", DT_INT64) if a["stride"] is not None else Const(lanes(src.dtype), DT_INT64)
    post = a["post_update"] and not from_ar
    if from_ar:
        addr, cur = c.post_address(p, node, ptr, True)
    else:
        addr, cur = c.post_address(p, node, ptr, True) if post else (
            c.address(p, node, ptr, Const(0, DT_INT64), True), None)
    c.emit(p, node, "vstus", (), (c.read(src), addr, count), api="store_unalign", dtype=src.dtype, width=w,
           lanes=lanes(src.dtype), from_ar=from_ar)
    if post:
        c.advance(p, node, cur, count)
    return None


def _check_store_unalign_mask(p, node, a, ptr):
    """A mask register (pstu): one bit per element of its type, packed (a b32 mask: 64 bits, 8 bytes)."""
    m = c.mask(p, a, "src")
    _align_reg(p, a, "align_reg")
    if a["stride"] is not None or a["post_update"]:
        p.fail(node, "vf.store_unalign() of a mask register takes no stride / post_update in this release")
    nbytes = lanes(m.dtype) // 8
    addr = c.address(p, node, ptr, Const(0, DT_INT64), True)
    c.emit(p, node, "pstu", (), (c.read(m), addr), api="store_unalign", dtype=m.dtype, nbytes=nbytes,
           lanes=lanes(m.dtype))
    return None


def _sim_pstu(instr):
    src, mref = instr.args
    tile, dt, n = mref.tile, instr.attrs["dtype"], instr.attrs["nbytes"]

    def run(rf, mem, bases, off):
        at = bases[tile] + off
        mem[at:at + n] = np.packbits(active(rf.m[src.reg.uid], dt), bitorder="little")  # bit i: element i
    return run


def _count(instr, n: int, limit: int) -> int:
    if not 0 <= n <= limit:
        raise fault(instr, f"vf.store_unalign: {n} elements do not fit in one register ({limit} lanes)")
    return n


def _sim_vstus(instr):
    src, mref, _ = instr.args
    tile, w, n_lanes = mref.tile, instr.attrs["width"], instr.attrs["lanes"]

    from_ar = instr.attrs["from_ar"]

    def run(rf, mem, bases, off, count):
        if from_ar:  # the bytes of the last squeeze, after the AR bytes already streamed (AR includes them)
            n = rf.sqz
            at = bases[tile] + off + rf.ar - n
            rf.sqz = 0
        else:
            n = _count(instr, count, n_lanes) * w
            at = bases[tile] + off
        mem[at:at + n] = rf.v[src.reg.uid][:n]
    if not from_ar:  # an AR store reads the squeeze count and AR: it stays a barrier (backends/sim/vf/batch.py)
        run.faults = lambda off, count: not 0 <= count <= n_lanes  # type: ignore[attr-defined]
        run.batched = _batched_vstus(tile, w)  # type: ignore[attr-defined]
    return run


def _batched_vstus(tile: int, w: int) -> Spec:
    """N counted stores (``vstus`` with a count, no AR stream) of distinct bytes (backends/sim/vf/batch.py):
    the first ``count * w`` bytes of each register at its address, one strided or scattered copy per
    distinct count (the plan checked every count, so none faults; a count of 0 writes nothing)."""
    def make(bases, scs, size):
        by: dict[int, list[int]] = {}
        for i, (off, count) in enumerate(scs):
            if count:
                by.setdefault(count * w, []).append(i)
        parts = []
        for n, idx in by.items():
            rows = MemRows([bases[tile] + scs[i][0] for i in idx], n, size)
            sel = slice(idx[0], idx[0] + len(idx)) if idx == list(range(idx[0], idx[0] + len(idx))) else \
                np.asarray(idx, np.intp)
            parts.append((rows, sel, n))

        def kernel(ins, outs, mem):
            src = ins[0]
            for rows, sel, n in parts:
                rows.write(mem, src[sel, :n] if src.shape[0] > 1 else np.broadcast_to(src[0, :n], (rows.count, n)))
        return kernel
    return Spec(("vstus", tile, w), make, shared=False)


def _mem_vstus(instr):
    tile, w = instr.args[1].tile, instr.attrs["width"]
    if not instr.attrs["from_ar"]:
        return lambda off, count: ((tile, off, max(0, count) * w, True),)

    def foot(state, off, count):  # an AR store: below the bound of AR (each squeeze adds <= one register)
        return ((tile, off, state.get("ar"), True),)  # None (AR not cleared in this body): to the slot's end
    foot.stateful = True
    return foot


vf_api(FAMILY, "store_unalign", "dst_ptr, src, align_reg, stride=None, post_update=False",
       "Store the first `stride` elements of src at any UB address (vstus); post_update moves the pointer.",
       _check_store_unalign, results=0)
vf_instr("vstus", FAMILY, _sim_vstus, "VSTS", mem=_mem_vstus, cpp=vcpp.vstus)
vf_instr("pstu", FAMILY, _sim_pstu, "VSTS",
         mem=lambda i: (lambda off, t=i.args[1].tile, n=i.attrs["nbytes"]: ((t, off, n, True),)),
         cpp=vcpp.pstu)


def _check_store_post(p, node, a):
    c.tile_ptr(p, a, "dst_ptr")
    _align_reg(p, a, "align_reg")
    c.emit(p, node, "vstas", (), (), api="store_unalign_post")
    return None


vf_api(FAMILY, "store_unalign_post", "dst_ptr, align_reg, stride=None, post_update=False",
       "Flush the alignment register of a vf.store_unalign sequence (vstas).", _check_store_post, results=0)
vf_instr("vstas", FAMILY, lambda instr: (lambda rf, mem, bases: None), "VSTS", cpp=vcpp.vstas)


# move.md: the register types vmov takes (no 64-bit ones)
_MOVE_TYPES = (D.DT_BOOL, D.DT_INT8, D.DT_UINT8, D.DT_INT16, D.DT_UINT16, D.DT_FP16, D.DT_BF16, D.DT_INT32,
               D.DT_UINT32, D.DT_FP32)


def _check_move(p, node, a):
    r = a["src"]
    if isinstance(r, RegValue) and r.is_mask:
        sel = c.mask(p, a, "mask", required=False)
        d = c.dst(p, c.MASK, r.dtype)
        c.emit(p, node, "pmov", (d,), (c.read(r), c.read(sel)), api="move")
        return d
    r = c.reg(p, a, "src", _MOVE_TYPES)
    m = c.mask(p, a, "mask", required=False)
    if c.enum_arg(p, a, "mode", MergeMode, MergeMode.MERGING) is not MergeMode.MERGING:  # move.md, and the
        # real backend's check: masked-off lanes keep the destination's value; ZEROING is not supported
        p.fail(a.node("mode"), "vf.move(): only mode=pl.MergeMode.MERGING is supported (the default: masked-off "
                               "lanes keep the destination's value)")
    d = c.dst(p, c.VREG, r.dtype)
    c.emit(p, node, "vmov", (d,), (c.read(r), c.read(m)), api="move", dtype=r.dtype, merging=True,
           lanes=lanes(r.dtype))
    return d


def _sim_vmov(instr):
    src, mk = instr.args
    dt, uid, merging = instr.attrs["dtype"], instr.dsts[0].uid, instr.attrs["merging"]

    def run(rf, mem, bases):
        x = view(rf.v[src.reg.uid], dt).copy()
        if mk is None:
            view(rf.v[uid], dt)[:] = x
        else:
            merge(view(rf.v[uid], dt), x, active(rf.m[mk.reg.uid], dt), merging)
    return run


def _sim_pmov(instr):
    (src, sel), uid = instr.args, instr.dsts[0].uid

    def run(rf, mem, bases):
        rf.m[uid][:] = rf.m[src.reg.uid] if sel is None else rf.m[src.reg.uid] & rf.m[sel.reg.uid]
    return run


vf_api(FAMILY, "move", "src, mask=None, mode=None", "Copy a register (the active lanes; the others keep the "
       "destination's value) or a mask (the bits under the mask, 0 elsewhere).",
       _check_move)
vf_instr("vmov", FAMILY, _sim_vmov, "VDUP", cpp=vcpp.vmov)
vf_instr("pmov", FAMILY, _sim_pmov, "VMASK", cpp=cce.pmov)


def _check_load(p, node, a):
    ptr = c.tile_ptr(p, a, "src_ptr")
    post = a["post_update"]
    if not isinstance(post, bool):
        p.fail(a.node("post_update"), "vf.load(): 'post_update' must be a compile-time bool")
    addr, cur = c.post_address(p, node, ptr, False) if post else (c.address(p, node, ptr, Const(0, DT_INT64), False),
                                                                  None)
    d = c.dst(p, c.VREG, ptr.dtype)
    c.emit(p, node, "vldus", (d,), (addr,), api="load", dtype=ptr.dtype, lanes=lanes(ptr.dtype))
    if post:
        step = a["stride"] if a["stride"] is not None else a["count"]
        c.advance(p, node, cur, c.scalar(p, a, "stride" if a["stride"] is not None else "count", DT_INT64)
                  if step is not None else Const(lanes(ptr.dtype), DT_INT64))
    return d


vf_api(FAMILY, "load", "src_ptr, stride=None, post_update=False, repeat_stride=None, count=None",
       "Load a register from any UB address (an unaligned-load sequence in one call); post_update moves the "
       "pointer's cursor by stride (default: count, else a register's lanes).", _check_load)


def _check_store(p, node, a):
    ptr = c.tile_ptr(p, a, "dst_ptr")
    src = c.reg(p, a, "src")
    post = a["post_update"]
    if not isinstance(post, bool):
        p.fail(a.node("post_update"), "vf.store(): 'post_update' must be a compile-time bool")
    n = lanes(src.dtype)
    count = c.scalar(p, a, "count", DT_INT64) if a["count"] is not None else Const(n, DT_INT64)
    addr, cur = c.post_address(p, node, ptr, True) if post else (c.address(p, node, ptr, Const(0, DT_INT64), True),
                                                                 None)
    c.emit(p, node, "vstus", (), (c.read(src), addr, count), api="store", dtype=src.dtype, width=c.width(src.dtype),
           lanes=n, from_ar=False)
    if post:
        c.advance(p, node, cur, count)
    return None


vf_api(FAMILY, "store", "dst_ptr, src, count=None, post_update=False, repeat_stride=None",
       "Store the first count elements (default: all lanes) at any UB address (vstus + vstas in one call); "
       "post_update moves the pointer's cursor by count.", _check_store, results=0)
