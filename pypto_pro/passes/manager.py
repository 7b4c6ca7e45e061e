"""The pass pipeline, listed in one place, with a dump of the IR after every stage.

parse -> verify -> check_memory -> split_sections -> pipeline_sync -> auto_sync -> same_pipe -> lower
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from pypto_pro.arch.model import ArchModel
from pypto_pro.ir.nodes import KernelIR
from pypto_pro.ir.printer import kernel_str
from pypto_pro.ir.verifier import verify
from pypto_pro.language.enums import SectionKind
from pypto_pro.passes.auto_sync import auto_sync
from pypto_pro.passes.check_memory import check_memory
from pypto_pro.passes.lower import lower, pipe_listing
from pypto_pro.passes.pipeline_sync import pipeline_sync
from pypto_pro.passes.same_pipe import same_pipe_barriers
from pypto_pro.passes.split_sections import split_sections


@dataclass
class PassOptions:
    arch: ArchModel
    auto_mutex: bool = True


@dataclass
class CompiledPrograms:
    """Result of the pipeline: one lowered program per engine, and the dumps written."""

    kernel: KernelIR
    programs: dict[SectionKind, KernelIR]
    dumps: dict[str, str] = field(default_factory=dict)


KERNEL_PASSES: list[tuple[str, Callable[[KernelIR, PassOptions], KernelIR]]] = [
    ("check_memory", lambda k, o: check_memory(k)),
]
PROGRAM_PASSES: list[tuple[str, Callable[[KernelIR, PassOptions], KernelIR]]] = [
    ("pipeline_sync", lambda p, o: pipeline_sync(p)),
    ("auto_sync", lambda p, o: auto_sync(p, o.arch) if o.auto_mutex else p),
    ("same_pipe", lambda p, o: same_pipe_barriers(p, o.arch) if o.auto_mutex else p),
    ("lower", lambda p, o: lower(p, o.arch)),
]


def pass_names() -> list[str]:
    return ["parse"] + [n for n, _ in KERNEL_PASSES] + ["split_sections"] + [n for n, _ in PROGRAM_PASSES]


def run_passes(kernel: KernelIR, options: PassOptions) -> CompiledPrograms:
    dumps: dict[str, str] = {}
    step = 0

    def dump(name: str, ir: KernelIR) -> None:
        nonlocal step
        dumps[f"{step:02d}_{name}.ir"] = kernel_str(ir)
        step += 1

    verify(kernel, "parse")
    dump("parse", kernel)
    for name, fn in KERNEL_PASSES:
        kernel = fn(kernel, options)
        verify(kernel, name)
        dump(name, kernel)
    programs = split_sections(kernel)
    for kind, prog in programs.items():
        verify(prog, "split_sections")
    for kind, prog in programs.items():
        dump(f"split_sections.{kind.value}", prog)
    for name, fn in PROGRAM_PASSES:
        for kind in list(programs):
            programs[kind] = fn(programs[kind], options)
            verify(programs[kind], name)
            dump(f"{name}.{kind.value}", programs[kind])
    for kind, prog in programs.items():
        dumps[f"lowered.{kind.value}.txt"] = pipe_listing(prog)
    return CompiledPrograms(kernel, programs, dumps)


def write_dumps(dumps: dict[str, str], directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in dumps.items():
        (directory / name).write_text(text)
