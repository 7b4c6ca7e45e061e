"""Lowering: attaches the static instruction parameters each tile op needs (bytes, repeats,
bursts) and lists the program per pipe, with every synchronisation instruction visible."""
from __future__ import annotations

import dataclasses
import math

from pypto_pro.arch.model import ArchModel
from pypto_pro.ir.nodes import KernelIR, Stmt, SyncOp, TileOp, TileRef, child_bodies, with_bodies
from pypto_pro.ir.printer import kernel_str


def op_params(op: TileOp, arch: ArchModel) -> dict[str, int]:
    """Static parameters of one instruction at full tile size (run-time valid shapes shrink them)."""
    from pypto_pro.ops import INSTRUCTIONS
    ins = INSTRUCTIONS.get(op.op)
    if ins is not None and ins.params is not None:  # the declaration gives its own (pl.simt.launch)
        return ins.params(op, arch)
    tile = op.dst if isinstance(op.dst, TileRef) else next((s for s in op.srcs if isinstance(s, TileRef)), None)
    if tile is None:  # no tile operand (pl.set_vec_mask, pl.printf, pl.dump_data of a tensor, ...)
        return {}
    tt = tile.tile_type
    if op.op in ("load", "store"):
        return {"n_burst": tt.rows, "burst_bytes": tt.cols * tt.dtype.itemsize, "bytes": tt.nbytes}
    widest = max([tt.dtype.itemsize] + [s.tile_type.dtype.itemsize for s in op.srcs if isinstance(s, TileRef)])
    repeat = int(arch.vector_repeat_bytes.value)
    return {"repeats": math.ceil(tt.rows * tt.cols * widest / repeat), "bytes": tt.nbytes}


def _lower(body: list[Stmt], arch: ArchModel) -> list[Stmt]:
    out: list[Stmt] = []
    for s in body:
        if isinstance(s, TileOp):
            s = dataclasses.replace(s, attrs={**s.attrs, "params": op_params(s, arch)})
        out.append(with_bodies(s, lambda b: _lower(b, arch)))
    return out


def lower(program: KernelIR, arch: ArchModel) -> KernelIR:
    return dataclasses.replace(program, body=_lower(program.body, arch))


def pipe_listing(program: KernelIR) -> str:
    """The lowered program, plus a per-pipe count of instructions and inserted syncs."""
    counts: dict[str, list[int]] = {}

    def visit(body: list[Stmt]) -> None:
        for s in body:
            if isinstance(s, (TileOp, SyncOp)):
                c = counts.setdefault(s.pipe.name, [0, 0])
                c[0 if isinstance(s, TileOp) else 1] += 1
            for b in child_bodies(s):
                visit(b)

    visit(program.body)
    table = "\n".join(f"  {p:5} {c[0]:4} ops  {c[1]:4} sync" for p, c in sorted(counts.items()))
    return kernel_str(program) + "\nstatic instruction count per pipe:\n" + table + "\n"

