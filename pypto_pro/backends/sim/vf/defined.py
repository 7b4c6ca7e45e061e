"""Per-lane definedness inside a VF body: which register bytes, predicate bits and UB bytes hold
data derived from never-written (padding) bytes, memcheck-like.

Real kernels load whole 256-byte registers from tail tiles whose padding nothing wrote (an Acc ->
Vec move with its N padded to the fixpipe's alignment, a tile loaded to its valid shape only) and
keep the garbage lanes out of their results with masks: ``vf.update_mask(n)`` with ZEROING makes
the inactive lanes 0, MERGING keeps the destination's old lanes, reductions and stores take the
active lanes only. So a VF call is a *carrier* (``backends/sim/undefined.py``): it may read
undefined bytes, and what it writes back to UB carries their undefinedness on, byte for byte; the
read that is a fault is a later store to GM (or scalar read) of bytes derived from them, reported
there as an ``UninitializedReadError`` naming where the padding entered.

The shadow state, beside the register file, only when the call reads undefined bytes (the checker
arms it: :class:`Armed`; otherwise nothing here runs):

* a vector register: 256 bytes, 0 where defined, 0xFF where not (so a pure data movement, run on
  the shadow with the real predicates, moves definedness exactly as it moves bytes, and a
  zero-extension or zero-fill is defined);
* a predicate: 256 bools, True where the bit is undefined (a comparison of undefined lanes);
* UB: the core's bytes, 0 / 0xFF, from the checker's written bitmap when the call starts.

Each VF instruction kind has a rule (:func:`rule_of`), run *before* its numerics so that it sees the
predicates and old destination values the instruction sees: lane-wise arithmetic (a result lane is
undefined when an operand lane or its predicate bit is; inactive lanes are defined under ZEROING and
keep the destination's state under MERGING), conversions and ``exp_sub`` (the same, through their
lane maps), reductions (a result undefined when an *active* lane is), comparisons and selects, data
movement (loads, stores, interleaves, squeezes: the instruction itself on the shadow; predicate loads,
stores, interleaves and packs likewise on the shadow predicates), constants
(``create_mask``, ``update_mask``, ``full``, ``arange``). Any other instruction is conservative: all
it writes is undefined when anything it reads is. Registers are defined when the body starts
(their earlier contents are the previous call's results, not UB bytes).
"""
from __future__ import annotations

from collections import deque
from typing import Callable

import numpy as np

from pypto_pro.backends.sim.vf.regfile import VL, active, lanes, set_active, width
from pypto_pro.ir.vf import MASK, VREG, RegRead
from pypto_pro.language import dtypes as D

U = np.uint8(0xFF)  # an undefined shadow byte


class Shadow:
    """The definedness of one VF run's registers and UB (see module docstring); the attributes of a
    register file too, so a data-movement instruction's own rule runs on it."""

    __slots__ = ("v", "m", "ub", "align", "ar", "sqz", "spr_mask", "real_m")

    def __init__(self, ub: np.ndarray, rf) -> None:
        self.v: dict[int, np.ndarray] = {u: np.zeros(VL, np.uint8) for u in rf.v}
        self.m: dict[int, np.ndarray] = {u: np.zeros(VL, np.bool_) for u in rf.m}
        self.real_m = rf.m
        self.ub = ub
        self.align = {u: {} for u in rf.align}
        self.ar, self.sqz, self.spr_mask = rf.ar, rf.sqz, rf.spr_mask


class _MoveView:
    """The register file a data-movement instruction runs on to move definedness: shadow vector
    registers and UB, the real predicates (they choose the lanes; ``masks``: the shadow predicates,
    for an instruction that moves predicate bits as its data), copies of the scalar state."""

    __slots__ = ("v", "m", "align", "ar", "sqz", "spr_mask")

    def __init__(self, sh: Shadow, rf, masks: bool = False) -> None:
        self.v, self.m, self.align = sh.v, sh.m if masks else rf.m, sh.align
        self.ar, self.sqz, self.spr_mask = rf.ar, rf.sqz, rf.spr_mask


Step = Callable[..., None]  # (rf, sh, bases, scalars) -> None, before the instruction's numerics


def _lane_u(sh: Shadow, r: RegRead, dt=None) -> np.ndarray:
    """Per lane of ``r`` read as ``dt`` (default its own dtype): whether any byte is undefined."""
    return sh.v[r.reg.uid].reshape(-1, width(dt or r.dtype)).any(axis=1)


def _set_lanes(sh: Shadow, uid: int, u: np.ndarray, dt) -> None:
    """Every byte of lane ``i`` undefined (0xFF) when ``u[i]``, defined (0) otherwise."""
    sh.v[uid].reshape(-1, width(dt))[:] = np.multiply(u, U, dtype=np.uint8)[:, None]


def _regs(instr) -> list:
    return [a for a in instr.args if isinstance(a, RegRead) and a.reg.kind == VREG]


def _mask_arg(instr):
    return next((a for a in instr.args if isinstance(a, RegRead) and a.reg.kind == MASK), None)


def _masked(rf, sh, mk, dt, u: np.ndarray, old: np.ndarray | None) -> np.ndarray:
    """The undefined result lanes of a predicated instruction: active lanes take ``u``, inactive ones
    are defined (ZEROING, ``old`` None) or keep ``old`` (MERGING); an undefined predicate bit makes
    its lane undefined."""
    if mk is None:
        return u
    act = active(rf.m[mk.reg.uid], dt)
    out = np.where(act, u, False if old is None else old)
    return out | active(sh.m[mk.reg.uid], dt)


def _lanewise(instr) -> Step:
    regs, mk = _regs(instr), _mask_arg(instr)
    odt = instr.attrs["dtype"]
    merging = instr.attrs.get("merging", False)
    n = lanes(odt)
    vdsts = [d.uid for d in instr.dsts if d.kind == VREG]

    def step(rf, sh, bases, sc):
        u = np.zeros(n, np.bool_)
        for r in regs:
            ul = _lane_u(sh, r)
            u |= ul if ul.size == n else bool(ul.any())
        for uid in vdsts:
            old = sh.v[uid].reshape(n, -1).any(axis=1) if merging else None
            _set_lanes(sh, uid, _masked(rf, sh, mk, odt, u, old), odt)
    return step


def _constant(instr) -> Step:
    """Results from scalars and patterns only (a predicated broadcast: its inactive lanes as usual)."""
    mk = _mask_arg(instr)
    dt = instr.attrs.get("dtype")
    merging = instr.attrs.get("merging", False)

    def step(rf, sh, bases, sc):
        for d in instr.dsts:
            if d.kind == MASK:
                sh.m[d.uid][:] = False
            elif d.kind == VREG:
                if mk is None or dt is None:
                    sh.v[d.uid][:] = 0
                else:
                    n = lanes(dt)
                    old = sh.v[d.uid].reshape(n, -1).any(axis=1) if merging else None
                    _set_lanes(sh, d.uid, _masked(rf, sh, mk, dt, np.zeros(n, np.bool_), old), dt)
    return step


def _dup_reg(instr) -> Step:
    src, mk = instr.args
    dt, merging, uid = instr.attrs["dtype"], instr.attrs["merging"], instr.dsts[0].uid
    pick = -1 if instr.attrs["highest"] else 0

    def step(rf, sh, bases, sc):
        n = lanes(dt)
        u = np.full(n, bool(_lane_u(sh, src, dt)[pick]))
        old = sh.v[uid].reshape(n, -1).any(axis=1) if merging else None
        _set_lanes(sh, uid, _masked(rf, sh, mk, dt, u, old), dt)
    return step


def _exp_sub(instr) -> Step:
    x, y, mk = instr.args
    dt, uid = instr.attrs["dtype"], instr.dsts[0].uid
    part = slice(1, None, 2) if instr.attrs["odd"] else slice(0, None, 2)

    def step(rf, sh, bases, sc):
        u = _lane_u(sh, x, dt) | _lane_u(sh, y, dt)
        act, mu = active(rf.m[mk.reg.uid], dt), active(sh.m[mk.reg.uid], dt)
        if dt is D.DT_FP16:
            u, act, mu = u[part], act[part], mu[part]
        _set_lanes(sh, uid, (u & act) | mu, D.DT_FP32)
    return step


def _convert(instr) -> Step:
    """``vcvt`` (and the 8-bit float paths): the source lanes a result lane is converted from, as
    ``ops/vf/convert.py`` places them (widening reads lanes ``part::ratio``, narrowing writes there
    and zeroes the other narrow lanes)."""
    src, mk = instr.args
    at = instr.attrs
    sdt, ddt, part, ratio, widen = at["src"], at["dtype"], at["part"], at["ratio"], at["widen"]
    uid = instr.dsts[0].uid
    if at.get("low"):
        if widen:
            sdt = D.DT_UINT8  # the codes are bytes
        else:
            ddt = D.DT_UINT8

    def step(rf, sh, bases, sc):
        u = _lane_u(sh, src, sdt)
        act, mu = active(rf.m[mk.reg.uid], sdt), active(sh.m[mk.reg.uid], sdt)
        if widen and ratio > 1:
            u, act, mu = u[part::ratio], act[part::ratio], mu[part::ratio]
        res = (u & act) | mu
        if not widen and ratio > 1:
            out = np.zeros(lanes(ddt), np.bool_)
            out[part::ratio] = res
            res = out
        _set_lanes(sh, uid, res, ddt)
    return step


def _muls_cast(instr) -> Step:
    src, mk = instr.args[:2]
    dt, uid, odd = instr.attrs["dtype"], instr.dsts[0].uid, instr.attrs["odd"]

    def step(rf, sh, bases, sc):
        u = _lane_u(sh, src, D.DT_FP32)
        res = (u & active(rf.m[mk.reg.uid], D.DT_FP32)) | active(sh.m[mk.reg.uid], D.DT_FP32)
        out = np.zeros(lanes(dt), np.bool_)
        out[1 if odd else 0::2] = res
        _set_lanes(sh, uid, out, dt)
    return step


def _reduce(instr) -> Step:
    """``reduce_sum`` / ``max`` / ``min``: one result per register (per 32-byte block with datablock),
    undefined when an active lane of it (or a predicate bit) is; the other lanes are 0."""
    src, mk = instr.args
    dt, uid = instr.attrs["dtype"], instr.dsts[0].uid
    n = lanes(dt)
    per = n if not instr.attrs["datablock"] else 32 // width(dt)

    def step(rf, sh, bases, sc):
        u = _lane_u(sh, src, dt).reshape(-1, per)
        act = active(rf.m[mk.reg.uid], dt).reshape(-1, per)
        res = (u & act).any(axis=1) | active(sh.m[mk.reg.uid], dt).reshape(-1, per).any(axis=1)
        out = np.zeros(n, np.bool_)
        out[:res.size] = res
        _set_lanes(sh, uid, out, dt)
    return step


def _pair_reduce(instr) -> Step:
    src, mk = instr.args
    dt, uid = instr.attrs["dtype"], instr.dsts[0].uid

    def step(rf, sh, bases, sc):
        u = (_lane_u(sh, src, dt) & active(rf.m[mk.reg.uid], dt)) | active(sh.m[mk.reg.uid], dt)
        out = np.zeros(u.size, np.bool_)
        out[:u.size // 2] = u[0::2] | u[1::2]
        _set_lanes(sh, uid, out, dt)
    return step


def _compare(instr) -> Step:
    regs, mk = _regs(instr), _mask_arg(instr)
    dt, uid = instr.attrs["dtype"], instr.dsts[0].uid

    def step(rf, sh, bases, sc):
        u = np.zeros(lanes(dt), np.bool_)
        for r in regs:
            u |= _lane_u(sh, r, dt)
        set_active(sh.m[uid], (u & active(rf.m[mk.reg.uid], dt)) | active(sh.m[mk.reg.uid], dt), dt)
    return step


def _select(instr) -> Step:
    t_, f_, mk = instr.args
    dt, uid = instr.attrs["dtype"], instr.dsts[0].uid

    def step(rf, sh, bases, sc):
        act = active(rf.m[mk.reg.uid], dt)
        u = np.where(act, _lane_u(sh, t_, dt), _lane_u(sh, f_, dt)) | active(sh.m[mk.reg.uid], dt)
        _set_lanes(sh, uid, u, dt)
    return step


def _mask_select(instr) -> Step:
    t_, f_, sel = instr.args
    uid = instr.dsts[0].uid

    def step(rf, sh, bases, sc):
        sh.m[uid][:] = np.where(rf.m[sel.reg.uid], sh.m[t_.reg.uid], sh.m[f_.reg.uid]) | sh.m[sel.reg.uid]
    return step


def _mask_logic(instr) -> Step:
    """``pand`` / ``por`` / ``pxor`` / ``pnot``: bits the last predicate leaves out are 0 (defined)."""
    *ins, sel = instr.args
    uid = instr.dsts[0].uid

    def step(rf, sh, bases, sc):
        u = np.zeros(VL, np.bool_)
        for r in ins:
            u |= sh.m[r.reg.uid]
        sh.m[uid][:] = (u & rf.m[sel.reg.uid]) | sh.m[sel.reg.uid]
    return step


class Footprints:
    """The UB byte ranges each instruction of the trace touches (absolute addresses), in trace order
    (a stateful footprint, the AR stream of ``store_unalign``, sees every earlier instruction)."""

    def __init__(self, foots: list, slot_bytes: list[int]) -> None:
        self.foots, self.slot_bytes, self.state = foots, slot_bytes, {}

    def of(self, k: int, bases, sc) -> list[tuple[int, int, bool]]:
        f = self.foots[k]
        if f is None:
            return []
        out = []
        for tile, off, n, write in (f(self.state, *sc) if getattr(f, "stateful", False) else f(*sc)):
            if n is None:
                n = max(0, self.slot_bytes[tile] - off)
            out.append((bases[tile] + off, n, write))
        return out


def _inputs_undefined(instr, rf, sh, ranges) -> bool:
    for a in instr.args:
        r = getattr(a, "reg", None)
        if r is None:
            continue
        if r.kind == VREG and sh.v[r.uid].any() or r.kind == MASK and sh.m[r.uid].any():
            return True
    return any(not w and sh.ub[a:a + n].any() for a, n, w in ranges)


def _taint_all(instr, sh, ranges, u: bool) -> None:
    for d in instr.dsts:
        if d.kind == VREG:
            sh.v[d.uid][:] = U if u else 0
        elif d.kind == MASK:
            sh.m[d.uid][:] = u
    for a, n, w in ranges:
        if w:
            sh.ub[a:a + n] = U if u else 0


def _conservative(instr, fp: Footprints, k: int) -> Step:
    """Anything it writes is undefined when anything it reads is."""
    def step(rf, sh, bases, sc):
        ranges = fp.of(k, bases, sc)
        _taint_all(instr, sh, ranges, _inputs_undefined(instr, rf, sh, ranges))
    return step


def _movement(instr, run: Callable, fp: Footprints, k: int) -> Step:
    """A data movement: the instruction itself, on the shadow registers and UB with the real
    predicates; an undefined predicate bit it depends on makes all it writes undefined."""
    masks = [a.reg.uid for a in instr.args if getattr(a, "reg", None) is not None and a.reg.kind == MASK]

    def step(rf, sh, bases, sc):
        ranges = fp.of(k, bases, sc)
        if any(sh.m[u].any() for u in masks):
            _taint_all(instr, sh, ranges, True)
            return
        run(_MoveView(sh, rf), sh.ub, bases, *sc)
    return step


def _mask_movement(instr, run: Callable) -> Step:
    """An instruction whose data are predicate bits and which no predicate controls (a predicate load or
    store, interleave, pack): itself on the shadow predicates (an undefined bit is a set one, so a
    byte packed from bits is undefined when any of them is, and bits unpacked from a byte take its state)."""
    def step(rf, sh, bases, sc):
        run(_MoveView(sh, rf, masks=True), sh.ub, bases, *sc)
    return step


_MASK_MOVES = {"plds", "psts", "pstu", "pdintlv", "pintlv", "ppack", "punpack"}
_MOVES = {"vlds", "vsldb", "vsstb", "vsts", "vstsx2", "vdintlv", "vintlv", "vldus", "vstus", "vstas", "vmov",
          "vpack", "vsqz", "mem_bar"}
_RULES: dict[str, Callable] = {
    "vexpsub": _exp_sub, "vcvt": _convert, "vmulscvt": _muls_cast, "vcadd": _reduce, "vcmax": _reduce,
    "vcmin": _reduce, "vcpadd": _pair_reduce, "vcmp": _compare, "vcmps": _compare, "vsel": _select,
    "psel": _mask_select, "pand": _mask_logic, "por": _mask_logic, "pxor": _mask_logic, "pnot": _mask_logic,
    "pset": _constant, "plt": _constant, "vdup": _constant, "vci": _constant, "vdup_reg": _dup_reg,
    "sprclr": _constant, "vmull": _lanewise,
}


def rule_of(instr, decl, run: Callable, fp: Footprints, k: int) -> Step:
    """The definedness rule of one VF instruction of a body (see module docstring)."""
    op = instr.op
    if op == "vcvt" and instr.attrs.get("low") and (instr.attrs["src"].bits < 8 or instr.attrs["dtype"].bits < 8):
        return _conservative(instr, fp, k)  # 4-bit codes: two per byte
    if op == "vunpack" and not instr.attrs["dtype"].is_float():
        return _movement(instr, run, fp, k)  # an integer widening: sign / zero extension of the moved bytes
    if op in _MASK_MOVES:
        return _mask_movement(instr, run)
    if op in _MOVES and not any(d.kind == MASK for d in instr.dsts):
        return _movement(instr, run, fp, k)
    if op in _RULES:
        return _pure(_RULES[op](instr), instr)
    if op != "vsts" and decl.is_lanewise(instr) and instr.dsts and "dtype" in instr.attrs:
        return _pure(_lanewise(instr), instr)
    return _conservative(instr, fp, k)


def _pure(step: Step, instr) -> Step:
    """Mark a rule whose shadow results are a function of the shadows of its register operands, its
    predicates and (MERGING) its destinations alone, all-defined when they all are: ``step.reads``
    lists them ((kind, uid), the destinations included), so a run can skip it while they are clean."""
    regs = {(a.reg.kind, a.reg.uid) for a in instr.args if getattr(a, "reg", None) is not None}
    step.reads = frozenset(regs | {(d.kind, d.uid) for d in instr.dsts})  # type: ignore[attr-defined]
    return step


def writes_of(instr) -> tuple:
    """(kind, uid) of the registers an instruction writes (its vector and predicate destinations)."""
    return tuple((d.kind, d.uid) for d in instr.dsts if d.kind in (VREG, MASK))


def still_undefined(sh: Shadow, kind, uid: int) -> bool:
    """Whether any byte / bit of a register's shadow is undefined."""
    return bool((sh.v if kind == VREG else sh.m)[uid].any())


class Armed:
    """Between the checker and one VF call site's runs: :meth:`arm` (the checker, as an instruction of
    this call starts reading undefined bytes: the memories' definedness), :meth:`take` (the run that
    follows), :meth:`done` (its per-commit undefined UB addresses), :meth:`undefined` (each commit,
    in order, as the instruction ends)."""

    __slots__ = ("pending", "results", "current", "ncommits", "seen")

    def __init__(self, ncommits: int) -> None:
        self.pending = None
        self.results: deque = deque()
        self.current: list | None = None
        self.ncommits, self.seen = ncommits, 0  # the checker asks once per commit, in order

    def arm(self, written) -> None:
        self.pending = written

    def take(self):
        w, self.pending = self.pending, None
        return w

    def done(self, bads: list) -> None:
        self.results.append(bads)

    def undefined(self, written) -> np.ndarray:
        i = self.seen
        self.seen = (i + 1) % self.ncommits
        if i == 0:
            self.current = self.results.popleft() if self.results else None
        return self.current[i] if self.current is not None else np.empty(0, np.int64)


def region_undefined(sh: Shadow, lo: int, rows: int, row_bytes: int, used: int) -> np.ndarray:
    """The undefined byte addresses of a committed region (rows of ``used`` bytes, ``row_bytes`` apart)."""
    n = rows * row_bytes
    block = sh.ub[lo:lo + n]
    if block.size < n:
        block = np.concatenate([block, np.zeros(n - block.size, np.uint8)])
    r, c = np.nonzero(block.reshape(rows, row_bytes)[:, :used])
    return (lo + r * row_bytes + c).astype(np.int64)


__all__ = ["Shadow", "Footprints", "Armed", "rule_of", "region_undefined", "writes_of", "still_undefined"]
