"""Synchronisation instructions, emitted exactly as the passes placed them (one C++ line each).

a2a3: ``set_flag`` / ``wait_flag`` (pipe pair + event id), ``pipe_barrier``; cross-core through the
FFTS: ``ffts_cross_core_sync(pipe, msg(mode 2, id))`` / ``wait_flag_dev(id)`` (mode 2: one Cube
core and its two Vector cores, as PTO-ISA's a2a3 TSync uses it).
a5: buffer ids ``get_buf`` / ``rls_buf`` (``lock`` / ``unlock``), intra-block flags
``set_intra_block`` / ``wait_intra_block``; the Cube side addresses each Vector core's copy of an
id (``id`` for AIV0, ``id + 16`` for AIV1), as PTO-ISA's a5 TSync does.
"""
from __future__ import annotations

from typing import Callable

from pypto_pro.ir.expr import Const, Expr
from pypto_pro.ir.nodes import SyncOp
from pypto_pro.language.enums import SectionKind

from pypto_pro.backends.pto.ctypes_map import pipe

# The CPU-model stand-ins the preamble defines for intrinsics pto/common/cpu_stub.hpp lacks.
CPU_SHIMS = {
    "get_buf": "inline void get_buf(pipe_t, int64_t, int64_t) {}",
    "rls_buf": "inline void rls_buf(pipe_t, int64_t, int64_t) {}",
    "ffts_cross_core_sync": "inline void ffts_cross_core_sync(pipe_t, uint64_t) {}",
    "wait_flag_dev": "inline void wait_flag_dev(int64_t) {}",
    "set_intra_block": "inline void set_intra_block(pipe_t, int64_t) {}",
    "wait_intra_block": "inline void wait_intra_block(pipe_t, int64_t) {}",
    "set_ffts_base_addr": "inline void set_ffts_base_addr(uint64_t) {}",
}


def event_expr(e: Expr | None, cexpr: Callable[[Expr], str]) -> str:
    if isinstance(e, Const) and isinstance(e.value, int) and 0 <= e.value <= 7:
        return f"EVENT_ID{e.value}"
    return f"static_cast<event_t>({cexpr(e)})" if e is not None else "EVENT_ID0"


def sync_line(s: SyncOp, arch: str, engine: SectionKind, cexpr: Callable[[Expr], str],
              used: set[str]) -> str:
    """The C++ statement(s) of one SyncOp, on one line. ``used`` collects intrinsics needing a CPU shim."""
    k = s.kind
    if k in ("set_flag", "wait_flag"):
        return f"{k}({pipe(s.src)}, {pipe(s.dst)}, {event_expr(s.event, cexpr)});"
    if k == "barrier":
        return f"pipe_barrier({pipe(s.src)});"
    ev = cexpr(s.event) if s.event is not None else "0"
    if k in ("lock", "unlock"):
        if arch != "a5":
            return f'#error "buffer-id {k} is an a5 instruction; a2a3 has no get_buf/rls_buf"'
        fn = "get_buf" if k == "lock" else "rls_buf"
        used.add(fn)
        return f"{fn}({pipe(s.src)}, {ev}, 0);"
    if k in ("xset", "xwait"):
        p = pipe(s.pipe)
        if arch == "a2a3":
            if k == "xset":
                used.add("ffts_cross_core_sync")
                return f"ffts_cross_core_sync({p}, pp_ffts_msg(0x2, {ev}));"
            used.add("wait_flag_dev")
            return f"wait_flag_dev({ev});"
        fn = "set_intra_block" if k == "xset" else "wait_intra_block"
        used.add(fn)
        if engine is SectionKind.CUBE:  # the Cube core talks to both Vector cores of its block
            return f"{fn}({p}, {ev}); {fn}({p}, ({ev}) + 16);"
        return f"{fn}({p}, {ev});"
    return f'#error "synchronisation \'{k}\' has no PTO-ISA form in this backend"'
