"""A machine model as text, every number with its source (``pypto-pro arch``)."""
from __future__ import annotations

from pypto_pro.arch.costs import LinearCost
from pypto_pro.arch.model import ArchModel, Sourced

_MARK = "(assumed) "


def _row(label: str, value: str, source: str, assumed: bool) -> str:
    return f"  {label:31} {value:>14}  {_MARK if assumed else ''}{source}"


def _num(v: float) -> str:
    return f"{int(v)}" if float(v).is_integer() else f"{v:g}"


def _cost(c: LinearCost) -> str:
    parts = [f"head {c.head:g}", f"slope {c.slope:g}/repeat", f"tail {c.tail:g}"]
    if c.fixed:
        parts = [f"fixed {c.fixed:g}", f"slope {c.slope:g}/repeat"]
    if c.strided is not None:
        s = c.strided
        parts.append(f"strided ({s.per_repeat:g} x repeats/row + {s.per_row:g}) x rows + {s.fixed:g}")
    return ", ".join(parts)


def describe(a: ArchModel) -> str:
    """The model's numbers, one per line, each followed by its source; ``(assumed)`` marks values no
    public source gives for this arch."""
    lines = [f"{a.label}: {a.description}", f"  SoC as get_platform_info() reports it: {a.npu_arch}"]
    scalars: list[tuple[str, Sourced | None]] = [
        ("clock MHz", a.clock_mhz), ("cube cores", a.cube_cores), ("vector cores per block", a.vector_cores_per_block),
        ("event ids per pipe pair", a.event_ids_per_pipe_pair), ("buffer (mutex) ids", a.mutex_ids),
        ("cross-core event ids", a.cross_core_event_ids), ("vector repeat bytes", a.vector_repeat_bytes),
        ("GM bandwidth cap GB/s", a.gm_bandwidth_cap_gb_s)]
    if a.l2 is not None:
        scalars += [("L2 bytes", a.l2.capacity), ("L2 hit bytes/cycle per core", a.l2.hit_bytes_per_cycle),
                    ("L2 hit latency cycles", a.l2.hit_latency)]
    scalars += [(name, v) for name, v in a.cost.items()]
    if a.simt is not None:
        import dataclasses
        scalars += [(f"SIMT {f.name.replace('_', ' ')}", getattr(a.simt, f.name)) for f in dataclasses.fields(a.simt)]
    for label, v in scalars:
        if v is not None:
            lines.append(_row(label, _num(v.value), v.source, v.assumed))
    for space, m in a.memories.items():
        lines.append(_row(f"{space.name} bytes / align", f"{m.capacity} / {m.alignment}", m.source, m.assumed))
    for path, bw in a.paths.items():
        fit = f"; fitted {bw.fit_peak} GiB/s K={bw.fit_k} B{' (used)' if bw.use_fit else ''}" if bw.fit_peak else ""
        per_cycle = bw.gib_per_s * 2**30 / (a.clock_mhz.value * 1e6)
        lines.append(_row(f"{path} GiB/s (B/cycle)", f"{bw.gib_per_s:.6g} ({per_cycle:.4g})", bw.source + fit,
                          bw.assumed))
    lines.append("  vector instructions (cycles; a repeat is 256 bytes):")
    for op, c in a.vector_costs.items():
        lines.append(f"    {op:22} {_cost(c)}  {_MARK if c.assumed else ''}{c.source}")
    for (op, width), c in a.vector_costs_by_width.items():
        lines.append(f"    {f'{op} ({width}-byte dtypes)':22} {_cost(c)}  {_MARK if c.assumed else ''}{c.source}")
    return "\n".join(lines)
