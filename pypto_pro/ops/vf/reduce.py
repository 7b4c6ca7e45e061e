"""VF reductions and comparisons (``vf_computation/{reduction,comparison_and_selection}``).

``reduce_sum`` adds the active lanes by a binary tree of adjacent pairs (fp16 in fp32, one rounding
at the end; integers wrap at their width), the result in element 0 and every other lane 0 (an empty
mask: 0). ``reduce_max`` / ``reduce_min`` write the extreme to element 0 and the index of its first
lane to element 1 (an unsigned integer of the lane width), the other lanes 0; a NaN wins (the first
one), ``max(-0, +0) = +0`` and ``min(-0, +0) = -0``, and an empty mask gives the type's lowest
(max; -inf for floats) or highest (min; +inf) value with index 0, as their pages say. With
``datablock=True`` (``vcgadd`` / ``vcgmax`` / ``vcgmin``) each 32-byte block is reduced and the 8 results are lanes 0..7 (as PTO-ISA's a5 TQuant stores them: the lower 8 lanes);
the page's "each block's first element" disagrees, the instruction's use in PTO-ISA decides here.
A block with no active lane gives what an empty mask gives (no index). Comparisons write a mask
register: lane ``i`` active when the mask selects it and the comparison holds; ``vf.select`` takes
``src_true[i]`` where the mask is active, else ``src_false[i]``.
"""
from __future__ import annotations

import numpy as np

from pypto_pro.backends.sim.vf.batch import Spec
from pypto_pro.backends.sim.vf.regfile import VL, PerRegFile, active, active_rows, lanes, np_of, set_active, view
from pypto_pro.frontend.vf.values import RegValue
from pypto_pro.language import dtypes as D
from pypto_pro.ops.vf import common as c
from pypto_pro.ops.vf import cpp as vcpp
from pypto_pro.ops.vf.decl import vf_api, vf_instr
from pypto_pro.ops.vf.lanes import NUMERIC, merge_mode, sim_lanewise

FAMILY = "vf_reduction"
_SUM_TYPES = (D.DT_INT16, D.DT_UINT16, D.DT_INT32, D.DT_UINT32, D.DT_FP16, D.DT_FP32)
_MAX_TYPES = _SUM_TYPES  # reduce_max / reduce_min pages: the same six types (no BF16)


# datablock=True: the per-32-byte-block reductions (PTO-ISA docs/isa/vector/reduction-ops.md)
_GROUP_CPP = {"vcadd": "vcgadd", "vcmax": "vcgmax", "vcmin": "vcgmin"}


def tree_sum(x: np.ndarray, acc: np.dtype) -> np.ndarray:
    """Sum of each row of ``x`` by a binary tree of adjacent pairs, in ``acc``."""
    x = x.astype(acc)
    while x.shape[-1] > 1:
        if x.shape[-1] % 2:
            x = np.concatenate([x, np.zeros(x.shape[:-1] + (1,), acc)], axis=-1)
        x = x[..., 0::2] + x[..., 1::2]
    return x[..., 0]


def _zero_order(xs: np.ndarray) -> np.ndarray:
    """Float lanes (fp32) as float64 keys in which -0.0 sorts just below +0.0 (the pages: ``max(-0, +0)
    = +0``, ``min(-0, +0) = -0``), every other value keeping its place."""
    k = xs.astype(np.float64)
    return np.where((k == 0) & np.signbit(k), -np.float64(5e-324), k)


def _extreme(kind: str, x: np.ndarray, act: np.ndarray | None, acc: np.dtype, low, high,
             is_float: bool) -> tuple[np.ndarray, np.ndarray]:
    """``reduce_max`` / ``reduce_min`` of each row (last axis) of ``x`` over its active lanes ``act``
    (None: all): (the extreme as ``x``'s dtype, its first lane index). A NaN among the active lanes
    wins (the first one, its own bits); a row with no active lane gives the type's lowest (max) or
    highest (min) value, -inf / +inf for floats, and index 0 (the pages' empty-mask rule; PTO-ISA's
    vcmax / vcmin pseudocode starts from -INF / INF with index 0)."""
    key = _zero_order(x.astype(np.float32)) if is_float else x.astype(acc)
    if act is not None:
        key = np.where(act, key, low if kind == "max" else high)
    idx = key.argmax(axis=-1) if kind == "max" else key.argmin(axis=-1)
    if is_float:
        nan = np.isnan(key) if act is None else np.isnan(key) & act
        any_nan = nan.any(axis=-1)
        idx = np.where(any_nan, nan.argmax(axis=-1), idx)
    val = np.take_along_axis(x, idx[..., None], axis=-1)[..., 0]
    if act is not None:
        none = ~act.any(axis=-1)
        val = np.where(none, x.dtype.type(low if kind == "max" else high), val)
        idx = np.where(none, 0, idx)
    return val, idx


def _reduced(kind: str, x: np.ndarray, act: np.ndarray | None, acc: np.dtype, low, high,
             is_float: bool) -> np.ndarray:
    """The sum of each row (last axis) of ``x`` over its active lanes ``act`` (None: all active),
    pairwise in ``acc`` (a row with no active lane 0); ``max`` / ``min``: :func:`_extreme`'s value.
    One register (``[blocks, per]``) and a batch of them (``[N, blocks, per]``) run this same code."""
    if kind == "add":
        if act is None:  # ``np.where`` only copies (the same bytes, in a fresh contiguous array)
            return tree_sum(np.where(True, x, 0), acc) if x.dtype != acc else tree_sum(x, acc)
        with np.errstate(all="ignore"):
            return tree_sum(np.where(act, x, 0), acc)
    with np.errstate(invalid="ignore"):
        return _extreme(kind, x, act, acc, low, high, is_float)[0]


def _narrowed(res: np.ndarray, dt, t: np.dtype) -> np.ndarray:
    """A reduction's results in the source dtype (integers through int64: wrap, never a float cast)."""
    return res.astype(t) if dt.is_float() else res.astype(np.int64).astype(t)


def _low_lanes(kind: str, blocks: bool, x: np.ndarray, act: np.ndarray | None, acc: np.dtype, low, high,
               dt, t: np.dtype) -> np.ndarray:
    """What a reduction writes from lane 0 on (``[..., k]`` of ``t``; every later lane is 0): the sum, or
    one result per block (``datablock=True``); ``reduce_max`` / ``reduce_min`` of the whole register
    also the first index of the extreme in lane 1, as an unsigned integer of the lane width (the pages:
    "the index of the first maximum is written to dst[1]"; PTO-ISA's a5 TRowReduceIdx reads it so,
    de-interleaving the odd lanes of vcmax's result as integers)."""
    if kind == "add" or blocks:
        return _narrowed(_reduced(kind, x, act, acc, low, high, dt.is_float()), dt, t)
    with np.errstate(invalid="ignore"):
        val, idx = _extreme(kind, x, act, acc, low, high, dt.is_float())
    val = _narrowed(val, dt, t)  # [..., 1]: one block
    ut = np.dtype(f"u{t.itemsize}")
    return np.concatenate([val, idx.astype(ut).view(t)], axis=-1)


def _declare(name: str, kind: str, types: tuple) -> None:
    op = f"vc{kind}"

    def check(p, node, a):
        r = c.reg(p, a, "src", types)
        m = c.mask(p, a, "mask")
        if merge_mode(p, a, "merge_mode"):
            p.fail(a.node("merge_mode"), f"vf.{name}(): merge_mode=MERGING is not supported (the page: ZEROING only)")
        if not isinstance(a["datablock"], bool):
            p.fail(a.node("datablock"), f"vf.{name}(): 'datablock' must be a compile-time bool")
        d = c.dst(p, c.VREG, r.dtype)
        c.emit(p, node, op, (d,), (c.read(r), c.read(m)), dtype=r.dtype, datablock=a["datablock"],
               lanes=lanes(r.dtype), api=name)
        return d

    def build(instr):
        src, mk = instr.args
        dt, uid, blocks = instr.attrs["dtype"], instr.dsts[0].uid, instr.attrs["datablock"]
        t = np_of(dt)
        n = lanes(dt)
        per = n if not blocks else 32 // c.width(dt)
        if dt.is_float():
            acc = np.dtype(np.float32)
            low, high = -np.inf, np.inf
        else:
            acc = np.dtype(np.int64)
            info = np.iinfo(t)
            low, high = info.min, info.max

        views = PerRegFile(lambda rf: (view(rf.v[src.reg.uid], dt).reshape(-1, per),  # source blocks,
                                       active(rf.m[mk.reg.uid], dt).reshape(-1, per),  # their predicate, dst
                                       view(rf.v[uid], dt)))

        def put(dst, res) -> None:
            out = np.zeros(n, t)  # the results from lane 0 on (one per block with datablock=True)
            out[:res.size] = res.reshape(-1)
            dst[:] = out

        def run(rf, mem, bases):
            x, act, dst = views(rf)
            put(dst, _low_lanes(kind, blocks, x, act, acc, low, high, dt, t))

        def full(rf, mem, bases):
            """Every lane active (vf/call.py's plan)."""
            x, _, dst = views(rf)
            put(dst, _low_lanes(kind, blocks, x, None, acc, low, high, dt, t))
        run.full, run.full_mask = full, (mk.reg.uid, dt)  # type: ignore[attr-defined]
        run.batched = _batched_reduce(kind, dt, per, blocks, acc, low, high, False)  # type: ignore[attr-defined]
        full.batched = _batched_reduce(kind, dt, per, blocks, acc, low, high, True)  # type: ignore[attr-defined]
        return run

    vf_api(FAMILY, name, "src, mask, datablock=False, merge_mode=None",
           f"Reduce the active lanes of src ({kind}) into element 0 (datablock=True: one result per 32-byte "
           "block, in lanes 0..7); the other lanes are 0.", check)
    vf_instr(op, FAMILY, build, "VREDUCE", cpp=vcpp.reduce(op, _GROUP_CPP[op]))


def _batched_reduce(kind: str, dt, per: int, blocks: bool, acc: np.dtype, low, high, is_full: bool) -> Spec:
    """N reductions at once (backends/sim/vf/batch.py): :func:`_low_lanes` over ``[N, blocks, per]``
    stacks, each row reduced along its own last axis as one register is; the results from lane 0 on,
    the other lanes 0."""
    t = np_of(dt)

    def make(bases, scs, size):
        def kernel(ins, outs, mem):
            x = ins[0].view(t).reshape(ins[0].shape[0], -1, per)
            act = None if is_full else active_rows(ins[1], dt).reshape(ins[1].shape[0], -1, per)
            res = _low_lanes(kind, blocks, x, act, acc, low, high, dt, t).reshape(x.shape[0], -1)
            o = outs[0].view(t)
            k = res.shape[-1]
            o[:, k:] = 0
            o[:, :k] = res
        return kernel
    return Spec((f"vc{kind}", dt, per, blocks, is_full), make)


_declare("reduce_sum", "add", _SUM_TYPES)
_declare("reduce_max", "max", _MAX_TYPES)
_declare("reduce_min", "min", _MAX_TYPES)


# ---- comparisons -------------------------------------------------------------------------------------

_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "gt": np.greater, "le": np.less_equal,
        "ge": np.greater_equal}


def _compare_dtype(p, a, x: RegValue, y: RegValue, cmp_dt) -> "D.DataType":
    """The dtype two registers compare as (the real backend's vector-vector rule): ``cmp_dtype``
    (8/16/32/64-bit) reinterprets both; without it the widths must match and b reads as a's dtype."""
    if cmp_dt is not None:
        if cmp_dt.get_bit() not in (8, 16, 32, 64):
            p.fail(a.node("cmp_dtype"), f"{a.display}(): cmp_dtype must be an 8/16/32/64-bit type, got {cmp_dt.name}")
        return cmp_dt
    if x.dtype.get_bit() != y.dtype.get_bit():
        p.fail(a.node("b"), f"{a.display}(): 'b' is a register of {y.dtype.name} but 'a' is {x.dtype.name}; two "
                            "registers of different bit widths compare only with cmp_dtype=")
    return x.dtype


def _declare_cmp(name: str) -> None:
    fn = _CMP[name]

    def check(p, node, a):
        x = c.reg(p, a, "a", NUMERIC)
        m = c.mask(p, a, "mask")
        cmp_dt = c.dtype_arg(p, a, "cmp_dtype")
        if isinstance(a["b"], RegValue):
            y = c.reg(p, a, "b", NUMERIC)
            dt = _compare_dtype(p, a, x, y, cmp_dt)
            d = c.dst(p, c.MASK, dt)
            c.emit(p, node, "vcmp", (d,), (c.read(x), c.read(y), c.read(m)), dtype=dt, cmp=name, api=name)
        else:
            d = c.dst(p, c.MASK, x.dtype)
            s = c.scalar(p, a, "b", x.dtype)
            c.emit(p, node, "vcmps", (d,), (c.read(x), c.read(m), s), dtype=x.dtype, cmp=name, api=name)
        return d
    vf_api(FAMILY, name, "a, b, mask, cmp_dtype=None",
           f"A mask: lane i active when mask selects it and a[i] {name} b[i] (b: a register or a scalar; "
           "two registers of one bit width compare as a's dtype, or as cmp_dtype: both reinterpreted).", check)
    return fn


def _sim_cmp(instr):
    dt, uid, fn = instr.attrs["dtype"], instr.dsts[0].uid, _CMP[instr.attrs["cmp"]]
    regs = [r for r in instr.args if getattr(r, "reg", None) is not None and r.reg.kind == c.VREG]
    mk = next(r for r in instr.args if getattr(r, "reg", None) is not None and r.reg.kind == c.MASK)
    t = np_of(dt)

    def run(rf, mem, bases, *scalar):
        x = view(rf.v[regs[0].reg.uid], dt)
        y = view(rf.v[regs[1].reg.uid], dt) if len(regs) > 1 else t.type(scalar[0])
        with np.errstate(all="ignore"):
            res = fn(x, y) & active(rf.m[mk.reg.uid], dt)
        set_active(rf.m[uid], res, dt)
    return run


for _n in _CMP:
    _declare_cmp(_n)
vf_instr("vcmp", FAMILY, _sim_cmp, "VADD", cpp=vcpp.compare(scalar=False))
vf_instr("vcmps", FAMILY, _sim_cmp, "VADD", cpp=vcpp.compare(scalar=True))


def _check_select(p, node, a):
    if isinstance(a["src_true"], RegValue) and a["src_true"].is_mask:
        ms = [c.mask(p, a, n) for n in ("src_true", "src_false", "mask")]
        d = c.dst(p, c.MASK, ms[0].dtype)
        c.emit(p, node, "psel", (d,), tuple(map(c.read, ms)), api="select")
        return d
    regs = [c.reg(p, a, n) for n in ("src_true", "src_false")]
    dt = regs[0].dtype  # the dst is declared as src_true's dtype; src_false is reinterpreted (one bit width)
    if regs[1].dtype.get_bit() != dt.get_bit():
        p.fail(a.node("src_false"), f"{a.display}(): 'src_false' is a register of {regs[1].dtype.name} but "
                                    f"'src_true' is {dt.name}; select takes registers of one bit width")
    m = c.mask(p, a, "mask")
    d = c.dst(p, c.VREG, dt)
    c.emit(p, node, "vsel", (d,), (*map(c.read, regs), c.read(m)), dtype=dt, lanes=lanes(dt), api="select")
    return d


def _sim_select(instr):
    t_, f_, mk = instr.args
    dt, uid = instr.attrs["dtype"], instr.dsts[0].uid

    def run(rf, mem, bases):
        act = active(rf.m[mk.reg.uid], dt)
        view(rf.v[uid], dt)[:] = np.where(act, view(rf.v[t_.reg.uid], dt), view(rf.v[f_.reg.uid], dt))

    t = np_of(dt)

    def make(bases, scs, size):  # N selects at once (backends/sim/vf/batch.py), the same np.where per row
        def kernel(ins, outs, mem):
            outs[0].view(t)[...] = np.where(active_rows(ins[2], dt), ins[0].view(t), ins[1].view(t))
        return kernel
    run.batched = Spec(("vsel", dt), make)  # type: ignore[attr-defined]
    return run


def _sim_psel(instr):
    t_, f_, sel = instr.args
    uid = instr.dsts[0].uid

    def run(rf, mem, bases):
        rf.m[uid][:] = np.where(rf.m[sel.reg.uid], rf.m[t_.reg.uid], rf.m[f_.reg.uid])
    return run


vf_instr("psel", FAMILY, _sim_psel, "VMASK", cpp=vcpp.regs_call("psel", 3))
vf_api(FAMILY, "select", "src_true, src_false, mask, mode=None",
       "dst[i] = src_true[i] where the mask is active, else src_false[i] (vsel); dst has src_true's dtype and "
       "src_false of the same bit width is reinterpreted as it.", _check_select)
vf_instr("vsel", FAMILY, _sim_select, "VADD", cpp=vcpp.regs_call("vsel", 3))

__all__ = ["tree_sum", "sim_lanewise", "VL"]


def _check_pair(p, node, a):
    r = c.reg(p, a, "src", (D.DT_FP16, D.DT_FP32))  # the page: FP16 / FP32; MERGING not supported
    m = c.mask(p, a, "mask")
    merge_mode(p, a, merging=False)
    d = c.dst(p, c.VREG, r.dtype)
    c.emit(p, node, "vcpadd", (d,), (c.read(r), c.read(m)), dtype=r.dtype, lanes=lanes(r.dtype), api="pair_reduce_sum")
    return d


def _sim_pair(instr):
    src, mk = instr.args
    dt, uid = instr.attrs["dtype"], instr.dsts[0].uid
    t = np_of(dt)

    def run(rf, mem, bases):
        x = np.where(active(rf.m[mk.reg.uid], dt), view(rf.v[src.reg.uid], dt), t.type(0))
        out = np.zeros(x.size, t)
        with np.errstate(all="ignore"):
            acc = np.float32 if dt.is_float() else t
            out[:x.size // 2] = (x[0::2].astype(acc) + x[1::2].astype(acc)).astype(t)
        view(rf.v[uid], dt)[:] = out
    return run


vf_api(FAMILY, "pair_reduce_sum", "src, mask, mode=None",
       "dst[i] = src[2i] + src[2i+1] in the lower half of the lanes (inactive sources count 0; the upper half 0); "
       "FP16 / FP32 (fp16 pairs add in fp32 and round once, which is the fp16 sum).",
       _check_pair)
vf_instr("vcpadd", FAMILY, _sim_pair, "VREDUCE", cpp=vcpp.reduce("vcpadd", "vcpadd"))
