"""VF masks, broadcasts and UB <-> register moves: ``vf.create_mask``, ``vf.update_mask``,
``vf.full``, ``vf.load_align``, ``vf.store_align``, ``vf.mem_bar``, ``vf.create_addr_reg``.

Numerics (the real pages ``vf_computation/{mask_operations,data_movement}``; CCE ``pset`` / ``plt`` /
``vdup`` / ``vlds`` / ``vsts``): a register is 256 bytes; a mask has one bit per register byte and
element ``i`` of a ``w``-byte type is active when bit ``w * i`` is set. Loads and stores check
their address alignment at run time (32 bytes for the contiguous modes, the element width for the
broadcast and first-element modes).
"""
from __future__ import annotations

import numpy as np

from pypto_pro.backends.sim.kit import fault
from pypto_pro.backends.sim.vf.batch import MemRows, Spec
from pypto_pro.backends.sim.vf.regfile import VL, active, active_rows, lanes, merge, np_of, set_active, view, width
from pypto_pro.frontend.scalars import is_scalar_value
from pypto_pro.frontend.vf.values import AddrValue, RegValue
from pypto_pro.ir.expr import Const, wrap_value
from pypto_pro.ir.vf import MemRef
from pypto_pro.language import dtypes as D
from pypto_pro.language.dtypes import DT_FP32, DT_INT64
from pypto_pro.language.enums import (DataCopyMode, DuplicatePos, LoadDist, MaskPattern, MemBarMode, MergeMode,
                                      StoreDist)
from pypto_pro.ops.vf import batched_masks
from pypto_pro.ops.vf import common as c
from pypto_pro.ops.vf import cpp as vcpp
from pypto_pro.ops.vf.decl import vf_api, vf_instr
from pypto_pro.ops.vf.load_dists import UINT, batched_dist, explicit_dist, move_bits

FAMILY = "vf_data_movement"


# ---- masks -------------------------------------------------------------------------------------------

_PATTERN_N = {"VL1": 1, "VL2": 2, "VL3": 3, "VL4": 4, "VL8": 8, "VL16": 16, "VL32": 32, "VL64": 64, "VL128": 128}


def pattern_lanes(pattern: str, n: int) -> np.ndarray:
    """The element predicate of a ``MaskPattern`` over ``n`` lanes (``pset``)."""
    i = np.arange(n)
    if pattern == "ALL":
        return np.ones(n, np.bool_)
    if pattern == "ALLF":
        return np.zeros(n, np.bool_)
    if pattern in _PATTERN_N:
        return i < _PATTERN_N[pattern]
    if pattern == "M3":
        return i % 3 == 0
    if pattern == "M4":
        return i % 4 == 0
    if pattern == "H":
        return i < n // 2
    if pattern == "Q":
        return i < n // 4
    raise ValueError(pattern)


def _check_create_mask(p, node, a):
    pattern = c.enum_arg(p, a, "pattern", MaskPattern, MaskPattern.ALL)
    dt = c.dtype_arg(p, a, "dtype", DT_FP32)
    d = c.dst(p, c.MASK, dt)
    c.emit(p, node, "pset", (d,), (), pattern=pattern.name, dtype=dt)
    return d


def _sim_pset(instr):
    uid, dt = instr.dsts[0].uid, instr.attrs["dtype"]
    act = pattern_lanes(instr.attrs["pattern"], lanes(dt))

    def run(rf, mem, bases):
        set_active(rf.m[uid], act, dt)
    batched_masks.pset(run, act, dt)
    return run


def _check_update_mask(p, node, a):
    dt = c.dtype_arg(p, a, "dtype", DT_FP32)
    n = c.scalar(p, a, "scalar", DT_INT64)
    d = c.dst(p, c.MASK, dt)
    c.emit(p, node, "plt", (d,), (n,), dtype=dt)
    return d


def _sim_plt(instr):
    uid, dt = instr.dsts[0].uid, instr.attrs["dtype"]
    idx = np.arange(lanes(dt))

    def run(rf, mem, bases, n):
        set_active(rf.m[uid], idx < (n & 0xFFFFFFFF), dt)  # the scalar is passed as a uint32_t
    batched_masks.plt(run, dt)
    return run


vf_api(FAMILY, "create_mask", "pattern=None, dtype=None",
       "Create a predicate mask register from a MaskPattern (default ALL) at the granularity of dtype "
       "(default FP32).", _check_create_mask)
vf_api(FAMILY, "update_mask", "scalar, dtype=None",
       "A predicate whose lowest min(scalar, lanes) elements are active (plt; the scalar is not changed).",
       _check_update_mask)
vf_instr("pset", FAMILY, _sim_pset, "VMASK", cpp=vcpp.pset)
vf_instr("plt", FAMILY, _sim_plt, "VMASK", cpp=vcpp.plt)


# ---- broadcasts -----------------------------------------------------------------------------------------


def _check_full(p, node, a):
    src = a["scalar_or_src"]
    m = c.mask(p, a, "mask", required=isinstance(src, RegValue))
    mode = c.enum_arg(p, a, "mode", MergeMode, MergeMode.ZEROING)
    if isinstance(src, RegValue):
        r = c.reg(p, a, "scalar_or_src")
        if a["dtype"] is not None and a["dtype"] is not r.dtype:
            p.fail(a.node("dtype"), f"vf.full(): the register is {r.dtype.name}; dtype must match or be omitted")
        pos = c.enum_arg(p, a, "pos", DuplicatePos, DuplicatePos.LOWEST)
        d = c.dst(p, c.VREG, r.dtype)
        c.emit(p, node, "vdup_reg", (d,), (c.read(r), c.read(m)), dtype=r.dtype, merging=mode is MergeMode.MERGING,
               highest=pos is DuplicatePos.HIGHEST, lanes=lanes(r.dtype))
        return d
    if a["pos"] is not None:
        p.fail(a.node("pos"), "vf.full(): 'pos' selects the element of a source register; a scalar has none")
    dt = c.dtype_arg(p, a, "dtype", DT_FP32)  # the real default (as vf.create_mask's)
    value = c.scalar(p, a, "scalar_or_src", dt)
    d = c.dst(p, c.VREG, dt)
    c.emit(p, node, "vdup", (d,), (value, c.read(m)), dtype=dt, merging=mode is MergeMode.MERGING, lanes=lanes(dt))
    return d


def dup_value(value, dt):
    """The scalar a vdup writes to ``dt`` lanes: an integer reduced modulo 2**bits (two's complement), as
    the C++ conversion of the immediate does (``vf.full(-1, dtype=pl.DT_UINT8)`` is 255); a float as is
    (NumPy's cast rounds it to ``dt``)."""
    return value if dt.is_float() else wrap_value(int(value), dt)


def _sim_vdup(instr):
    uid, dt, merging = instr.dsts[0].uid, instr.attrs["dtype"], instr.attrs["merging"]
    mk = instr.args[1]
    t = np_of(dt)

    def run(rf, mem, bases, value):
        out = view(rf.v[uid], dt)
        res = np.full(out.shape, dup_value(value, dt), dtype=np.float64 if dt.is_float() else object).astype(t)
        if mk is None:
            out[:] = res
        else:
            merge(out, res, active(rf.m[mk.reg.uid], dt), merging)
    if VL // t.itemsize == lanes(dt):
        batched_masks.vdup(run, dt, merging, mk is not None)
    return run


def _sim_vdup_reg(instr):
    uid, dt, merging = instr.dsts[0].uid, instr.attrs["dtype"], instr.attrs["merging"]
    src, mk = instr.args
    pick = -1 if instr.attrs["highest"] else 0

    def run(rf, mem, bases):
        out = view(rf.v[uid], dt)
        res = np.full_like(out, view(rf.v[src.reg.uid], src.dtype)[pick])
        merge(out, res, active(rf.m[mk.reg.uid], dt), merging)
    return run


vf_api(FAMILY, "full", "scalar_or_src, mask=None, dtype=None, mode=None, pos=None",
       "Broadcast a scalar (dtype= required) or the lowest / highest element of a register into every active "
       "lane (vdup).", _check_full)
vf_instr("vdup", FAMILY, _sim_vdup, "VDUP", cpp=vcpp.vdup)
vf_instr("vdup_reg", FAMILY, _sim_vdup_reg, "VDUP", cpp=vcpp.vdup_reg)


# ---- loads ---------------------------------------------------------------------------------------------

# dist -> (bytes read, element width the dist works at (0: the register dtype's), alignment (0: width))
_LOAD = {"NORM": (VL, 0, 32), "BRC": (None, 0, 0), "BRC_B8": (1, 1, 1), "BRC_B16": (2, 2, 2),
         "BRC_B32": (4, 4, 4), "US": (VL // 2, 0, 32), "US_B8": (VL // 2, 1, 32), "US_B16": (VL // 2, 2, 32),
         "DS": (2 * VL, 0, 32), "DS_B8": (2 * VL, 1, 32), "DS_B16": (2 * VL, 2, 32),
         "UNPK": (VL // 2, 0, 32), "UNPK4": (VL // 4, 1, 32), "BLK": (32, 1, 32),
         "E2B": (None, 0, 0), "E2B_B16": (VL // 16, 2, VL // 16), "E2B_B32": (VL // 8, 4, VL // 8),
         "UNPK_B8": (VL // 2, 1, 32), "UNPK_B16": (VL // 2, 2, 32), "UNPK_B32": (VL // 2, 4, 32),
         "DINTLV_B8": (2 * VL, 1, 32), "DINTLV_B16": (2 * VL, 2, 32), "DINTLV_B32": (2 * VL, 4, 32)}


def _load_kind(dist: str, w: int) -> tuple[int, int, int]:
    nbytes, dw, align = _LOAD[explicit_dist(dist, w)]
    dw = dw or w
    return (nbytes if nbytes is not None else dw), dw, (align or dw)


def _check_load_align(p, node, a):
    ptr = c.tile_ptr(p, a, "src")
    dt = c.dtype_arg(p, a, "dtype", ptr.dtype)
    dist = c.enum_arg(p, a, "dist", LoadDist, LoadDist.NORM, allowed=tuple(_LOAD))
    mode = c.enum_arg(p, a, "data_copy_mode", DataCopyMode, None)
    if isinstance(p.target_value(), RegValue) and p.target_value().is_mask:
        if mode is not None and mode.name != "NORM":
            p.fail(a.node("data_copy_mode"), "vf.load_align() into a mask register takes no data_copy_mode")
        return _load_mask(p, node, a, ptr, p.target_value(), dist)
    if mode is not None and mode.name != "NORM":
        from pypto_pro.ops.vf.blocks import load_blocks
        return load_blocks(p, node, a, ptr, dt)
    if isinstance(a["offset"], RegValue):
        p.fail(a.node("offset"), "vf.load_align(): a mask in the offset position needs "
                                 "data_copy_mode=pl.DataCopyMode.DATA_BLOCK_COPY")
    post = _want_bool(p, a, "post_update")
    elements = c.element_offset(p, a, "offset", ptr)
    if post:
        addr, cur = c.post_address(p, node, ptr, write=False)
    else:
        addr = c.address(p, node, ptr, elements, write=False)
    nbytes, dw, align = _load_kind(dist.name, c.width(dt))

    if dist.name.startswith("DINTLV"):
        d0, d1 = c.dst(p, c.VREG, dt, 0), c.dst(p, c.VREG, dt, 1)
        c.emit(p, node, "vlds", (d0, d1), (addr,), api="load_align", dist=dist.name, dtype=dt, nbytes=nbytes, dw=dw,
               align=align)
        result = (d0, d1)
    else:
        result = c.dst(p, c.VREG, dt)
        c.emit(p, node, "vlds", (result,), (addr,), api="load_align", dist=dist.name, dtype=dt, nbytes=nbytes, dw=dw,
               align=align)
    if post:  # the offset is the stride (elements) the pointer moves by after the load
        c.advance(p, node, cur, elements)
    return result


_MASK_LOAD = {"NORM": VL // 8, "US": VL // 16, "DS": VL // 4}  # bytes read into the 256 predicate bits


def _load_mask(p, node, a, ptr, target, dist):
    """``mask = vf.load_align(tile, ...)`` where the target already holds a mask: load predicate bits
    (NORM 32 bytes; US 16 bytes, each bit twice; DS 64 bytes, every other bit)."""
    if dist.name not in _MASK_LOAD:
        p.fail(a.node("dist"), f"vf.load_align() into a mask takes dist NORM, US or DS, got {dist.name}")
    if a["post_update"]:
        p.fail(a.node("post_update"), "vf.load_align() into a mask: post_update=True is not supported yet")
    addr = c.address(p, node, ptr, c.element_offset(p, a, "offset", ptr), write=False)
    d = c.dst(p, c.MASK, target.dtype)
    nbytes = _MASK_LOAD[dist.name]
    c.emit(p, node, "plds", (d,), (addr,), api="load_align", dist=dist.name, nbytes=nbytes, align=min(32, nbytes))
    return d


def _sim_plds(instr):
    tile, uid = instr.args[0].tile, instr.dsts[0].uid
    dist, nbytes, align = instr.attrs["dist"], instr.attrs["nbytes"], instr.attrs["align"]

    def run(rf, mem, bases, off):
        at = bases[tile] + off
        _aligned(instr, at, align)
        rf.m[uid][:] = _mask_bits(mem[at:at + nbytes], dist)

    def make(bases, scs, size):  # N predicate loads at once (backends/sim/vf/batch.py): the same bits per row
        rows = MemRows([bases[tile] + sc[0] for sc in scs], nbytes, size)

        def kernel(ins, outs, mem):
            v = rows.view(mem)
            outs[0][...] = _mask_bits(v if v is not None else mem[rows.idx], dist)
        return kernel
    run.batched = Spec(("plds", tile, dist, nbytes), make, shared=False)  # type: ignore[attr-defined]
    return run


def _mask_bits(raw: np.ndarray, dist: str) -> np.ndarray:
    """The predicate a mask load makes of its UB bytes (bit i of the bytes little-endian; US: each bit
    twice, DS: every other bit), along the last axis (one load, or a stack of them)."""
    bits = np.unpackbits(raw, axis=-1, bitorder="little").astype(np.bool_)
    return np.repeat(bits, 2, axis=-1) if dist == "US" else bits[..., ::2] if dist == "DS" else bits


def _aligned(instr, addr: int, align: int) -> None:
    if addr % align:
        raise fault(instr, f"vf.{instr.attrs.get('api', instr.op)}: UB address {addr} is not {align}-byte aligned "
                           f"(dist {instr.attrs.get('dist', 'NORM')})")




def _sim_vlds(instr):
    at = instr.attrs
    dist, nbytes, dw, align = at["dist"], at["nbytes"], at["dw"], at["align"]
    tile = instr.args[0].tile
    uids = [d.uid for d in instr.dsts]
    ut = UINT[dw]

    def norm(rf, mem, bases, off):  # the common case first: one register of contiguous bytes
        addr = bases[tile] + off
        if addr % align:
            _aligned(instr, addr, align)
        rf.v[uids[0]][:] = mem[addr:addr + nbytes]
    if dist == "NORM":
        norm.batched = _batched_load(tile, nbytes, None)  # type: ignore[attr-defined]
        return norm

    def brc(rf, mem, bases, off):  # one element broadcast to every lane
        addr = bases[tile] + off
        if addr % align:
            _aligned(instr, addr, align)
        rf.v[uids[0]].view(ut)[:] = mem[addr:addr + nbytes].view(ut)[0]
    if dist.startswith("BRC"):
        brc.batched = _batched_load(tile, nbytes, ut)  # type: ignore[attr-defined]
        return brc

    def run(rf, mem, bases, off):
        addr = bases[tile] + off
        _aligned(instr, addr, align)
        move_bits(mem[addr:addr + nbytes], dist, dw, [rf.v[u] for u in uids])
    if not (dist.startswith("UNPK") and dist != "UNPK4" and 2 * dw not in UINT):
        run.batched = batched_dist(tile, dist, nbytes, dw)  # type: ignore[attr-defined]
    return run


def _batched_load(tile: int, nbytes: int, brc: np.dtype | None) -> Spec:
    """NORM (``brc`` None: ``nbytes`` = 256) or BRC loads of N nodes (backends/sim/vf/batch.py): one
    strided or gathered copy of their UB rows (the batched plan checked every address's alignment)."""
    def make(bases, scs, size):
        rows = MemRows([bases[tile] + sc[0] for sc in scs], nbytes, size)

        def kernel(ins, outs, mem):
            if brc is None:
                rows.read(mem, outs[0])
            else:
                v = rows.view(mem)
                outs[0].view(brc)[...] = (v if v is not None else mem[rows.idx]).view(brc)
        return kernel
    return Spec(("vlds", tile, nbytes, brc), make, shared=False)


def span(arg: int, write: bool):
    """The mem rule of an access of ``attrs["nbytes"]`` bytes at the address operand ``args[arg]``."""
    def mem(instr):
        tile, nbytes = instr.args[arg].tile, instr.attrs["nbytes"]
        return lambda off: ((tile, off, nbytes, write),)
    return mem


_mem_load = span(0, False)


vf_api(FAMILY, "load_align", "src, offset=None, dtype=None, dist=None, data_copy_mode=None, block_stride=None, "
       "post_update=False",
       "Load a register from a UB tile at an element offset (int, [row, col] or an address register) with a "
       "LoadDist distribution (vlds).", _check_load_align)
vf_instr("plds", FAMILY, _sim_plds, "VLDS", mem=_mem_load, cpp=vcpp.plds)
vf_instr("vlds", FAMILY, _sim_vlds, "VLDS", mem=_mem_load, cpp=vcpp.vlds)


# ---- stores --------------------------------------------------------------------------------------------

_STORES = ("NORM", "NORM_B16", "FIRST_ELEMENT", "PACK", "PACK4", "INTLV", "INTLV_B32")


def _check_store_align(p, node, a):
    ptr = c.tile_ptr(p, a, "dst")
    src = a["src"]
    extra = list(a["args"])
    if not isinstance(src, RegValue):
        p.fail(a.node("src"), f"vf.store_align(): 'src' must be a register, got {p.describe(src)}")
    if src.is_mask:
        return _store_mask(p, node, a, ptr, src, extra)
    dist = c.enum_arg(p, a, "dist", StoreDist, StoreDist.NORM, allowed=_STORES)
    mode = c.enum_arg(p, a, "data_copy_mode", DataCopyMode, DataCopyMode.NORM)
    if dist.name not in ("INTLV", "INTLV_B32") and not (extra and isinstance(extra[0], RegValue)
                                                        and extra[0].is_mask):
        p.fail(node, "vf.store_align(dst, src, mask[, offset]): the mask register is required")
    if dist.name in ("INTLV", "INTLV_B32"):
        return _store_intlv(p, node, a, ptr, src, extra, dist.name)
    m = extra[0]
    if mode.name != "NORM":
        from pypto_pro.ops.vf.blocks import store_blocks
        return store_blocks(p, node, a, ptr, src, m, extra[1:])
    if len(extra) > 2:
        p.fail(node, f"vf.store_align(dst, src, mask[, offset]) takes at most 4 positional arguments, got "
                     f"{2 + len(extra)}")
    offset = extra[1] if len(extra) == 2 else None
    post = _want_bool(p, a, "post_update")
    if isinstance(offset, AddrValue):
        elements = c.addr_elements(p, node, offset, ptr)
    elif offset is None:
        elements = Const(0, DT_INT64)
    else:
        elements = _offset_value(p, node, ptr, offset)
    if post:
        addr, cur = c.post_address(p, node, ptr, write=True)
    else:
        addr = c.address(p, node, ptr, elements, write=True)
    w = c.width(src.dtype)
    if dist.name == "FIRST_ELEMENT":
        nbytes, align = w, w
    elif dist.name == "PACK":
        nbytes, align = VL // 2, 32
    elif dist.name == "PACK4":
        nbytes, align = VL // 4, 32
    else:
        nbytes, align = VL, 32
    c.emit(p, node, "vsts", (), (c.read(src), c.read(m), addr), api="store_align", dist=dist.name, dtype=src.dtype,
           nbytes=nbytes, align=align, lanes=lanes(src.dtype))
    if post:  # the stride is the offset argument, in elements of the tile (for 64-bit types too: the page's
        # "doubled" is the b32 count the backend emits for them, the same bytes as vf.load_align's cursor)
        c.advance(p, node, cur, elements)
    return None


def _store_mask(p, node, a, ptr, src, extra):
    """A mask register to UB: NORM writes its 256 bits (32 bytes), PACK every other bit (16 bytes)."""
    dist = c.enum_arg(p, a, "dist", StoreDist, StoreDist.NORM, allowed=("NORM", "PACK"))
    if len(extra) > 1:
        p.fail(node, "vf.store_align(dst, mask_reg[, offset]) takes one offset after a mask register")
    post = _want_bool(p, a, "post_update")
    offset = extra[0] if extra else None
    if post:
        addr, cur = c.post_address(p, node, ptr, write=True)
    else:
        elements = c.addr_elements(p, node, offset, ptr) if isinstance(offset, AddrValue) else \
            _offset_value(p, node, ptr, offset) if offset is not None else Const(0, DT_INT64)
        addr = c.address(p, node, ptr, elements, write=True)
    nbytes = VL // 8 if dist.name == "NORM" else VL // 16
    c.emit(p, node, "psts", (), (c.read(src), addr), api="store_align", dist=dist.name, nbytes=nbytes,
           align=nbytes)
    if post and offset is not None:
        c.advance(p, node, cur, _offset_value(p, node, ptr, offset))
    return None


def _sim_psts(instr):
    src, mref = instr.args
    tile, nbytes, pack, align = mref.tile, instr.attrs["nbytes"], instr.attrs["dist"] == "PACK", instr.attrs["align"]

    def run(rf, mem, bases, off):
        at = bases[tile] + off
        _aligned(instr, at, align)
        bits = rf.m[src.reg.uid][::2] if pack else rf.m[src.reg.uid]
        mem[at:at + nbytes] = np.packbits(bits, bitorder="little")
    return run


vf_instr("psts", FAMILY, _sim_psts, "VSTS", mem=span(1, True), cpp=vcpp.psts)


def _store_intlv(p, node, a, ptr, even, extra, dist: str):
    """INTLV: two registers stored interleaved (``even[0], odd[0], even[1], ...``, 512 bytes); the mask
    selects at the element granularity (B32 for INTLV_B32)."""
    if len(extra) < 2 or not isinstance(extra[0], RegValue) or extra[0].is_mask or \
            not (isinstance(extra[1], RegValue) and extra[1].is_mask):
        p.fail(node, "vf.store_align(dst, src_even, src_odd, mask[, offset], dist=INTLV): two registers and a mask")
    odd, m = extra[0], extra[1]
    if odd.dtype is not even.dtype:
        p.fail(node, f"vf.store_align(): INTLV registers of {even.dtype.name} and {odd.dtype.name}")
    elements = _offset_value(p, node, ptr, extra[2]) if len(extra) > 2 else Const(0, DT_INT64)
    addr = c.address(p, node, ptr, elements, write=True)
    dt = D.DT_UINT32 if dist == "INTLV_B32" else even.dtype
    c.emit(p, node, "vstsx2", (), (c.read(even), c.read(odd), c.read(m), addr), api="store_align", dtype=dt,
           lanes=2 * lanes(dt))
    return None


def _sim_vstsx2(instr):
    ev, od, mk, mref = instr.args
    dt, tile = instr.attrs["dtype"], mref.tile
    t = np_of(dt)

    def run(rf, mem, bases, off):
        addr = bases[tile] + off
        _aligned(instr, addr, 32)
        both = np.empty(2 * lanes(dt), t)
        both[0::2], both[1::2] = rf.v[ev.reg.uid].view(t), rf.v[od.reg.uid].view(t)
        act = np.repeat(active(rf.m[mk.reg.uid], dt), 2)
        np.copyto(mem[addr:addr + 2 * VL].view(t), both, where=act)
    return run


vf_instr("vstsx2", FAMILY, _sim_vstsx2, "VSTS",
         mem=lambda i: (lambda off, t=i.args[3].tile: ((t, off, 2 * VL, True),)),
         cpp=vcpp.vstsx2)


def _want_bool(p, a, name: str) -> bool:
    v = a[name]
    if not isinstance(v, bool):
        p.fail(a.node(name), f"{a.display}(): '{name}' must be a compile-time bool, got {p.describe(v)}")
    return v


def _offset_value(p, node, ptr, offset):
    class _One:  # reuse the element-offset rules on one positional value
        display = "vf.store_align"

        def __getitem__(self, k):
            return offset

        def node(self, k):
            return node
    if not (is_scalar_value(offset) or isinstance(offset, (list, tuple))):
        p.fail(node, f"vf.store_align(): the offset is an int, [row, col] or an address register, got "
                     f"{p.describe(offset)}")
    return c.element_offset(p, _One(), "offset", ptr)


def _sim_vsts(instr):
    at = instr.attrs
    src, mk, mref = instr.args
    dist, dt, nbytes, align = at["dist"], at["dtype"], at["nbytes"], at["align"]
    tile = mref.tile
    w = c.width(dt)
    t = np_of(dt)

    def run(rf, mem, bases, off):
        addr = bases[tile] + off
        _aligned(instr, addr, align)
        reg = rf.v[src.reg.uid]
        if dist == "FIRST_ELEMENT":
            mem[addr:addr + w] = reg[:w]
            return
        act = active(rf.m[mk.reg.uid], dt)
        if dist in ("NORM", "NORM_B16"):
            dst = mem[addr:addr + VL].view(t)
            np.copyto(dst, reg.view(t), where=act)
            return
        part = w // 2 if dist == "PACK" else w // 4  # the low half / quarter of each active element
        lanes_b = reg.reshape(-1, w)[act][:, :part].reshape(-1)
        mem[addr:addr + lanes_b.size] = lanes_b

    def full(rf, mem, bases, off):  # a NORM store with every lane active (vf/call.py's plan): a plain copy
        addr = bases[tile] + off
        _aligned(instr, addr, align)
        mem[addr:addr + VL] = rf.v[src.reg.uid]
    if dist in ("NORM", "NORM_B16"):
        run.full, run.full_mask = full, (mk.reg.uid, dt)  # type: ignore[attr-defined]

        def batched(is_full: bool) -> Spec:  # N stores of distinct bytes (backends/sim/vf/batch.py)
            def make(bases, scs, size):
                rows = MemRows([bases[tile] + sc[0] for sc in scs], VL, size)

                def kernel(ins, outs, mem):
                    if is_full:
                        rows.write(mem, ins[0])
                    else:
                        rows.write(mem, ins[0], t, active_rows(ins[1], dt))
                return kernel
            return Spec(("vsts", tile, dt, is_full), make, shared=False)
        run.batched, full.batched = batched(False), batched(True)  # type: ignore[attr-defined]
    return run


_mem_store = span(2, True)


vf_api(FAMILY, "store_align", "dst, src, *args, dist=None, data_copy_mode=None, block_stride=None, "
       "repeat_stride=None, post_update=False",
       "Store the active elements of a register to a UB tile: store_align(dst, src, mask[, offset]) (vsts).",
       _check_store_align, results=0)
vf_instr("vsts", FAMILY, _sim_vsts, "VSTS", mem=_mem_store, cpp=vcpp.vsts,
         lanewise=lambda i: i.attrs["dist"] in ("NORM", "NORM_B16"))


# ---- barriers, address registers ----------------------------------------------------------------------


def _check_mem_bar(p, node, a):
    mode = c.enum_arg(p, a, "mode", MemBarMode, None)  # None: the default, VST_VLD (mem_bar.md)
    c.emit(p, node, "mem_bar", (), (), mode=getattr(mode, "name", None))
    return None


vf_api(FAMILY, "mem_bar", "mode=None",
       "Order the VF unit's UB accesses (the simulator executes VF instructions in program order, so it is "
       "a no-op for the numerics).", _check_mem_bar, results=0)
vf_instr("mem_bar", FAMILY, lambda instr: (lambda rf, mem, bases: None), "VNOP", cpp=vcpp.mem_bar)


def _check_addr_reg(p, node, a):
    total = None
    for k in range(4):
        index, stride = a[f"index{k}"], a[f"stride{k}"]
        if index is None and stride is None:
            continue
        if index is None or stride is None:
            p.fail(node, f"vf.create_addr_reg(): index{k} and stride{k} go together")
        term = c._mul(p, node, c.scalar(p, a, f"index{k}", DT_INT64), c.scalar(p, a, f"stride{k}", DT_INT64))
        total = term if total is None else c._add(p, node, total, term)
    dt = c.dtype_arg(p, a, "dtype", DT_FP32)  # the page's default: offsets in 32-bit elements
    if dt not in _ADDR_TYPES:
        p.fail(a.node("dtype"), f"vf.create_addr_reg(): dtype {dt.name} is not one of "
                                f"{', '.join(d.name for d in _ADDR_TYPES)}")
    return AddrValue(total if total is not None else Const(0, DT_INT64), dt)


# create_addr_reg.md: the dtypes whose width an address register counts in
_ADDR_TYPES = (D.DT_INT8, D.DT_UINT8, D.DT_INT16, D.DT_UINT16, D.DT_FP16, D.DT_BF16, D.DT_INT32, D.DT_UINT32,
               D.DT_FP32, D.DT_INT64, D.DT_UINT64)


vf_api(FAMILY, "create_addr_reg", "index0, stride0, index1=None, stride1=None, index2=None, stride2=None, "
       "index3=None, stride3=None, dtype=None",
       "An address register: sum(index_k * stride_k) elements of dtype (default DT_FP32), the offset of a load "
       "or store.",
       _check_addr_reg)

__all__ = ["pattern_lanes", "width"]
