"""Synchronisation instructions, emitted exactly as the passes placed them (one C++ line each).

a2a3: ``set_flag`` / ``wait_flag`` (pipe pair + event id), ``pipe_barrier``; cross-core through the
FFTS: ``ffts_cross_core_sync(pipe, msg(mode, id))`` / ``wait_flag_dev(id)`` (mode 2, INTRA_BLOCK: one
Cube core and its two Vector cores, as PTO-ISA's a2a3 TSync uses it; the group modes 0 / 1 the same
way, also on a5, as the real backend does). ``sync_all``: PTO-ISA's ``SYNCALL<core type>()`` (hard: the
FFTS barrier) and ``SYNCALL<SyncAllMode::Soft, core type>(gm, used_cores)`` (soft: PTO-ISA's GM
arrival counter, ``pto/common/syncall_soft.hpp``; the real backend passes its UB / L1 staging tiles
too, a newer PTO-ISA's signature; ours stages nothing through them, so they are dropped).
a5: buffer ids ``get_buf`` / ``rls_buf`` (``lock`` / ``unlock``), intra-block flags
``set_intra_block`` / ``wait_intra_block``; the Cube side addresses each Vector core's copy of an
id (``id`` for AIV0, ``id + 16`` for AIV1), as PTO-ISA's a5 TSync does.
"""
from __future__ import annotations

from typing import Callable

from pypto_pro.ir.expr import Const, Expr
from pypto_pro.ir.nodes import SyncOp
from pypto_pro.language.enums import CrossCoreSyncMode, SectionKind, SyncAllMode, SyncCoreType

from pypto_pro.backends.pto.ctypes_map import pipe
from pypto_pro.ops.cpp import NoCpp

# The CPU-model stand-ins the preamble defines for intrinsics pto/common/cpu_stub.hpp lacks.
CPU_SHIMS = {
    "get_buf": "inline void get_buf(pipe_t, int64_t, int64_t) {}",
    "rls_buf": "inline void rls_buf(pipe_t, int64_t, int64_t) {}",
    "ffts_cross_core_sync": "inline void ffts_cross_core_sync(pipe_t, uint64_t) {}",
    "wait_flag_dev": "inline void wait_flag_dev(int64_t) {}\ninline void wait_flag_dev(pipe_t, int64_t) {}",
    "set_intra_block": "inline void set_intra_block(pipe_t, int64_t) {}",
    "wait_intra_block": "inline void wait_intra_block(pipe_t, int64_t) {}",
    "set_ffts_base_addr": "inline void set_ffts_base_addr(uint64_t) {}",
    # the bare cache-line / destination names of dcci (cpu_stub.hpp has only struct members of some)
    "dcci": "constexpr int SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE = 0, CACHELINE_OUT = 0, CACHELINE_UB = 0, "
            "CACHELINE_ALL = 0, CACHELINE_ATOMIC = 0;",
}


def dcci_line(s: SyncOp, ctx, used: set[str]) -> str:
    """``pl.system.dcci`` as the real backend spells it: ``dcci(ptr, <cache line>, <destination>)`` with a
    GM pointer (tensor + row-major offset) or a UB one (tile data + element offset)."""
    from pypto_pro.backends.pto.cexpr import dim_name
    a = s.attrs
    used.add("dcci")
    cache_line, dst = a["cache_line"].name, a["dst"].name
    if "tensor" in a:
        t = a["tensor"]
        if hasattr(t, "view_exprs"):
            raise NoCpp("pl.system.dcci of a pl.make_tensor view has no C++ form in this release")
        offset = ctx.cexpr(a["linear"]) if "linear" in a else "0"
        if "offsets" in a:
            dims = [str(d) if isinstance(d, int) else dim_name(t.name, i) for i, d in enumerate(t.type.dims)]
            offset = " + ".join(f"({ctx.cexpr(o)})" + "".join(f" * {d}" for d in dims[i + 1:])
                                for i, o in enumerate(a["offsets"]))
        return f"dcci(reinterpret_cast<__gm__ void*>({t.name} + {offset}), {cache_line}, {dst});"
    offset = ctx.cexpr(a["linear"]) if "linear" in a else "0"
    return f"dcci(reinterpret_cast<__ubuf__ void*>({ctx.tile(a['tile'])}.data() + {offset}), {cache_line}, {dst});"


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
            raise NoCpp(f"buffer-id {k} is an a5 instruction; a2a3 has no get_buf/rls_buf")
        fn = "get_buf" if k == "lock" else "rls_buf"
        used.add(fn)
        return f"{fn}({pipe(s.src)}, {ev}, 0);"
    if k in ("xset", "xwait"):
        return _cross_core(s, arch, engine, ev, used)
    if k == "sync_all":
        core_type = s.attrs.get("core_type", SyncCoreType.MIX)
        if s.attrs.get("mode", SyncAllMode.HARD) is SyncAllMode.HARD:
            return f"SYNCALL<SyncCoreType::{_SYNCALL_CORES[core_type]}>();"
        return _soft_sync_all(s, _SYNCALL_CORES[core_type], cexpr)
    raise NoCpp(f"synchronisation '{k}' has no PTO-ISA form in this backend")


_SYNCALL_CORES = {SyncCoreType.AIV_ONLY: "AIVOnly", SyncCoreType.AIC_ONLY: "AICOnly", SyncCoreType.MIX: "Mix"}


def _soft_sync_all(s: SyncOp, cores: str, cexpr: Callable[[Expr], str]) -> str:
    """The soft barrier on its GM workspace, read as int32 arrival counters (the tensor's own element
    type does not matter: PTO-ISA atomically adds 1 to its first int32 and polls it). ``used_cores`` (0:
    every participant) is passed on as the real backend passes it."""
    gm = s.attrs["workspaces"]["gm"]
    param = getattr(gm, "param", None)
    if param is None or getattr(gm, "view_exprs", None):
        raise NoCpp("pl.system.sync_all(mode=SOFT) on a pl.make_tensor view has no C++ form in this release")
    used = cexpr(s.event) if s.event is not None else "0"
    return (f"{{ GlobalTensor<int32_t, pto::Shape<>, pto::Stride<>> pp_sync_ws(reinterpret_cast<__gm__ int32_t*>("
            f"{param.name})); SYNCALL<SyncAllMode::Soft, SyncCoreType::{cores}>(pp_sync_ws, "
            f"static_cast<int32_t>({used})); }}")


def _cross_core(s: SyncOp, arch: str, engine: SectionKind, ev: str, used: set[str]) -> str:
    """As the real backend: a5 INTRA_BLOCK / UNICAST_BLOCK are intra-block flags (the Cube's
    INTRA_BLOCK addresses both Vector cores: ``id`` and ``id + 16``); every other mode, and a2a3,
    goes through the FFTS with the mode number in the message."""
    p = pipe(s.pipe)
    mode = s.attrs.get("sync_mode") or CrossCoreSyncMode.INTRA_BLOCK
    if arch == "a5" and mode in (CrossCoreSyncMode.INTRA_BLOCK, CrossCoreSyncMode.UNICAST_BLOCK):
        fn = "set_intra_block" if s.kind == "xset" else "wait_intra_block"
        used.add(fn)
        if engine is SectionKind.CUBE and mode is CrossCoreSyncMode.INTRA_BLOCK:
            return f"{fn}({p}, {ev}); {fn}({p}, ({ev}) + 16);"
        return f"{fn}({p}, {ev});"
    if s.kind == "xset":
        used.add("ffts_cross_core_sync")
        return f"ffts_cross_core_sync({p}, pp_ffts_msg(0x{mode.value:x}, {ev}));"
    used.add("wait_flag_dev")
    return f"wait_flag_dev({p}, {ev});" if arch == "a5" else f"wait_flag_dev({ev});"
