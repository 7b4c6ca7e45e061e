"""The bug catalogue: small manual-sync kernels, each with one real bug and its fixed variant (the
hardware semantics they are written against: ``test_bug_catalogue.py``), and the inputs they run on."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

import pypto_pro.language as pl
from pypto_pro import (
    DeadlockError,
    OutOfBoundsError,
    RaceError,
    SyncError,
    UninitializedReadError,
)

R, C = 16, 64  # tile rows / columns (fp32: 256-byte rows, 4 KiB tiles)
TT = pl.TileType(shape=[R, C], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
ROW = pl.TileType(shape=[1, C], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
F32 = pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32]
A_ADDR, B_ADDR, C_ADDR, D_ADDR = 0x0000, 0x4000, 0x8000, 0xC000

V, MTE2, MTE3 = pl.PipeType.V, pl.PipeType.MTE2, pl.PipeType.MTE3
set_flag = pl.system.sync_src      # set_flag(set_pipe=, wait_pipe=, event_id=): in set_pipe's queue
wait_flag = pl.system.sync_dst     # wait_flag(set_pipe=, wait_pipe=, event_id=): in wait_pipe's queue
# (keywords: the real pl.system calls take keywords only)
lock = pl.system.mutex_lock        # a5 only
unlock = pl.system.mutex_unlock

ARCHS = ("a5", "a2a3")

def hand_off(src, dst, event):
    """``set_flag`` + ``wait_flag`` (inlined into the kernel): ``dst`` goes on once ``src`` reached here."""
    set_flag(set_pipe=src, wait_pipe=dst, event_id=event)
    wait_flag(set_pipe=src, wait_pipe=dst, event_id=event)


def store_out(z, c, row):
    """Store ``c`` to row tile ``row`` of ``z`` between its two hand-offs (inlined): V -> MTE3 (c
    written), the store, MTE3 -> V (c stored: the next vector op may overwrite it)."""
    hand_off(V, MTE3, 0)
    pl.store_tile(z, c, [row, 0])
    hand_off(MTE3, V, 0)


def locked_load(a, x, row):
    """a5 (inlined): load row tile ``row`` of ``x`` into ``a`` holding buffer id 0 (a's id)."""
    lock(pipe=MTE2, mutex_id=0)
    pl.load_tile(a, x, [row, 0])
    unlock(pipe=MTE2, mutex_id=0)


def locked_store(z, c, row):
    """a5 (inlined): store ``c`` to row tile ``row`` of ``z`` holding buffer id 1 (c's id)."""
    lock(pipe=MTE3, mutex_id=1)
    pl.store_tile(z, c, [row, 0])
    unlock(pipe=MTE3, mutex_id=1)


# =================================================================================================
# Correct base kernels (the fixed variants). Hand-offs between pipes are set/wait pairs.
# =================================================================================================


def scale_ok(x: F32, z: F32):
    """z = 2 x. One slot per stage; every producer -> consumer hand-off and every back-edge
    ("slot free again") is a set_flag/wait_flag pair."""
    a = pl.make_tile(TT, addr=A_ADDR)
    c = pl.make_tile(TT, addr=C_ADDR)
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), x.shape[0] // R, pl.get_block_num()):
            pl.load_tile(a, x, [i, 0])
            hand_off(MTE2, V, 0)     # a loaded
            pl.muls(c, a, 2.0)
            hand_off(V, MTE2, 0)     # a read: the next load may overwrite it
            hand_off(V, MTE3, 0)     # c written
            pl.store_tile(z, c, [i, 0])
            hand_off(MTE3, V, 0)     # c stored: the next muls may overwrite it


def add_ok(x: F32, y: F32, z: F32):
    """z = x + y, two input slots, two distinct MTE2 -> V events (one per load)."""
    a = pl.make_tile(TT, addr=A_ADDR)
    b = pl.make_tile(TT, addr=B_ADDR)
    c = pl.make_tile(TT, addr=C_ADDR)
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), x.shape[0] // R, pl.get_block_num()):
            pl.load_tile(a, x, [i, 0])
            set_flag(set_pipe=MTE2, wait_pipe=V, event_id=0)
            pl.load_tile(b, y, [i, 0])
            hand_off(MTE2, V, 1)
            wait_flag(set_pipe=MTE2, wait_pipe=V, event_id=0)
            pl.add(c, a, b)
            hand_off(V, MTE2, 0)
            store_out(z, c, i)


def ring_ok(x: F32, z: F32):
    """z = 2 x with a double-buffered input: slot k % 2, event k % 2. The back edge (V -> MTE2,
    "slot free") is pre-set for both slots before the loop, waited before each load, set after
    the muls that read the slot, and drained for both slots after the loop."""
    a_db = pl.make_tile_group(type=TT, addrs=A_ADDR, depth=2)
    c = pl.make_tile(TT, addr=C_ADDR)
    with pl.section_vector():
        b, nb = pl.get_block_idx(), pl.get_block_num()
        count = (x.shape[0] // R - b + nb - 1) // nb   # tiles of this block
        set_flag(set_pipe=V, wait_pipe=MTE2, event_id=0)
        set_flag(set_pipe=V, wait_pipe=MTE2, event_id=1)
        for k in pl.range(0, count, 1):
            s = k % 2
            a = a_db[s]
            wait_flag(set_pipe=V, wait_pipe=MTE2, event_id=s)
            pl.load_tile(a, x, [b + k * nb, 0])
            hand_off(MTE2, V, s)
            pl.muls(c, a, 2.0)
            set_flag(set_pipe=V, wait_pipe=MTE2, event_id=s)
            store_out(z, c, b + k * nb)
        wait_flag(set_pipe=V, wait_pipe=MTE2, event_id=0)
        wait_flag(set_pipe=V, wait_pipe=MTE2, event_id=1)


def colsum_ok(x: F32, z: F32):
    """z[i, :] = column sums of row tile i of x; the last tile may be partial (ragged M): its valid
    shape is set to the rows it really has before the load, and the sum covers exactly those."""
    a = pl.make_tile(TT, addr=A_ADDR)
    s = pl.make_tile(ROW, addr=C_ADDR)
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), (x.shape[0] + R - 1) // R, pl.get_block_num()):
            pl.set_validshape(a, [min(R, x.shape[0] - i * R), C])
            pl.load_tile(a, x, [i, 0])
            hand_off(MTE2, V, 0)
            pl.sum(s, a, a, dim=1)
            hand_off(V, MTE2, 0)
            hand_off(V, MTE3, 0)
            pl.store(z, s, [i, 0])
            hand_off(MTE3, V, 0)


def workspace_ok(x: F32, w: F32, z: F32):
    """Two passes through a GM workspace: w = 2 x (stored), then z = w + 1 (w loaded back).
    The reload waits for the store (MTE3 -> MTE2)."""
    a = pl.make_tile(TT, addr=A_ADDR)
    b = pl.make_tile(TT, addr=B_ADDR)
    c = pl.make_tile(TT, addr=C_ADDR)
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), x.shape[0] // R, pl.get_block_num()):
            pl.load_tile(a, x, [i, 0])
            hand_off(MTE2, V, 0)
            pl.muls(c, a, 2.0)
            hand_off(V, MTE3, 0)
            pl.store_tile(w, c, [i, 0])
            hand_off(MTE3, MTE2, 0)
            pl.load_tile(b, w, [i, 0])
            hand_off(MTE2, V, 0)
            hand_off(MTE3, V, 0)
            pl.adds(c, b, 1.0)
            hand_off(V, MTE2, 0)
            store_out(z, c, i)


def mutex_ok(x: F32, z: F32):
    """z = 2 x ordered by a5 buffer ids: id 0 guards a (MTE2 writes, V reads), id 1 guards c
    (V writes, MTE3 reads); ids are granted in dispatch order."""
    a = pl.make_tile(TT, addr=A_ADDR)
    c = pl.make_tile(TT, addr=C_ADDR)
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), x.shape[0] // R, pl.get_block_num()):
            locked_load(a, x, i)
            lock(pipe=V, mutex_id=0)
            lock(pipe=V, mutex_id=1)
            pl.muls(c, a, 2.0)
            unlock(pipe=V, mutex_id=0)
            unlock(pipe=V, mutex_id=1)
            locked_store(z, c, i)


# =================================================================================================
# The broken kernels. Each differs from a kernel above by the bug its docstring names.
# =================================================================================================


def raw_race(x: F32, z: F32):
    """RAW: the vector op reads a while MTE2 may still be loading it (no MTE2 -> V pair).

    With several trips per block the bug also hangs: V, no longer held back by the loads, sets its
    "a free" flag for the next trip while MTE2 has not consumed the previous one (the set is lost,
    so MTE2 later waits forever). The catalogue runs it with one trip per block, where the race
    is the only fault."""
    a = pl.make_tile(TT, addr=A_ADDR)
    c = pl.make_tile(TT, addr=C_ADDR)
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), x.shape[0] // R, pl.get_block_num()):
            pl.load_tile(a, x, [i, 0])  # <- load
            pl.muls(c, a, 2.0)  # <- read
            hand_off(V, MTE2, 0)
            store_out(z, c, i)


def barrier_not_sync(x: F32, z: F32):
    """RAW despite a barrier: pipe_barrier(MTE2) sits in MTE2's own queue and drains MTE2; it
    does not hold V back, so V still reads a while it is being loaded."""
    a = pl.make_tile(TT, addr=A_ADDR)
    c = pl.make_tile(TT, addr=C_ADDR)
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), x.shape[0] // R, pl.get_block_num()):
            pl.load_tile(a, x, [i, 0])  # <- load
            pl.system.barrier(MTE2)
            pl.muls(c, a, 2.0)  # <- read
            hand_off(V, MTE2, 0)
            store_out(z, c, i)


def war_ring(x: F32, z: F32):
    """WAR on a double buffer: the author trusts the two slots to keep the loads off the slot V
    reads and has no back edge (V -> MTE2) at all. MTE2 runs ahead: the load of tile k+2 into
    slot k % 2 can overwrite it before (or while) the muls of tile k reads it. Two tiles per
    block use each slot once (clean); the third reuses slot 0 (race)."""
    a_db = pl.make_tile_group(type=TT, addrs=A_ADDR, depth=2)
    c = pl.make_tile(TT, addr=C_ADDR)
    with pl.section_vector():
        b, nb = pl.get_block_idx(), pl.get_block_num()
        count = (x.shape[0] // R - b + nb - 1) // nb
        for k in pl.range(0, count, 1):
            s = k % 2
            a = a_db[s]
            pl.load_tile(a, x, [b + k * nb, 0])  # <- load
            hand_off(MTE2, V, s)
            pl.muls(c, a, 2.0)  # <- read
            store_out(z, c, b + k * nb)


def war_output(x: F32, z: F32):
    """WAR on the output tile: no MTE3 -> V back edge, so the next muls may overwrite c while
    MTE3 is still storing it (nothing orders the store before the next write)."""
    a = pl.make_tile(TT, addr=A_ADDR)
    c = pl.make_tile(TT, addr=C_ADDR)
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), x.shape[0] // R, pl.get_block_num()):
            pl.load_tile(a, x, [i, 0])
            hand_off(MTE2, V, 0)
            pl.muls(c, a, 2.0)  # <- write
            hand_off(V, MTE2, 0)
            hand_off(V, MTE3, 0)
            pl.store_tile(z, c, [i, 0])  # <- store


def waw_race(x: F32, z: F32):
    """WAW: to zero the rows a partial load leaves untouched, V fills a with 0 and MTE2 then
    loads into it, with nothing ordering the two writes (the V -> MTE2 pair is missing)."""
    a = pl.make_tile(TT, addr=A_ADDR)
    c = pl.make_tile(TT, addr=C_ADDR)
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), x.shape[0] // R, pl.get_block_num()):
            pl.expands(a, 0.0)  # <- fill
            pl.load_tile(a, x, [i, 0])  # <- load
            hand_off(MTE2, V, 0)
            pl.muls(c, a, 2.0)
            hand_off(V, MTE2, 0)
            store_out(z, c, i)


def wrong_event(x: F32, z: F32):
    """Wrong event id: MTE2 sets event 0, V waits for event 1, which nobody sets -> deadlock
    (V blocked at its wait; MTE2 and MTE3 blocked behind it; event 0 left pending)."""
    a = pl.make_tile(TT, addr=A_ADDR)
    c = pl.make_tile(TT, addr=C_ADDR)
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), x.shape[0] // R, pl.get_block_num()):
            pl.load_tile(a, x, [i, 0])
            set_flag(set_pipe=MTE2, wait_pipe=V, event_id=0)  # <- set
            wait_flag(set_pipe=MTE2, wait_pipe=V, event_id=1)  # <- wait
            pl.muls(c, a, 2.0)  # <- blocked
            hand_off(V, MTE2, 0)
            store_out(z, c, i)


def ring_drain_one_trip(x: F32, z: F32):
    """Missing wait only when the loop runs ONCE. ring_ok with a "smarter" drain: the author
    drains only the slots the loop used, waiting for slot 1's back edge only if the loop ran more
    than once. But both slots were pre-set before the loop, so with a single trip slot 1's pre-set
    flag is never waited for (a flag left set at kernel end: a note, since this launch does not depend
    on it; on hardware a later kernel on this core that waits for it first would pass too early). With
    >= 2 trips both slots were used and drained: clean."""
    a_db = pl.make_tile_group(type=TT, addrs=A_ADDR, depth=2)
    c = pl.make_tile(TT, addr=C_ADDR)
    with pl.section_vector():
        b, nb = pl.get_block_idx(), pl.get_block_num()
        count = (x.shape[0] // R - b + nb - 1) // nb
        set_flag(set_pipe=V, wait_pipe=MTE2, event_id=0)
        set_flag(set_pipe=V, wait_pipe=MTE2, event_id=1)  # <- preset
        for k in pl.range(0, count, 1):
            s = k % 2
            a = a_db[s]
            wait_flag(set_pipe=V, wait_pipe=MTE2, event_id=s)
            pl.load_tile(a, x, [b + k * nb, 0])
            hand_off(MTE2, V, s)
            pl.muls(c, a, 2.0)
            set_flag(set_pipe=V, wait_pipe=MTE2, event_id=s)
            store_out(z, c, b + k * nb)
        wait_flag(set_pipe=V, wait_pipe=MTE2, event_id=0)
        if count > 1:
            wait_flag(set_pipe=V, wait_pipe=MTE2, event_id=1)


def edge_validshape(x: F32, z: F32):
    """Bug on the last partial tile only: the author assumes a partial load zero-fills the rows
    past the tensor's edge and widens the valid region back to the full tile before the column
    sum. A load moves only its valid rows, so the sum of the last tile reads rows nothing wrote.
    On exact multiples of R every tile is full and the call is harmless."""
    a = pl.make_tile(TT, addr=A_ADDR)
    s = pl.make_tile(ROW, addr=C_ADDR)
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), (x.shape[0] + R - 1) // R, pl.get_block_num()):
            pl.set_validshape(a, [min(R, x.shape[0] - i * R), C])
            pl.load_tile(a, x, [i, 0])  # <- load
            pl.set_validshape(a, [R, C])
            hand_off(MTE2, V, 0)
            pl.sum(s, a, a, dim=1)  # <- sum
            hand_off(V, MTE2, 0)
            hand_off(V, MTE3, 0)
            pl.store(z, s, [i, 0])
            hand_off(MTE3, V, 0)


def padded_colsum(x: F32, z: F32):
    """Correct padding: every trip zero-fills the whole tile, then loads what the tensor has and
    sums the full tile (the zero rows add nothing)."""
    a = pl.make_tile(TT, addr=A_ADDR)
    s = pl.make_tile(ROW, addr=C_ADDR)
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), (x.shape[0] + R - 1) // R, pl.get_block_num()):
            pl.set_validshape(a, [R, C])
            pl.expands(a, 0.0)
            hand_off(V, MTE2, 0)
            pl.set_validshape(a, [min(R, x.shape[0] - i * R), C])
            pl.load_tile(a, x, [i, 0])
            pl.set_validshape(a, [R, C])
            hand_off(MTE2, V, 0)
            pl.sum(s, a, a, dim=1)
            hand_off(V, MTE3, 0)
            pl.store(z, s, [i, 0])
            hand_off(MTE3, V, 0)


def unpaired_set(x: F32, z: F32):
    """Unpaired set: after the loop MTE3 signals "output written" to MTE2, and nobody waits."""
    a = pl.make_tile(TT, addr=A_ADDR)
    c = pl.make_tile(TT, addr=C_ADDR)
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), x.shape[0] // R, pl.get_block_num()):
            pl.load_tile(a, x, [i, 0])
            hand_off(MTE2, V, 0)
            pl.muls(c, a, 2.0)
            hand_off(V, MTE2, 0)
            store_out(z, c, i)
        set_flag(set_pipe=MTE3, wait_pipe=MTE2, event_id=1)  # <- set


def set_twice(x: F32, y: F32, z: F32):
    """A flag set twice while pending: copy-paste of the first load's set_flag after the second
    load keeps event 0, so V waits for event 1 forever, and MTE2 stalls at its second set of
    event 0 (a set of a flag still set waits for the wait that clears it, which never comes)."""
    a = pl.make_tile(TT, addr=A_ADDR)
    b = pl.make_tile(TT, addr=B_ADDR)
    c = pl.make_tile(TT, addr=C_ADDR)
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), x.shape[0] // R, pl.get_block_num()):
            pl.load_tile(a, x, [i, 0])
            set_flag(set_pipe=MTE2, wait_pipe=V, event_id=0)  # <- first
            pl.load_tile(b, y, [i, 0])
            set_flag(set_pipe=MTE2, wait_pipe=V, event_id=0)  # <- second
            wait_flag(set_pipe=MTE2, wait_pipe=V, event_id=1)
            wait_flag(set_pipe=MTE2, wait_pipe=V, event_id=0)
            pl.add(c, a, b)
            hand_off(V, MTE2, 0)
            store_out(z, c, i)


def cyclic_wait(x: F32, z: F32):
    """Cyclic wait: the back edge's wait was moved to the top of the loop (before the load)
    without a pre-set. MTE2 waits for V's "a free", which V sets only after its muls, which waits
    for MTE2's "a loaded", which follows the load MTE2 cannot start."""
    a = pl.make_tile(TT, addr=A_ADDR)
    c = pl.make_tile(TT, addr=C_ADDR)
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), x.shape[0] // R, pl.get_block_num()):
            wait_flag(set_pipe=V, wait_pipe=MTE2, event_id=0)  # <- mte2 wait
            pl.load_tile(a, x, [i, 0])  # <- mte2 blocked
            set_flag(set_pipe=MTE2, wait_pipe=V, event_id=0)
            wait_flag(set_pipe=MTE2, wait_pipe=V, event_id=0)  # <- v wait
            pl.muls(c, a, 2.0)  # <- v blocked
            set_flag(set_pipe=V, wait_pipe=MTE2, event_id=0)
            store_out(z, c, i)


def double_lock(x: F32, z: F32):
    """a5: V locks buffer id 0 twice without unlocking (a duplicated line): the hardware hangs."""
    a = pl.make_tile(TT, addr=A_ADDR)
    c = pl.make_tile(TT, addr=C_ADDR)
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), x.shape[0] // R, pl.get_block_num()):
            locked_load(a, x, i)
            lock(pipe=V, mutex_id=0)  # <- first lock
            lock(pipe=V, mutex_id=0)  # <- second lock
            lock(pipe=V, mutex_id=1)
            pl.muls(c, a, 2.0)
            unlock(pipe=V, mutex_id=0)
            unlock(pipe=V, mutex_id=1)
            locked_store(z, c, i)


def wrong_mutex(x: F32, z: F32):
    """a5: the load guards a with buffer id 0 but the muls that reads a takes id 2 (meant for
    another tile): the two accesses of a are not ordered by any id."""
    a = pl.make_tile(TT, addr=A_ADDR)
    c = pl.make_tile(TT, addr=C_ADDR)
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), x.shape[0] // R, pl.get_block_num()):
            lock(pipe=MTE2, mutex_id=0)
            pl.load_tile(a, x, [i, 0])  # <- load
            unlock(pipe=MTE2, mutex_id=0)
            lock(pipe=V, mutex_id=2)
            lock(pipe=V, mutex_id=1)
            pl.muls(c, a, 2.0)  # <- read
            unlock(pipe=V, mutex_id=2)
            unlock(pipe=V, mutex_id=1)
            locked_store(z, c, i)


def lock_never_released(x: F32, z: F32):
    """a5: V never releases buffer id 0 after reading a (its unlock was deleted). With one trip per
    block no pipe asks for id 0 again, so nothing hangs in the block, but the id is still held
    when the kernel ends: the next acquire of id 0 on this core (the next block or kernel) hangs."""
    a = pl.make_tile(TT, addr=A_ADDR)
    c = pl.make_tile(TT, addr=C_ADDR)
    with pl.section_vector():
        i = pl.get_block_idx()
        locked_load(a, x, i)
        lock(pipe=V, mutex_id=0)  # <- lock
        lock(pipe=V, mutex_id=1)
        pl.muls(c, a, 2.0)
        unlock(pipe=V, mutex_id=1)
        locked_store(z, c, i)


def uninit_read(x: F32, y: F32, z: F32):
    """Never-written read: a typo loads y into a (again) instead of b; the add reads b, which
    nothing in the block ever wrote."""
    a = pl.make_tile(TT, addr=A_ADDR)
    b = pl.make_tile(TT, addr=B_ADDR)
    c = pl.make_tile(TT, addr=C_ADDR)
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), x.shape[0] // R, pl.get_block_num()):
            pl.load_tile(a, x, [i, 0])
            set_flag(set_pipe=MTE2, wait_pipe=V, event_id=0)
            pl.system.bar_mte2()  # the two loads into a are ordered: the one bug is the read of b
            pl.load_tile(a, y, [i, 0])
            hand_off(MTE2, V, 1)
            wait_flag(set_pipe=MTE2, wait_pipe=V, event_id=0)
            pl.add(c, a, b)  # <- add
            hand_off(V, MTE2, 0)
            store_out(z, c, i)


def gm_out_of_bounds(x: F32, z: F32):
    """GM access outside the tensor: an off-by-one tile index (i + 1) makes the last block's
    load start one tile past the end of x."""
    a = pl.make_tile(TT, addr=A_ADDR)
    c = pl.make_tile(TT, addr=C_ADDR)
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), x.shape[0] // R, pl.get_block_num()):
            pl.load_tile(a, x, [i + 1, 0])  # <- load
            hand_off(MTE2, V, 0)
            pl.muls(c, a, 2.0)
            hand_off(V, MTE2, 0)
            store_out(z, c, i)


def blocks_same_gm(x: F32, z: F32):
    """Two blocks write the same GM bytes: every block stores its result to tile [0, 0]."""
    a = pl.make_tile(TT, addr=A_ADDR)
    c = pl.make_tile(TT, addr=C_ADDR)
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), x.shape[0] // R, pl.get_block_num()):
            pl.load_tile(a, x, [i, 0])
            hand_off(MTE2, V, 0)
            pl.muls(c, a, 2.0)
            hand_off(V, MTE2, 0)
            hand_off(V, MTE3, 0)
            pl.store_tile(z, c, [0, 0])  # <- store
            hand_off(MTE3, V, 0)


def gm_workspace_race(x: F32, w: F32, z: F32):
    """GM read-after-write between pipes of one block: the second pass reloads the workspace
    tile MTE3 just stored, with no MTE3 -> MTE2 pair, so MTE2 may read w before it is written."""
    a = pl.make_tile(TT, addr=A_ADDR)
    b = pl.make_tile(TT, addr=B_ADDR)
    c = pl.make_tile(TT, addr=C_ADDR)
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), x.shape[0] // R, pl.get_block_num()):
            pl.load_tile(a, x, [i, 0])
            hand_off(MTE2, V, 0)
            pl.muls(c, a, 2.0)
            hand_off(V, MTE3, 0)
            pl.store_tile(w, c, [i, 0])  # <- store
            pl.load_tile(b, w, [i, 0])  # <- reload
            hand_off(MTE2, V, 0)
            hand_off(MTE3, V, 0)
            pl.adds(c, b, 1.0)
            hand_off(V, MTE2, 0)
            store_out(z, c, i)


# =================================================================================================
# The catalogue
# =================================================================================================


def _rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def xz(m: int) -> Callable[[], tuple]:
    return lambda: (_rand(m, C), np.zeros((m, C), np.float32))


def xyz(m: int) -> Callable[[], tuple]:
    return lambda: (_rand(m, C), _rand(m, C, seed=1), np.zeros((m, C), np.float32))


def xwz(m: int) -> Callable[[], tuple]:
    return lambda: (_rand(m, C), np.zeros((m, C), np.float32), np.zeros((m, C), np.float32))


def colsum_args(m: int) -> Callable[[], tuple]:
    return lambda: (_rand(m, C), np.zeros(((m + R - 1) // R, C), np.float32))


@dataclass
class Bug:
    kind: str
    fn: Callable
    exc: type
    needles: tuple[str, ...]   # texts the message must contain
    lines: tuple[str, ...]     # markers whose file:line the message must name (the ops involved)
    args: Callable[[], tuple]
    blocks: int
    fixed: Callable
    archs: tuple[str, ...] = ARCHS
    sync_lines: tuple[str, ...] = ()   # markers of the sync instructions themselves (named even when fused)
    stops: type | None = None          # raised in every check mode: the launch cannot continue past it


CATALOGUE = [
    Bug("raw_race", raw_race, RaceError, ("data race on Vec", "write / read", "no set_flag/wait_flag"),
        ("load", "read"), xz(64), 4, scale_ok),   # one trip per block (see raw_race's docstring)
    Bug("barrier_is_not_a_cross_pipe_sync", barrier_not_sync, RaceError, ("data race on Vec", "write / read"),
        ("load", "read"), xz(64), 4, scale_ok),
    Bug("war_double_buffer_3_trips", war_ring, RaceError, ("data race on Vec",),
        ("load", "read"), xz(6 * R), 2, ring_ok),   # 6 tiles, 2 blocks: 3 trips per block
    Bug("war_output_tile", war_output, RaceError, ("data race on Vec", "read / write (WAR)"),
        ("store", "write"), xz(64), 2, scale_ok),
    Bug("waw_two_pipes", waw_race, RaceError, ("data race on Vec", "write / write"),
        ("fill", "load"), xz(64), 2, scale_ok),
    Bug("wrong_event_id", wrong_event, DeadlockError,
        ("deadlock in block", "V    blocked at muls", "wait_flag(MTE2, V, event=1): no pending set_flag"),
        ("blocked",), xz(64), 2, scale_ok,
        sync_lines=("wait", "set"), stops=DeadlockError),
    Bug("edge_tile_validshape", edge_validshape, UninitializedReadError,
        ("sum on V", "reads Vec bytes of", "that nothing in this block wrote"),
        ("sum",), colsum_args(4 * R - 8), 4, colsum_ok),   # ragged: last tile has 8 of 16 rows
    Bug("set_twice_while_pending", set_twice, DeadlockError,
        ("deadlock in block", "MTE2 stalled at set_flag(MTE2, V, event=0)", "the flag is still set by the set at",
         "wait_flag(MTE2, V, event=1): no pending set_flag"), (), xyz(64), 2, add_ok,
        sync_lines=("first", "second"), stops=DeadlockError),
    Bug("cyclic_wait", cyclic_wait, DeadlockError,
        ("deadlock in block", "MTE2 blocked at load", "wait_flag(V, MTE2, event=0): no pending set_flag",
         "V    blocked at muls", "wait_flag(MTE2, V, event=0): no pending set_flag"),
        ("mte2 blocked", "v blocked"), xz(64), 2, scale_ok,
        sync_lines=("mte2 wait", "v wait"), stops=DeadlockError),
    Bug("double_lock_same_pipe", double_lock, SyncError,
        ("V locks buffer id 0 twice without unlocking it",), (), xz(64), 2, mutex_ok, archs=("a5",),
        sync_lines=("first lock", "second lock")),
    Bug("mutex_wrong_buffer_id", wrong_mutex, RaceError, ("data race on Vec", "write / read"),
        ("load", "read"), xz(64), 2, mutex_ok, archs=("a5",)),
    Bug("uninitialized_read", uninit_read, UninitializedReadError,
        ("add on V", "that nothing in this block wrote"), ("add",), xyz(64), 2, add_ok),
    Bug("gm_out_of_bounds", gm_out_of_bounds, OutOfBoundsError,
        ("load from 'x': offset 64 on axis 0 is outside the tensor's shape [64, 64]",), ("load",),
        xz(64), 2, scale_ok, stops=OutOfBoundsError),
    Bug("two_blocks_same_gm", blocks_same_gm, RaceError,
        ("global memory conflict on 'z'[0:16, 0:64]", "two blocks write the same bytes", "block 0: store",
         "block 1: store"), ("store",), xz(64), 2, scale_ok),
    Bug("gm_raw_between_pipes", gm_workspace_race, RaceError, ("data race on global 'w'[",),
        ("store", "reload"), xwz(64), 2, workspace_ok),
]
IDS = [b.kind for b in CATALOGUE]
assert len(set(IDS)) == len(IDS) >= 12

_KERNELS: dict = {}


def kernel(fn: Callable, arch: str):
    """The jitted manual-sync kernel (one per function and arch: compiled once per session)."""
    key = (fn, arch)
    if key not in _KERNELS:
        _KERNELS[key] = pl.jit(fn, arch=arch, auto_mutex=False)
    return _KERNELS[key]


def _check_colsum(x: np.ndarray, z: np.ndarray) -> None:
    for i in range(z.shape[0]):
        np.testing.assert_allclose(z[i], x[i * R:(i + 1) * R].sum(axis=0), rtol=1e-5, atol=1e-5)
