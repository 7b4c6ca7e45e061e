"""VF DataBlock (32-byte block) transfers: ``vf.load_align`` / ``vf.store_align`` with
``data_copy_mode=DATA_BLOCK_COPY`` (vsldb / vsstb; ``memory.py`` dispatches here). A register is
8 blocks of 32 bytes; block j goes to / comes from ``j * block_stride`` blocks past the pointer, when
any of the mask's 32 bits of that block is set."""
from __future__ import annotations

import numpy as np

from pypto_pro.backends.sim.vf.batch import Spec
from pypto_pro.backends.sim.vf.regfile import lanes
from pypto_pro.frontend.vf.values import RegValue
from pypto_pro.ir.expr import Const
from pypto_pro.language.dtypes import DT_INT64
from pypto_pro.ops.vf import common as c
from pypto_pro.ops.vf.decl import vf_instr
from pypto_pro.ops.vf import cpp as vcpp
from pypto_pro.ops.vf.memory import FAMILY, _aligned, _want_bool


def load_blocks(p, node, a, ptr, dt):
    """DATA_BLOCK_COPY (the real backend also takes the legacy name DATA_BLOCK_LOAD; vsldb): register
    block j (32 bytes) is the tile's 32 bytes at byte ``j * block_stride * 32`` (block_stride 0, the
    default: block 0 eight times) when any of the mask's 32 bits of that block is set, else 0. The offset
    position holds the mask. post_update=True moves the pointer by repeat_stride blocks, which the real
    vf.load_align does not take: 0."""
    m = a["offset"]
    if not (isinstance(m, RegValue) and m.is_mask):
        p.fail(a.node("offset"), f"vf.load_align(): in {a['data_copy_mode'].name} mode the second argument is the "
                                 f"mask register (which blocks to load), got {p.describe(m)}")
    if a["dist"] is not None and a["dist"].name != "NORM":
        p.fail(a.node("dist"), "vf.load_align(): a DataBlock load takes no dist")
    bs = c.scalar(p, a, "block_stride", DT_INT64) if a["block_stride"] is not None else Const(0, DT_INT64)
    if _want_bool(p, a, "post_update"):
        addr, _ = c.post_address(p, node, ptr, write=False)
    else:
        addr = c.address(p, node, ptr, Const(0, DT_INT64), write=False)
    d = c.dst(p, c.VREG, dt)
    c.emit(p, node, "vsldb", (d,), (c.read(m), addr, bs), api="load_align", dtype=dt, align=32, lanes=lanes(dt))
    return d


def _sim_vsldb(instr):
    mk, mref, _ = instr.args
    tile, uid = mref.tile, instr.dsts[0].uid

    def run(rf, mem, bases, off, bs):
        addr = bases[tile] + off
        _aligned(instr, addr, 32)
        out = rf.v[uid]
        blocks = rf.m[mk.reg.uid].reshape(8, 32).any(axis=1)
        for j in range(8):
            at = addr + j * bs * 32
            out[32 * j:32 * j + 32] = mem[at:at + 32] if blocks[j] else 0
    return run


def _mem_vsldb(instr):
    tile = instr.args[1].tile
    return lambda off, bs: tuple((tile, off + j * bs * 32, 32, False) for j in range(8))


vf_instr("vsldb", FAMILY, _sim_vsldb, "VLDS", mem=_mem_vsldb, cpp=vcpp.vsldb)



def store_blocks(p, node, a, ptr, src, m, extra):
    """DATA_BLOCK_COPY: the register's 8 blocks of 32 bytes go ``block_stride`` blocks apart; a block is
    stored when any of its 32 mask bits is set; post_update moves the pointer ``repeat_stride`` blocks."""
    if len(extra) > 2:
        p.fail(node, "vf.store_align(dst, src, mask[, block_stride[, repeat_stride]]) in DATA_BLOCK_COPY mode")
    values = {"block_stride": a["block_stride"], "repeat_stride": a["repeat_stride"]}
    for k, v in zip(("block_stride", "repeat_stride"), extra):
        values[k] = v

    class _Vals:
        display = "vf.store_align"

        def __getitem__(self, k):
            return values[k]

        def node(self, k):
            return a.node(k) if a[k] is not None else node
    vals = _Vals()
    if values["block_stride"] is None:
        p.fail(node, "vf.store_align(): DATA_BLOCK_COPY needs block_stride (in 32-byte blocks)")
    bs = c.scalar(p, vals, "block_stride", DT_INT64)
    post = _want_bool(p, a, "post_update")
    if post:
        addr, cur = c.post_address(p, node, ptr, write=True)
    else:
        addr = c.address(p, node, ptr, Const(0, DT_INT64), write=True)
    c.emit(p, node, "vsstb", (), (c.read(src), c.read(m), addr, bs), api="store_align", dtype=src.dtype,
           align=32, lanes=lanes(src.dtype))
    if post:
        if values["repeat_stride"] is None:
            p.fail(node, "vf.store_align(): post_update=True in DATA_BLOCK_COPY mode needs repeat_stride (blocks)")
        rs = c.scalar(p, vals, "repeat_stride", DT_INT64)
        c.advance(p, node, cur, c._mul(p, node, rs, Const(32 // c.width(ptr.dtype), DT_INT64)))
    return None


def _sim_vsstb(instr):
    src, mk, mref, _ = instr.args
    tile = mref.tile

    def run(rf, mem, bases, off, bs):
        addr = bases[tile] + off
        _aligned(instr, addr, 32)
        reg = rf.v[src.reg.uid]
        blocks = rf.m[mk.reg.uid].reshape(8, 32).any(axis=1)
        step = bs * 32
        if step >= 32 and addr >= 0 and addr + 8 * step <= mem.size and mem.strides == (1,):
            # 8 disjoint blocks inside the memory: one strided copy (the same bytes as the loop below)
            np.copyto(mem[addr:addr + 8 * step].reshape(8, step)[:, :32], reg.reshape(8, 32), where=blocks[:, None])
            return
        for j in range(8):
            if blocks[j]:
                at = addr + j * bs * 32
                mem[at:at + 32] = reg[32 * j:32 * j + 32]

    def make(bases, scs, size):  # N stores at once (backends/sim/vf/batch.py), when no two blocks share a byte
        starts = np.asarray([[bases[tile] + off + j * bs * 32 for j in range(8)] for off, bs in scs], np.int64)
        if not _disjoint(starts):
            return None
        idx = starts[:, :, None] + np.arange(32)
        n = len(scs)
        grid = _grid(starts, size) if STRIDED else None

        def kernel(ins, outs, mem):
            blocks = ins[1].reshape(-1, 8, 32).any(axis=2)
            vals = ins[0].reshape(-1, 8, 32)
            if grid is not None and mem.size == size and mem.strides == (1,):
                # the blocks as one strided view of the memory: the same distinct bytes the index writes
                v = np.ndarray(grid[1], np.uint8, mem, grid[0], grid[2])
                lead = grid[1][:2] if vals.shape[0] == n else (1, 1)
                if blocks.all():
                    v[...] = vals.reshape(*lead, 8, 32)
                else:
                    np.copyto(v, vals.reshape(*lead, 8, 32),
                              where=blocks.reshape(*(grid[1][:2] if blocks.shape[0] == n else (1, 1)), 8, 1))
            elif blocks.all():
                mem[idx] = vals
            else:
                pick = np.broadcast_to(blocks, (n, 8))
                mem[idx[pick]] = np.broadcast_to(vals, (n, 8, 32))[pick]
        return kernel
    run.batched = Spec(("vsstb", tile), make, shared=False)  # type: ignore[attr-defined]
    return run


STRIDED = True  # a batched vsstb whose blocks lie on a grid writes them through one strided view (False: the index)


def _disjoint(starts: np.ndarray) -> bool:
    """Whether the 32-byte blocks at ``starts`` share no byte (every byte index distinct): sorted, each
    starts at least 32 bytes after the one before."""
    flat = np.sort(starts, axis=None)
    return bool(flat.size < 2 or (np.diff(flat) >= 32).all())


def _grid(starts: np.ndarray, size: int) -> tuple | None:
    """(offset, shape, strides) of a strided view of the memory whose element [a, b, j, :] is block j of
    node ``a * m + b`` (every stride positive; ``m`` the first node whose block 0 is not after node
    ``m - 1``'s by the first step, or all nodes): every block inside the ``size``-byte memory; else None."""
    n = starts.shape[0]
    b0, sj = int(starts[0, 0]), int(starts[0, 1] - starts[0, 0])
    if sj <= 0 or b0 < 0 or int(starts.max()) + 32 > size:
        return None
    m, si = n, 0
    if n > 1:
        first = starts[:, 0]
        si = int(first[1] - b0)
        steps = np.diff(first)
        breaks = np.flatnonzero(steps != si)
        m = int(breaks[0]) + 1 if breaks.size else n
        if si <= 0 or n % m:
            return None
    so = int(starts[m, 0] - b0) if m < n else max(si * m, 1)  # (one row of nodes: any stride)
    if so <= 0:
        return None
    i = np.arange(n)
    if not (starts == b0 + (i // m * so + i % m * si)[:, None] + np.arange(8) * sj).all():
        return None
    return b0, (n // m, m, 8, 32), (so, si, sj, 1)


def _mem_vsstb(instr):
    tile = instr.args[2].tile
    return lambda off, bs: tuple((tile, off + j * bs * 32, 32, True) for j in range(8))


vf_instr("vsstb", FAMILY, _sim_vsstb, "VSTS", mem=_mem_vsstb, cpp=vcpp.vsstb)
