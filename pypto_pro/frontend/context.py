"""State shared by one kernel's compilation, and the exceptions that unwind compile-time control flow."""
from __future__ import annotations

from typing import Any

from pypto_pro.arch.model import ArchModel
from pypto_pro.frontend.builder import Builder
from pypto_pro.ir.expr import Var
from pypto_pro.ir.nodes import Buffer
from pypto_pro.language.enums import SectionKind


class _Return(Exception):
    """Unwinds a body at a ``return`` reached at compile time (not under run-time control flow)."""

    def __init__(self, value: Any):
        self.value = value


class _Break(Exception):
    """Leaves a compile-time (unrolled) loop at its ``break``."""


class _Continue(Exception):
    """Ends one iteration of a compile-time (unrolled) loop at its ``continue``."""


class KernelContext:
    """State shared by one kernel's compilation: arch, IR builder, buffers, sections, ids."""

    def __init__(self, arch: ArchModel, kernel_name: str):
        self.arch = arch
        self.kernel_name = kernel_name
        self.builder = Builder()
        self.buffers: list[Buffer] = []
        self.mutex_owner: dict[tuple[str, int], Buffer] = {}  # (core side, id) -> tile group
        self.section: SectionKind | None = None
        self.sections_seen: set[SectionKind] = set()
        self.inline_depth = 0
        self.unrolled_iterations = 0  # every iteration of every compile-time loop, against a budget
        self.names_used: dict[str, int] = {}
        self.param_vars: dict[str, Var] = {}
        self.cross_owner: dict[int, Buffer] = {}
        self.dtype_bindings: dict[str, Any] = {}  # DTypeVar name -> DataType bound at launch
        self.unbound_constexprs: set[str] = set()  # pl.Constexpr parameters compiled without a value
        self.struct_types: dict[str, tuple] = {}  # pl.struct type name -> its field layout (one per name)
        self.reserved_struct_names: set[str] = set()  # C struct names taken (the tiling class)
        self.param_count = 0  # kernel parameters (views are numbered after them)
        self.views: list = []  # pl.make_tensor views, numbered after the parameters (ir/views.py)
        self.runtime_depth = 0  # run-time ifs / loops around the statement being compiled (all helpers)
        self.var_depth: dict[int, int] = {}  # Var uid -> runtime_depth where the frontend created it
        self.simt = None  # frontend/simt_values.SimtScope while SIMT code is compiled
        self.section_slots: dict[int, SectionKind] = {}  # run-time slot Var uid -> the section that bound it
        self.consts: dict[str, Any] = {}  # the launch's compile-time names, seen by helpers too (parse_kernel)
        self.tuple_joins: dict[tuple[int, ...], Buffer] = {}  # member buffer uids -> join (tuple_index.py)

    def fresh_name(self, base: str) -> str:
        n = self.names_used.get(base, 0)
        self.names_used[base] = n + 1
        return base if n == 0 else f"{base}_{n}"

