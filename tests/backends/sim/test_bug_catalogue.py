"""A catalogue of deliberately broken kernels that the simulator must catch, each with its fix.

Every entry is a small manual-sync kernel (``auto_mutex=False``; fp32 [16, 64] tiles, a few
blocks, NumPy inputs) with one real bug. The tests check that the simulator raises the right
``SimulationError`` subclass and that the message names the source line(s) of the instructions
involved: both accesses of a race, the blocked instruction of a deadlock, the set of an unpaired
flag... Expected lines are found through marker comments (``# <- name``) in the kernel source,
never hard-coded; the unmarked set/wait pairs are the inlined helpers ``hand_off`` and
``store_out``. Then, for each bug: ``check="warn"`` returns normally with the fault text in
``report.faults``; ``check="off"`` reports nothing. Finally the fixed variants, the examples and
the shared kernels of ``tests/kernels.py`` run clean under ``check="raise"`` on both archs.

Hardware semantics the kernels are written against (what the simulator models): each pipe runs
its queue in order; ``set_flag(src, dst, ev)`` (``pl.system.sync_src``) sits in ``src``'s queue
and fires when ``src`` reaches it, i.e. after every earlier ``src`` instruction; ``wait_flag``
(``pl.system.sync_dst``) sits in ``dst``'s queue, blocks ``dst`` until the flag is set and then
consumes it. The flag is one bit: a set of a flag that is still set stalls ``src`` until the wait
that clears it (so a set that runs ahead of its wait is not lost; a set no wait ever clears hangs
the core: a deadlock naming both sets). A flag still set at kernel end is a note; a pipe locking
an a5 buffer id it already holds is a fault.

Deadlocks and out-of-bounds GM accesses cannot be run past, so they raise in every check mode
(``Bug.stops``).
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro import DeadlockError, OutOfBoundsError, RaceError, SyncError, UninitializedReadError
from example_modules import load_example
from located import line_of

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


@pytest.fixture(autouse=True)
def _no_check_override(monkeypatch):
    monkeypatch.delenv("PYPTO_PRO_CHECK", raising=False)
    monkeypatch.delenv("PYPTO_PRO_TRACE", raising=False)


def _cases(select: Callable[[Bug], bool] = lambda b: True, mark: Callable[[Bug], list] = lambda b: []):
    return [pytest.param(b, arch, id=f"{b.kind}-{arch}", marks=mark(b))
            for b in CATALOGUE if select(b) for arch in b.archs]


def _norm(text: str) -> str:
    return " ".join(text.split())


def _has(text: str, needle: str) -> bool:
    """``needle`` in ``text``, ignoring how whitespace is laid out (column padding may change)."""
    return _norm(needle) in _norm(text)


def _check_text(bug: Bug, text: str) -> None:
    for needle in bug.needles:
        assert _has(text, needle), f"{needle!r} not in:\n{text}"
    for marker in bug.lines:
        where = line_of(bug.fn, marker)
        assert where in text, f"line of '# <- {marker}' ({where}) not in:\n{text}"


@pytest.mark.parametrize("bug,arch", _cases())
def test_bug_is_caught_with_its_lines(bug: Bug, arch: str):
    with pytest.raises(bug.exc) as err:
        kernel(bug.fn, arch).options(check="raise")[None, bug.blocks](*bug.args())
    _check_text(bug, str(err.value))


@pytest.mark.parametrize("bug,arch", _cases(
    lambda b: b.sync_lines,
    lambda b: []))
def test_sync_fault_names_the_sync_instructions_line(bug: Bug, arch: str):
    """Faults about a sync instruction (a deadlocked wait, a set never waited for or set twice, a
    lock taken twice) should name that instruction's own line, and for a deadlock also the
    set_flag left pending."""
    with pytest.raises(bug.exc) as err:
        kernel(bug.fn, arch).options(check="raise")[None, bug.blocks](*bug.args())
    text = str(err.value)
    for marker in bug.sync_lines:
        where = line_of(bug.fn, marker)
        assert where in text, f"line of '# <- {marker}' ({where}) not in:\n{text}"


def _stops_the_kernel(bug: Bug):
    """Deadlocks and out-of-bounds GM accesses cannot be continued past: they raise in every check
    mode (a deadlock lists the faults reported before it). Returns the exception class, or None."""
    return bug.stops


@pytest.mark.parametrize("bug,arch", _cases())
def test_warn_mode_records_the_fault_and_returns(bug: Bug, arch: str):
    stops = _stops_the_kernel(bug)
    if stops is not None:
        with pytest.raises(stops) as err:
            kernel(bug.fn, arch).options(check="warn")[None, bug.blocks](*bug.args())
        _check_text(bug, str(err.value))
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = kernel(bug.fn, arch).options(check="warn")[None, bug.blocks](*bug.args())
    assert report.faults, "check='warn' must record the fault"
    assert all(isinstance(f, str) for f in report.faults)
    matching = [f for f in report.faults if all(_has(f, n) for n in bug.needles)]
    assert matching, "no recorded fault carries the expected text:\n" + "\n".join(report.faults)
    _check_text(bug, "\n".join(matching))
    warned = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert matching[0] in warned, "each recorded fault is also issued as a RuntimeWarning"


@pytest.mark.parametrize("bug,arch", _cases())
def test_off_mode_reports_nothing(bug: Bug, arch: str):
    stops = _stops_the_kernel(bug)
    if stops is not None:
        with pytest.raises(stops):
            kernel(bug.fn, arch).options(check="off")[None, bug.blocks](*bug.args())
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        report = kernel(bug.fn, arch).options(check="off")[None, bug.blocks](*bug.args())
    assert report.faults == []


@pytest.mark.parametrize("bug,arch", [pytest.param(b, a, id=f"{b.kind}-fixed-{a}")
                                      for b in CATALOGUE for a in b.archs])
def test_fixed_variant_runs_clean(bug: Bug, arch: str):
    """The fixed variant of each bug: no fault under check='raise', and the right numbers."""
    args = bug.args()
    report = kernel(bug.fixed, arch).options(check="raise")[None, bug.blocks](*args)
    assert report.faults == [] and report.cycles > 0
    x = args[0]
    if bug.fixed in (scale_ok, mutex_ok, ring_ok):
        np.testing.assert_array_equal(args[-1], 2 * x)
    elif bug.fixed is add_ok:
        np.testing.assert_array_equal(args[-1], x + args[1])
    elif bug.fixed is workspace_ok:
        np.testing.assert_array_equal(args[1], 2 * x)
        np.testing.assert_array_equal(args[2], 2 * x + np.float32(1))
    elif bug.fixed is colsum_ok:
        _check_colsum(x, args[1])
    else:  # pragma: no cover
        raise AssertionError(bug.fixed)


def _check_colsum(x: np.ndarray, z: np.ndarray) -> None:
    for i in range(z.shape[0]):
        np.testing.assert_allclose(z[i], x[i * R:(i + 1) * R].sum(axis=0), rtol=1e-5, atol=1e-5)


# ---- trip-count and edge-size dependent bugs: caught exactly where they should be --------------


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("tiles,blocks", [(1, 1), (2, 1), (3, 1), (4, 2), (5, 2), (6, 2), (9, 3), (5, 3)])
def test_war_ring_needs_three_trips(arch, tiles, blocks):
    """Missing back edge on a double buffer: harmless while each slot is used at most once per
    block (<= 2 trips), a race from the third trip on."""
    trips = max(len(range(b, tiles, blocks)) for b in range(blocks))
    x, z = xz(tiles * R)()
    run = kernel(war_ring, arch).options(check="raise")[None, blocks]
    if trips >= 3:
        with pytest.raises(RaceError) as err:
            run(x, z)
        assert line_of(war_ring, "load") in str(err.value) and line_of(war_ring, "read") in str(err.value)
    else:
        run(x, z)
        np.testing.assert_array_equal(z, 2 * x)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("tiles,blocks", [(2, 2), (3, 2), (1, 1), (5, 4)])
def test_missing_drain_noted_when_a_block_runs_one_trip(arch, tiles, blocks):
    """A flag left set at kernel end is a note with the set's line, not a fault: this launch's result
    does not depend on it, and the real flash-attention kernels pre-set slot-free flags this way."""
    x, z = xz(tiles * R)()
    report = kernel(ring_drain_one_trip, arch).options(check="raise")[None, blocks](x, z)
    assert report.faults == []
    np.testing.assert_array_equal(z, 2 * x)
    notes = [n for n in report.notes if re.search(r"set_flag\(V, MTE2, event=1\) is never waited for", n)]
    assert len(notes) == 1 and line_of(ring_drain_one_trip, "preset") in notes[0], report.notes


@pytest.mark.parametrize("arch", ARCHS)
def test_unpaired_set_is_noted_with_its_line(arch):
    x, z = xz(64)()
    report = kernel(unpaired_set, arch).options(check="raise")[None, 2](x, z)
    assert report.faults == []
    notes = [n for n in report.notes if "set_flag(MTE3, MTE2, event=1) is never waited for" in n]
    assert len(notes) == 1 and line_of(unpaired_set, "set") in notes[0], report.notes


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("tiles,blocks", [(4, 2), (2, 1), (7, 3), (3, 1)])
def test_missing_drain_clean_when_every_block_runs_two_or_more_trips(arch, tiles, blocks):
    x, z = xz(tiles * R)()
    report = kernel(ring_drain_one_trip, arch).options(check="raise")[None, blocks](x, z)
    assert report.faults == []
    np.testing.assert_array_equal(z, 2 * x)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("m,blocks", [(64, 4), (64, 1), (32, 2), (16, 1)])
def test_edge_validshape_clean_on_exact_multiples(arch, m, blocks):
    x, z = colsum_args(m)()
    report = kernel(edge_validshape, arch).options(check="raise")[None, blocks](x, z)
    assert report.faults == []
    _check_colsum(x, z)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("m,blocks", [(4 * R - 8, 4), (R + 1, 2), (5, 1), (3 * R - 15, 3)])
def test_edge_validshape_caught_on_ragged_sizes(arch, m, blocks):
    """Caught when the block that gets the partial tile has not written the slot's tail rows
    before (each block here handles exactly one tile, the last one partial)."""
    x, z = colsum_args(m)()
    with pytest.raises(UninitializedReadError) as err:
        kernel(edge_validshape, arch).options(check="raise")[None, blocks](x, z)
    assert line_of(edge_validshape, "sum") in str(err.value)


@pytest.mark.parametrize("arch", ARCHS)
def test_edge_validshape_stale_rows_give_wrong_sums(arch):
    """With one block the partial tile reuses the slot of the full tiles before it: the sum adds
    the previous tile's rows. The numbers are wrong (this test documents it)..."""
    m = 3 * R - 8
    x, z = colsum_args(m)()
    kernel(edge_validshape, arch).options(check="off")[None, 1](x, z)
    assert not np.allclose(z[-1], x[2 * R:].sum(axis=0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("arch", ARCHS)
def test_edge_validshape_caught_even_with_stale_rows(arch):
    """...and the read of rows this tile's load did not write is reported all the same: they hold
    the previous tile's data (the message names the sum and the load that left them stale)."""
    x, z = colsum_args(3 * R - 8)()
    with pytest.raises(UninitializedReadError, match="did not write") as err:
        kernel(edge_validshape, arch).options(check="raise")[None, 1](x, z)
    assert line_of(edge_validshape, "sum") in str(err.value)
    assert line_of(edge_validshape, "load") in str(err.value)


@pytest.mark.parametrize("arch", ARCHS)
def test_zero_padding_written_once_is_not_stale(arch):
    """Padding a tile once (a fill) and then loading partial tiles into it is correct: the rows
    past the data hold the fill's zeros, not another tile's data."""
    x, z = colsum_args(3 * R - 8)()
    kernel(padded_colsum, arch).options(check="raise")[None, 1](x, z)
    expected = [x[i * R:(i + 1) * R].sum(axis=0) for i in range(3)]
    np.testing.assert_allclose(z, np.stack(expected), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("arch", ARCHS)
def test_two_blocks_same_gm_needs_two_blocks(arch):
    x, z = xz(64)()
    kernel(blocks_same_gm, arch).options(check="raise")[None, 1](x, z)  # one block: stores are in order


def test_buffer_id_held_at_kernel_end_is_reported():
    x, z = xz(64)()
    with pytest.raises(SyncError, match="buffer id 0"):
        kernel(lock_never_released, "a5").options(check="raise")[None, 4](x, z)


def test_mutex_api_is_a5_only():
    from pypto_pro import CompileError
    with pytest.raises(CompileError, match="no hardware buffer mutex"):
        kernel(mutex_ok, "a2a3").compile()


# ---- zero reports: correct kernels (examples, shared test kernels) never report a fault --------

def _clean(report) -> None:
    assert report.faults == [] and report.cycles > 0


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("m,n,blocks", [(300, 200, 1), (300, 200, 3), (1000, 260, 5), (128, 128, 2)])
def test_zero_reports_seed_add(arch, m, n, blocks):
    add = pl.jit(load_example("add").add_kernel.fn, arch=arch)  # same source, both archs, auto sync
    torch.manual_seed(m + n)
    x, y = torch.rand(m, n, dtype=torch.float16), torch.rand(m, n, dtype=torch.float16)
    z = torch.zeros_like(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        _clean(add.options(check="raise")[None, blocks](x, y, z))
    fm, fn = m // 128 * 128, n // 128 * 128   # the seed add covers whole tiles only
    assert torch.equal(z[:fm, :fn], (x + y)[:fm, :fn])


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("m,n,blocks", [(37, 100, 1), (37, 100, 3), (50, 128, 7)])
def test_zero_reports_softmax(arch, m, n, blocks):
    sm = load_example("softmax")
    k = sm.get_softmax_kernel(arch, 128, 8)
    torch.manual_seed(m)
    x = (torch.randn(m, n) * 3).half()
    y = torch.zeros_like(x)
    _clean(k.options(check="raise")[None, blocks](x, y))
    assert torch.allclose(y.float(), sm.reference(x).float(), rtol=2 ** -10, atol=2 ** -24)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("m,n,blocks", [(37, 100, 1), (37, 100, 3), (50, 128, 7)])
def test_zero_reports_rmsnorm(arch, m, n, blocks):
    rn = load_example("rmsnorm")
    k = rn.get_rmsnorm_kernel(arch, 128, 8)
    torch.manual_seed(m)
    x = (torch.randn(m, n) * 2).half()
    gamma = (torch.rand(n) + 0.5).half()
    y = torch.zeros_like(x)
    _clean(k.options(check="raise")[None, blocks](x, gamma, y, 1e-6))
    assert torch.allclose(y.float(), rn.reference(x, gamma).float(), rtol=2 ** -10, atol=2 ** -24)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("m,n,blocks", [(129, 300, 1), (129, 300, 2), (300, 1056, 4), (1000, 300, 20)])
def test_zero_reports_shared_add_fn(arch, m, n, blocks):
    from kernels import add_fn
    k = pl.jit(add_fn, arch=arch)
    torch.manual_seed(n)
    x, y = torch.rand(m, n, dtype=torch.float16), torch.rand(m, n, dtype=torch.float16)
    z = torch.zeros_like(x)
    _clean(k.options(check="raise")[None, blocks](x, y, z))
    assert torch.equal(z, x + y)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("blocks", [1, 3, 4, 6])
def test_zero_reports_shared_static_add_fn(arch, blocks):
    from kernels import static_add_fn
    k = pl.jit(static_add_fn, arch=arch)
    x, y = torch.rand(256, 128), torch.rand(256, 128)
    z = torch.zeros_like(x)
    _clean(k.options(check="raise")[None, blocks](x, y, z))
    assert torch.equal(z, x + y)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("tiles,blocks", [(1, 1), (2, 1), (5, 1), (5, 2), (7, 3), (2, 4)])
def test_zero_reports_ring_ok_any_trip_count(arch, tiles, blocks):
    x, z = xz(tiles * R)()
    _clean(kernel(ring_ok, arch).options(check="raise")[None, blocks](x, z))
    np.testing.assert_array_equal(z, 2 * x)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("m,blocks", [(4 * R - 8, 4), (4 * R - 8, 1), (5, 1), (3 * R + 1, 2)])
def test_zero_reports_colsum_ok_ragged(arch, m, blocks):
    x, z = colsum_args(m)()
    _clean(kernel(colsum_ok, arch).options(check="raise")[None, blocks](x, z))
    _check_colsum(x, z)
