"""How a VF (vector function) operation is declared once and read by every stage.

Two kinds of declaration, mirroring ``pypto_pro/ops/decl.py`` for tile operations:

* the ``vf.*`` API (:func:`vf_api`): its stub (the real name, parameters, defaults and docstring,
  what ``inspect.signature(pl.Vf.add)`` shows) and its **check**, the frontend rule that validates
  the bound arguments at the user's line inside a ``@pl.vector_function`` body and emits
  :class:`pypto_pro.ir.vf.VfInstr` statements (usually one);
* a VF instruction kind (:func:`vf_instr`, ``VfInstr.op``): its **sim** rule (``build(instr) ->
  run(rf, mem, *scalars)``: the numerics on the register file and the UB bytes), its **mem** rule
  (``mem(instr) -> footprint(*scalars)``: the UB byte ranges it may read / write, for bounds,
  races and the schedule), its **cost** key (``"VADD"``, ``"VLDS"``, ...: a row of PTO-ISA's A5
  VF cost table, see ``backends/sim/vf/cost.py``) and its **cpp** spelling (the CCE
  micro-instruction the real backend emits, or ``cpp_missing``: why ``kernel.emit()`` cannot).

The stubs are the static methods of ``pl.Vf`` (``language/vf.py``); their checks are registered
in ``pypto_pro.ops.decl.APIS`` under ``vf.<name>`` (namespace ``vf``) so the frontend's generic
call binding (``frontend/intrinsics.py``) serves them too.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from pypto_pro.ops.decl import Api, APIS, make_stub
from pypto_pro.language.intrinsic import intrinsic

SimRule = Callable[..., Callable]     # (VfInstr) -> run(rf, mem, *scalars)
MemRule = Callable[..., Callable]     # (VfInstr) -> footprint(*scalars) -> ((addr, nbytes, is_write), ...)
# (a footprint with ``stateful = True`` takes a per-run dict first, for bounds earlier instructions set;
#  nbytes None: to the end of the tile's slot)
CostRule = Callable[..., str] | str   # "VADD" or (VfInstr) -> key


@dataclass(frozen=True)
class VfInstrDecl:
    """One VF instruction kind (see module docstring)."""

    name: str
    family: str
    sim: SimRule
    cost: CostRule
    mem: MemRule | None = None
    cpp: Callable[..., str] | None = None
    cpp_missing: str = ""
    lanewise: Callable[..., bool] | bool | None = None

    def cost_key(self, instr) -> str:
        return self.cost(instr) if callable(self.cost) else self.cost

    def is_lanewise(self, instr) -> bool:
        """Whether lane i of every register operand matters only where the mask operand selects lane i
        (at the width of ``attrs["dtype"]``): what the simulator's footprint of a load may rely on
        (``backends/sim/vf/call.py``). Default: the builders of ``ops/vf/lanes.sim_lanewise``."""
        if self.lanewise is None:
            return bool(getattr(self.sim, "lanewise", False))
        return self.lanewise(instr) if callable(self.lanewise) else self.lanewise


VF_INSTRS: dict[str, VfInstrDecl] = {}
VF_STUBS: dict[str, Callable] = {}   # public name -> stub (the static methods of pl.Vf)
VF_RESULTS: dict[str, int] = {}      # public name -> registers it produces (0: a statement; bit_cast: a view)


def vf_instr(name: str, family: str, sim: SimRule, cost: CostRule, mem: MemRule | None = None,
             cpp: Callable[..., str] | None = None, cpp_missing: str = "",
             lanewise: Callable[..., bool] | bool | None = None) -> VfInstrDecl:
    """Declare (and register) a VF instruction kind (``lanewise``: see ``VfInstrDecl.is_lanewise``)."""
    if name in VF_INSTRS:
        raise ValueError(f"VF instruction {name!r} is declared twice")
    if cpp is None and not cpp_missing:
        raise ValueError(f"VF instruction {name!r}: give its C++ spelling or say why there is none")
    d = VfInstrDecl(name, family, sim, cost, mem, cpp, cpp_missing, lanewise)
    VF_INSTRS[name] = d
    return d


def vf_api(family: str, name: str, params: str, doc: str, check: Callable[..., Any], results: int = 1) -> Callable:
    """Declare ``vf.<name>(<params>)``: its stub (a static method of ``pl.Vf``) and its check.
    ``results``: how many registers it produces (0: a statement such as a store)."""
    stub = intrinsic(f"vf.{name}")(make_stub(name, params, doc))
    stub.__name__ = name
    stub.__qualname__ = f"Vf.{name}"
    key = f"vf.{name}"
    if key in APIS:
        raise ValueError(f"VF API {key!r} is declared twice")
    APIS[key] = Api(key, family, stub, _in_vector_function(name, check), namespace="vf")
    VF_STUBS[name] = stub
    VF_RESULTS[name] = results
    return stub


def _in_vector_function(name: str, check: Callable[..., Any]) -> Callable[..., Any]:
    """The check, run only inside a ``@pl.vector_function`` body (elsewhere a located error)."""
    def guarded(p, node, a):
        if getattr(p, "vf", None) is None:
            p.fail(node, f"vf.{name}() can only be used inside a @pl.vector_function (call that function from "
                         "a pl.section_vector() of the kernel)")
        return check(p, node, a)
    return guarded
