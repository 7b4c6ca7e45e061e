"""Replayed blocks in a forked child: the tail of a launch's replays runs on a second core.

A timed launch logs every block, then schedules or replays them in block order (``executor._timed``).
Once every block still to come replays a schedule already recorded (after block 0 for the FA kernels,
whose blocks all share one schedule), their numerics are all that is left, and blocks whose global
memory accesses meet no other block's writes (``batch_replay.independent_blocks``) compute the same
bytes in any order. So :func:`start` forks (``os.fork``, Linux) a child that replays the second half
of those blocks on its copy-on-write memory, numerics only, and sends back the bytes of every GM
window they write through a shared mapping; the parent replays the first half as usual, then copies
those bytes in and, for each of the child's blocks in order, makes the global-memory checker's calls
of a serial replay (``RecordedSchedule.check``: the same calls in the same order, without numerics)
and its end-of-block bookkeeping. The report, the warnings and the bytes are the serial run's:

* taken only when the remaining blocks are independent, every parameter's memory is its own (no two
  parameters overlap under different ids) and ``pl.make_tensor`` views are of a ``pl.Ptr`` (the checker
  compares their byte ranges), there is no trace and no same-bytes watch, and every window a child
  block writes has a region (``GMBinding.region``);
* the child turns torch off (``torch_cast`` / ``torch_engine``: NumPy gives the same bytes, and torch's
  thread pools are not safe after a fork) and reports "not usable" on any error, warning or device
  print, or when it has not finished long after the parent: the parent then replays those blocks
  itself from exactly the serial run's state (its memory never saw the child's writes).

``PYPTO_PRO_SIM_WORKERS``: ``auto`` (default: when the machine has a second core that is idle by the
load average and the child's blocks hold at least ``MIN_PREPS`` logged ops), ``1`` (never), ``2`` (every
eligible launch of at least two remaining replays; the tests use it).
"""
from __future__ import annotations

import mmap
import os
import pickle
import select
import signal
import sys
import time
import warnings
from typing import Any

import numpy as np

from pypto_pro.backends.sim import (
    batch_replay,
    check_hooks,
    debug_log,
    torch_cast,
    torch_engine,
)
from pypto_pro.errors import LaunchError
from pypto_pro.ir.views import PtrParam

ENV = "PYPTO_PRO_SIM_WORKERS"
MIN_PREPS = 20000  # automatic mode: fewer logged ops in the child's blocks cost about what a fork saves
GRACE = 3.0  # the parent waits this many times its own range's time (plus 5 s) for the child


def _mode() -> str:
    raw = (os.environ.get(ENV) or "auto").strip().lower()
    if raw not in ("auto", "1", "2"):
        raise LaunchError(f"{ENV} must be 'auto', '1' or '2', got {raw!r}", kind="value")
    return raw


def _core_free() -> bool:
    try:
        return (os.cpu_count() or 1) >= 2 and os.getloadavg()[0] < (os.cpu_count() or 1) - 0.5
    except OSError:
        return False


def _own_memory(runners) -> bool:
    """No two parameters share bytes under different memory ids, and every view is of a ``pl.Ptr``."""
    gm = runners[0].gm
    arrays = [(i, a) for i, a in enumerate(gm.arrays[:gm.count]) if a is not None]
    for x, (i, a) in enumerate(arrays):
        for j, b in arrays[x + 1:]:
            if gm.objs[i] != gm.objs[j] and np.may_share_memory(a, b):
                return False
    return all(isinstance(v.base, PtrParam) for r in runners for v in r.gm.views)


def _regions(runners, logged: list, lo: int, hi: int) -> list[np.ndarray] | None:
    """The GM bytes behind every write record of blocks ``lo..hi-1``, or None when one has no region."""
    out, seen = [], set()
    for c in range(lo, hi):
        for r, rec in zip(runners, logged[c]):
            for prep in rec.preps:
                for pidx, _, rect, write in prep.gm:
                    if write and (key := (id(r.gm), pidx, rect)) not in seen:  # (a window written again: once)
                        seen.add(key)
                        region = r.gm.region(pidx, rect)
                        if region is None:
                            return None
                        out.append(region)
    return out


def _windows(shared: mmap.mmap, regions: list[np.ndarray]):
    """Each region with its bytes' place in ``shared`` (the regions one after another), as an array of
    the region's dtype and shape: what the child fills and the parent copies back."""
    pos = 0
    for region in regions:
        yield region, np.frombuffer(shared, region.dtype, region.size, pos).reshape(region.shape)
        pos += region.nbytes


def _log_state() -> tuple:
    log = debug_log.current()
    return () if log is None else (log.text(), len(log.asserts), len(log.traps))


def _copy_back(shared: mmap.mmap, regions: list[np.ndarray]) -> None:
    for region, window in _windows(shared, regions):
        np.copyto(region, window)


class Child:
    """The parent's side of a forked child replaying blocks ``lo..hi-1``."""

    def __init__(self, pid: int, fd: int, lo: int, hi: int, regions: list, shared: mmap.mmap, knowns: list):
        self.pid, self.fd, self.lo, self.hi = pid, fd, lo, hi
        self.regions, self.shared, self.knowns = regions, shared, knowns
        self.t0 = time.perf_counter()
        self.why = ""

    def join(self) -> bool:
        """Wait for the child; on success copy its bytes into global memory. False: replay them here."""
        spent = time.perf_counter() - self.t0
        deadline = time.perf_counter() + GRACE * spent + 5.0
        chunks = []
        while True:
            left = deadline - time.perf_counter()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                self.why = "the child did not finish in time"
                self.kill()
                return False
            got = os.read(self.fd, 1 << 16)
            if not got:
                break
            chunks.append(got)
        os.close(self.fd)
        self.fd = -1
        os.waitpid(self.pid, 0)
        self.pid = 0
        try:
            msg = pickle.loads(b"".join(chunks))
        except Exception:  # noqa: BLE001  (a child that died: no or a partial message)
            msg = {"ok": False, "why": "the child ended without a result"}
        if not msg.get("ok"):
            self.why = str(msg.get("why"))
            return False
        _copy_back(self.shared, self.regions)
        self.shared.close()  # (no window of it is left: _copy_back's were its own)
        return True

    def kill(self) -> None:
        reap(self.pid, self.fd)
        self.pid, self.fd = 0, -1


def reap(pid: int, fd: int) -> None:
    """Kill child ``pid`` and wait for it (0: none), and close its pipe ``fd`` (-1: none)."""
    if pid:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
    if fd >= 0:
        os.close(fd)


def send(fd: int, msg: dict) -> None:
    """Write ``msg`` to the parent (pickled) and end this child process."""
    try:
        data = memoryview(pickle.dumps(msg))
        while data:
            data = data[os.write(fd, data):]
    finally:
        os._exit(0)


def take(child: Child, logged: list, seq, gmcheck, objs: list[int]) -> None:
    """Blocks whose numerics ``child`` ran (their bytes are in memory since ``join``): the global-memory
    checker's calls and the end-of-block bookkeeping of their serial replays, in block order. (Their
    on-chip memories are not reset here: no block runs on them after these, and the next launch's
    first block starts from poison.)"""
    for c, known in zip(range(child.lo, child.hi), child.knowns):
        check = check_hooks.gm_check(gmcheck, objs, lambda inst, _c=c: _c)
        if check is not None:
            known.check([p for rec in logged[c] for p in rec.preps], check)
        seq.block_done(c, logged[c], known.end_time, known.busy, None, [], None)
        logged[c] = []


class Attempt:
    """One launch's try at forking: open until a replayed block finds every later block's schedule
    recorded (then :meth:`start` decides once, for the rest of the launch). Made before the launch's
    first numerics, so a bad ``PYPTO_PRO_SIM_WORKERS`` fails the launch with its outputs untouched."""

    def __init__(self) -> None:
        self.mode = _mode()
        self.open = self.mode != "1"

    def start(self, *args) -> Child | None:
        return start(*args, attempt=self)


def start(runners, objs: list[int], logged: list, b: int, sigs: list, schedules: dict, trace, lanes, watch,
          defer: bool, poison, attempt: Attempt) -> Child | None:
    """Fork a child for the second half of blocks ``b..`` when they may run there (module docstring),
    else None. Called at block ``b``, a replay, before it runs; ``attempt`` is closed once every later
    block's schedule is known (before that a later replayed block may try again)."""
    n = len(logged)
    if lanes is not None or trace is not None or watch or not sys.platform.startswith("linux") or n - b < 2:
        return None
    if any(sigs[c] is None or sigs[c] not in schedules for c in range(b, n)):
        return None  # a later block is still to be scheduled: a later replay may try again
    attempt.open = False
    mode, knowns = attempt.mode, [schedules[sigs[c]] for c in range(b, n)]
    lo = b + (n - b) // 2
    preps = sum(len(rec.preps) for c in range(lo, n) for rec in logged[c])
    if mode == "auto" and (preps < MIN_PREPS or not _core_free()):
        return None
    if not _own_memory(runners):
        return None
    free = batch_replay.independent_blocks(logged, objs)
    if any(c not in free for c in range(b, n)):
        return None
    regions = _regions(runners, logged, lo, n)
    if regions is None:
        return None
    size = sum(r.nbytes for r in regions)
    shared = mmap.mmap(-1, max(1, size))
    rfd, wfd = os.pipe()
    with warnings.catch_warnings():  # (3.12+ warns on forking a threaded process: the child uses no threads)
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(rfd)
        _child(wfd, logged, lo, n, knowns[lo - b:], regions, shared, defer, poison)
    os.close(wfd)
    return Child(pid, rfd, lo, n, regions, shared, knowns[lo - b:])


def _child(fd: int, logged: list, lo: int, hi: int, knowns: list, regions: list, shared, defer: bool,
           poison) -> None:
    msg: dict[str, Any]
    try:
        torch_cast.enabled = torch_engine.enabled = False
        state = _log_state()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for c, known in zip(range(lo, hi), knowns):
                poison()
                known.replay([p for rec in logged[c] for p in rec.preps], None, defer)
        if caught:
            msg = {"ok": False, "why": f"a warning: {caught[0].message}"}
        elif _log_state() != state:
            msg = {"ok": False, "why": "a device print"}
        else:
            for region, window in _windows(shared, regions):
                window[...] = region
            msg = {"ok": True}
    except BaseException as exc:  # noqa: BLE001  (the child reports anything and exits)
        msg = {"ok": False, "why": f"{type(exc).__name__}: {exc}"}
    send(fd, msg)
