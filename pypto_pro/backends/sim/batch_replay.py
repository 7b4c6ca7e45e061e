"""Batched replay: blocks that replay one recorded schedule run each numeric step once, over all of them.

Every block of a timed launch is logged on one of ``LANES`` *lanes*: a copy of the block's cores
(memories and compiled programs) whose memories are rows of one buffer, ``stride`` bytes apart, each
row laid out exactly as a single block's memories. A tile's view in lane ``g + i`` is then the view in
lane ``g`` moved by ``i * stride`` bytes, so the views of a run of lanes are one strided NumPy view
with a leading block axis (:meth:`Lanes.stack`).

A *chunk* is a run of consecutive blocks on consecutive lanes that replay the same schedule
(``schedule_cache``). :func:`replay_chunk` walks the schedule's plan once: each step checks every
block's global-memory access (in block order, as a block-by-block replay would) and runs the step's
numerics for the whole chunk — one call when every block's instruction carries an equal
:class:`BatchSpec` (``Prepared.batch``), else each block's own numerics (each is bound to its lane's
memories, so that is exact as well).

Why the bytes stay those of a block-by-block replay:

* **Layout.** A batched op runs NumPy's loops over each block's window with that window's own strides:
  the block axis is the outermost, its stride (``stride``, larger than any memory, and the padded
  scratch of :func:`deferred`) never lets NumPy merge it with a tile axis, so every inner loop NumPy
  picks (contiguous SIMD or strided; which NaN it returns when two meet depends on it) is one the
  single block ran. ``tests/backends/sim/test_batch_replay.py`` feeds NaN payloads, signed zeros,
  subnormals and infinities through every batched op and compares bytes with the per-block path.
* **Order.** Lockstep reorders the steps of different blocks. It is only taken for blocks whose
  global-memory accesses touch nothing another block of the launch writes and whose writes touch
  nothing another block accesses (:func:`independent_blocks`, by bounding boxes of the logged
  windows), and whose cores do not write overlapping windows: such blocks read and write the same
  bytes in any order, and the GM checker (called per block in that block's own order) finds no
  conflict and watches no write involving them.
"""
from __future__ import annotations

import math
import mmap
import struct
import weakref
from typing import Any, Callable

import numpy as np

from pypto_pro import env_flags
from pypto_pro.backends.sim.kit import landing

# lanes of a timed launch (blocks in one lockstep chunk at most); 1 turns batched replay off. Off by
# default for now: with only the Vector ops batched it is not faster than block-by-block replay and its
# lanes hold more memory (docs/simulator.md, fourth pass); ``LANES = 8`` turns it on, exactly.
LANES = env_flags.count("PYPTO_PRO_SIM_LANES", 1)
# the Lanes of every lanes buffer, by the buffer's id: a lane's views have that buffer at the end of their
# chain of bases, not the memory they are in (``memory_of``)
LANE_BUFFERS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_PAD = 1 << 16      # lane rows: never a whole number of tile rows apart
_GAP = 64           # padded scratch: blocks at least a cache line apart (never contiguous)


class BatchSpec:
    """What a dispatched instruction needs to run batched: ``key`` (instructions of several blocks
    with equal keys run as one; the schedule signature already makes their statement, tile slots and
    work size equal) and ``run_many(preps, stack, defer)``, the numerics of all ``preps`` (the chunk's
    instructions, in lane order; ``stack(view)`` is the first lane's on-chip view with the block axis
    in front), returning a commit like ``Prepared.run``. ``data``: what ``run_many`` reads per block."""

    __slots__ = ("key", "run_many", "data")

    def __init__(self, key: tuple, run_many: Callable, data: Any = None):
        self.key = key
        self.run_many = run_many
        self.data = data


def scalar_key(values: tuple) -> tuple:
    """A key that tells scalars apart by type and bytes (``-0.0`` from ``0.0``, NaN payloads)."""
    out = []
    for v in values:
        t = type(v)
        if t is float:
            out.append((t, struct.pack("<d", v)))
        elif t is int or t is bool:
            out.append((t, v))
        else:
            a = np.asarray(v)
            out.append((t, a.dtype.str, a.tobytes()))
    return tuple(out)


def exact_width(cols: int) -> bool:
    """Whether a region of ``cols`` columns may run batched. NumPy's contiguous loops do a vector body
    and a tail, and a tail may return the other NaN when two meet; how a call splits into body and tail
    depends on how long its inner loops are, which a leading block axis changes (NumPy buffers and
    merges axes as it likes). With rows of whole 64-byte vectors (16 elements of up to 4 bytes) no call
    has a tail in either form; a single column is one strided scalar loop in both. Other widths replay
    block by block (``tests/backends/sim/test_batch_replay.py`` shows both sides of this line)."""
    return cols % 16 == 0 or cols == 1


def batchable(srcs: tuple, dst) -> bool:
    """Whether an op over these regions can run batched: all plain arrays (a boxed tile's region is
    not), and ``dst`` either is a source or shares no byte with one (a partial overlap makes NumPy
    copy the source first, in a layout that depends on the whole batched array)."""
    if not isinstance(dst, np.ndarray):
        return False
    for v in srcs:
        if not isinstance(v, np.ndarray):
            return False
        if np.may_share_memory(v, dst) and not (
                _addr(v) == _addr(dst) and v.shape == dst.shape and v.strides == dst.strides):
            return False
    return True


def padded_empty(shape: tuple, dtype) -> np.ndarray:
    """An uninitialised ``shape`` array whose leading (block) axis is padded: each block's slice is
    C-contiguous as a single block's scratch would be, but never contiguous with the next block's
    (NumPy cannot merge the block axis into the next). Blocks start 64-byte aligned, a cache line
    apart at least (a small gap: scratch of whole lanes' worth of tiles must stay cheap to allocate)."""
    n, rest = shape[0], shape[1:]
    dt = np.dtype(dtype)
    per = math.prod(rest)
    item = max(1, dt.itemsize)
    row_bytes = (per * item + _GAP + 63) // 64 * 64
    row = row_bytes // item if row_bytes % item == 0 else per + max(1, _GAP // item)
    base = np.empty(n * row + 64 // item, dt)
    skip = (-_addr(base) % 64) // item if _addr(base) % item == 0 else 0
    return base[skip:skip + n * row].reshape(n, row)[:, :per].reshape(shape)


def strided_empty(like: np.ndarray) -> np.ndarray:
    """An uninitialised array shaped and strided as ``like`` (a batched view, positive strides), in
    memory of its own: each block's slice has the strides of that block's view of ``like``."""
    item = like.dtype.itemsize
    per = item + sum((n - 1) * st for n, st in zip(like.shape[1:], like.strides[1:]))
    row = (per + _GAP + 63) // 64 * 64
    buf = np.empty(like.shape[0] * row + 64, np.uint8)
    skip = -_addr(buf) % 64
    return np.ndarray(like.shape, like.dtype, buf, skip, (row, *like.strides[1:]))


def copied(src: np.ndarray, dst: np.ndarray, defer: bool) -> Callable | None:
    """A byte copy ``dst[...] = src`` now, or (``src`` read now) at the commit: copies move bytes as they
    are, in any layout, so they need none of :func:`deferred`'s scratch when not deferred."""
    if not defer:
        np.copyto(dst, src)
        return None
    scratch = padded_empty(dst.shape, dst.dtype)
    np.copyto(scratch, src)
    return landing(dst, scratch, True)


def deferred(compute: Callable[[np.ndarray], None], dst: np.ndarray, defer: bool) -> Callable | None:
    """``kit.deferred`` over a batched destination. The numerics never write the lanes themselves: the
    blocks' views overlap each other's bounds, and NumPy would then copy the sources of an op into
    temporaries of another layout (other inner loops, other NaNs). So they compute into scratch laid
    out as the single block's output was (``kit.deferred``'s contiguous scratch when deferred, the
    destination's own strides when not), and a byte copy moves it (now, or at the commit)."""
    scratch = padded_empty(dst.shape, dst.dtype) if defer else strided_empty(dst)
    compute(scratch)
    return landing(dst, scratch, defer)


def _addr(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def gm_stack(windows: list[tuple]) -> np.ndarray | None:
    """The blocks' global-memory windows as one view with the block axis in front, when they are
    windows of one array at evenly spaced addresses (an SPMD kernel's per-block offsets); else None.
    ``windows[i]``: (block i's window, the array it is a window of, its index there)."""
    v0, g0, i0 = windows[0]
    if len(windows) == 1:
        return v0[None]
    o0 = window_offset(g0, i0)
    d = window_offset(windows[1][1], windows[1][2]) - o0
    for i, (v, g, idx) in enumerate(windows):
        if g is not g0 or window_offset(g, idx) != o0 + i * d or v.shape != v0.shape or v.strides != v0.strides or v.dtype != v0.dtype:
            return None
    try:  # (the array constructor is several times cheaper than as_strided)
        return np.ndarray((len(windows), *v0.shape), v0.dtype, g0, o0, (d, *v0.strides))
    except (TypeError, ValueError):  # g0 exposes no buffer (not contiguous)
        return np.lib.stride_tricks.as_strided(v0, (len(windows), *v0.shape), (d, *v0.strides), writeable=True)


def window_offset(g: np.ndarray, idx: tuple) -> int:
    """Byte offset in ``g`` of the start of ``g[idx]`` (``idx``: slices and integers)."""
    return sum((i.start if isinstance(i, slice) else i) * st for i, st in zip(idx, g.strides))


class Lanes:
    """``count`` copies of a block's cores whose memories are rows of one anonymous map (see the
    module docstring). ``blocks[g]`` is lane ``g``'s (memories, runners)."""

    def __init__(self, make_block: Callable, count: int, row_bytes: int):
        self.count = count
        self.stride = (row_bytes + _PAD + mmap.PAGESIZE - 1) // mmap.PAGESIZE * mmap.PAGESIZE
        self._map = mmap.mmap(-1, self.stride * count, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS) \
            if hasattr(mmap, "MAP_PRIVATE") else None
        self.bytes = np.frombuffer(self._map, np.uint8) if self._map is not None else \
            np.zeros(self.stride * count, np.uint8)
        LANE_BUFFERS[id(self.bytes)] = self
        self.regions: list[tuple[int, int]] = []  # (offset in a row, bytes) of every carved array
        self._stacked: dict[tuple, tuple] = {}      # (id(view), lanes) -> (view, its stacked view)
        self.blocks = []
        for g in range(count):
            cursor = [g * self.stride]
            carved: list[tuple[int, int]] = []

            def carve(nbytes: int, _c=cursor, _carved=carved) -> np.ndarray:
                lo = _c[0]
                _c[0] += (nbytes + 63) // 64 * 64
                if _c[0] > (lo // self.stride + 1) * self.stride:
                    raise RuntimeError("internal: a replay lane's memories outgrew their row")
                _carved.append((lo % self.stride, nbytes))
                return self.bytes[lo:lo + nbytes]
            if g == 0:
                self.regions = carved  # (filled as lane 0 carves: its programs' rules may look up memory_of)
            self.blocks.append(make_block(carve))
            if g and carved != self.regions:
                raise RuntimeError("internal: replay lanes laid out differently")

    def poison(self, first: int, count: int, value: int) -> None:
        """Every carved byte of lanes ``first .. first+count`` set to ``value``."""
        rows = self.bytes.reshape(self.count, self.stride)[first:first + count]
        for off, n in self.regions:
            rows[:, off:off + n].fill(value)

    def stacker(self, count: int) -> Callable[[np.ndarray], np.ndarray]:
        """``stack(view)``: an on-chip view of a lane with the next ``count - 1`` lanes' as a block axis
        (memoized per view: the rules keep their views for the program's life)."""
        stride, memo, buf = self.stride, self._stacked, self.bytes
        base = _addr(buf)

        def stack(view: np.ndarray) -> np.ndarray:
            key = (id(view), count)
            got = memo.get(key)
            if got is None or got[0] is not view:
                off = _addr(view) - base
                if not 0 <= off < buf.size:
                    raise RuntimeError("internal: a batched view outside the replay lanes")
                got = memo[key] = (view, np.ndarray((count, *view.shape), view.dtype, buf, off,
                                                    (stride, *view.strides)))
            return got[1]

        def raw(view: np.ndarray) -> np.ndarray:  # not memoized: a view made per dispatch (boxed windows)
            off = _addr(view) - base
            if not 0 <= off < buf.size:
                raise RuntimeError("internal: a batched view outside the replay lanes")
            return np.ndarray((count, *view.shape), view.dtype, buf, off, (stride, *view.strides))
        stack.raw = raw  # type: ignore[attr-defined]
        return stack

    def release(self) -> None:
        if self._map is not None and hasattr(mmap, "MADV_DONTNEED"):
            self._map.madvise(mmap.MADV_DONTNEED)


def memory_of(view: np.ndarray) -> np.ndarray:
    """The whole memory array (CoreMemory's per-space uint8 array) a view of it lives in: the end of its
    chain of bases, or for a replay lane's view (whose chain ends at the lanes buffer) the carved region
    that holds it."""
    base = view
    while isinstance(base.base, np.ndarray):
        base = base.base
    lanes = LANE_BUFFERS.get(id(base))
    if lanes is None or lanes.bytes is not base:
        return base
    row, off = divmod(_addr(view) - _addr(base), lanes.stride)
    for lo, n in lanes.regions:
        if lo <= off < lo + n:
            start = row * lanes.stride + lo
            return base[start:start + n]
    raise RuntimeError("internal: a view in a replay lane outside every carved memory")


# ---- which blocks may run in lockstep ----------------------------------------------------------------


def _meets(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(a0 < b1 and b0 < a1 for (a0, a1), (b0, b1) in zip(a, b))


def independent_blocks(logged: list[list], objs: list[int]) -> set[int]:
    """The blocks whose global-memory accesses meet no other block's writes, whose writes meet no other
    block's accesses, and whose cores write disjoint windows. Only tensors something writes are compared
    (reads never conflict with reads), by a sweep over each one's windows sorted by their first axis."""
    written: set = set()
    for recs in logged:
        for rec in recs:
            for prep in rec.preps:
                for pidx, _, _, write in prep.gm:
                    if write:
                        written.add(objs[pidx])
    if not written:
        return set(range(len(logged)))
    by_obj: dict = {}
    for b, recs in enumerate(logged):
        for core, rec in enumerate(recs):
            seen: set = set()
            for prep in rec.preps:
                for pidx, _, rect, write in prep.gm:
                    key = objs[pidx]
                    if key in written and (key, rect, write) not in seen:
                        seen.add((key, rect, write))
                        by_obj.setdefault(key, []).append((rect[0][0] if rect else 0, rect, b, core, bool(write)))
    tied: set[int] = set()
    for entries in by_obj.values():
        entries.sort(key=lambda e: e[0])
        active: list = []
        for e in entries:
            lo, rect, b, core, write = e
            active = [a for a in active if not a[1] or a[1][0][1] > lo]
            for a in active:
                if (write or a[4]) and (a[2] != b or (a[3] != core and write and a[4])) and _meets(rect, a[1]):
                    tied.add(b)
                    tied.add(a[2])
            active.append(e)
    return set(range(len(logged))) - tied


# ---- the lockstep replay -----------------------------------------------------------------------------


def _run_step(preps: list, stack: Callable, defer: bool) -> Callable | None:
    """One step's numerics over the chunk: batched when every block's spec matches, else block by block."""
    spec = preps[0].batch
    if spec is not None:
        key = spec.key
        for p in preps:
            if p.batch is None or p.batch.key != key:
                break
        else:
            got = spec.run_many(preps, stack, defer)
            if got is not NotImplemented:
                return got
    commits = [p.run(defer) for p in preps]
    live = [c for c in commits if c is not None]
    if not live:
        return None

    def commit() -> None:
        for c in live:
            c()
    return commit


def replay_chunk(schedule, chunk: list[list], stack: Callable, gm_checks: list | None, defer: bool,
                 watch: dict | None = None, landed: Callable | None = None) -> None:
    """Replay ``schedule`` for the blocks of a chunk (``chunk[i]``: block i's logged ops; ``gm_checks[i]``
    its GM checker) as :meth:`RecordedSchedule.replay` would block by block."""
    templates = schedule.templates
    pending: dict[int, Callable] = {}
    n = len(chunk)
    for k, j in schedule.plan:
        if j >= 0:
            preps = [p[j] for p in chunk]
            t = templates[k]
            if gm_checks is not None:
                for i in range(n):
                    if preps[i].gm:
                        gm_checks[i](t, preps[i].gm)
            commit = _run_step(preps, stack, defer)
            if commit is not None:
                pending[k] = commit
            elif watch and t in watch:
                for _ in range(n):
                    landed(t)  # type: ignore[misc]
        elif pending:
            commit = pending.pop(~k, None)
            if commit is not None:
                commit()
                if watch and templates[~k] in watch:
                    for _ in range(n):
                        landed(templates[~k])  # type: ignore[misc]
