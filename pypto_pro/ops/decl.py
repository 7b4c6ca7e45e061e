"""How an operation is declared once and read by every stage.

Two kinds of declaration, as in the real PyPTO Pro (its ``language/_api.py`` functions and its
``ir/op/*`` instructions):

* :class:`Api` — a ``pl.*`` function: its stub (the real name, parameter names, order, defaults,
  keyword-only markers and docstring: what ``inspect.signature`` and IDEs see) and its **check**,
  the frontend rule that validates the bound arguments at the user's source line and emits IR
  (usually one ``TileOp`` of some :class:`Instruction`; ``pl.add`` emits ``add`` or ``adds``
  depending on its right operand).
* :class:`Instruction` — one IR instruction kind (``TileOp.op``): its **sim** rule (a builder of
  the simulator's dispatcher: region, memory effects, numerics), its **cost** class (how the
  timing model prices it), and its **cpp** spelling (PTO-ISA C++ lines, or ``None`` with the reason
  the C++ backend cannot emit it).

Declarations live one module per family under ``pypto_pro/ops/`` (mirroring the real API
reference's categories); the frontend (``frontend/intrinsics.py``), the simulator
(``backends/sim/tile_ops.py``, ``recorder.py``), the C++ emitter (``backends/pto/tile_ops.py``)
and the language namespace (``pypto_pro.language``) all read them from the registries here.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

from pypto_pro.language.enums import PipeType
from pypto_pro.language.intrinsic import intrinsic

Check = Callable[..., Any]          # (parser, ast.Call, Args) -> value of the call
SimRule = Callable[..., Callable]   # (TileOp, SimEnv) -> dispatcher
CppRule = Callable[..., list]       # (TileOp, OpContext, arch name) -> C++ lines


@dataclass(frozen=True)
class Cost:
    """How the timing model prices an instruction.

    ``kind``: ``"vector"`` (V pipe, ``head + slope * repeats + tail`` from the arch's vector cost
    table entry ``key``; ``shape`` picks how repeats are counted: ``elementwise``, ``row_reduce``,
    ``col_reduce``, ``row_expand``, ``col_expand``, ``copy``), ``"gm"`` (a GM transfer on the path
    ``<space>->GM`` / ``GM-><space>``), ``"path"`` (an on-chip transfer priced by the path bandwidth),
    ``"cube"`` (the Cube formula), ``"scalar"`` (S pipe: issue cost only), ``"simt"`` (a SIMT launch:
    priced from what its threads executed, once its numerics ran: ``backends/sim/simt/cost.py``).
    ``flops``: whether its elements count as work in the roofline.
    """

    kind: str
    key: str = ""
    shape: str = "elementwise"
    flops: bool = True


def vector(key: str, shape: str = "elementwise", flops: bool = True) -> Cost:
    return Cost("vector", key, shape, flops)


GM = Cost("gm", flops=False)
PATH = Cost("path", flops=False)
CUBE = Cost("cube")
SCALAR = Cost("scalar", flops=False)
SIMT = Cost("simt", flops=False)


@dataclass(frozen=True)
class Instruction:
    """One IR instruction kind: simulator rule, cost class, C++ spelling (see module docstring)."""

    name: str
    family: str
    sim: SimRule
    cost: Cost
    cpp: CppRule | None = None
    cpp_missing: str = ""   # why kernel.emit() cannot spell it, when cpp is None
    pipe: PipeType | None = None  # fixed pipe, when the instruction always runs on one
    params: Callable[..., dict] | None = None  # (TileOp, arch) -> the lower pass's static params, if not the tile rule
    cpp_defs: Callable[..., list] | None = None  # (TileOp, arch name) -> file-scope C++ definitions it needs


@dataclass
class Api:
    """One ``pl.*`` (or ``pl.system.*``) function: its stub and its frontend check."""

    name: str          # "add", or "system.sync_src" for the pl.system namespace
    family: str
    stub: Callable
    check: Check | None = None
    namespace: str = "pl"
    extra: dict = field(default_factory=dict)
    # kernel-code keyword -> parameter: the operand names of the real parse-time builder
    # (``ir/op/block_ops.py``: ``pl.load(out=t, tensor=x, offsets=...)``) where they differ from the
    # API page's names that the stub carries (``dst_tile``, ``src_tensor``); both spellings bind
    aliases: dict[str, str] = field(default_factory=dict)

    @property
    def signature(self) -> inspect.Signature:
        return inspect.signature(self.stub)

    @property
    def display(self) -> str:
        short = self.name.split(".")[-1]
        return f"{self.namespace}.{short}"


INSTRUCTIONS: dict[str, Instruction] = {}
APIS: dict[str, Api] = {}


def instruction(name: str, family: str, sim: SimRule, cost: Cost, cpp: CppRule | None = None,
                cpp_missing: str = "", pipe: PipeType | None = None, params: Callable[..., dict] | None = None,
                cpp_defs: Callable[..., list] | None = None) -> Instruction:
    """Declare (and register) an IR instruction."""
    if name in INSTRUCTIONS:
        raise ValueError(f"instruction {name!r} is declared twice")
    if cpp is None and not cpp_missing:
        raise ValueError(f"instruction {name!r}: give its C++ spelling or say why there is none")
    ins = Instruction(name, family, sim, cost, cpp, cpp_missing, pipe, params, cpp_defs)
    INSTRUCTIONS[name] = ins
    return ins


def api(family: str, name: str | None = None, namespace: str = "pl",
        aliases: dict[str, str] | None = None) -> Callable[[Callable], Callable]:
    """Declare a ``pl.*`` function from its stub; attach the check with ``@<stub>.check``.

    The returned object is what ``pl.<name>`` is: calling it outside a kernel raises (after
    binding the arguments, so a wrong call says what is wrong), and the frontend compiles it.
    ``aliases`` maps the real builder's keyword names to the stub's parameters (:class:`Api`).
    """
    def deco(fn: Callable) -> Callable:
        key = name or fn.__name__
        public = key.split(".")[-1]
        stub = intrinsic(key)(fn)
        stub.__name__ = public
        stub.__qualname__ = public
        if key in APIS:
            raise ValueError(f"pl API {key!r} is declared twice")
        params = inspect.signature(fn).parameters
        for kw, target in (aliases or {}).items():
            if kw in params or target not in params:
                raise ValueError(f"pl API {key!r}: alias {kw}= -> {target} must name a parameter under another name")
        entry = Api(key, family, stub, namespace=namespace, aliases=dict(aliases or {}))
        APIS[key] = entry

        def set_check(check: Check) -> Check:
            entry.check = check
            return check
        stub.check = set_check  # type: ignore[attr-defined]
        return stub
    return deco


def make_stub(name: str, params: str, doc: str) -> Callable:
    """A stub function ``name(<params>)`` with ``doc``, for families that declare many alike ops.

    ``params`` is a Python parameter list (``"out, lhs, rhs, *, dim=0"``); defaults are evaluated
    with the language's enums and dtypes in scope."""
    from pypto_pro.language import dtypes, enums
    scope: dict[str, Any] = {**{n: getattr(enums, n) for n in enums.PUBLIC_ENUMS},
                             **{d.name: d for d in dtypes.ALL_DTYPES}}
    exec(f"def {name}({params}):\n    pass\n", scope)  # noqa: S102 - a fixed template over our own names
    fn = scope[name]
    fn.__doc__ = doc
    fn.__module__ = "pypto_pro.language"
    return fn


def declare(family: str, name: str, params: str, doc: str, check: Check, namespace: str = "pl",
            aliases: dict[str, str] | None = None) -> Callable:
    """Declare a generated API in one call: stub from ``params`` / ``doc``, and its check."""
    stub = api(family, name, namespace, aliases)(make_stub(name.split(".")[-1], params, doc))
    stub.check(check)  # type: ignore[attr-defined]
    return stub


def stubs(namespace: str = "pl") -> dict[str, Callable]:
    """Every declared stub of a namespace, by public name (what ``pypto_pro.language`` exports)."""
    return {a.name.split(".")[-1]: a.stub for a in APIS.values() if a.namespace == namespace}
