"""VF index generation, compaction and indexed access (``vf_computation/{sorting_and_indexing,
comparison_and_selection,advanced_computation,data_movement}``): ``vf.arange``, ``vf.squeeze``,
``vf.unsqueeze``, ``vf.pack``, ``vf.unpack``, ``vf.gather``, ``vf.scatter``.

- ``arange(start)``: ``dst[i] = start + i``; ``DECREASE_ORDER``: ``dst[i] = start + (n - 1 - i)`` for the
  register's ``n`` lanes (the VCI instruction's order: the sequence counts down *to* ``start``, as the
  page's measured example shows, 63 -> 126 .. 63 on 64 lanes, and PTO-ISA's TCI relies on, passing
  ``S - n + 1`` to get ``S - i``; the page's prose ``start - i`` disagrees with both), wrapping at the type;
- ``squeeze(src, mask)``: the active elements packed from lane 0, the rest 0; with
  ``SqueezeMode.STORE_REG`` their byte count goes to the AR register (a following
  ``vf.store_unalign`` without a count stores that many bytes);
- ``unsqueeze(mask)``: lane ``i`` is 1 where the mask is active, else 0;
- ``pack(src, part)``: the low half of every element into the lower / upper half of the register
  (the other half 0); ``unpack(src, part)``: the lower / upper half of the elements widened (zero- or
  sign-extended by the source type);
- ``gather(tile, index, mask)``: ``dst[i] = tile[index[i]]`` (elements), a register of the tile's type; an
  8-bit tile takes 16-bit indices and gives 16-bit lanes (the byte zero-extended: INT8 -> INT16, UINT8 ->
  UINT16), a 16-bit tile also takes 32-bit indices (each element in the low half of a 32-bit lane, the
  high half 0: even lanes data, odd lanes 0); ``scatter(tile, src, index,
  mask)``: ``tile[index[i]] = src[i]`` on the active lanes. ``gather(register, index)`` (the reg -> reg
  form, vselr) is ``dst[i] = src[index[i] % lanes]``: same type, unsigned indices as wide, no mask. An index outside the tile is a located
  simulation error; their footprint is the whole tile (the indices are data).
"""
from __future__ import annotations

import numpy as np

from pypto_pro.backends.sim.kit import fault
from pypto_pro.backends.sim.vf.regfile import VL, active, lanes, merge, np_of, view
from pypto_pro.frontend.vf.values import RegValue
from pypto_pro.ir.expr import Const
from pypto_pro.language import dtypes as D
from pypto_pro.language.enums import IndexOrder, PackPart, SqueezeMode
from pypto_pro.ops.vf import common as c
from pypto_pro.ops.vf import cpp as vcpp
from pypto_pro.ops.vf import cpp_cce as cce
from pypto_pro.ops.vf.decl import vf_api, vf_instr
from pypto_pro.ops.vf.lanes import INTS, INTS64, NUMERIC

FAMILY = "vf_indexing"
_INDEX_TYPES = (D.DT_INT8, D.DT_INT16, D.DT_INT32, D.DT_UINT8, D.DT_UINT16, D.DT_UINT32, D.DT_FP16, D.DT_FP32,
                D.DT_INT64, D.DT_UINT64)


def _check_arange(p, node, a):
    dt = c.dtype_arg(p, a, "dtype", D.DT_INT32)
    if dt not in _INDEX_TYPES:
        p.fail(a.node("dtype"), f"vf.arange(): dtype {dt.name} is not supported")
    order = c.enum_arg(p, a, "index_order", IndexOrder, IndexOrder.INCREASE_ORDER)
    start = c.scalar(p, a, "start", D.DT_INT64 if not dt.is_float() else dt)
    d = c.dst(p, c.VREG, dt)
    c.emit(p, node, "vci", (d,), (start,), dtype=dt, down=order.name == "DECREASE_ORDER", lanes=lanes(dt),
           api="arange")
    return d


def _sim_vci(instr):
    dt, uid, down = instr.attrs["dtype"], instr.dsts[0].uid, instr.attrs["down"]
    t = np_of(dt)
    idx = np.arange(lanes(dt), dtype=np.int64)
    top = lanes(dt) - 1

    b64 = dt.bits == 64
    # 64-bit lanes (arange.md: no 8-byte vci; the real backend's lowering): an int32 vci 0, 1, 2, ...
    # (negated for DECREASE_ORDER) as the low words, high words 0, plus start as a 64-bit add. So the
    # decreasing form is start + ((-i) mod 2^32), not start - i: what that lowering computes on the chip.
    low = (idx if not down else (-idx) & 0xFFFFFFFF).astype(np.uint64)

    def run(rf, mem, bases, start):
        out = view(rf.v[uid], dt)
        if b64:
            out.view(np.uint64)[:] = low + np.uint64(int(start) & 0xFFFFFFFFFFFFFFFF)  # wraps at 64 bits
            return
        vals = start + (top - idx) if down else start + idx
        out[:] = vals.astype(np.float64).astype(t) if dt.is_float() else vals.astype(t)  # integers wrap
    return run


vf_api(FAMILY, "arange", "start, dtype=None, index_order=None", "dst[i] = start + i (DECREASE_ORDER: start + lanes - 1 - i, "
       "counting down to start; 64-bit lanes: start + ((-i) mod 2^32), the real backend's lowering).",
       _check_arange)
vf_instr("vci", FAMILY, _sim_vci, "VDUP", cpp=vcpp.vci)


# the squeeze page: the 8 / 16 / 32-bit integers, FP16 and FP32 (no BF16)
_SQUEEZE_TYPES = (D.DT_INT8, D.DT_UINT8, D.DT_INT16, D.DT_UINT16, D.DT_FP16, D.DT_INT32, D.DT_UINT32, D.DT_FP32)


def _check_squeeze(p, node, a):
    r = c.reg(p, a, "src", _SQUEEZE_TYPES)
    m = c.mask(p, a, "mask")
    mode = c.enum_arg(p, a, "gather_mode", SqueezeMode, None)
    dt = c.dtype_arg(p, a, "dtype", r.dtype)
    if c.width(dt) != c.width(r.dtype):
        p.fail(a.node("dtype"), f"vf.squeeze(): dtype {dt.name} must have the width of {r.dtype.name}")
    d = c.dst(p, c.VREG, dt)
    if mode is not None and mode.name == "STORE_REG":
        p.vf.ar_set = True
    c.emit(p, node, "vsqz", (d,), (RegRead_as(r, dt), c.read(m)), dtype=dt,
           store_reg=mode is not None and mode.name == "STORE_REG", lanes=lanes(dt), api="squeeze")
    return d


def RegRead_as(r: RegValue, dt):  # noqa: N802 - a register operand read as another same-width type
    from pypto_pro.ir.vf import RegRead
    return RegRead(r.reg, dt)


def _sim_vsqz(instr):
    src, mk = instr.args
    dt, uid, store_reg = instr.attrs["dtype"], instr.dsts[0].uid, instr.attrs["store_reg"]
    w = c.width(dt)

    def run(rf, mem, bases):
        x = view(rf.v[src.reg.uid], dt)
        act = active(rf.m[mk.reg.uid], dt)
        picked = x[act].copy()
        out = view(rf.v[uid], dt)
        out[:] = 0
        out[:picked.size] = picked
        if store_reg:  # AR accumulates the total; the next strideless vf.store_unalign writes these bytes
            rf.sqz = picked.size * w
            rf.ar += rf.sqz
    return run


def _mem_vsqz(instr):
    """No UB access; a STORE_REG squeeze raises the bound of AR the following AR stores write below."""
    if not instr.attrs["store_reg"]:
        return None

    def foot(state):
        if state.get("ar") is not None:
            state["ar"] += VL
        return ()
    foot.stateful = True
    return foot


vf_api(FAMILY, "squeeze", "src, mask, gather_mode=None, dtype=None",
       "The active elements packed from lane 0 (the rest 0); STORE_REG also adds their byte count to AR.",
       _check_squeeze)
vf_instr("vsqz", FAMILY, _sim_vsqz, "VREDUCE", mem=_mem_vsqz, cpp=vcpp.vsqz)


def _check_unsqueeze(p, node, a):
    m = c.mask(p, a, "mask")
    dt = c.dtype_arg(p, a, "dtype", D.DT_UINT32)
    if dt not in INTS:
        p.fail(a.node("dtype"), f"vf.unsqueeze(): dtype must be an integer type, got {dt.name}")
    d = c.dst(p, c.VREG, dt)
    c.emit(p, node, "vusqz", (d,), (c.read(m),), dtype=dt, lanes=lanes(dt), api="unsqueeze")
    return d


def _sim_vusqz(instr):
    mk, dt, uid = instr.args[0], instr.attrs["dtype"], instr.dsts[0].uid
    t = np_of(dt)

    def run(rf, mem, bases):
        view(rf.v[uid], dt)[:] = active(rf.m[mk.reg.uid], dt).astype(t)
    return run


vf_api(FAMILY, "unsqueeze", "mask, dtype=None", "Lane i = 1 where the mask is active, else 0.", _check_unsqueeze)
vf_instr("vusqz", FAMILY, _sim_vusqz, "VDUP", cpp=vcpp.vusqz)


def _declare_pack(name: str) -> None:
    def check(p, node, a):
        r = a["src"]
        part = c.enum_arg(p, a, "part", PackPart, PackPart.LOWER)
        if isinstance(r, RegValue) and r.is_mask:  # ppack: even bits -> one half; punpack: one half doubled
            d = c.dst(p, c.MASK, r.dtype)
            c.emit(p, node, f"p{name}", (d,), (c.read(r),), upper=part.name == "UPPER", api=name)
            return d
        r = c.reg(p, a, "src", NUMERIC + (D.DT_INT64, D.DT_UINT64))  # pack.md: 64-bit -> UINT32 too
        dt = c.dtype_arg(p, a, "dtype")
        if dt is None:  # pack.md / unpack.md: required for registers (the real parser refuses it missing)
            p.fail(node, f"vf.{name}(): dtype= (the {'narrower' if name == 'pack' else 'wider'} result type) is "
                         "required for a vector register")
        if (c.width(dt) * 2 != c.width(r.dtype) if name == "pack" else c.width(dt) != 2 * c.width(r.dtype)):
            p.fail(node, f"vf.{name}(): {r.dtype.name} -> {getattr(dt, 'name', '?')} must "
                         f"{'halve' if name == 'pack' else 'double'} the element width")
        d = c.dst(p, c.VREG, dt)
        c.emit(p, node, f"v{name}", (d,), (c.read(r),), dtype=dt, upper=part.name == "UPPER", lanes=lanes(dt), api=name)
        return d

    def build(instr):
        src, dt, uid, upper = instr.args[0], instr.attrs["dtype"], instr.dsts[0].uid, instr.attrs["upper"]
        n = lanes(dt)

        def run(rf, mem, bases):
            x = view(rf.v[src.reg.uid], src.dtype)
            out = view(rf.v[uid], dt)
            if name == "pack":  # the low half of each element's bits into one half of the register
                low = rf.v[src.reg.uid].reshape(x.size, -1)[:, :c.width(dt)].reshape(-1).view(np_of(dt))
                out[:] = 0
                half = slice(n // 2, n) if upper else slice(0, n // 2)
                out[half] = low
            else:
                part = x[x.size // 2:] if upper else x[:x.size // 2]
                out[:] = part.astype(np_of(dt))
        return run

    def build_mask(instr):
        src, uid, upper = instr.args[0], instr.dsts[0].uid, instr.attrs["upper"]

        def run(rf, mem, bases):
            bits = rf.m[src.reg.uid]
            out = np.zeros(bits.size, np.bool_)
            half = slice(128, 256) if upper else slice(0, 128)
            if name == "pack":
                out[half] = bits[0::2]
            else:
                out[:] = np.repeat(bits[half], 2)
            rf.m[uid][:] = out
        return run

    vf_instr(f"p{name}", FAMILY, build_mask, "VMASK", cpp=getattr(vcpp, f"p{name}"))
    vf_api(FAMILY, name, "src, dtype=None, part=None",
           f"{name}: narrow / widen the elements into / from one half of the register (PackPart).", check)
    vf_instr(f"v{name}", FAMILY, build, "VCVT", cpp=cce.vpack if name == "pack" else cce.vunpack)


_declare_pack("pack")
_declare_pack("unpack")


def _whole_tile(p, node, ptr, write: bool):
    addr = c.address(p, node, ptr, Const(0, D.DT_INT64), write)
    return addr, ptr.ref.buffer.slot_bytes  # the footprint is the rest of the tile from the pointer


_REG_GATHER = (D.DT_INT8, D.DT_UINT8, D.DT_INT16, D.DT_UINT16, D.DT_FP16, D.DT_BF16, D.DT_INT32, D.DT_UINT32,
               D.DT_FP32)


def _gather_regs(p, node, a):
    """The reg -> reg form (vselr): ``dst[i] = src[indices[i] % lanes]``, no mask, the source's type."""
    src = c.reg(p, a, "src", _REG_GATHER)
    idx = c.reg(p, a, "indices", (D.DT_UINT8, D.DT_UINT16, D.DT_UINT32))
    if c.width(idx.dtype) != c.width(src.dtype):
        p.fail(a.node("indices"), f"vf.gather(): indices of {idx.dtype.name} for a register of {src.dtype.name}: "
                                  "the reg -> reg form takes unsigned indices as wide as the elements")
    for name in ("mask", "data_copy_mode"):
        if a[name] is not None:
            p.fail(a.node(name), f"vf.gather(): the reg -> reg form takes no '{name}' (gather.md: Tile -> reg only)")
    d = c.dst(p, c.VREG, src.dtype)
    c.emit(p, node, "vselr", (d,), (c.read(src), c.read(idx)), dtype=src.dtype, lanes=lanes(src.dtype), api="gather")
    return d


def _sim_vselr(instr):
    src, idx = instr.args
    uid, dt = instr.dsts[0].uid, instr.attrs["dtype"]
    u = _UNSIGNED[c.width(dt)]

    def run(rf, mem, bases):
        x = rf.v[src.reg.uid].view(u).copy()
        ix = view(rf.v[idx.reg.uid], idx.dtype).astype(np.int64) % x.size
        rf.v[uid].view(u)[:] = x[ix]
    return run


def _check_gather(p, node, a):
    if isinstance(a["src"], RegValue):
        return _gather_regs(p, node, a)
    ptr = c.tile_ptr(p, a, "src")
    idx = c.reg(p, a, "indices", INTS)
    m = c.mask(p, a, "mask", required=False)
    mode = a["data_copy_mode"]
    if mode is not None and getattr(mode, "name", "") == "DATA_BLOCK_LOAD":
        return _gather_blocks(p, node, ptr, idx, m)
    if mode is not None and getattr(mode, "name", "") != "NORM":
        p.fail(a.node("data_copy_mode"), f"vf.gather(): data_copy_mode={mode.name} is not supported yet")
    ws, wi = c.width(ptr.dtype), c.width(idx.dtype)
    # gather.md's table: unsigned indices as wide as the element, or 16 bits for an 8-bit tile (the bytes
    # zero-extended to 16 bits) or 32 bits for a 16-bit tile (each element in the low half of a 32-bit lane)
    if idx.dtype not in _GATHER_INDEX or not (wi == ws or (ws, wi) in ((1, 2), (2, 4))):
        p.fail(a.node("indices"), f"vf.gather(): indices of {idx.dtype.name} for a tile of {ptr.dtype.name}: "
                                  "the indices are unsigned and the index width must be the element width (16 bits "
                                  "for an 8-bit tile; 16 or 32 bits for a 16-bit one)")
    dt = ptr.dtype if ws > 1 else (D.DT_INT16 if ptr.dtype is D.DT_INT8 else D.DT_UINT16)
    addr, size = _whole_tile(p, node, ptr, False)
    d = c.dst(p, c.VREG, dt)
    c.emit(p, node, "vgather", (d,), (c.read(idx), c.read(m), addr), dtype=dt, src=ptr.dtype, index=idx.dtype,
           size=size, lanes=lanes(idx.dtype), api="gather")
    return d


_GATHER_INDEX = (D.DT_UINT16, D.DT_UINT32, D.DT_UINT64)  # gather.md: a tile gather's index types
_BLOCK = 32  # bytes of a DataBlock
_BLOCKS = 256 // _BLOCK


def _gather_blocks(p, node, ptr, idx, m):
    """DATA_BLOCK_LOAD: register block j (32 bytes) is the tile's bytes from byte offset index[j] (32-byte
    aligned), j = 0..7; the register has the tile's type, the mask zeroes its inactive elements."""
    addr, size = _whole_tile(p, node, ptr, False)
    d = c.dst(p, c.VREG, ptr.dtype)
    c.emit(p, node, "vgatherb", (d,), (c.read(idx), c.read(m), addr), dtype=ptr.dtype, index=idx.dtype, size=size,
           lanes=lanes(ptr.dtype), api="gather")
    return d


def _sim_vgatherb(instr):
    idx, mk, mref = instr.args
    dt, it, size, tile, uid = instr.attrs["dtype"], instr.attrs["index"], instr.attrs["size"], mref.tile, \
        instr.dsts[0].uid

    def run(rf, mem, bases, off):
        at = bases[tile] + off
        data = mem[at:at + size - off]
        ix = view(rf.v[idx.reg.uid], it).astype(np.int64)[:_BLOCKS]
        out = np.zeros(256, np.uint8)
        for j, b in enumerate(ix):
            if b % _BLOCK or b < 0 or b + _BLOCK > data.size:
                raise fault(instr, f"vf.gather(DATA_BLOCK_LOAD): byte offset {int(b)} of block {j} is not a 32-byte "
                                   f"aligned block inside the tile's {data.size} bytes")
            out[j * _BLOCK:(j + 1) * _BLOCK] = data[b:b + _BLOCK]
        act = np.ones(lanes(dt), np.bool_) if mk is None else active(rf.m[mk.reg.uid], dt)
        merge(view(rf.v[uid], dt), out.view(np_of(dt)), act, False)
    return run


vf_instr("vgatherb", FAMILY, _sim_vgatherb, "VLDS",
         mem=lambda i: (lambda off, t=i.args[2].tile, n=i.attrs["size"]: ((t, off, n - off, False),)),
         cpp=vcpp.vgatherb)


_UNSIGNED = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}


def _sim_vgather(instr):
    idx, mk, mref = instr.args
    at_ = instr.attrs
    uid, size, tile, it = instr.dsts[0].uid, at_["size"], mref.tile, at_["index"]
    elem, lane = _UNSIGNED[c.width(at_["src"])], _UNSIGNED[c.width(it)]  # element bits, zero-extended to the lane

    def run(rf, mem, bases, off):
        at = bases[tile] + off
        data = mem[at:at + size - off].view(elem)
        ix = view(rf.v[idx.reg.uid], it).astype(np.int64)
        act = np.ones(ix.size, np.bool_) if mk is None else active(rf.m[mk.reg.uid], it)
        bad = act & ((ix < 0) | (ix >= data.size))
        if bad.any():
            raise fault(instr, f"vf.gather: index {int(ix[bad][0])} is outside the tile's {data.size} elements")
        res = np.zeros(ix.size, lane)
        res[act] = data[ix[act]]
        merge(rf.v[uid].view(lane), res, act, False)
    return run


vf_api(FAMILY, "gather", "src, indices, mask=None, data_copy_mode=None",
       "dst[i] = src[indices[i]] (elements of the tile) on the active lanes; of a register src: "
       "dst[i] = src[indices[i] % lanes].", _check_gather)
vf_instr("vselr", FAMILY, _sim_vselr, "VMASK", cpp=vcpp.vselr)
vf_instr("vgather", FAMILY, _sim_vgather, "VLDS",
         mem=lambda i: (lambda off, t=i.args[2].tile, n=i.attrs["size"]: ((t, off, n - off, False),)),
         cpp=vcpp.vgather2)


# scatter.md's table: the index type each source width takes
_SCATTER_INDEX = {1: (D.DT_UINT16,), 2: (D.DT_UINT16,), 4: (D.DT_UINT32,), 8: (D.DT_UINT32, D.DT_UINT64)}


def _check_scatter(p, node, a):
    ptr = c.tile_ptr(p, a, "base_ptr")
    src = c.reg(p, a, "src")
    idx = c.reg(p, a, "index", INTS64)
    want = _SCATTER_INDEX.get(c.width(src.dtype), ())
    if idx.dtype not in want:
        p.fail(a.node("index"), f"vf.scatter(): a {src.dtype.name} source takes "
                                f"{' or '.join(d.name for d in want) or 'no'} indices, got {idx.dtype.name}")
    m = c.mask(p, a, "mask")
    addr, size = _whole_tile(p, node, ptr, True)
    c.emit(p, node, "vscatter", (), (c.read(src), c.read(idx), c.read(m), addr), dtype=src.dtype, size=size,
           lanes=lanes(src.dtype), api="scatter")
    return None


def _sim_vscatter(instr):
    src, idx, mk, mref = instr.args
    dt, size, tile = instr.attrs["dtype"], instr.attrs["size"], mref.tile
    t = np_of(dt)

    def run(rf, mem, bases, off):
        at = bases[tile] + off
        data = mem[at:at + size - off].view(t)
        x = view(rf.v[src.reg.uid], dt)
        ix = view(rf.v[idx.reg.uid], idx.dtype).astype(np.int64)
        act = active(rf.m[mk.reg.uid], dt)
        if x.itemsize == 1:  # 8-bit data: the even elements, one per 16-bit index lane (scatter.md)
            x, act = x[0::2], act[0::2]
        n = min(x.size, ix.size)
        act = act[:n]
        bad = act & ((ix[:n] < 0) | (ix[:n] >= data.size))
        if bad.any():
            raise fault(instr, f"vf.scatter: index {int(ix[:n][bad][0])} is outside the tile's {data.size} elements")
        data[ix[:n][act]] = x[:n][act]
    return run


vf_api(FAMILY, "scatter", "base_ptr, src, index, mask",
       "tile[index[i]] = src[i] on the active lanes (vscatter).", _check_scatter, results=0)
vf_instr("vscatter", FAMILY, _sim_vscatter, "VSTS",
         mem=lambda i: (lambda off, t=i.args[3].tile, n=i.attrs["size"]: ((t, off, n - off, True),)),
         cpp=vcpp.vscatter)
