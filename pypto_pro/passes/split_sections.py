"""Splits a kernel into one program per engine: the Vector program (run on each AIV of a block)
and the Cube program (run on the AIC). Code outside sections is shared by both; a kernel with no
section at all is one program for each engine (as the real runtime treats it)."""
from __future__ import annotations

import dataclasses

from pypto_pro.ir.nodes import KernelIR, Section, SetValidShape, Stmt, TileOp, walk_stmts, with_bodies
from pypto_pro.language.enums import SectionKind


def _filter(body: list[Stmt], kind: SectionKind) -> list[Stmt]:
    out: list[Stmt] = []
    for s in body:
        if isinstance(s, Section):
            if s.kind is kind:
                out.extend(s.body)
        else:
            out.append(with_bodies(s, lambda b: _filter(b, kind)))
    return out


def split_sections(kernel: KernelIR) -> dict[SectionKind, KernelIR]:
    kinds = [k for k in SectionKind if any(isinstance(s, Section) and s.kind is k for s in walk_stmts(kernel.body))]
    if not kinds:  # no section at all: the whole body is shared by both engines (the real runtime's rule)
        kinds = [SectionKind.CUBE, SectionKind.VECTOR]
    programs: dict[SectionKind, KernelIR] = {}
    for kind in kinds:
        body = _filter(kernel.body, kind)
        used = set()
        for s in walk_stmts(body):
            if isinstance(s, TileOp):
                used.update(t.buffer.uid for t in s.tile_operands())
            elif isinstance(s, SetValidShape):
                used.add(s.buffer.uid)
        grew = True
        while grew:  # a used view or join needs its bases / members (a join may join joins: nested ifs)
            before = len(used)
            for v in kernel.buffers:
                if v.uid in used:
                    used.update(m.uid for m in v.joins)
                    if v.alias_of is not None:
                        used.add(v.alias_of.uid)
            grew = len(used) != before
        buffers = [b for b in kernel.buffers if b.uid in used]
        programs[kind] = dataclasses.replace(kernel, body=body, buffers=buffers, kind=kind)
    return programs
