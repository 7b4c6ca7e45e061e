"""Debugging: ``pl.printf``, ``pl.pto_assert``, ``pl.dump_data``, ``pl.trap`` (real pages
``Utils-API/debugging/*.md``), with the behaviour of the real lowering (``backend_cce_ops.cpp`` and
``pypto_tprint.h`` of hicann/pypto), which is what the chip runs:

* ``printf`` formats on the scalar unit (S pipe) with the restricted C ``printf`` of the real page;
  the text goes to the core's print buffer (``backends/sim/debug_log.py``).
* ``pto_assert`` prints ``Assertion failed: <condition source>`` (prefixed ``[file:line] `` with
  ``loc=True``) and then the formatted message when the condition is false; like the chip it does
  **not** stop the kernel or raise on the host. The simulator also lists every failure in
  ``report.assert_failures`` (block, core, location, message).
* ``dump_data`` prints a GM tensor (window) or a tile (window) in the chip's dump layout; an Acc tile
  goes through ``workspace`` (written with the whole tile in ND, as on the chip).
* ``trap`` ends the core's program where it stands (the real lowering emits ``return``).
"""
from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Any

from pypto_pro.backends.sim import debug_log
from pypto_pro.backends.sim.kit import Prepared, no_run
from pypto_pro.frontend.operands import Args
from pypto_pro.ir.expr import Const, Expr, Special
from pypto_pro.ir.nodes import Return, TileOp
from pypto_pro.language.enums import PipeType, SectionKind
from pypto_pro.ops.decl import SCALAR, api, instruction

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

FAMILY = "debugging"
_CORE_ARGS = (Special("block_idx"), Special("subblock_idx"), Special("subblock_num"))
_SPEC = re.compile(r"%([-+ #0]*)(\d*)(\.?)(\d*)")


# ---- the pl.* functions ------------------------------------------------------------------------


@api(FAMILY)
def printf(format_str: str, *args: Any, loc: bool = False) -> None:
    """Print scalars (or ``pl.Ptr`` addresses) with a compile-time C format: ``%[flags][width][.precision]``
    then ``d``/``i`` (signed), ``u`` (unsigned), ``x`` (hex), ``f`` (FP32), ``p`` (pointer)."""


@api(FAMILY)
def pto_assert(condition: Any, format_str: str | None = None, *args: Any, loc: bool = False) -> None:
    """Run-time assertion: when the BOOL ``condition`` is false, print ``Assertion failed: <condition>``
    and the formatted message. Execution continues (as on the chip)."""


@api(FAMILY)
def dump_data(data: Any, offsets: Any = None, shapes: Any = None, workspace: Any = None, loc: bool = False, *,
              flag: str | None = None) -> None:
    """Print a GM tensor or a tile (whole, or the window ``offsets`` / ``shapes``); an Acc tile needs a GM
    ``workspace`` of its dtype holding at least the whole tile. (``workspace`` / ``loc`` are keyword-only on
    the real page, but its parse-time builder, ``ir/op/debug_ops.py``, takes them positionally too.)"""


@api(FAMILY)
def trap() -> None:
    """Stop the core's program here (the chip's ``trap``: the core returns)."""


# ---- frontend checks ---------------------------------------------------------------------------


def _want_loc(p: "FunctionParser", a: Args) -> bool:
    v = a["loc"]
    if not isinstance(v, bool):
        p.fail(a.node("loc"), f"{a.display} requires a bool loc flag, got {p.describe(v)}", kind="type")
    return v


def _location(p: "FunctionParser", node: ast.AST) -> str:
    """``[file.py:line]``, as the real ``FormatDebugLocation``."""
    loc = p.loc(node)
    if loc is None:
        return ""
    return f"[{loc.path.replace(chr(92), '/').rsplit('/', 1)[-1]}:{loc.line}]"


def scan_format(p: "FunctionParser", node: ast.AST, fmt: str, what: str) -> list[str]:
    """The conversions of ``fmt`` (``%...c`` each), with the real format rules."""
    specs: list[str] = []
    i = 0
    while i < len(fmt):
        if fmt[i] != "%":
            i += 1
            continue
        if fmt[i + 1:i + 2] == "%":
            p.fail(node, f"{what} does not support literal '%%'")
        m = _SPEC.match(fmt, i)
        assert m is not None
        if m.group(3) and not m.group(4):
            p.fail(node, f"{what} precision must be followed by digits")
        j = m.end()
        if j >= len(fmt):
            p.fail(node, f"{what} format string ends with an incomplete conversion")
        if fmt[j] not in "diuxfp":
            p.fail(node, f"{what} does not support conversion '%{fmt[j]}' (supported: %d %i %u %x %f %p; no length "
                         "modifiers, %s, %c or %%)")
        specs.append(fmt[i:j + 1])
        i = j + 1
    return specs


def _format_args(p: "FunctionParser", node: ast.Call, fmt: str, values: tuple, first: int, what: str):
    """Scalars and kinds of the format's arguments (``first``: index of the first one in ``node.args``),
    checked against their conversions as the real ``_validate_printf_arguments``."""
    from pypto_pro.frontend.resources import PtrValue
    specs = scan_format(p, node, fmt, what)
    if len(specs) != len(values):
        p.fail(node, f"{what} format expects {len(specs)} scalar arguments, but got {len(values)}")
    exprs: list[Expr] = []
    kinds: list[str] = []
    ptrs: dict[int, int] = {}
    for i, (spec, v) in enumerate(zip(specs, values)):
        at = node.args[first + i] if first + i < len(node.args) else node
        conv = spec[-1]
        if conv == "p":
            if not isinstance(v, PtrValue):
                p.fail(at, f"{what} conversion '{spec}' requires a pl.Ptr pointer, got {p.describe(v)}", kind="type")
            ptrs[i] = v.base.index
            exprs.append(v.offset)
            kinds.append("ptr")
            continue
        raw_bool = isinstance(v, bool)
        if isinstance(v, (bool, int, float)):
            v = Const(v)
        if not isinstance(v, Expr):
            p.fail(at, f"{what} argument {i} must be a scalar, got {p.describe(v)}", kind="type")
        d = v.dtype
        signed, unsigned, boolean = d.is_signed_int(), d.is_unsigned_int(), d.is_bool()
        ok = {"d": signed or boolean, "i": signed or boolean, "u": unsigned or boolean,
              "x": unsigned and not raw_bool, "f": d.name == "DT_FP32"}[conv]
        if not ok:
            need = {"d": "a signed integer or bool", "i": "a signed integer or bool", "u": "an unsigned integer or bool",
                    "x": "an unsigned integer", "f": "an FP32"}[conv]
            p.fail(at, f"{what} conversion '{spec}' requires {need} scalar, but got {d.name}", kind="type")
        exprs.append(v)
        kinds.append("u64" if d.name == "DT_UINT64" else ("float" if conv == "f" else "int"))
    return exprs, kinds, ptrs


def _core_kind(p: "FunctionParser") -> str | None:
    return None if p.ctx.section is None else ("AIC" if p.ctx.section is SectionKind.CUBE else "AIV")


@printf.check
def _check_printf(p: "FunctionParser", node: ast.Call, a: Args) -> None:
    fmt = a["format_str"]
    if not isinstance(fmt, str):
        p.fail(a.node("format_str"), f"pl.printf requires a compile-time string format, got {p.describe(fmt)}",
               kind="type")
    show = _want_loc(p, a)
    exprs, kinds, ptrs = _format_args(p, node, fmt, tuple(a["args"]), 1, "pl.printf")
    if show and _location(p, node):
        fmt = _location(p, node) + " " + fmt
    p.ctx.builder.emit(TileOp("printf", PipeType.S, None, (), (*exprs, *_CORE_ARGS),  # type: ignore[arg-type]
                              {"format": fmt, "kinds": kinds, "ptrs": ptrs, "api": "printf"}, p.loc(node)))


def condition_text(p: "FunctionParser", node: ast.AST) -> str:
    """The condition's source text (the real parser's ``get_source_text``)."""
    loc = p.loc(node)
    end = getattr(node, "end_col_offset", None)
    if loc is not None and loc.source_line and getattr(node, "end_lineno", None) == node.lineno and end is not None:
        text = loc.source_line[loc.col:loc.col + end - node.col_offset]
        if text.strip():
            return text
    return ast.unparse(node)


@pto_assert.check
def _check_assert(p: "FunctionParser", node: ast.Call, a: Args) -> None:
    cond = a["condition"]
    if isinstance(cond, bool):
        cond = Const(cond)
    if not isinstance(cond, Expr) or not cond.dtype.is_bool():
        shown = cond.dtype.name if isinstance(cond, Expr) else p.describe(cond)
        p.fail(a.node("condition"), f"pl.pto_assert requires a scalar bool condition, but got {shown}", kind="type")
    show = _want_loc(p, a)
    fmt = a["format_str"]
    exprs: list[Expr] = []
    kinds: list[str] = []
    if fmt is not None:
        if not isinstance(fmt, str):
            p.fail(a.node("format_str"), f"pl.pto_assert requires a string literal format, got {p.describe(fmt)}",
                   kind="type")
        exprs, kinds, ptrs = _format_args(p, node, fmt, tuple(a["args"]), 2, "pl.pto_assert")
        if ptrs:
            p.fail(node, "pl.pto_assert arguments must be scalars (%p is for pl.printf)", kind="type")
    text = condition_text(p, node.args[0]) if node.args else "condition"
    head = f"Assertion failed: {text}\n"
    where = _location(p, node)
    if show and where:
        head = f"{where} {head}"
    p.ctx.builder.emit(TileOp("pto_assert", PipeType.S, None, (), (cond, *exprs, *_CORE_ARGS),  # type: ignore[arg-type]
                              {"head": head, "format": fmt or "", "kinds": kinds, "api": "pto_assert"}, p.loc(node)))


@trap.check
def _check_trap(p: "FunctionParser", node: ast.Call, a: Args) -> None:
    p.ctx.builder.emit(TileOp("trap", PipeType.S, None, (), _CORE_ARGS, {"api": "trap"}, p.loc(node)))  # type: ignore[arg-type]
    p.ctx.builder.emit(Return(p.loc(node)))


# ---- simulator rules ---------------------------------------------------------------------------


def _core_key(env, args: tuple) -> tuple:
    """(block, "AIC" / "AIV", subblock, subblock_num) of the core running the instruction."""
    kind = "AIC" if env.kind is SectionKind.CUBE else "AIV"
    return (int(args[-3]), kind, int(args[-2]), int(args[-1]))


def _printf_sim(op: TileOp, env):
    fmt, kinds, ptrs = op.attrs["format"], op.attrs["kinds"], op.attrs["ptrs"]
    n = len(kinds)
    arrays = env.gm.arrays

    def dispatch(*args) -> Prepared:
        log = debug_log.current()
        if log is not None:
            vals = list(args[:n])
            for i, idx in ptrs.items():  # a pointer prints as the address of its byte
                vals[i] = arrays[idx].__array_interface__["data"][0] + int(vals[i])
            log.write(_core_key(env, args), debug_log.format_printf(fmt, vals, kinds))
        return Prepared(1, 1, True, (), (), 0, no_run)
    return dispatch


def _assert_sim(op: TileOp, env):
    head, fmt, kinds = op.attrs["head"], op.attrs["format"], op.attrs["kinds"]
    n = len(kinds)
    loc = op.loc

    def dispatch(cond, *args) -> Prepared:
        log = debug_log.current()
        if not cond and log is not None:
            core = _core_key(env, args)
            # the real lowering prints the message only when it has arguments
            text = head + (debug_log.format_printf(fmt, list(args[:n]), kinds) if fmt and n else "")
            log.write(core, text)
            where = f"{loc.path}:{loc.line}: " if loc else ""
            log.asserts.append(f"{where}pl.pto_assert failed on {log.core_name(core)}: {text.strip()}")
        return Prepared(1, 1, True, (), (), 0, no_run)
    return dispatch


def _trap_sim(op: TileOp, env):
    loc = op.loc

    def dispatch(*args) -> Prepared:
        log = debug_log.current()
        if log is not None:
            where = f"{loc.path}:{loc.line}" if loc else "?"
            log.traps.append(f"{where}: pl.trap stopped {log.core_name(_core_key(env, args))}")
        return Prepared(1, 1, True, (), (), 0, no_run)
    return dispatch


# ---- C++ (backends/pto/printf.py: the real lowering's cce::printf statements) --------------------


def _printf_cpp(op: TileOp, ctx, arch: str) -> list[str]:
    from pypto_pro.backends.pto.printf import printf_statements
    from pypto_pro.ops.cpp import NoCpp
    if op.attrs["ptrs"]:
        raise NoCpp("a %p (pl.Ptr address) conversion is not emitted in this release")
    n = len(op.attrs["kinds"])
    vals = op.scalars[:n]
    return printf_statements(op.attrs["format"], [ctx.cexpr(v) for v in vals], [v.dtype for v in vals], [0])


def _assert_cpp(op: TileOp, ctx, arch: str) -> list[str]:
    """``if (!(cond)) { cce::printf("Assertion failed: ..."); <the message, when it has arguments> }``."""
    from pypto_pro.backends.pto.printf import c_string, printf_statements
    n = len(op.attrs["kinds"])
    cond, vals = op.scalars[0], op.scalars[1:1 + n]
    body = [f"cce::printf({c_string(op.attrs['head'])});"]
    if op.attrs["format"] and n:
        body += printf_statements(op.attrs["format"], [ctx.cexpr(v) for v in vals], [v.dtype for v in vals], [0])
    return [f"if (!({ctx.cexpr(cond)})) {{", *("    " + line for line in body), "}"]


instruction("printf", FAMILY, _printf_sim, SCALAR, _printf_cpp)
instruction("pto_assert", FAMILY, _assert_sim, SCALAR, _assert_cpp)
instruction("trap", FAMILY, _trap_sim, SCALAR, cpp=lambda op, ctx, arch: [])
