"""VF carries, mask generation from data and the special registers (``vf_computation/{basic_arithmetic,
mask_operations,data_movement}``): ``vf.addc``, ``vf.subc``, ``vf.mask_gen_with_reg_tensor``, ``vf.clear_spr``.

- ``addc(src0, src1, carry_in, mask) -> (carry, dst)``: ``{carry, dst} = src0 + src1 + carry_in`` on 32-bit
  lanes (the carry a mask: set where the sum overflows 32 bits); ``subc`` computes in two's complement,
  ``dst = src0 + ~src1 + borrow_in`` (so ``borrow_in`` set means "no borrow pending": ``src0 - src1``,
  as the page's example expects), and sets the borrow flag where that sum has no carry out (the page);
- ``mask_gen_with_reg_tensor(src, offset)``: the bits of one block of the register (8 bytes for b32
  types, 16 for b16) spread over the 256-bit mask, each bit repeated for its element's width;
- ``clear_spr()``: AR (the byte count ``vf.squeeze(STORE_REG)`` leaves) becomes 0.
"""
from __future__ import annotations

import numpy as np

from pypto_pro.backends.sim.vec_mask import element_mask
from pypto_pro.backends.sim.vf.regfile import active, lanes, merge, set_active, view
from pypto_pro.language import dtypes as D
from pypto_pro.language.enums import MergeMode
from pypto_pro.ops.vf import common as c
from pypto_pro.ops.vf import cpp as vcpp
from pypto_pro.ops.vf import cpp_cce as cce
from pypto_pro.ops.vf.decl import vf_api, vf_instr

FAMILY = "vf_special"


def _check_carry(name: str, op: str, borrow: bool):
    def check(p, node, a):
        regs = [c.reg(p, a, n, (D.DT_INT32, D.DT_UINT32)) for n in ("src0", "src1")]
        dt = c.same_dtype(p, a, ("src0", "src1"), regs)
        cin = c.mask(p, a, "borrow_in" if borrow else "carry_in")
        m = c.mask(p, a, "mask")
        # mode= is taken (the page's prototype) but vaddcs / vsubcs have none and the real backend drops it:
        # unselected lanes of both outputs are 0 (AscendC's asc_addc / asc_subc: zeroed in the outputs)
        c.enum_arg(p, a, "mode", MergeMode, MergeMode.ZEROING)
        flag, d = c.dst(p, c.MASK, dt, 0), c.dst(p, c.VREG, dt, 1)
        c.emit(p, node, op, (flag, d), (*map(c.read, regs), c.read(cin), c.read(m)), dtype=dt, merging=False,
               borrow=borrow, lanes=lanes(dt), api=name)
        return flag, d
    return check


_check_addc = _check_carry("addc", "vaddc", False)


def _sim_addc(instr):
    x, y, cin, mk = instr.args
    dt, merging = instr.attrs["dtype"], instr.attrs["merging"]
    u_carry, u_dst = (r.uid for r in instr.dsts)

    borrow = instr.attrs.get("borrow", False)

    def run(rf, mem, bases):
        a = view(rf.v[x.reg.uid], D.DT_UINT32).astype(np.int64)
        b = view(rf.v[y.reg.uid], D.DT_UINT32).astype(np.int64)
        cin_v = active(rf.m[cin.reg.uid], dt).astype(np.int64)
        act = active(rf.m[mk.reg.uid], dt)
        if borrow:  # two's complement: dst = a + ~b + borrow_in (= a - b - 1 + borrow_in); the flag is set
            total = a - b - 1 + cin_v  # where that sum has no carry out, i.e. the subtraction borrowed
            flag = total < 0
        else:
            total = a + b + cin_v
            flag = total > 0xFFFFFFFF
        merge(view(rf.v[u_dst], D.DT_UINT32), (total & 0xFFFFFFFF).astype(np.uint32), act, merging)
        set_active(rf.m[u_carry], flag & act, dt)
    return run


vf_api(FAMILY, "addc", "src0, src1, carry_in, mask, mode=None",
       "{carry, dst} = src0 + src1 + carry_in on 32-bit lanes: returns (carry mask, dst).", _check_addc)
vf_instr("vaddc", FAMILY, _sim_addc, "VADD", cpp=vcpp.vaddc)
vf_api(FAMILY, "subc", "src0, src1, borrow_in, mask, mode=None",
       "{borrow, dst} = src0 - src1 - borrow_in on 32-bit lanes: returns (borrow mask, dst).",
       _check_carry("subc", "vsubc", True))
vf_instr("vsubc", FAMILY, _sim_addc, "VADD", cpp=vcpp.vaddc)


def _check_mask_gen(p, node, a):
    r = c.reg(p, a, "src")
    w = c.width(r.dtype)
    if w not in (2, 4):
        p.fail(a.node("src"), f"vf.mask_gen_with_reg_tensor(): a register of b16 or b32 elements, got {r.dtype.name}")
    offset = a["offset"] if a["offset"] is not None else 0
    blocks = 16 if w == 2 else 32
    if not isinstance(offset, int) or isinstance(offset, bool) or not 0 <= offset < blocks:
        p.fail(a.node("offset"), f"vf.mask_gen_with_reg_tensor(): offset is a compile-time block index 0..{blocks - 1}")
    d = c.dst(p, c.MASK, r.dtype)
    c.emit(p, node, "pgen", (d,), (c.read(r),), width=w, block=offset, api="mask_gen_with_reg_tensor")
    return d


def _sim_pgen(instr):
    src, uid = instr.args[0], instr.dsts[0].uid
    w, block = instr.attrs["width"], instr.attrs["block"]
    size = 256 // (8 * w)  # bytes per block: 16 (b16: 128 bits x 2) or 8 (b32: 64 bits x 4)

    def run(rf, mem, bases):
        raw = rf.v[src.reg.uid][block * size:(block + 1) * size]
        out = rf.m[uid]
        out[:] = False
        out[::w] = np.unpackbits(raw, bitorder="little").astype(np.bool_)  # the lowest bit of each element's group
    return run


vf_api(FAMILY, "mask_gen_with_reg_tensor", "src, offset=None",
       "A mask from the bits of one block of a register: bit i is element i's predicate (only the lowest bit of "
       "its 2- / 4-bit group set).", _check_mask_gen)
vf_instr("pgen", FAMILY, _sim_pgen, "VMASK", cpp=cce.movvp)


def _check_clear_spr(p, node, a):
    c.emit(p, node, "sprclr", (), (), api="clear_spr")
    p.vf.ar_set = True  # AR is now a known 0
    return None


def _sim_sprclr(instr):
    def run(rf, mem, bases):
        rf.ar = 0
        rf.sqz = 0
    return run


vf_api(FAMILY, "clear_spr", "", "Clear the AR special register (the byte count of vf.squeeze(STORE_REG)).",
       _check_clear_spr, results=0)
def _mem_sprclr(instr):
    def foot(state):  # AR is now a known 0: the AR stores after it write below a known bound
        state["ar"] = 0
        return ()
    foot.stateful = True
    return foot


vf_instr("sprclr", FAMILY, _sim_sprclr, "VNOP", mem=_mem_sprclr, cpp=vcpp.sprclr)


def _check_get_mask_spr(p, node, a):
    from pypto_pro.language.enums import MaskWidth
    w = c.enum_arg(p, a, "width", MaskWidth, MaskWidth.B32)
    dt = D.DT_FP16 if w.name == "B16" else D.DT_FP32
    d = c.dst(p, c.MASK, dt)
    c.emit(p, node, "movemask", (d,), (), dtype=dt, api="get_mask_spr")
    return d


def _sim_movemask(instr):
    uid, dt = instr.dsts[0].uid, instr.attrs["dtype"]
    n = lanes(dt)
    full = np.ones(n, np.bool_)

    def run(rf, mem, bases):  # B32: bit i of MASK0 selects lane i; B16: bit i of {MASK1, MASK0}
        snap = rf.spr_mask
        set_active(rf.m[uid], full if snap is None else element_mask(snap, n), dt)
    return run


vf_api(FAMILY, "get_mask_spr", "width=MaskWidth.B32",
       "The {MASK1, MASK0} vector-mask SPR (pl.set_vec_mask; all bits set at kernel start) as a mask register "
       "(MoveMask): B32 reads MASK0, a bit per 32-bit lane; B16 reads both, a bit per 16-bit lane; in counter "
       "mode (pl.set_mask_count) the first MASK0 lanes.", _check_get_mask_spr)
vf_instr("movemask", FAMILY, _sim_movemask, "VMASK", cpp=cce.movemask)
