"""Argument checks shared by every ``pl.*`` check rule: each failure is a located CompileError at
the argument's own source position."""
from __future__ import annotations

import ast
import inspect
from typing import TYPE_CHECKING, Any, Iterable

from pypto_pro.frontend.values import GroupValue, TensorValue, TileValue
from pypto_pro.ir.expr import Const, Expr
from pypto_pro.ir.nodes import TileRef
from pypto_pro.language.dtypes import DataType
from pypto_pro.language.enums import MemorySpace, PipeType, SectionKind
from pypto_pro.language.tile_type import TileType

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser


class Args:
    """Bound arguments of one call, with the AST node of each for precise error columns."""

    def __init__(self, name: str, call: ast.Call, sig: inspect.Signature, values: dict[str, Any],
                 display: str | None = None, aliases: dict[str, str] | None = None):
        self.name = name
        self.display = display or f"pl.{name}"
        self.values = values
        self.nodes: dict[str, ast.AST] = {}
        names = list(sig.parameters)
        for i, a in enumerate(call.args):
            if i < len(names):
                p = sig.parameters[names[i]]
                if p.kind is inspect.Parameter.VAR_POSITIONAL:
                    break
                self.nodes[names[i]] = a
        for k in call.keywords:
            if k.arg:
                self.nodes[(aliases or {}).get(k.arg, k.arg)] = k.value
        self.call = call

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def get(self, name: str, default: Any = None) -> Any:
        return self.values.get(name, default)

    def node(self, name: str) -> ast.AST:
        return self.nodes.get(name, self.call)


def want_int(p: "FunctionParser", a: Args, name: str, what: str | None = None) -> int:
    v = a[name]
    if not isinstance(v, int) or isinstance(v, bool):
        p.fail(a.node(name), f"'{what or name}' must be a compile-time int, got {p.describe(v)}")
    return v


def want_bool(p: "FunctionParser", a: Args, name: str) -> bool:
    v = a[name]
    if not isinstance(v, bool):
        p.fail(a.node(name), f"'{name}' must be True or False, got {p.describe(v)}")
    return v


def want_index(p: "FunctionParser", node: ast.AST, v: Any, what: str) -> Expr | int:
    if isinstance(v, bool) or not (isinstance(v, int) or (isinstance(v, Expr) and v.ty == "int")):
        p.fail(node, f"{what} must be an integer scalar, got {p.describe(v)}")
    return v


# keywords whose plain-number value the real parser rejects as FinalRejectionError ("'<key>' expects an
# enum value"): its CallParserMixin._ENUM_KWARGS (language/parser/_call_parser.py)
REAL_ENUM_KWARGS = frozenset(
    "phase atomic mode relu_pre_mode acc_to_vec_mode sync_mode core_type cache_line dst target_memory dtype "
    "target_type out_dtype cmp_dtype pattern merge_mode reduce_mode reduce_type pos layout round_mode saturate "
    "bin_type hist_type gather_mode part width dist data_copy_mode index_order".split())


def want_enum(p: "FunctionParser", a: Args, name: str, enum: type, optional: bool = False) -> Any:
    v = a[name]
    if v is None and optional:
        return None
    if not isinstance(v, enum):
        members = ", ".join(f"pl.{enum.__name__}.{m.name}" for m in enum)
        number = isinstance(v, (int, float)) and name in REAL_ENUM_KWARGS
        p.fail(a.node(name), f"'{name}' must be one of {members}, got {p.describe(v)}", kind="final" if number else None)
    return v


def want_tile(p: "FunctionParser", a: Args, name: str) -> TileRef:
    v = a[name]
    if isinstance(v, GroupValue):
        p.fail(a.node(name), f"'{name}' is tile group '{v.buffer.name}', not a tile; take one with "
                             f"{v.buffer.name}.next(), .current() or [i]")
    if not isinstance(v, TileValue):
        p.fail(a.node(name), f"'{name}' must be a tile, got {p.describe(v)}")
    return v.ref


def _want_instance(p: "FunctionParser", a: Args, name: str, cls: type, what: str) -> Any:
    """Argument ``name``, which must be a ``cls`` (``what`` names it in the error)."""
    v = a[name]
    if not isinstance(v, cls):
        p.fail(a.node(name), f"'{name}' must be {what}, got {p.describe(v)}")
    return v


def want_tensor(p: "FunctionParser", a: Args, name: str) -> TensorValue:
    return _want_instance(p, a, name, TensorValue, "a tensor")


def want_tiletype(p: "FunctionParser", a: Args, name: str) -> TileType:
    return _want_instance(p, a, name, TileType, "a pl.TileType")


def want_pipe(p: "FunctionParser", a: Args, name: str) -> PipeType:
    return _want_instance(p, a, name, PipeType, "a pl.PipeType")


def want_scalar(p: "FunctionParser", a: Args, name: str, dtype: DataType | None = None) -> Expr:
    """A scalar operand (compile-time number or run-time scalar) for a tile of ``dtype``."""
    v = a[name]
    if isinstance(v, bool) or not (isinstance(v, (int, float)) or isinstance(v, Expr)):
        p.fail(a.node(name), f"'{name}' must be a scalar, got {p.describe(v)}")
    if dtype is not None and dtype.is_int() and (isinstance(v, float) or (isinstance(v, Expr) and v.ty == "float")):
        p.fail(a.node(name), f"a float scalar cannot be applied to an {dtype.name} tile")
    return v if isinstance(v, Expr) else Const(v)


def is_scalar_arg(v: Any) -> bool:
    return (isinstance(v, (int, float)) and not isinstance(v, bool)) or isinstance(v, Expr)


def in_section(p: "FunctionParser", node: ast.AST, kind: SectionKind, what: str) -> None:
    cur = p.ctx.section
    if cur is None:
        p.fail(node, f"{what} must be inside `with pl.section_{kind.value}():`")
    if cur is not kind:
        p.fail(node, f"{what} runs on the {kind.value.capitalize()} engine; it cannot be used in "
                     f"section_{cur.value}()")


def need_section(p: "FunctionParser", node: ast.AST, what: str) -> None:
    if p.ctx.section is None:
        p.fail(node, f"{what} must be inside a section")


def names(items: Iterable[Any]) -> str:
    return ", ".join(getattr(x, "name", str(x)) for x in items)


def tile_in(p: "FunctionParser", a: Args, name: str, spaces: tuple[MemorySpace, ...],
            dtypes: tuple[DataType, ...] | None = None, what: str | None = None) -> TileRef:
    """A tile argument in one of ``spaces`` with one of ``dtypes``."""
    t = want_tile(p, a, name)
    op = what or a.display
    if t.buffer.space not in spaces:
        p.fail(a.node(name), f"{op} needs '{name}' in {' or '.join(s.name for s in spaces)}; "
                             f"'{t.buffer.name}' is in {t.buffer.space.name}")
    if dtypes is not None and t.tile_type.dtype not in dtypes:
        p.fail(a.node(name), f"{op} does not support {t.tile_type.dtype.name} for '{name}' "
                             f"(supported: {names(dtypes)})")
    return t


def same_shape(p: "FunctionParser", a: Args, ref: TileRef, ref_name: str, other: TileRef, name: str) -> None:
    rt, ot = ref.tile_type, other.tile_type
    if rt.shape != ot.shape:
        p.fail(a.node(name), f"{a.display}: '{name}' has shape {list(ot.shape)} but '{ref_name}' has {list(rt.shape)}")


def same_dtype(p: "FunctionParser", a: Args, ref: TileRef, ref_name: str, other: TileRef, name: str) -> None:
    rd, od = ref.tile_type.dtype, other.tile_type.dtype
    if rd is not od:
        p.fail(a.node(name), f"{a.display}: '{name}' is {od.name} but '{ref_name}' is {rd.name} "
                             "(convert with pl.cast first)")


def distinct(p: "FunctionParser", a: Args, name: str, other: TileRef, other_name: str) -> None:
    """``name`` (a scratch tile) must not overlap ``other`` in memory."""
    t = want_tile(p, a, name)
    b, o = t.buffer.root, other.buffer.root
    ts, os_ = t.root_slot, other.root_slot
    if b is o and (not b.is_group or ts is os_ or
                   (isinstance(ts, Const) and isinstance(os_, Const) and ts.value == os_.value)):
        p.fail(a.node(name), f"{a.display}: '{name}' must be a separate tile from '{other_name}'")


def element_node(node: ast.AST, count: int, i: int) -> ast.AST:
    """The AST node of entry ``i`` when ``node`` is a list/tuple literal of ``count`` entries, else ``node``."""
    if isinstance(node, (ast.List, ast.Tuple)) and len(node.elts) == count:
        return node.elts[i]
    return node


def row_major(p: "FunctionParser", a: Args, name: str, t: TileRef, instr: str) -> None:
    """PTO-ISA's elementwise instructions take row-major (ND) tiles only (their static_asserts, e.g.
    "TADD only support row major layout")."""
    layout = t.tile_type.effective_layout(p.ctx.arch.name)
    if layout.name != "ND":
        p.fail(a.node(name), f"{a.display} works on row-major (ND) tiles only ({instr} in PTO-ISA); '{t.buffer.name}' is "
                             f"{layout.name}: use a [1, N] ND tile over the same bytes for the values of an [N, 1] DN tile")
