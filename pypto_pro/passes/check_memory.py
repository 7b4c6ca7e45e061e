"""Warns (``MemoryOverlapWarning``, located at the tile's placement) when a tile's bytes overlap another
tile of the same memory space while both are live.

The chip and the real PyPTO Pro allow overlapping tiles, and real kernels alias on purpose (a
``[1, N]`` row-major view and an ``[N, 1]`` DN view of the same bytes): so this is a warning, not an
error; the simulator's race checker reports an access order that really conflicts. Tiles over the
very same bytes (same addresses and size) are aliases (two views of one buffer, e.g. an ``[N, 1]``
DN tile and a ``[1, N]`` ND tile of the same values) and are not reported; declared views
(``pl.make_view``) are exempt against their base.

Live range of a buffer: from its first to its last use in program order; a buffer live when a
run-time loop starts and used inside it stays live for the whole loop (the loop repeats), and so
does a buffer whose value is carried from one iteration to the next (a loop body reads it before
writing it: an accumulator).
"""
from __future__ import annotations

import warnings
from typing import Any

from pypto_pro.errors import MemoryOverlapWarning, SourceLocation
from pypto_pro.ir.expr import Const
from pypto_pro.ir.nodes import (Assign, Buffer, For, If, KernelIR, Section, SetValidShape, Stmt, TileOp, TileRef,
                                While)

Loop = tuple[int, int, set[int]]  # (first, last position, buffers read in the body before being written)


def _slot_key(ref: TileRef) -> tuple[int, Any]:
    """Which bytes an operand names: the root buffer and its slot (a constant, or one slot variable)."""
    slot = ref.root_slot
    return ref.buffer.root.uid, ("const", slot.value) if isinstance(slot, Const) else id(slot)


def _live_ranges(body: list[Stmt]) -> tuple[dict[int, list[int]], list[Loop]]:
    uses: dict[int, list[int]] = {}
    loops: list[Loop] = []
    pos = 0

    def use(buf: Buffer) -> None:
        uses.setdefault(buf.root.uid, []).append(pos)

    def visit(stmts: list[Stmt], written: set[tuple[int, Any]]) -> set[tuple[int, Any]]:
        """Walk ``stmts``; ``written`` (updated) holds the slots written on every path so far. Returns the
        slots read before being written (upward exposed)."""
        nonlocal pos
        exposed: set[tuple[int, Any]] = set()
        for s in stmts:
            pos += 1
            if isinstance(s, TileOp):
                for t in s.tile_operands():
                    use(t.buffer)
                reads = s.tile_reads()
                if s.attrs.get("tmp"):
                    reads = reads[:-1]  # scratch of a reduction: its old contents are never read
                exposed.update(k for k in map(_slot_key, reads) if k not in written)
                written.update(_slot_key(t) for t in s.tile_writes() if t.buffer.alias_of is None)
            elif isinstance(s, SetValidShape):
                use(s.buffer)
            elif isinstance(s, Assign):  # a slot variable now names another slot
                written.difference_update({k for k in written if k[1] == id(s.var)})
            elif isinstance(s, (For, While)):
                start = pos
                carried = visit(s.body, set())
                loops.append((start, pos, {uid for uid, _ in carried}))
                exposed.update(k for k in carried if k not in written)
                if isinstance(s, For):
                    written.difference_update({k for k in written if k[1] == id(s.var)})
            elif isinstance(s, If):
                then_w, else_w = set(written), set(written)
                exposed |= visit(s.then_body, then_w) | visit(s.else_body, else_w)
                written.intersection_update(then_w & else_w)
            elif isinstance(s, Section):
                exposed |= visit(s.body, written)
            # break / continue / return end a path early: ignoring them only lengthens live ranges
        return exposed

    visit(body, set())
    return uses, loops


def live_intervals(kernel: KernelIR) -> dict[int, tuple[int, int]]:
    uses, loops = _live_ranges(kernel.body)
    out: dict[int, tuple[int, int]] = {}
    for uid, positions in uses.items():
        lo, hi = min(positions), max(positions)
        for start, end, carried in loops:  # a value carried across iterations lives for the whole loop
            if uid in carried:
                lo, hi = min(lo, start), max(hi, end)
        changed = True
        while changed:  # a value live into a loop and used inside it lives for the whole loop
            changed = False
            for start, end, _ in loops:
                if lo < start <= hi < end:
                    hi, changed = end, True
        out[uid] = (lo, hi)
    return out


def _warn(message: str, loc: SourceLocation | None) -> None:
    """Warn at the user's source line (not ours), so Python's warning display shows their code."""
    if loc is None:
        warnings.warn(message, MemoryOverlapWarning, stacklevel=2)
        return
    warnings.warn_explicit(f"{loc}: {message}", MemoryOverlapWarning, filename=loc.path, lineno=loc.line)


def overlaps(kernel: KernelIR) -> list[tuple[str, SourceLocation | None]]:
    """Every overlap of live tiles (and of one group's slots), as (message, location of the later tile)."""
    roots = [b for b in kernel.buffers if b.alias_of is None and not b.joins]  # a join is its members' bytes
    intervals = live_intervals(kernel)
    found = []
    for b in roots:
        spans = sorted((a, a + b.slot_bytes, i) for i, a in enumerate(b.addrs))
        for (a0, e0, i0), (a1, e1, i1) in zip(spans, spans[1:]):
            if a1 < e0:
                found.append((f"slots {i0} and {i1} of tile group '{b.name}' overlap "
                              f"(0x{a0:x}-0x{e0:x} and 0x{a1:x}-0x{e1:x})", b.loc))
    for i, b in enumerate(roots):
        for other in roots[:i]:
            if other.space is not b.space or _same_bytes(b, other):
                continue
            lb, lo = intervals.get(b.uid), intervals.get(other.uid)
            if lb is None or lo is None or lb[1] < lo[0] or lo[1] < lb[0]:
                continue
            clash = _overlap(b, other)
            if clash is not None:
                (sa, sb), (ea, eb) = clash
                where = f" (declared at line {other.loc.line})" if other.loc else ""
                found.append((f"{b.space.name} bytes 0x{max(sa, ea):x}-0x{min(sb, eb):x} of '{b.name}' overlap "
                              f"'{other.name}'{where} while both are live: the race checker will report any access "
                              "order that conflicts (pl.make_view declares an intended alias)", b.loc))
    return found


def check_memory(kernel: KernelIR) -> KernelIR:
    for message, loc in overlaps(kernel):
        _warn(message, loc)
    return kernel


def _same_bytes(a: Buffer, b: Buffer) -> bool:
    """Tiles over exactly the same bytes: an alias (two views of one buffer)."""
    return a.addrs == b.addrs and a.slot_bytes == b.slot_bytes


def _overlap(a: Buffer, b: Buffer):
    for x in a.addrs:
        for y in b.addrs:
            if x < y + b.slot_bytes and y < x + a.slot_bytes:
                return (x, x + a.slot_bytes), (y, y + b.slot_bytes)
    return None
