"""Kernel parameters: what each annotation makes of a parameter, for the compiler and the launcher.

=============================  ==========================================================
annotation                     parameter
=============================  ==========================================================
``pl.Tensor[[dims], dtype]``   GM tensor (``TensorParam``); ``pl.STATIC`` dims and a final
                               ``...`` are bound to the launch's shape (one compile each)
``pl.Ptr[dtype]``              GM buffer (``PtrParam``): the argument's bytes, flat
``int`` / ``float`` / dtype    run-time scalar (``ScalarParam``; see :func:`scalar_dtype`);
                               only these may have a default value
``pl.Constexpr``               compile-time constant (part of the compile cache key)
a tiling ``@dataclass``        the tiling struct (``TilingParam``), last parameter only
=============================  ==========================================================

``signature_params`` reads annotations only (the launcher checks arguments against them before
compiling); ``kernel_params`` also binds them into a parser's scope. Both classify with
:func:`classify`, so they agree.
"""
from __future__ import annotations

import ast
import inspect
from collections import ChainMap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from pypto_pro.frontend.scope import closure_vars
from pypto_pro.frontend.values import TensorValue
from pypto_pro.ir.expr import Var
from pypto_pro.ir.nodes import NO_DEFAULT, ScalarParam, TensorParam
from pypto_pro.ir.storage import ScalarArray, StructStorage, TilingParam
from pypto_pro.ir.views import PtrParam
from pypto_pro.language import tiling as tiling_mod
from pypto_pro.language.dtypes import DEFAULT_FLOAT, DEFAULT_INT, DT_BOOL, DataType
from pypto_pro.language.enums import ND
from pypto_pro.language.types import Constexpr, DTypeVar, PtrType, TensorType

if TYPE_CHECKING:
    from pypto_pro.frontend.parser import FunctionParser

Param = TensorParam | ScalarParam | TilingParam

ANNOTATION_HELP = ("pl.Tensor[[dims], dtype], pl.Ptr[dtype], a dtype (n: pl.DT_INT32), int, float, "
                   "pl.Constexpr or a tiling @dataclass")


def scalar_dtype(ann: Any) -> DataType | None:
    """The dtype of a run-time scalar parameter annotation, or None if ``ann`` is not one: a scalar
    ``pl.DT_*`` (the real form, ``n: pl.DT_INT32``), or ours ``int`` / ``float`` / ``bool``
    (INT64 / FP32 / BOOL)."""
    if ann is int:
        return DEFAULT_INT
    if ann is float:
        return DEFAULT_FLOAT
    if ann is bool:
        return DT_BOOL
    if isinstance(ann, DataType) and ann.scalar_ok:
        return ann
    return None


def scalar_kind(dtype: DataType) -> str:
    """``"int"`` / ``"float"`` / ``"bool"``: the kind of a scalar parameter's dtype."""
    return "bool" if dtype.is_bool() else "float" if dtype.is_float() else "int"


@dataclass(frozen=True)
class Classified:
    """One parameter's kind and annotation: ``tensor`` | ``ptr`` | ``scalar`` | ``constexpr`` |
    ``tiling``, or ``error`` with a message (reported located by ``kernel_params``)."""

    kind: str
    name: str
    index: int
    ann: Any
    scalar: str | None = None
    error: str | None = None
    error_kind: str = "type"
    default: Any = NO_DEFAULT  # a scalar parameter's default value
    error_at_default: bool = False  # the error is the default value's (reported there)


def annotations_of(fn: Callable, scope: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The kernel's evaluated annotations. ``from __future__ import annotations`` strings are
    evaluated in the kernel's closure, then ``scope`` (the names where ``@pl.jit`` ran, as the real
    runtime does: a class defined in the decorating function is found), then its globals; tiling
    arrays ``int[N]`` stay strings inside the dataclass, which is never evaluated here."""
    names: Mapping[str, Any] = ChainMap(closure_vars(fn), scope) if scope is not None else closure_vars(fn)
    return inspect.get_annotations(fn, eval_str=True, locals=names)


def classify(fn: Callable, hints: dict[str, Any]) -> list[Classified]:
    signature = inspect.signature(fn).parameters
    names = list(signature)
    out: list[Classified] = []
    for i, name in enumerate(names):
        ann = hints.get(name, inspect.Parameter.empty)
        last = i == len(names) - 1
        default = signature[name].default
        if default is not inspect.Parameter.empty:
            if scalar_dtype(ann) is None:
                out.append(Classified("error", name, i, ann, error=(
                    f"parameter '{name}': only scalar parameters (pl.DT_*, int, float) can have a default value"), error_at_default=True))
                continue
            out.append(Classified("scalar", name, i, ann, scalar_kind(scalar_dtype(ann)), default=default))
            continue
        if isinstance(ann, TensorType):
            out.append(Classified("tensor", name, i, ann))
        elif isinstance(ann, PtrType):
            out.append(Classified("ptr", name, i, ann))
        elif ann is Constexpr:
            out.append(Classified("constexpr", name, i, ann))
        elif scalar_dtype(ann) is not None:
            out.append(Classified("scalar", name, i, ann, scalar_kind(scalar_dtype(ann))))
        elif isinstance(ann, DataType):
            out.append(Classified("error", name, i, ann, error=(
                f"parameter '{name}': pl.{ann.name} is not a scalar dtype (it is for tensors and tiles only)")))
        elif tiling_mod.looks_like_tiling_class(ann):
            try:
                tiling_mod.tiling_fields(ann)
            except ValueError as exc:
                out.append(Classified("error", name, i, ann, error=str(exc), error_kind="value"))
                continue
            if not last:
                out.append(Classified("error", name, i, ann, error=(
                    f"tiling parameter '{name}' ({ann.__name__}) must be the kernel's last parameter: one tiling "
                    "instance per launch, passed last")))
                continue
            out.append(Classified("tiling", name, i, ann))
        else:
            shown = "no annotation" if ann is inspect.Parameter.empty else f"annotated: {_show(ann)}"
            out.append(Classified("error", name, i, ann, error=(
                f"parameter '{name}' needs an annotation: {ANNOTATION_HELP} [{shown}]")))
    return out


def _show(ann: Any) -> str:
    return getattr(ann, "__name__", None) or repr(ann)


def signature_params(fn: Callable, scope: Mapping[str, Any] | None = None) -> list[Param] | None:
    """The parameters as the annotations declare them (tensor dims unbound), or None if an
    annotation is wrong (compiling reports it, located)."""
    try:
        hints = annotations_of(fn, scope)
    except Exception:
        return None
    params: list[Param] = []
    for c in classify(fn, hints):
        if c.kind == "error":
            return None
        params.append(_param(c, None))
    return params


def _param(c: Classified, storage: StructStorage | None) -> Param:
    if c.kind == "tensor":
        return TensorParam(c.name, c.ann, c.index)
    if c.kind == "ptr":
        return PtrParam.of(c.name, c.ann.dtype, c.index)
    if c.kind == "scalar":
        return ScalarParam(c.name, c.scalar or "int", c.index, scalar_dtype(c.ann), c.default,
                           legacy=c.ann in (int, float, bool))
    if c.kind == "constexpr":
        return ScalarParam(c.name, "constexpr", c.index)
    return TilingParam(c.name, c.ann, c.index, storage)  # type: ignore[arg-type]


def _default_node(args: ast.arguments, a: ast.arg) -> ast.expr | None:
    """The default-value expression of parameter ``a`` (where a bad default is reported)."""
    first = len(args.args) - len(args.defaults)
    i = args.args.index(a)
    return args.defaults[i - first] if i >= first else None


def tiling_storage(cls: type, name: str) -> StructStorage:
    """The read-only storage of a tiling parameter: one slot, a field per dataclass field."""
    storage = StructStorage(cls.__name__, name, 1, False, kind="tiling", param=name)
    for f in tiling_mod.tiling_fields(cls):
        storage.fields[f.name] = ScalarArray(storage, f.name, f.ty, f.size, cbits=64)
    return storage


def kernel_params(parser: "FunctionParser", fn: Callable, node: ast.FunctionDef, constexprs: dict[str, Any],
                  shapes: dict[str, tuple[int, ...]] | None = None,
                  scope: Mapping[str, Any] | None = None) -> list[Param]:
    """Classify, check and bind the kernel's parameters into ``parser``'s scope. ``shapes`` gives
    the launch shape of each tensor parameter whose annotation has ``pl.STATIC`` dims or ``...``."""
    from pypto_pro.frontend.structs import tiling_value
    args = node.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
        parser.fail(node, "kernel parameters must be plain positional parameters", kind="type")
    try:
        hints = annotations_of(fn, scope)
    except Exception as exc:  # the real runtime: TypeError("Failed to evaluate annotations ...")
        parser.fail(node, f"Failed to evaluate annotations for kernel '{fn.__name__}': {type(exc).__name__}: {exc}",
                    kind="typeerror")
    params: list[Param] = []
    for c, a in zip(classify(fn, hints), args.args):
        if c.kind == "error":
            at = a.annotation or a
            if c.error_at_default:
                at = _default_node(args, a) or at
            parser.fail(at, c.error or "bad annotation", kind=c.error_kind)
        if c.kind == "tensor":
            ann: TensorType = c.ann
            if ann.layout is not None and ann.layout is not ND:
                parser.fail(a.annotation or a, f"parameter '{a.arg}': GM tensors with layout {ann.layout.name} are not "
                                               "supported yet (loads and stores read GM row-major, pl.ND)",
                            kind="unsupported")
            if isinstance(ann.dtype, DTypeVar):
                if ann.dtype.name not in parser.ctx.dtype_bindings:
                    parser.fail(a, f"parameter '{a.arg}' has dtype variable {ann.dtype.name}, which no launch "
                                   f"argument (or compile(dtypes=...)) binds")
                ann = ann.bind(parser.ctx.dtype_bindings)
            if ann.needs_binding:
                shape = (shapes or {}).get(a.arg)
                if shape is None:
                    parser.fail(a, f"parameter '{a.arg}' has pl.STATIC or '...' dims: compile it with its launch "
                                   f"shape (kernel.compile(static_shapes={{'{a.arg}': [...]}}))", kind="value")
                ann = ann.bind_shape(shape)
            p: Param = TensorParam(a.arg, ann, c.index)
            parser.scope.locals[a.arg] = TensorValue(p)
        elif c.kind == "ptr":
            from pypto_pro.frontend.resources import PtrValue
            p = PtrParam.of(a.arg, c.ann.dtype, c.index)
            parser.scope.locals[a.arg] = PtrValue.of_param(p)
        elif c.kind == "scalar":
            p = _param(c, None)
            parser.scope.locals[a.arg] = parser.ctx.param_vars.setdefault(a.arg, Var(a.arg, dtype=p.dtype))
        elif c.kind == "constexpr":
            p = ScalarParam(a.arg, "constexpr", c.index)
            if a.arg in constexprs:
                parser.scope.locals[a.arg] = constexprs[a.arg]
            else:
                parser.ctx.unbound_constexprs.add(a.arg)
        else:
            storage = tiling_storage(c.ann, a.arg)
            parser.ctx.reserved_struct_names.add(c.ann.__name__)
            p = TilingParam(a.arg, c.ann, c.index, storage)
            parser.scope.locals[a.arg] = tiling_value(storage)
        params.append(p)
    parser.ctx.param_count = len(params)
    return params
